/* hgas-trace-overhead: what a span costs per call (docs/trace.md, "Cost"). Rank 0 times batches
 * of 8-byte hgas_put (and hgas_get) into rank 1's host heap by its thread's CPU time, so that other
 * jobs on a loaded machine do not count; run it with and without HGAS_TRACE and compare the
 * medians. Usage: hgasrun -n 2 hgas-trace-overhead [batches [calls]] */
#include <hgas/hgas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int batches = argc > 1 ? atoi(argv[1]) : 9, calls = argc > 2 ? atoi(argv[2]) : 20000;
    if (batches < 1 || batches > 1000 || calls < 1) {
        fprintf(stderr, "usage: hgas-trace-overhead [batches (1-1000) [calls per batch]]\n");
        return 2;
    }
    if (hgas_init() != HGAS_OK) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
    uint64_t *box;
    if (hgas_calloc(1, sizeof(uint64_t), (void **)&box) != HGAS_OK) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
    if (hgas_rank_me() == 0 && hgas_rank_n() > 1) {
        hgas_gptr_t peer;
        hgas_ptr(box, 1, &peer);
        double put[1000], get[1000];
        uint64_t v = 1;
        for (int b = 0; b < batches; b++) {
            double t0 = cpu_ns();
            for (int i = 0; i < calls; i++) hgas_put(peer, &v, 8);
            double t1 = cpu_ns();
            for (int i = 0; i < calls; i++) hgas_get(&v, peer, 8);
            double t2 = cpu_ns();
            put[b] = (t1 - t0) / calls;
            get[b] = (t2 - t1) / calls;
        }
        qsort(put, batches, sizeof put[0], cmp);
        qsort(get, batches, sizeof get[0], cmp);
        printf("trace %s: hgas_put 8 B %.1f ns, hgas_get 8 B %.1f ns (median of %d batches of %d calls, CPU time)\n",
               getenv("HGAS_TRACE") ? "on" : "off", put[batches / 2], get[batches / 2], batches, calls);
    }
    hgas_quiet();
    hgas_barrier();
    hgas_free(box);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
