/* Stream tracks on the sim device: each rank puts 4096 bytes into its right neighbour's sim
 * memory (the engine copies them) and joins an allreduce of 512 doubles in sim memory (the
 * engine combines them); check_streams.py finds both on the ranks' "sim stream" tracks. Then
 * each rank put_signals its right neighbour's host memory (a flow arrow for check_perfetto.py). */
#include <hgas/hgas.h>
#include <stdio.h>
#include <string.h>

#define FAIL(what) do { fprintf(stderr, "rank %d: %s: %s\n", hgas_rank_me(), what, hgas_last_error()); return 1; } while (0)

int main(void) {
    if (hgas_init() != HGAS_OK) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
    int me = hgas_rank_me(), n = hgas_rank_n();
    char *box;
    double *v, *sum;
    if (hgas_malloc_kind(4096, HGAS_KIND_SIM, (void **)&box) != HGAS_OK) FAIL("hgas_malloc_kind");
    if (hgas_malloc_kind(512 * sizeof(double), HGAS_KIND_SIM, (void **)&v) != HGAS_OK) FAIL("hgas_malloc_kind");
    if (hgas_malloc_kind(512 * sizeof(double), HGAS_KIND_SIM, (void **)&sum) != HGAS_OK) FAIL("hgas_malloc_kind");
    static char mine[4096];
    memset(mine, 'a' + me, sizeof mine);
    hgas_gptr_t dst;
    if (hgas_ptr(box, (me + 1) % n, &dst) != HGAS_OK) FAIL("hgas_ptr");
    if (hgas_put(dst, mine, sizeof mine) != HGAS_OK) FAIL("hgas_put");
    if (hgas_quiet() != HGAS_OK) FAIL("hgas_quiet");
    if (hgas_barrier() != HGAS_OK) FAIL("hgas_barrier");
    if (hgas_allreduce(sum, v, 512, HGAS_DOUBLE, HGAS_OP_SUM) != HGAS_OK) FAIL("hgas_allreduce");
    char back[4096];
    hgas_gptr_t own;
    if (hgas_ptr(box, me, &own) != HGAS_OK || hgas_get(back, own, sizeof back) != HGAS_OK) FAIL("hgas_get");
    if (back[0] != 'a' + (me + n - 1) % n || back[4095] != back[0]) { fprintf(stderr, "rank %d: wrong data\n", me); return 1; }
    uint64_t *word;
    if (hgas_calloc(2, sizeof(uint64_t), (void **)&word) != HGAS_OK) FAIL("hgas_calloc");
    hgas_gptr_t wdata, wsig;
    if (hgas_ptr(&word[0], (me + 1) % n, &wdata) != HGAS_OK || hgas_ptr(&word[1], (me + 1) % n, &wsig) != HGAS_OK)
        FAIL("hgas_ptr");
    uint64_t val = 100 + (uint64_t)me;
    if (hgas_put_signal(wdata, &val, sizeof val, wsig, 1, HGAS_SIGNAL_SET) != HGAS_OK) FAIL("hgas_put_signal");
    if (hgas_signal_wait_until(&word[1], HGAS_CMP_EQ, 1, NULL) != HGAS_OK) FAIL("hgas_signal_wait_until");
    if (word[0] != 100 + (uint64_t)((me + n - 1) % n)) { fprintf(stderr, "rank %d: wrong word\n", me); return 1; }
    hgas_free(word);
    hgas_free(sum);
    hgas_free(v);
    hgas_free(box);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
