/* The README's example: each rank puts its number into the next rank's slot, with a signal. */
#include <hgas/hgas.h>
#include <stdio.h>

int main(void) {
    if (hgas_init() != HGAS_OK) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
    int me = hgas_rank_me(), n = hgas_rank_n();
    uint64_t *box;                                  /* symmetric: same offset on every rank */
    hgas_calloc(2, sizeof(uint64_t), (void **)&box); /* box[0] = data, box[1] = signal */
    hgas_gptr_t data, sig;
    hgas_ptr(&box[0], (me + 1) % n, &data);         /* my right neighbour's box */
    hgas_ptr(&box[1], (me + 1) % n, &sig);
    uint64_t mine = 100 + me;
    hgas_put_signal(data, &mine, sizeof mine, sig, 1, HGAS_SIGNAL_SET);
    hgas_signal_wait_until(&box[1], HGAS_CMP_EQ, 1, NULL);
    printf("rank %d of %d got %llu from rank %d\n", me, n, (unsigned long long)box[0], (me + n - 1) % n);
    hgas_free(box);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
