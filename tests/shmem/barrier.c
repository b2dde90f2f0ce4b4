/* Barriers and ordering: the specification's barrier_all example (put, barrier, read), fence
 * ordering a data put before a flag put, sync_all/team_sync, and shmem_barrier over the whole
 * job with a static pSync (the world does not need pSync to be symmetric). */
#include "check.h"

#define ROUNDS 20

static long pSync_static[SHMEM_BARRIER_SYNC_SIZE];

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; ++i) pSync_static[i] = SHMEM_SYNC_VALUE;

    int *x = shmem_calloc(2, sizeof(int));
    for (int r = 1; r <= ROUNDS; ++r) {
        shmem_int_p(&x[r % 2], r * 100 + me, right);
        switch (r % 4) {
        case 0: shmem_barrier_all(); break;
        case 1: shmem_barrier(0, 0, n, pSync_static); break;
        case 2: shmem_quiet(); shmem_sync_all(); break;
        default: shmem_quiet(); CHECK(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "team_sync"); break;
        }
        CHECK(x[r % 2] == r * 100 + left, "round %d: x = %d", r, x[r % 2]);
        shmem_barrier_all(); /* the next round writes the other slot; keep reads ahead of it */
    }

    /* Spec example for fence: data, fence, flag; a PE that sees the flag sees the data. */
    long *data = shmem_calloc(64, sizeof(long));
    long *flag = shmem_calloc(1, sizeof(long));
    long src[64];
    for (int i = 0; i < 64; ++i) src[i] = me * 64 + i;
    shmem_long_put(data, src, 64, right);
    shmem_fence();
    shmem_long_p(flag, 1, right);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < 64; ++i) CHECK(data[i] == left * 64 + i, "fence: data[%d] = %ld", i, data[i]);

    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(data);
    shmem_free(x);
    FINISH();
}
