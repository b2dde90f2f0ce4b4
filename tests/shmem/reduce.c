/* Reductions: the specification's examples (team sum_reduce; shmem_int_sum_to_all with pWrk
 * and pSync) and every op over types that hgas combines itself (int, long, float, double, ...)
 * and that the front end combines (char, short, long double, the bitwise ops). */
#include <complex.h>
#include <string.h>

#include "check.h"

#define COUNT 257 /* not a power of two, several elements per PE */

/* sum, max, min, prod over the world for one arithmetic type. Values are small so that
 * products of up to 4 PEs fit every type. */
#define TEST_ARITH(T, N, G)                                                                        \
    {                                                                                              \
        T *src = shmem_malloc(COUNT * sizeof(T)), *dst = shmem_malloc(COUNT * sizeof(T));          \
        for (int i = 0; i < COUNT; ++i) src[i] = (T)((me + i) % 3 + 1);                            \
        CHECK(shmem_##N##_sum_reduce(SHMEM_TEAM_WORLD, dst, src, COUNT) == 0, #N " sum");          \
        for (int i = 0; i < COUNT; ++i) {                                                          \
            long long want = 0;                                                                    \
            for (int p = 0; p < n; ++p) want += (p + i) % 3 + 1;                                   \
            CHECK(dst[i] == (T)want, #N " sum[%d] = %lld, want %lld", i, (long long)dst[i], want); \
        }                                                                                          \
        CHECK(shmem_##N##_max_reduce(SHMEM_TEAM_WORLD, dst, src, COUNT) == 0, #N " max");          \
        for (int i = 0; i < COUNT; ++i) {                                                          \
            long long want = 0;                                                                    \
            for (int p = 0; p < n; ++p) want = want > (p + i) % 3 + 1 ? want : (p + i) % 3 + 1;     \
            CHECK(dst[i] == (T)want, #N " max[%d] = %lld", i, (long long)dst[i]);                  \
        }                                                                                          \
        CHECK(shmem_##N##_min_reduce(SHMEM_TEAM_WORLD, dst, src, COUNT) == 0, #N " min");          \
        for (int i = 0; i < COUNT; ++i) {                                                          \
            long long want = 99;                                                                   \
            for (int p = 0; p < n; ++p) want = want < (p + i) % 3 + 1 ? want : (p + i) % 3 + 1;     \
            CHECK(dst[i] == (T)want, #N " min[%d] = %lld", i, (long long)dst[i]);                  \
        }                                                                                          \
        /* in place: dest == source */                                                             \
        CHECK(shmem_##N##_prod_reduce(SHMEM_TEAM_WORLD, src, src, COUNT) == 0, #N " prod");        \
        for (int i = 0; i < COUNT; ++i) {                                                          \
            long long want = 1;                                                                    \
            for (int p = 0; p < n; ++p) want *= (p + i) % 3 + 1;                                   \
            CHECK(src[i] == (T)want, #N " prod[%d] = %lld", i, (long long)src[i]);                 \
        }                                                                                          \
        shmem_free(dst);                                                                           \
        shmem_free(src);                                                                           \
    }

#define TEST_BITWISE(T, N, G)                                                                      \
    {                                                                                              \
        T *src = shmem_malloc(3 * sizeof(T)), *dst = shmem_malloc(3 * sizeof(T));                  \
        T bit = (T)(1u << (me % 7));                                                               \
        src[0] = bit;                                                                              \
        src[1] = (T)~bit;                                                                          \
        src[2] = (T)(0x11 * (me + 1));                                                             \
        CHECK(shmem_##N##_or_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #N " or");                \
        CHECK(shmem_##N##_and_reduce(SHMEM_TEAM_WORLD, dst + 1, src + 1, 1) == 0, #N " and");      \
        CHECK(shmem_##N##_xor_reduce(SHMEM_TEAM_WORLD, dst + 2, src + 2, 1) == 0, #N " xor");      \
        T all = 0, x = 0;                                                                          \
        for (int p = 0; p < n; ++p) {                                                              \
            all |= (T)(1u << (p % 7));                                                             \
            x ^= (T)(0x11 * (p + 1));                                                              \
        }                                                                                          \
        const T none = (T)~all;                                                                    \
        CHECK(dst[0] == all && dst[1] == none && dst[2] == x, #N " bitwise %llx %llx %llx",        \
              (unsigned long long)dst[0], (unsigned long long)dst[1], (unsigned long long)dst[2]); \
        shmem_free(dst);                                                                           \
        shmem_free(src);                                                                           \
    }

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();

    /* Spec example (team): each PE contributes its number; everyone gets the sum. */
    int *value = shmem_malloc(sizeof(int)), *sum = shmem_malloc(sizeof(int));
    *value = me;
    CHECK(shmem_int_sum_reduce(SHMEM_TEAM_WORLD, sum, value, 1) == 0, "int_sum_reduce");
    CHECK(*sum == n * (n - 1) / 2, "sum %d", *sum);
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, sum, value, 1) == 0 && *sum == n * (n - 1) / 2, "generic sum");

    HGAS_SHMEM_TYPES_REDUCE_ARITH(TEST_ARITH)
    HGAS_SHMEM_TYPES_REDUCE_BIT(TEST_BITWISE)

    /* Complex sum and prod (combined in the front end). */
    double _Complex *zs = shmem_malloc(2 * sizeof(double _Complex)), *zd = shmem_malloc(2 * sizeof(double _Complex));
    zs[0] = (double)me + 1.0 * I;
    zs[1] = 1.0 + 1.0 * I;
    CHECK(shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, zd, zs, 2) == 0, "complexd_sum_reduce");
    CHECK(creal(zd[0]) == n * (n - 1) / 2 && cimag(zd[0]) == n, "complexd sum %g%+gi", creal(zd[0]), cimag(zd[0]));
    CHECK(shmem_prod_reduce(SHMEM_TEAM_WORLD, zd, zs + 1, 1) == 0, "generic complexd prod");
    double _Complex want_prod = 1.0;
    for (int p = 0; p < n; ++p) want_prod *= 1.0 + 1.0 * I;
    CHECK(zd[0] == want_prod, "complexd prod %g%+gi", creal(zd[0]), cimag(zd[0]));
    float _Complex *fs = shmem_malloc(sizeof(float _Complex)), *fd = shmem_malloc(sizeof(float _Complex));
    *fs = 2.0f - 1.0f * I;
    CHECK(shmem_complexf_sum_reduce(SHMEM_TEAM_WORLD, fd, fs, 1) == 0, "complexf_sum_reduce");
    CHECK(crealf(*fd) == 2.0f * n && cimagf(*fd) == -1.0f * n, "complexf sum");

    /* Spec example (deprecated): shmem_int_sum_to_all with pWrk and pSync over every PE. */
    int *src = shmem_malloc(COUNT * sizeof(int)), *dst = shmem_malloc(COUNT * sizeof(int));
    int *pWrk = shmem_malloc((COUNT / 2 + 1 > SHMEM_REDUCE_MIN_WRKDATA_SIZE ? COUNT / 2 + 1
                                                                           : SHMEM_REDUCE_MIN_WRKDATA_SIZE) *
                             sizeof(int));
    long *pSync = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < COUNT; ++i) src[i] = me + i;
    shmem_barrier_all();
    shmem_int_sum_to_all(dst, src, COUNT, 0, 0, n, pWrk, pSync);
    for (int i = 0; i < COUNT; ++i) CHECK(dst[i] == n * (n - 1) / 2 + n * i, "sum_to_all dst[%d] = %d", i, dst[i]);
    shmem_barrier_all(); /* a barrier between two collectives on one pSync (as the spec asks) */
    short *ss = shmem_malloc(4 * sizeof(short)), *sd = shmem_malloc(4 * sizeof(short));
    short *sw = shmem_malloc(4 * sizeof(short));
    for (int i = 0; i < 4; ++i) ss[i] = (short)(0xf0 | me);
    shmem_short_and_to_all(sd, ss, 4, 0, 0, n, sw, pSync);
    short andw = (short)0xff;
    for (int p = 0; p < n; ++p) andw &= (short)(0xf0 | p);
    for (int i = 0; i < 4; ++i) CHECK(sd[i] == andw, "short_and_to_all %d", sd[i]);
    shmem_barrier_all();
    double *ds = shmem_malloc(sizeof(double)), *dd = shmem_malloc(sizeof(double)), *dw = shmem_malloc(sizeof(double));
    *ds = -1.0 * me;
    shmem_double_min_to_all(dd, ds, 1, 0, 0, n, dw, pSync);
    CHECK(*dd == -1.0 * (n - 1), "double_min_to_all %g", *dd);
    shmem_barrier_all();
    long double *ls = shmem_malloc(sizeof(long double)), *ldd = shmem_malloc(sizeof(long double));
    *ls = 2.0L;
    shmem_longdouble_prod_to_all(ldd, ls, 1, 0, 0, n, NULL, pSync);
    CHECK(*ldd == (long double)(1 << n), "longdouble_prod_to_all %Lg", *ldd);
    shmem_barrier_all();
    shmem_complexd_sum_to_all(zd, zs, 2, 0, 0, n, NULL, pSync);
    CHECK(creal(zd[0]) == n * (n - 1) / 2 && cimag(zd[0]) == n && zd[1] == n * (1.0 + 1.0 * I), "complexd_sum_to_all");
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) CHECK(pSync[i] == SHMEM_SYNC_VALUE, "pSync[%d] restored", i);

    /* Whole-job reductions back to back with no barrier between them (two pSync arrays
     * alternating, as OSU does, but without its barriers), small and large ones mixed: up to
     * 2 KiB per PE they take one round through the runtime's own area (two halves used in
     * turn), above it hgas's allreduce. Every value checked after every call; in place
     * (dest == source) too; float sums whose result depends on the order of the additions must
     * come out bit-identical on every PE. */
    {
        const int sizes[6] = {1, 512, 513, 3, 2000, 64}; /* ints: 4 B, 2 KiB, 2 KiB + 4, ... */
        long *ps = shmem_malloc(2 * SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
        int *wk = shmem_malloc(2 * 2001 * sizeof(int));
        int *bs = shmem_malloc(2000 * sizeof(int)), *bd = shmem_malloc(2000 * sizeof(int));
        for (int i = 0; i < 2 * SHMEM_REDUCE_SYNC_SIZE; ++i) ps[i] = SHMEM_SYNC_VALUE;
        shmem_barrier_all();
        for (int it = 0; it < 60; ++it) {
            const int c = sizes[it % 6];
            long *p = ps + (it % 2) * SHMEM_REDUCE_SYNC_SIZE;
            int *w = wk + (it % 2) * 2001;
            for (int i = 0; i < c; ++i) bs[i] = it * 7 + me * 3 + i;
            if (it % 3 == 0) {
                shmem_int_sum_to_all(bd, bs, c, 0, 0, n, w, p);
            } else if (it % 3 == 1) {
                CHECK(shmem_int_sum_reduce(SHMEM_TEAM_WORLD, bd, bs, (size_t)c) == 0, "int_sum_reduce");
            } else {
                shmem_int_max_to_all(bs, bs, c, 0, 0, n, w, p); /* in place */
                for (int i = 0; i < c; ++i) bd[i] = bs[i];
            }
            for (int i = 0; i < c; ++i) {
                const int want = it % 3 == 2 ? it * 7 + (n - 1) * 3 + i : n * (it * 7 + i) + 3 * n * (n - 1) / 2;
                if (bd[i] != want) {
                    CHECK(0, "back to back: call %d (%d ints), dst[%d] = %d, want %d", it, c, i, bd[i], want);
                    break;
                }
            }
        }
        float *fs2 = shmem_malloc(16 * sizeof(float)), *fd2 = shmem_malloc(16 * sizeof(float));
        float *all = shmem_malloc(16 * (size_t)n * sizeof(float));
        for (int i = 0; i < 16; ++i) fs2[i] = (me % 2 ? 1.0e7f : 0.1f) * (float)(me + 1) + 0.3f * (float)i;
        CHECK(shmem_float_sum_reduce(SHMEM_TEAM_WORLD, fd2, fs2, 16) == 0, "float_sum_reduce");
        shmem_barrier_all();
        CHECK(shmem_fcollectmem(SHMEM_TEAM_WORLD, all, fd2, 16 * sizeof(float)) == 0, "fcollectmem");
        for (int p = 0; p < n; ++p)
            for (int i = 0; i < 16; ++i)
                CHECK(memcmp(&all[16 * p + i], &fd2[i], sizeof(float)) == 0, "float sum[%d] differs on PE %d", i, p);
        shmem_barrier_all();
        for (int i = 0; i < 2 * SHMEM_REDUCE_SYNC_SIZE; ++i)
            CHECK(ps[i] == SHMEM_SYNC_VALUE, "back-to-back pSync[%d] restored", i);
        shmem_barrier_all();
        shmem_free(all);
        shmem_free(fd2);
        shmem_free(fs2);
        shmem_free(bd);
        shmem_free(bs);
        shmem_free(wk);
        shmem_free(ps);
    }

    shmem_barrier_all();
    shmem_free(fd);
    shmem_free(fs);
    shmem_free(zd);
    shmem_free(zs);
    shmem_free(ldd);
    shmem_free(ls);
    shmem_free(dw);
    shmem_free(dd);
    shmem_free(ds);
    shmem_free(sw);
    shmem_free(sd);
    shmem_free(ss);
    shmem_free(pSync);
    shmem_free(pWrk);
    shmem_free(dst);
    shmem_free(src);
    shmem_free(sum);
    shmem_free(value);
    FINISH();
}
