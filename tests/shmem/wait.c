/* Point-to-point synchronization: the specification's wait_until example, the all/any/some
 * and vector forms, test and its variants, signed comparisons, the deprecated waits. */
#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();

    /* Spec example: every other PE increments PE 0's ivar; PE 0 waits until all have. */
    int *ivar = shmem_calloc(1, sizeof(int));
    if (me != 0) shmem_int_atomic_inc(ivar, 0);
    if (me == 0) {
        shmem_int_wait_until(ivar, SHMEM_CMP_EQ, n - 1);
        CHECK(*ivar == n - 1, "ivar %d", *ivar);
    }
    shmem_barrier_all();

    /* Every PE sets flags[me] = me + 1 on every PE; each waits for all of them. */
    long *flags = shmem_calloc((size_t)n, sizeof(long));
    for (int p = 0; p < n; ++p) shmem_long_p(&flags[me], me + 1, p);
    long *want = malloc((size_t)n * sizeof(long));
    for (int i = 0; i < n; ++i) want[i] = i + 1;
    shmem_long_wait_until_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want);
    for (int i = 0; i < n; ++i) CHECK(flags[i] == i + 1, "flags[%d] = %ld", i, flags[i]);
    shmem_long_wait_until_all(flags, (size_t)n, NULL, SHMEM_CMP_GT, 0);
    CHECK(shmem_long_test_all(flags, (size_t)n, NULL, SHMEM_CMP_GE, 1) == 1, "test_all");
    CHECK(shmem_long_test_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want) == 1, "test_all_vector");

    /* status excludes elements: only the last one may answer. */
    int *status = calloc((size_t)n, sizeof(int));
    for (int i = 0; i + 1 < n; ++i) status[i] = 1;
    CHECK(shmem_long_wait_until_any(flags, (size_t)n, status, SHMEM_CMP_NE, 0) == (size_t)(n - 1), "wait_any");
    CHECK(shmem_long_wait_until_any_vector(flags, (size_t)n, status, SHMEM_CMP_EQ, want) == (size_t)(n - 1),
          "wait_any_vector");
    size_t *idx = malloc((size_t)n * sizeof(size_t));
    CHECK(shmem_long_wait_until_some(flags, (size_t)n, idx, NULL, SHMEM_CMP_GE, 1) == (size_t)n, "wait_some");
    for (int i = 0; i < n; ++i) CHECK(idx[i] == (size_t)i, "wait_some idx[%d] = %zu", i, idx[i]);
    CHECK(shmem_long_wait_until_some_vector(flags, (size_t)n, idx, status, SHMEM_CMP_EQ, want) == 1 &&
              idx[0] == (size_t)(n - 1), "wait_some_vector");
    /* Nothing left to wait for: any returns SIZE_MAX at once. */
    for (int i = 0; i < n; ++i) status[i] = 1;
    CHECK(shmem_long_wait_until_any(flags, (size_t)n, status, SHMEM_CMP_EQ, 12345) == SIZE_MAX, "any all excluded");
    CHECK(shmem_long_test_any(flags, (size_t)n, NULL, SHMEM_CMP_EQ, 12345) == SIZE_MAX, "test_any none");
    CHECK(shmem_long_test_any(flags, (size_t)n, NULL, SHMEM_CMP_EQ, n) == (size_t)(n - 1), "test_any last");
    CHECK(shmem_long_test_any_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want) == 0, "test_any_vector");
    CHECK(shmem_long_test_some(flags, (size_t)n, idx, NULL, SHMEM_CMP_LE, 1) == 1 && idx[0] == 0, "test_some");
    CHECK(shmem_long_test_some_vector(flags, (size_t)n, idx, NULL, SHMEM_CMP_NE, want) == 0, "test_some_vector");
    CHECK(shmem_long_test(&flags[0], SHMEM_CMP_EQ, 1) == 1 && shmem_long_test(&flags[0], SHMEM_CMP_LT, 1) == 0,
          "test");
    shmem_barrier_all();

    /* Signed comparison for signed types; unsigned 64-bit waits use hgas signal words. */
    long *s = shmem_malloc(sizeof(long));
    *s = -5;
    CHECK(shmem_long_test(s, SHMEM_CMP_LT, 0) == 1, "signed LT");
    unsigned long *u = shmem_calloc(1, sizeof(unsigned long));
    short *sh = shmem_calloc(1, sizeof(short));
    uint32_t *u32 = shmem_calloc(1, sizeof(uint32_t));
    shmem_barrier_all();
    shmem_ulong_atomic_inc(u, 0);
    shmem_short_p(sh, (short)-7, n - 1);
    shmem_uint32_atomic_add(u32, 2, n - 1);
    if (me == 0) {
        shmem_ulong_wait_until(u, SHMEM_CMP_GE, (unsigned long)n);
        CHECK(*u == (unsigned long)n, "ulong wait %lu", *u);
    }
    if (me == n - 1) {
        shmem_short_wait_until(sh, SHMEM_CMP_LT, 0);
        shmem_uint32_wait_until(u32, SHMEM_CMP_EQ, (uint32_t)(2 * n));
        CHECK(*sh == -7 && *u32 == (uint32_t)(2 * n), "short/uint32 wait");
    }
    shmem_barrier_all();

    /* Deprecated waits: until the value differs. */
    int *w = shmem_calloc(1, sizeof(int));
    long *lw = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    shmem_int_p(w, 1, (me + 1) % n);
    shmem_long_p(lw, 2, (me + 1) % n);
    shmem_int_wait(w, 0);
    shmem_wait(lw, 0);
    CHECK(*w == 1 && *lw == 2, "deprecated waits");

    /* C11 type-generic names. */
    shmem_wait_until(w, SHMEM_CMP_EQ, 1);
    CHECK(shmem_test(lw, SHMEM_CMP_EQ, 2L) == 1, "generic test");

    shmem_barrier_all();
    free(idx);
    free(status);
    free(want);
    shmem_free(lw);
    shmem_free(w);
    shmem_free(u32);
    shmem_free(sh);
    shmem_free(u);
    shmem_free(s);
    shmem_free(flags);
    shmem_free(ivar);
    FINISH();
}
