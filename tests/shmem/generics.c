/* The C11 type-generic interfaces that were missing: every generic that has a context form
 * called with a context first (SHMEM_CTX_DEFAULT and a created context), the generic _nbi
 * fetching atomics, the signed fixed-width types of the bitwise atomic and reduction tables,
 * the generic wait_until/test all/any/some (and _vector) forms, and the deprecated generic
 * names. Each call is checked by its effect, so a wrong dispatch (another type's routine, the
 * non-context form) shows as a wrong value. */
#include <stdint.h>

#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    shmem_ctx_t ctxs[2] = {SHMEM_CTX_DEFAULT, ctx};

    /* RMA with a context: put, p, iput, get, g, iget, put_nbi, get_nbi, put_signal(_nbi). */
    long *box = shmem_calloc(16, sizeof(long));
    uint64_t *sig = shmem_calloc(2, sizeof(uint64_t));
    long src[4] = {me * 10 + 1, me * 10 + 2, me * 10 + 3, me * 10 + 4}, got[4] = {0};
    shmem_put(ctxs[1], box, src, 2, right);                      /* box[0..1] */
    shmem_p(ctxs[0], &box[2], (long)(me * 10 + 7), right);        /* box[2] */
    shmem_iput(ctx, &box[4], src, 2, 1, 2, right);                /* box[4], box[6] */
    shmem_put_nbi(ctx, &box[8], &src[2], 2, right);               /* box[8..9] */
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    const long l = left * 10;
    CHECK(box[0] == l + 1 && box[1] == l + 2 && box[2] == l + 7 && box[4] == l + 1 && box[6] == l + 2 &&
              box[8] == l + 3 && box[9] == l + 4,
          "ctx puts: %ld %ld %ld %ld %ld %ld %ld", box[0], box[1], box[2], box[4], box[6], box[8], box[9]);
    const long r = right * 10;
    shmem_get(ctx, got, box, 2, right);                           /* right's box holds my puts */
    CHECK(got[0] == me * 10 + 1 && got[1] == me * 10 + 2, "ctx get %ld %ld", got[0], got[1]);
    CHECK(shmem_g(SHMEM_CTX_DEFAULT, &box[2], right) == me * 10 + 7, "ctx g");
    shmem_iget(ctx, got, &box[4], 1, 2, 2, right);
    CHECK(got[0] == me * 10 + 1 && got[1] == me * 10 + 2, "ctx iget %ld %ld", got[0], got[1]);
    shmem_get_nbi(ctx, got, &box[8], 2, right);
    shmem_ctx_quiet(ctx);
    CHECK(got[0] == me * 10 + 3 && got[1] == me * 10 + 4 && r == right * 10, "ctx get_nbi %ld %ld", got[0], got[1]);
    shmem_barrier_all();
    shmem_put_signal(ctx, &box[10], src, 1, &sig[0], 1, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal_nbi(ctx, &box[11], &src[1], 1, &sig[1], 5, SHMEM_SIGNAL_SET, right);
    shmem_ctx_quiet(ctx);
    shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 1);
    shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, 5);
    CHECK(box[10] == l + 1 && box[11] == l + 2, "ctx put_signal %ld %ld", box[10], box[11]);
    shmem_barrier_all();

    /* Atomics with a context, and the _nbi fetching atomics with and without one, on PE 0. */
    long *a = shmem_calloc(4, sizeof(long));
    shmem_atomic_add(ctx, &a[0], 2L, 0);
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, &a[0], 0);
    long old = shmem_atomic_fetch_add(ctx, &a[1], 1L, 0) + shmem_atomic_fetch_inc(ctx, &a[1], 0) * 0;
    (void)old;
    long f1 = -1, f2 = -1;
    shmem_atomic_fetch_add_nbi(&f1, &a[2], 10L, 0);
    shmem_atomic_fetch_inc_nbi(ctx, &f2, &a[2], 0);
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    CHECK(f1 >= 0 && f2 >= 0 && f1 != f2, "fetch_add_nbi %ld, fetch_inc_nbi %ld", f1, f2);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(a[0] == 3L * n, "ctx add/inc: %ld", a[0]);
        CHECK(a[1] == 2L * n, "ctx fetch_add/fetch_inc: %ld", a[1]);
        CHECK(a[2] == 11L * n, "fetch_add_nbi/fetch_inc_nbi: %ld", a[2]);
    }
    shmem_barrier_all();
    if (me == 0) {
        long v = -1;
        shmem_atomic_set(ctx, &a[3], 40L, right);
        shmem_ctx_quiet(ctx);
        CHECK(shmem_atomic_fetch(ctx, (const long *)&a[3], right) == 40, "ctx set/fetch");
        CHECK(shmem_atomic_swap(ctx, &a[3], 41L, right) == 40, "ctx swap");
        CHECK(shmem_atomic_compare_swap(ctx, &a[3], 41L, 42L, right) == 41, "ctx compare_swap");
        shmem_atomic_fetch_nbi(ctx, &v, &a[3], right);
        shmem_ctx_quiet(ctx);
        CHECK(v == 42, "ctx fetch_nbi %ld", v);
        shmem_atomic_swap_nbi(&v, &a[3], 43L, right);
        shmem_quiet();
        CHECK(v == 42, "swap_nbi %ld", v);
        shmem_atomic_compare_swap_nbi(ctx, &v, &a[3], 43L, 44L, right);
        shmem_ctx_quiet(ctx);
        CHECK(v == 43 && shmem_atomic_fetch(&a[3], right) == 44, "ctx compare_swap_nbi %ld", v);
    }
    shmem_barrier_all();

    /* Bitwise atomics and reductions on the signed fixed-width types (Tables 7 and 10). */
    int32_t *b32 = shmem_calloc(2, sizeof(int32_t));
    int64_t *b64 = shmem_calloc(2, sizeof(int64_t));
    b32[0] = -1;
    b64[0] = 0;
    shmem_barrier_all();
    shmem_atomic_and(&b32[0], (int32_t) ~(1 << me), 0);              /* clears bit me on PE 0 */
    shmem_atomic_or(ctx, &b64[0], (int64_t)1 << (32 + me), 0);        /* sets bit 32 + me */
    int32_t f32 = 0;
    shmem_atomic_fetch_xor_nbi(ctx, &f32, &b32[1], (int32_t)(1 << me), 0);
    int64_t f64 = shmem_atomic_fetch_and(&b64[1], (int64_t)0, 0);
    int64_t f64b = 0;
    shmem_atomic_fetch_or_nbi(&f64b, &b64[1], (int64_t)0, 0);
    shmem_atomic_fetch_and_nbi(ctx, &f64b, &b64[1], (int64_t)-1, 0);
    (void)f64;
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 0) {
        const int32_t mask = (int32_t)((n >= 32 ? 0u : (1u << n)) - 1u);
        CHECK(b32[0] == ~mask, "int32 and: %d", (int)b32[0]);
        CHECK(b32[1] == mask, "int32 fetch_xor_nbi: %d", (int)b32[1]);
        CHECK(b64[0] == (int64_t)mask << 32, "int64 or: %lld", (long long)b64[0]);
    }
    int8_t *r8 = shmem_malloc(2 * sizeof(int8_t));
    int64_t *r64 = shmem_malloc(2 * sizeof(int64_t));
    r8[1] = (int8_t)(1 << (me % 7));
    r64[1] = (int64_t)1 << (40 + me % 20);
    shmem_barrier_all();
    CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, &r8[0], &r8[1], 1) == 0, "int8 or_reduce");
    CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, &r64[0], &r64[1], 1) == 0, "int64 xor_reduce");
    int8_t want8 = 0;
    int64_t want64 = 0;
    for (int p = 0; p < n; ++p) {
        want8 = (int8_t)(want8 | (1 << (p % 7)));
        want64 ^= (int64_t)1 << (40 + p % 20);
    }
    CHECK(r8[0] == want8 && r64[0] == want64, "bitwise reduce: %d %lld", r8[0], (long long)r64[0]);
    shmem_barrier_all();

    /* Generic wait_until_all/any/some(_vector) and test_all/any/some(_vector). */
    int *flags = shmem_calloc((size_t)n, sizeof(int));
    for (int p = 0; p < n; ++p) shmem_p(&flags[me], me + 1, p);
    int *want = malloc((size_t)n * sizeof(int));
    size_t *idx = malloc((size_t)n * sizeof(size_t));
    for (int i = 0; i < n; ++i) want[i] = i + 1;
    shmem_wait_until_all(flags, (size_t)n, NULL, SHMEM_CMP_GT, 0);
    shmem_wait_until_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want);
    CHECK(shmem_wait_until_any(flags, (size_t)n, NULL, SHMEM_CMP_GE, 1) < (size_t)n, "wait_until_any");
    CHECK(shmem_wait_until_any_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want) < (size_t)n, "any_vector");
    CHECK(shmem_wait_until_some(flags, (size_t)n, idx, NULL, SHMEM_CMP_GE, 1) == (size_t)n, "wait_until_some");
    CHECK(shmem_wait_until_some_vector(flags, (size_t)n, idx, NULL, SHMEM_CMP_EQ, want) == (size_t)n, "some_vector");
    CHECK(shmem_test_all(flags, (size_t)n, NULL, SHMEM_CMP_GE, 1) == 1, "test_all");
    CHECK(shmem_test_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want) == 1, "test_all_vector");
    CHECK(shmem_test_any(flags, (size_t)n, NULL, SHMEM_CMP_EQ, n) == (size_t)(n - 1), "test_any");
    CHECK(shmem_test_any_vector(flags, (size_t)n, NULL, SHMEM_CMP_NE, want) == SIZE_MAX, "test_any_vector");
    CHECK(shmem_test_some(flags, (size_t)n, idx, NULL, SHMEM_CMP_LE, 1) == 1 && idx[0] == 0, "test_some");
    CHECK(shmem_test_some_vector(flags, (size_t)n, idx, NULL, SHMEM_CMP_EQ, want) == (size_t)n, "test_some_vector");
    shmem_barrier_all();

    /* The deprecated generic names (standard AMO types; swap/fetch/set also float, double). */
    int *oi = shmem_calloc(2, sizeof(int));
    unsigned long *ou = shmem_calloc(1, sizeof(unsigned long));
    double *od = shmem_calloc(1, sizeof(double));
    shmem_barrier_all();
    shmem_add(&oi[0], 2, 0);
    shmem_inc(&oi[0], 0);
    (void)shmem_finc(&oi[1], 0);
    (void)shmem_fadd(&oi[1], 2, 0);
    shmem_add(ou, 5UL, 0);
    shmem_uint64_add((uint64_t *)ou, 1, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(*ou == 6UL * n, "deprecated add on unsigned long: %lu", *ou);
    if (me == 0) {
        CHECK(oi[0] == 3 * n && oi[1] == 3 * n, "deprecated add/inc/finc/fadd: %d %d", oi[0], oi[1]);
        shmem_set(od, 2.5, right);
        shmem_quiet();
        CHECK(shmem_fetch(od, right) == 2.5, "deprecated set/fetch double");
        CHECK(shmem_swap(od, 3.5, right) == 2.5, "deprecated swap double");
        CHECK(shmem_cswap(&oi[0], 3 * n, 7, 0) == 3 * n && oi[0] == 7, "deprecated cswap");
    }
    shmem_barrier_all();

    shmem_ctx_destroy(ctx);
    free(want);
    free(idx);
    FINISH();
}
