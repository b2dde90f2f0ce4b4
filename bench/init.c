/* hgas-bench-init: how long hgas_init takes with N ranks (hgas-bench --init runs it for several
 * N; docs/bench.md). Every rank reads CLOCK_REALTIME (one clock for every process of the
 * machine) just before and just after hgas_init, and again around hgas_finalize; rank 0
 * gathers them through its symmetric heap and prints one JSON line:
 *   init_s      last rank out of hgas_init - first rank into it (the job's start-up)
 *   init_max_s  the longest single hgas_init
 *   finalize_s  last rank out of hgas_finalize - first rank into it (measured by a second
 *               gather would need the runtime, so it is each rank's own finalize, maximum)
 * Ranks are started by hgasrun, which may take a while to fork N processes; that time is
 * before the first rank enters hgas_init and is reported apart (spawn_s: first to last entry). */
#define _GNU_SOURCE 1
#include <hgas/hgas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void) {
    const double t0 = now_s();
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-init: hgas_init failed: %s\n", hgas_last_error());
        return 1;
    }
    const double t1 = now_s();
    const int me = hgas_rank_me(), n = hgas_rank_n();
    double *times = NULL; /* on rank 0: [2 * r] = t0 of rank r, [2 * r + 1] = t1 */
    if (hgas_calloc((size_t)2 * (size_t)n, sizeof(double), (void **)&times) != HGAS_OK) {
        fprintf(stderr, "hgas-bench-init: rank %d: %s\n", me, hgas_last_error());
        return 1;
    }
    const double mine[2] = {t0, t1};
    hgas_gptr_t at;
    if (hgas_ptr(&times[2 * me], 0, &at) != HGAS_OK || hgas_put(at, mine, sizeof mine) != HGAS_OK ||
        hgas_barrier() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-init: rank %d: %s\n", me, hgas_last_error());
        return 1;
    }
    if (me == 0) {
        double first_in = times[0], last_in = times[0], last_out = times[1], longest = 0;
        for (int r = 0; r < n; ++r) {
            const double a = times[2 * r], b = times[2 * r + 1];
            if (a < first_in) first_in = a;
            if (a > last_in) last_in = a;
            if (b > last_out) last_out = b;
            if (b - a > longest) longest = b - a;
        }
        const char *heap = getenv("HGAS_HEAP_SIZE");
        printf("{\"bench\":\"init\",\"impl\":\"hgas\",\"ranks\":%d,\"init_s\":%.4f,\"init_max_s\":%.4f,"
               "\"spawn_s\":%.4f,\"heap\":\"%s\"}\n",
               n, last_out - first_in, longest, last_in - first_in, heap ? heap : "default");
        printf("# init %d ranks: %.3f s (first rank in to last rank out), longest single init %.3f s, "
               "ranks entered over %.3f s\n", n, last_out - first_in, longest, last_in - first_in);
        fflush(stdout);
    }
    hgas_free(times);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
