/* Put with signal: the specification's put_signal example (each PE sends a block to its right
 * neighbour and signals it), SIGNAL_ADD from every PE to PE 0, the _nbi and sized forms. */
#include "check.h"

#define N 16

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

    long *data = shmem_calloc(N, sizeof(long));
    uint64_t *sig = shmem_calloc(4, sizeof(uint64_t));
    long src[N];
    for (int i = 0; i < N; ++i) src[i] = me * 1000 + i;

    shmem_long_put_signal(data, src, N, &sig[0], 1, SHMEM_SIGNAL_SET, right);
    uint64_t seen = shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 1);
    CHECK(seen == 1, "signal %llu", (unsigned long long)seen);
    for (int i = 0; i < N; ++i) CHECK(data[i] == left * 1000 + i, "data[%d] = %ld", i, data[i]);
    CHECK(shmem_signal_fetch(&sig[0]) == 1, "signal_fetch");

    /* Every PE adds 1 to PE 0's signal after its own slot of `slots`. */
    int *slots = shmem_calloc((size_t)n, sizeof(int));
    int mine = 10 + me;
    shmem_int_put_signal_nbi(&slots[me], &mine, 1, &sig[1], 1, SHMEM_SIGNAL_ADD, 0);
    shmem_quiet();
    if (me == 0) {
        shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, (uint64_t)n);
        for (int p = 0; p < n; ++p) CHECK(slots[p] == 10 + p, "slots[%d] = %d", p, slots[p]);
    }

    /* Sized and mem forms; a zero-length put_signal still signals. */
    uint64_t words[2] = {0xabcdefull + (uint64_t)me, 7};
    uint64_t *w = shmem_calloc(4, sizeof(uint64_t));
    shmem_put64_signal(w, words, 2, &sig[2], 5, SHMEM_SIGNAL_SET, right);
    shmem_putmem_signal_nbi(&w[2], words, 16, &sig[3], 1, SHMEM_SIGNAL_ADD, right);
    shmem_putmem_signal(NULL, NULL, 0, &sig[3], 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(&sig[2], SHMEM_CMP_EQ, 5);
    shmem_signal_wait_until(&sig[3], SHMEM_CMP_EQ, 2);
    CHECK(w[0] == 0xabcdefull + (uint64_t)left && w[1] == 7, "put64_signal");
    CHECK(w[2] == 0xabcdefull + (uint64_t)left && w[3] == 7, "putmem_signal_nbi");

    shmem_barrier_all();
    shmem_free(w);
    shmem_free(slots);
    shmem_free(sig);
    shmem_free(data);
    FINISH();
}
