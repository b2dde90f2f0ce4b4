/* Stream tracks on a GPU: each rank puts 4096 bytes of its GPU memory into its right
 * neighbour's with hgas_put_on_stream on the default stream; check_streams.py (cuda) finds the
 * copy on the rank's "cuda stream" track, after the call that enqueued it, with its bytes. */
#include <hgas/hgas.h>
#include <hgas/hgas_device.h>
#include <stdio.h>
#include <string.h>

#define FAIL(what) do { fprintf(stderr, "rank %d: %s: %s\n", hgas_rank_me(), what, hgas_last_error()); return 1; } while (0)

int main(void) {
    if (hgas_init() != HGAS_OK) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
    int me = hgas_rank_me(), n = hgas_rank_n();
    char *box, *src;
    if (hgas_malloc_kind(4096, HGAS_KIND_CUDA, (void **)&box) != HGAS_OK) FAIL("hgas_malloc_kind");
    if (hgas_malloc_kind(4096, HGAS_KIND_CUDA, (void **)&src) != HGAS_OK) FAIL("hgas_malloc_kind");
    static char mine[4096], back[4096];
    memset(mine, 'a' + me, sizeof mine);
    hgas_gptr_t own_src, own_box;
    if (hgas_ptr(src, me, &own_src) != HGAS_OK || hgas_ptr(box, me, &own_box) != HGAS_OK) FAIL("hgas_ptr");
    if (hgas_put(own_src, mine, sizeof mine) != HGAS_OK || hgas_quiet() != HGAS_OK) FAIL("hgas_put");
    if (hgas_put_on_stream(box, src, 4096, (me + 1) % n, NULL) != HGAS_OK) FAIL("hgas_put_on_stream");
    if (hgas_stream_sync(NULL) != HGAS_OK) FAIL("hgas_stream_sync");
    if (hgas_barrier() != HGAS_OK) FAIL("hgas_barrier");
    if (hgas_get(back, own_box, sizeof back) != HGAS_OK) FAIL("hgas_get");
    if (back[0] != 'a' + (me + n - 1) % n || back[4095] != back[0]) { fprintf(stderr, "rank %d: wrong data\n", me); return 1; }
    hgas_free(src);
    hgas_free(box);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
