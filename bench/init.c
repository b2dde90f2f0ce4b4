/* hgas-bench-init: how long hgas_init takes with N ranks (hgas-bench --init runs it for several
 * N; docs/bench.md). Every rank reads CLOCK_REALTIME (one clock for every process of the
 * machine) just before and just after hgas_init, and again around hgas_finalize; rank 0
 * gathers them through its symmetric heap and prints one JSON line:
 *   init_s      last rank out of hgas_init - first rank into it (the job's start-up)
 *   init_max_s  the longest single hgas_init
 *   cpu_s       CPU time of hgas_init summed over the ranks (every thread of each process):
 *               what start-up costs the machine, which other load on it does not change
 *   spawn_s     first rank into hgas_init - last rank into it: the launcher forking N
 *               processes and each loading its libraries, before hgas_init runs
 * The wall times depend on how many cores the N ranks share (and on anything else running);
 * cpu_s / cores is the wall time an otherwise idle machine would need at best. */
#define _GNU_SOURCE 1
#include <hgas/hgas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now_s(void) { return clock_s(CLOCK_REALTIME); }

int main(void) {
    const double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = now_s();
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-init: hgas_init failed: %s\n", hgas_last_error());
        return 1;
    }
    const double t1 = now_s(), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    const int me = hgas_rank_me(), n = hgas_rank_n();
    double *times = NULL; /* on rank 0: [3 * r] = t0 of rank r, [3 * r + 1] = t1, [3 * r + 2] = cpu */
    if (hgas_calloc((size_t)3 * (size_t)n, sizeof(double), (void **)&times) != HGAS_OK) {
        fprintf(stderr, "hgas-bench-init: rank %d: %s\n", me, hgas_last_error());
        return 1;
    }
    const double mine[3] = {t0, t1, c1 - c0};
    hgas_gptr_t at;
    if (hgas_ptr(&times[3 * me], 0, &at) != HGAS_OK || hgas_put(at, mine, sizeof mine) != HGAS_OK ||
        hgas_barrier() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-init: rank %d: %s\n", me, hgas_last_error());
        return 1;
    }
    if (me == 0) {
        double first_in = times[0], last_in = times[0], last_out = times[1], longest = 0, cpu = 0;
        for (int r = 0; r < n; ++r) {
            const double a = times[3 * r], b = times[3 * r + 1];
            cpu += times[3 * r + 2];
            if (a < first_in) first_in = a;
            if (a > last_in) last_in = a;
            if (b > last_out) last_out = b;
            if (b - a > longest) longest = b - a;
        }
        const char *heap = getenv("HGAS_HEAP_SIZE");
        printf("{\"bench\":\"init\",\"impl\":\"hgas\",\"ranks\":%d,\"init_s\":%.4f,\"init_max_s\":%.4f,"
               "\"cpu_s\":%.4f,\"spawn_s\":%.4f,\"cores\":%ld,\"heap\":\"%s\"}\n",
               n, last_out - first_in, longest, cpu, last_in - first_in, sysconf(_SC_NPROCESSORS_ONLN),
               heap ? heap : "default");
        printf("# init %d ranks: %.3f s (first rank in to last rank out), longest single init %.3f s, "
               "%.3f CPU-s in all, ranks entered over %.3f s\n", n, last_out - first_in, longest, cpu,
               last_in - first_in);
        fflush(stdout);
    }
    hgas_free(times);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
