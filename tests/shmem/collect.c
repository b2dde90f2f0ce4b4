/* Collect, fcollect, alltoall(s): the specification's examples for the team routines and the
 * deprecated 32/64-bit active-set forms over every PE. */
#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();

    /* fcollect: two ints per PE, in PE order. */
    int *src = shmem_malloc(2 * sizeof(int)), *dst = shmem_malloc(2 * (size_t)n * sizeof(int));
    src[0] = me;
    src[1] = 10 * me;
    CHECK(shmem_int_fcollect(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "int_fcollect");
    for (int p = 0; p < n; ++p) CHECK(dst[2 * p] == p && dst[2 * p + 1] == 10 * p, "fcollect block %d", p);

    /* collect: PE p contributes p + 1 elements of value p. */
    const size_t total = (size_t)n * (size_t)(n + 1) / 2;
    long *csrc = shmem_malloc((size_t)n * sizeof(long)), *cdst = shmem_malloc(total * sizeof(long));
    for (int i = 0; i <= me; ++i) csrc[i] = me;
    CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, cdst, csrc, (size_t)me + 1) == 0, "long_collect");
    size_t k = 0;
    for (int p = 0; p < n; ++p)
        for (int i = 0; i <= p; ++i, ++k) CHECK(cdst[k] == p, "collect cdst[%zu] = %ld, want %d", k, cdst[k], p);

    /* alltoall: block j of PE i (3 elements) lands as block i of PE j. */
    const int B = 3;
    double *asrc = shmem_malloc((size_t)(n * B) * sizeof(double)), *adst = shmem_malloc((size_t)(n * B) * sizeof(double));
    for (int j = 0; j < n; ++j)
        for (int e = 0; e < B; ++e) asrc[j * B + e] = me * 100 + j * 10 + e;
    CHECK(shmem_double_alltoall(SHMEM_TEAM_WORLD, adst, asrc, (size_t)B) == 0, "double_alltoall");
    for (int i = 0; i < n; ++i)
        for (int e = 0; e < B; ++e)
            CHECK(adst[i * B + e] == i * 100 + me * 10 + e, "alltoall adst[%d] = %g", i * B + e, adst[i * B + e]);

    /* alltoalls: dest stride 2, source stride 3. */
    int *ssrc = shmem_malloc((size_t)(3 * n * B) * sizeof(int)), *sdst = shmem_calloc((size_t)(2 * n * B), sizeof(int));
    for (int j = 0; j < n; ++j)
        for (int e = 0; e < B; ++e) ssrc[3 * (j * B + e)] = me * 100 + j * 10 + e;
    CHECK(shmem_int_alltoalls(SHMEM_TEAM_WORLD, sdst, ssrc, 2, 3, (size_t)B) == 0, "int_alltoalls");
    for (int i = 0; i < n; ++i)
        for (int e = 0; e < B; ++e) {
            CHECK(sdst[2 * (i * B + e)] == i * 100 + me * 10 + e, "alltoalls sdst[%d]", 2 * (i * B + e));
            CHECK(sdst[2 * (i * B + e) + 1] == 0, "alltoalls wrote a gap");
        }

    /* Generic and mem names. */
    CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, dst, src, 2) == 0 && dst[2 * (n - 1)] == n - 1, "generic fcollect");
    CHECK(shmem_collectmem(SHMEM_TEAM_WORLD, cdst, csrc, ((size_t)me + 1) * sizeof(long)) == 0 &&
              cdst[total - 1] == n - 1, "collectmem");
    CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, adst, asrc, B * sizeof(double)) == 0 &&
              adst[0] == me * 10, "alltoallmem");

    /* Deprecated active-set forms over every PE. */
    long *pSync = shmem_malloc(SHMEM_COLLECT_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
    /* dest is reset before the barrier: a member may write into ours as soon as it calls (every
     * member's dest must be ready before any member calls). */
    for (int i = 0; i < 2 * n; ++i) dst[i] = -1;
    shmem_barrier_all();
    shmem_fcollect32(dst, src, 2, 0, 0, n, pSync);
    for (int p = 0; p < n; ++p) CHECK(dst[2 * p] == p && dst[2 * p + 1] == 10 * p, "fcollect32 block %d", p);
    shmem_barrier_all();
    for (size_t i = 0; i < total; ++i) cdst[i] = -1;
    shmem_collect64(cdst, csrc, (size_t)me + 1, 0, 0, n, pSync);
    k = 0;
    for (int p = 0; p < n; ++p)
        for (int i = 0; i <= p; ++i, ++k) CHECK(cdst[k] == p, "collect64 cdst[%zu] = %ld", k, cdst[k]);
    shmem_barrier_all();
    shmem_alltoall64(adst, asrc, (size_t)B, 0, 0, n, pSync);
    for (int i = 0; i < n; ++i)
        for (int e = 0; e < B; ++e) CHECK(adst[i * B + e] == i * 100 + me * 10 + e, "alltoall64");
    shmem_barrier_all();
    for (int i = 0; i < 2 * n * B; ++i) sdst[i] = 0;
    shmem_barrier_all();
    shmem_alltoalls32(sdst, ssrc, 2, 3, (size_t)B, 0, 0, n, pSync);
    for (int i = 0; i < n; ++i)
        for (int e = 0; e < B; ++e) CHECK(sdst[2 * (i * B + e)] == i * 100 + me * 10 + e, "alltoalls32");
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; ++i) CHECK(pSync[i] == SHMEM_SYNC_VALUE, "pSync[%d] restored", i);

    /* fcollect32 back to back with no barrier between calls, as OSU runs it but without its
     * barriers: two pSync arrays and two dest arrays alternate, so every member's dest and pSync
     * are free again when any member calls with them (a member that enters call i + 2 has
     * every member's block of call i + 1, sent after that member checked call i). Blocks of
     * 1, 33 and 4100 ints (16 400 bytes: the whole job's hgas_fcollect). */
    long *ps2 = shmem_malloc(2 * SHMEM_COLLECT_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < 2 * SHMEM_COLLECT_SYNC_SIZE; ++i) ps2[i] = SHMEM_SYNC_VALUE;
    const int maxb = 4100;
    int *fsrc = shmem_malloc(maxb * sizeof(int));
    int *fdst = shmem_malloc(2 * (size_t)n * maxb * sizeof(int));
    shmem_barrier_all();
    const int blocks[3] = {1, 33, maxb};
    for (int b = 0; b < 3; ++b) {
        const int nb = blocks[b];
        for (int it = 0; it < 40; ++it) {
            int *d = fdst + (size_t)(it % 2) * n * maxb;
            for (int e = 0; e < nb; ++e) fsrc[e] = (b * 1000 + it) * 100000 + me * 1000 + e % 1000;
            shmem_fcollect32(d, fsrc, (size_t)nb, 0, 0, n, ps2 + (it % 2) * SHMEM_COLLECT_SYNC_SIZE);
            for (int p = 0; p < n; ++p)
                for (int e = 0; e < nb; ++e)
                    if (d[p * nb + e] != (b * 1000 + it) * 100000 + p * 1000 + e % 1000) {
                        CHECK(0, "fcollect32 back to back: %d ints, call %d, block %d, element %d = %d", nb, it, p, e,
                              d[p * nb + e]);
                        e = nb;
                    }
        }
    }
    shmem_barrier_all();
    for (int i = 0; i < 2 * SHMEM_COLLECT_SYNC_SIZE; ++i)
        CHECK(ps2[i] == SHMEM_SYNC_VALUE, "back-to-back pSync[%d] restored: %ld", i, ps2[i]);
    shmem_barrier_all();
    shmem_free(fdst);
    shmem_free(fsrc);
    shmem_free(ps2);

    shmem_barrier_all();
    shmem_free(pSync);
    shmem_free(sdst);
    shmem_free(ssrc);
    shmem_free(adst);
    shmem_free(asrc);
    shmem_free(cdst);
    shmem_free(csrc);
    shmem_free(dst);
    shmem_free(src);
    FINISH();
}
