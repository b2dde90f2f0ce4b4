/* Broadcast: the specification's examples for the team broadcast (root included) and the
 * deprecated shmem_broadcast64 (the root's dest is not written), with different roots. */
#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();

    long *source = shmem_malloc(4 * sizeof(long));
    long *dest = shmem_malloc(4 * sizeof(long));
    for (int i = 0; i < 4; ++i) {
        source[i] = me == 0 ? i + 1 : -100;
        dest[i] = -1;
    }
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, dest, source, 4, 0) == 0, "long_broadcast");
    for (int i = 0; i < 4; ++i) CHECK(dest[i] == i + 1, "dest[%d] = %ld", i, dest[i]);

    /* Another root, another type, the generic and mem names. */
    double *dsrc = shmem_malloc(100 * sizeof(double)), *ddst = shmem_malloc(100 * sizeof(double));
    for (int i = 0; i < 100; ++i) dsrc[i] = (double)me + 0.5 * i;
    CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, ddst, dsrc, 100, n - 1) == 0, "generic broadcast");
    for (int i = 0; i < 100; ++i) CHECK(ddst[i] == (double)(n - 1) + 0.5 * i, "ddst[%d] = %g", i, ddst[i]);
    char *cs = shmem_malloc(8), *cd = shmem_malloc(8);
    for (int i = 0; i < 8; ++i) cs[i] = (char)('a' + me);
    CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, cd, cs, 8, n / 2) == 0, "broadcastmem");
    for (int i = 0; i < 8; ++i) CHECK(cd[i] == (char)('a' + n / 2), "cd[%d] = %c", i, cd[i]);

    /* Deprecated broadcast64 over every PE: the root's dest keeps its value. */
    long *pSync = shmem_malloc(SHMEM_BCAST_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < 4; ++i) dest[i] = -1;
    shmem_barrier_all(); /* pSync initialized everywhere before use */
    shmem_broadcast64(dest, source, 4, 0, 0, 0, n, pSync);
    for (int i = 0; i < 4; ++i) CHECK(dest[i] == (me == 0 ? -1 : i + 1), "broadcast64 dest[%d] = %ld", i, dest[i]);
    int *isrc = shmem_malloc(3 * sizeof(int)), *idst = shmem_calloc(3, sizeof(int));
    for (int i = 0; i < 3; ++i) isrc[i] = 10 * me + i;
    shmem_broadcast32(idst, isrc, 3, n - 1, 0, 0, n, pSync);
    for (int i = 0; i < 3; ++i)
        CHECK(idst[i] == (me == n - 1 ? 0 : 10 * (n - 1) + i), "broadcast32 idst[%d] = %d", i, idst[i]);
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) CHECK(pSync[i] == SHMEM_SYNC_VALUE, "pSync[%d] restored", i);

    /* Rounds with no barrier between two of them: two pSync arrays alternate and a barrier
     * follows every second round, so that no PE reuses an array another may still be using (what
     * the specification asks), while the next round's signals may reach a PE still in this one
     * on the other array. Each round has its own dest (ready, as asked) and a rotating root, and
     * its data is checked the moment the call returns. */
    enum { ROUNDS = 40, LEN = 3 };
    long *pSync2 = shmem_malloc(SHMEM_BCAST_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) pSync2[i] = SHMEM_SYNC_VALUE;
    long *many = shmem_malloc(ROUNDS * LEN * sizeof(long)), *msrc = shmem_malloc(LEN * sizeof(long));
    for (int i = 0; i < ROUNDS * LEN; ++i) many[i] = -7;
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; ++r) {
        const int root = r % n;
        for (int i = 0; i < LEN; ++i) msrc[i] = 1000 * r + 10 * me + i;
        shmem_broadcast64(many + r * LEN, msrc, LEN, root, 0, 0, n, r % 2 ? pSync2 : pSync);
        for (int i = 0; i < LEN; ++i)
            CHECK(many[r * LEN + i] == (me == root ? -7 : 1000 * r + 10 * root + i), "round %d dest[%d] = %ld", r, i,
                  many[r * LEN + i]);
        if (r % 2) shmem_barrier_all();
    }
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i)
        CHECK(pSync[i] == SHMEM_SYNC_VALUE && pSync2[i] == SHMEM_SYNC_VALUE, "pSync[%d] restored after the rounds", i);
    shmem_barrier_all();
    shmem_free(msrc);
    shmem_free(many);
    shmem_free(pSync2);
    shmem_free(idst);
    shmem_free(isrc);
    shmem_free(pSync);
    shmem_free(cd);
    shmem_free(cs);
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_free(dest);
    shmem_free(source);
    FINISH();
}
