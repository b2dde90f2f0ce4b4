/* Stream tracks on the sim device: each rank puts 4096 bytes into its right neighbour's sim
 * memory (the engine copies them) and joins an allreduce of 512 doubles in sim memory (the
 * engine combines them); check_streams.py finds both on the ranks' "sim stream" tracks. */
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
    hgas_free(sum);
    hgas_free(v);
    hgas_free(box);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
