/* Active sets smaller than the job (run with 3 and 4 PEs): the even PEs, and PEs 1..n-1.
 * Barrier (reusing one pSync back to back), broadcast, fcollect, collect, alltoall and
 * *_to_all reductions, with values checked and pSync restored to SHMEM_SYNC_VALUE. Only the
 * members call; the others go straight to the world barrier that separates the sets. A
 * collective alternates pSyncA and pSyncB with the previous one, as the specification allows. */
#include "check.h"

#define ROUNDS 25
#define MAXN 64

static int me, n;
static long *data, *pSyncA, *pSyncB;

static int member(int start, int stride, int size) {
    return me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
}

static void check_psync(const long *p, const char *what) {
    for (int i = 0; i < SHMEM_SYNC_SIZE; ++i) CHECK(p[i] == SHMEM_SYNC_VALUE, "%s: pSync[%d] = %ld", what, i, p[i]);
}

static void run_set(int start, int log, int size) {
    const int stride = 1 << log;
    if (!member(start, stride, size)) return;
    const int idx = (me - start) / stride;
    const int next = start + ((idx + 1) % size) * stride, prev_idx = (idx + size - 1) % size;

    /* Barrier: put to the next member, barrier, read what the previous one put. */
    for (int r = 1; r <= ROUNDS; ++r) {
        shmem_long_p(&data[r % 2], 1000 * r + idx, next);
        shmem_barrier(start, log, size, pSyncA);
        CHECK(data[r % 2] == 1000 * r + prev_idx, "round %d: %ld", r, data[r % 2]);
        shmem_barrier(start, log, size, pSyncA);
    }

    /* Broadcast from member 1 (member 0 when alone). */
    const int root = size > 1 ? 1 : 0;
    long *src = data + 2, *dst = data + 2 + MAXN;
    for (int i = 0; i < 5; ++i) {
        src[i] = 100 * idx + i;
        dst[i] = -1;
    }
    shmem_barrier(start, log, size, pSyncA);
    shmem_broadcast64(dst, src, 5, root, start, log, size, pSyncB);
    for (int i = 0; i < 5; ++i) CHECK(dst[i] == (idx == root ? -1 : 100 * root + i), "broadcast64 dst[%d]", i);

    /* fcollect32: two ints per member, in member order. */
    int *isrc = (int *)(data + 2 * MAXN + 2), *idst = isrc + 2;
    isrc[0] = idx;
    isrc[1] = -idx;
    shmem_fcollect32(idst, isrc, 2, start, log, size, pSyncA);
    for (int i = 0; i < size; ++i) CHECK(idst[2 * i] == i && idst[2 * i + 1] == -i, "fcollect32 block %d", i);

    /* collect64: member i contributes i + 1 elements of value i. */
    long *csrc = data + 3 * MAXN, *cdst = data + 4 * MAXN;
    for (int i = 0; i <= idx; ++i) csrc[i] = idx;
    shmem_collect64(cdst, csrc, (size_t)idx + 1, start, log, size, pSyncB);
    int k = 0;
    for (int i = 0; i < size; ++i)
        for (int j = 0; j <= i; ++j, ++k) CHECK(cdst[k] == i, "collect64 cdst[%d] = %ld", k, cdst[k]);

    /* alltoall64: block j of member i lands as block i of member j. */
    long *asrc = data + 5 * MAXN, *adst = data + 6 * MAXN;
    for (int j = 0; j < size; ++j) asrc[j] = 10 * idx + j;
    shmem_alltoall64(adst, asrc, 1, start, log, size, pSyncA);
    for (int i = 0; i < size; ++i) CHECK(adst[i] == 10 * i + idx, "alltoall64 adst[%d] = %ld", i, adst[i]);

    /* Reductions: hgas-typed (int sum) and front-end ones (short max, long xor), in place too. */
    int *rs = (int *)(data + 7 * MAXN), *rd = rs + 4;
    for (int i = 0; i < 4; ++i) rs[i] = idx + i;
    shmem_int_sum_to_all(rd, rs, 4, start, log, size, NULL, pSyncB);
    for (int i = 0; i < 4; ++i) CHECK(rd[i] == size * (size - 1) / 2 + size * i, "int_sum_to_all rd[%d] = %d", i, rd[i]);
    short *ss = (short *)(data + 8 * MAXN);
    ss[0] = (short)(-10 * idx);
    ss[1] = (short)(3 * idx);
    shmem_short_max_to_all(ss, ss, 2, start, log, size, NULL, pSyncA);
    CHECK(ss[0] == 0 && ss[1] == 3 * (size - 1), "short_max_to_all in place %d %d", ss[0], ss[1]);
    long *ls = data + 9 * MAXN, *ld = ls + 1;
    *ls = 1L << idx;
    shmem_long_xor_to_all(ld, ls, 1, start, log, size, NULL, pSyncB);
    CHECK(*ld == (1L << size) - 1, "long_xor_to_all %ld", *ld);
    /* Every member is past its last use of both arrays once this barrier returns. */
    shmem_barrier(start, log, size, pSyncA);
    check_psync(pSyncA, "pSyncA");
    check_psync(pSyncB, "pSyncB");
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    if (n > MAXN) return 1;
    data = shmem_calloc(10 * MAXN, sizeof(long));
    pSyncA = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
    pSyncB = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_SYNC_SIZE; ++i) pSyncA[i] = pSyncB[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    run_set(0, 1, (n + 1) / 2); /* the even PEs */
    shmem_barrier_all();
    run_set(1, 0, n - 1);       /* PEs 1 .. n-1 */
    shmem_barrier_all();
    run_set(n - 1, 0, 1);       /* a set of one */
    shmem_barrier_all();

    shmem_free(pSyncB);
    shmem_free(pSyncA);
    shmem_free(data);
    FINISH();
}
