/* Regression: shmem_test_any / _test_any_vector / wait_until_any returned the lowest ready
 * index every time, so a program that serves whichever variable is ready (and leaves it
 * ready, or is slower than its producers) never reached the others. As the specification
 * suggests, each search now starts after the index returned last time: with every variable
 * ready, consecutive calls return every index in turn. */
#include "check.h"

#define NV 5

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    int *ready = shmem_calloc(NV, sizeof(int));
    int want[NV];
    for (int i = 0; i < NV; ++i) want[i] = 1;
    /* PE me's variables are set by its left neighbour (by itself with one PE). */
    for (int i = 0; i < NV; ++i) shmem_int_p(&ready[i], 1, (me + 1) % n);
    shmem_barrier_all();

    int seen[NV] = {0};
    for (int k = 0; k < 3 * NV; ++k) {
        size_t i = shmem_int_test_any(ready, NV, NULL, SHMEM_CMP_EQ, 1);
        CHECK(i < NV, "test_any returned %zu", i);
        if (i < NV) ++seen[i];
    }
    for (int i = 0; i < NV; ++i) CHECK(seen[i] == 3, "test_any returned index %d %d times of %d", i, seen[i], 3 * NV);

    /* Round robin also over the vector form and wait_until_any, and past excluded ones. */
    int status[NV] = {0, 1, 0, 1, 0};
    size_t prev = SIZE_MAX;
    for (int k = 0; k < 6; ++k) {
        size_t i = (k % 2) ? shmem_int_test_any_vector(ready, NV, status, SHMEM_CMP_EQ, want)
                           : shmem_int_wait_until_any(ready, NV, status, SHMEM_CMP_EQ, 1);
        CHECK(i == 0 || i == 2 || i == 4, "any over the included returned %zu", i);
        CHECK(i != prev, "any returned %zu twice in a row while others were ready", i);
        prev = i;
    }
    /* Only one ready: it is found wherever the search starts. */
    shmem_barrier_all();
    for (int i = 0; i < NV; ++i) ready[i] = 0;
    ready[3] = 1;
    for (int k = 0; k < NV; ++k) CHECK(shmem_int_test_any(ready, NV, NULL, SHMEM_CMP_EQ, 1) == 3, "lone ready one");
    /* The generic form too. */
    CHECK(shmem_test_any(ready, NV, NULL, SHMEM_CMP_EQ, 1) == 3, "generic test_any");
    shmem_barrier_all();
    FINISH();
}
