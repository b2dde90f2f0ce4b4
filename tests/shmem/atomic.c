/* Atomics: the specification's examples (fetch_inc, add, compare_swap, swap, fetch/set) and
 * every standard AMO type, the bitwise ones, the _nbi fetching forms and the deprecated names. */
#include "check.h"

#define ITERS 50

/* fetch_inc and fetch_add on PE 0's counter from every PE, for each standard AMO type. */
#define TEST_AMO_TYPE(T, N, G)                                                                     \
    {                                                                                              \
        T *ctr = shmem_calloc(2, sizeof(T));                                                       \
        T seen_max = 0;                                                                            \
        for (int i = 0; i < ITERS; ++i) {                                                          \
            T old = shmem_##N##_atomic_fetch_inc(&ctr[0], 0);                                      \
            if (old > seen_max) seen_max = old;                                                    \
            shmem_##N##_atomic_add(&ctr[1], (T)2, 0);                                              \
        }                                                                                          \
        shmem_##N##_atomic_inc(&ctr[0], 0);                                                        \
        T prev = shmem_##N##_atomic_fetch_add(&ctr[1], (T)1, 0);                                   \
        CHECK(seen_max < (T)(n * ITERS + n), #N " fetch_inc saw %lld", (long long)seen_max);       \
        CHECK(prev >= (T)(2 * ITERS), #N " fetch_add old %lld", (long long)prev);                  \
        shmem_barrier_all();                                                                       \
        if (me == 0) {                                                                             \
            CHECK(ctr[0] == (T)(n * ITERS + n), #N " counter %lld", (long long)ctr[0]);            \
            CHECK(ctr[1] == (T)(n * 2 * ITERS + n), #N " sum %lld", (long long)ctr[1]);            \
        }                                                                                          \
        T f = shmem_##N##_atomic_fetch(&ctr[0], 0);                                                \
        CHECK(f == (T)(n * ITERS + n), #N " atomic_fetch %lld", (long long)f);                     \
        shmem_barrier_all();                                                                       \
        /* compare_swap: exactly one PE turns the 0 into its number + 1. */                        \
        if (me == 0) shmem_##N##_atomic_set(&ctr[0], (T)0, 0);                                     \
        shmem_barrier_all();                                                                       \
        T got = shmem_##N##_atomic_compare_swap(&ctr[0], (T)0, (T)(me + 1), 0);                    \
        shmem_barrier_all();                                                                       \
        T winner = shmem_##N##_atomic_fetch(&ctr[0], 0);                                           \
        CHECK(winner >= (T)1 && winner <= (T)n, #N " cswap winner %lld", (long long)winner);       \
        CHECK((got == (T)0) == (winner == (T)(me + 1)), #N " cswap old %lld", (long long)got);     \
        /* swap_nbi / fetch_inc_nbi complete by quiet. */                                          \
        T fetched = 0, fetched2 = 0;                                                               \
        shmem_barrier_all();                                                                       \
        shmem_##N##_atomic_swap_nbi(&fetched, &ctr[1], (T)7, me);                                  \
        shmem_##N##_atomic_fetch_add_nbi(&fetched2, &ctr[1], (T)3, me);                            \
        shmem_quiet();                                                                             \
        CHECK(fetched2 == (T)7 && ctr[1] == (T)10, #N " nbi forms");                               \
        shmem_barrier_all();                                                                       \
        shmem_free(ctr);                                                                           \
    }

#define TEST_BIT_TYPE(T, N, G)                                                                     \
    {                                                                                              \
        T *w = shmem_malloc(3 * sizeof(T));                                                        \
        w[0] = 0;                    /* or: each PE sets its bit */                                \
        w[1] = (T)~(T)0;             /* and: each PE clears its bit */                             \
        w[2] = 0;                    /* xor: each PE flips its bit twice */       \
        shmem_barrier_all();                                                                       \
        T bit = (T)((T)1 << (me % 30));                                                            \
        shmem_##N##_atomic_or(&w[0], bit, 0);                                                      \
        (void)shmem_##N##_atomic_fetch_and(&w[1], (T)~bit, 0);                                     \
        shmem_##N##_atomic_xor(&w[2], bit, 0);                                                     \
        T x = 0;                                                                                   \
        shmem_##N##_atomic_fetch_xor_nbi(&x, &w[2], bit, 0);                                       \
        shmem_quiet();                                                                             \
        (void)shmem_##N##_atomic_fetch_or(&w[2], (T)0, 0);                                         \
        shmem_barrier_all();                                                                       \
        if (me == 0) {                                                                             \
            T all = 0;                                                                             \
            for (int p = 0; p < n; ++p) all |= (T)((T)1 << (p % 30));                              \
            CHECK(w[0] == all, #N " or: %llx", (unsigned long long)w[0]);                          \
            CHECK(w[1] == (T)~all, #N " and: %llx", (unsigned long long)w[1]);                     \
            CHECK(w[2] == 0, #N " xor: %llx", (unsigned long long)w[2]);                           \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        shmem_free(w);                                                                             \
    }

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

    HGAS_SHMEM_TYPES_AMO(TEST_AMO_TYPE)
    HGAS_SHMEM_TYPES_AMO_BIT(TEST_BIT_TYPE)

    /* Spec example (swap): each PE swaps its number into its right neighbour's word. */
    long *sw = shmem_malloc(sizeof(long));
    *sw = -1;
    shmem_barrier_all();
    long old = shmem_long_atomic_swap(sw, me, right);
    shmem_barrier_all();
    CHECK(old == -1 || n == 1, "swap old %ld", old);
    CHECK(*sw == left, "swap left %ld", *sw);

    /* float/double fetch, set, swap (extended AMO types). */
    double *dv = shmem_malloc(sizeof(double));
    float *fv = shmem_malloc(sizeof(float));
    shmem_barrier_all();
    shmem_double_atomic_set(dv, 1.5 * me, right);
    shmem_float_atomic_set(fv, 0.25f * (float)me, right);
    shmem_barrier_all();
    CHECK(shmem_double_atomic_fetch(dv, me) == 1.5 * left, "double set/fetch");
    CHECK(shmem_float_atomic_swap(fv, 9.0f, me) == 0.25f * (float)left && *fv == 9.0f, "float swap");
    double dfetch = 0;
    shmem_double_atomic_fetch_nbi(&dfetch, dv, me);
    shmem_quiet();
    CHECK(dfetch == 1.5 * left, "double fetch_nbi");

    /* Deprecated names. */
    int *ic = shmem_calloc(1, sizeof(int));
    long *lc = shmem_calloc(1, sizeof(long));
    long long *llc = shmem_calloc(2, sizeof(long long));
    shmem_barrier_all();
    (void)shmem_int_fadd(ic, 3, 0);
    shmem_int_add(ic, 1, 0);
    shmem_int_inc(ic, 0);
    (void)shmem_long_finc(lc, 0);
    shmem_long_inc(lc, 0);
    shmem_long_add(lc, 10, 0);
    shmem_barrier_all();
    CHECK(shmem_int_fetch(ic, 0) == 5 * n, "int_fadd/add/inc: %d", shmem_int_fetch(ic, 0));
    CHECK(shmem_long_fetch(lc, 0) == 12L * n, "long_finc/inc/add: %ld", shmem_long_fetch(lc, 0));
    shmem_barrier_all();
    if (me == 0) shmem_longlong_set(&llc[0], 42, right);
    shmem_barrier_all();
    if (me == 1 % n) CHECK(llc[0] == 42, "longlong_set %lld", llc[0]);
    shmem_barrier_all();
    if (me == 0) {
        long long prev = shmem_longlong_swap(&llc[0], 43, right);
        CHECK(prev == 42, "longlong_swap old %lld", prev);
        long long c1 = shmem_longlong_cswap(&llc[0], 43, 44, right);
        long long c2 = shmem_longlong_cswap(&llc[0], 43, 45, right);
        CHECK(c1 == 43 && c2 == 44, "longlong_cswap %lld %lld", c1, c2);
        CHECK(shmem_longlong_fetch(&llc[0], right) == 44, "longlong_fetch");
        CHECK(shmem_double_swap(dv, 2.0, me) == 1.5 * left, "double_swap");
        shmem_float_set(fv, 3.0f, me);
        CHECK(shmem_float_fetch(fv, me) == 3.0f, "float_set/fetch");
    }

    /* C11 type-generic names. */
    shmem_barrier_all();
    unsigned long *g = shmem_calloc(1, sizeof(unsigned long));
    shmem_atomic_inc(g, 0);
    (void)shmem_atomic_fetch_add(g, 2UL, 0);
    shmem_barrier_all();
    CHECK(shmem_atomic_fetch(g, 0) == 3UL * n, "generic atomics %lu", shmem_atomic_fetch(g, 0));

    shmem_barrier_all();
    shmem_free(g);
    shmem_free(llc);
    shmem_free(lc);
    shmem_free(ic);
    shmem_free(fv);
    shmem_free(dv);
    shmem_free(sw);
    FINISH();
}
