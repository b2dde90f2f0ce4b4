/* Locks: the specification's example (a counter on PE 0 updated with get + put under a lock,
 * so that only mutual exclusion keeps the count right), and test_lock while the lock is held. */
#include "check.h"

#define ITERS 30

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();

    long *lock = shmem_calloc(1, sizeof(long));
    int *count = shmem_calloc(1, sizeof(int));
    for (int i = 0; i < ITERS; ++i) {
        shmem_set_lock(lock);
        int val = shmem_int_g(count, 0);
        shmem_int_p(count, val + 1, 0);
        shmem_clear_lock(lock); /* quiets the put first */
    }
    shmem_barrier_all();
    CHECK(shmem_int_g(count, 0) == n * ITERS, "count %d, want %d", shmem_int_g(count, 0), n * ITERS);

    /* PE 0 holds the lock: everyone else's test_lock fails; after release one test succeeds. */
    if (me == 0) CHECK(shmem_test_lock(lock) == 0, "test_lock on a free lock");
    shmem_barrier_all();
    if (me != 0) CHECK(shmem_test_lock(lock) == 1, "test_lock on a held lock");
    shmem_barrier_all();
    if (me == 0) shmem_clear_lock(lock);
    shmem_barrier_all();
    if (me == n - 1) {
        CHECK(shmem_test_lock(lock) == 0, "test_lock after release");
        shmem_clear_lock(lock);
    }

    shmem_barrier_all();
    shmem_free(count);
    shmem_free(lock);
    FINISH();
}
