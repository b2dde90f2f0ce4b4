/* The C side of python/bench/overhead.py: the same loops as the Python benchmark (an 8 B
 * blocking put to the right neighbour, a 1 MiB float64 allreduce in place), timed the same
 * way, one JSON line per measurement on rank 0.   hgasrun -n 2 overhead_c [iters] */
#include <hgas/hgas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    if (hgas_init()) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
    int me = hgas_rank_me(), n = hgas_rank_n();
    double *box, *big;
    size_t count = (1u << 20) / sizeof(double);
    if (hgas_calloc(1, 64, (void **)&box) || !(big = calloc(count, sizeof(double)))) {
        fprintf(stderr, "%s\n", hgas_last_error());
        return 1;
    }
    hgas_gptr_t right;
    hgas_ptr(box, (me + 1) % n, &right);
    double v = me;
    for (int rep = 0; rep < 2; rep++) { /* the first round warms up */
        hgas_barrier();
        double t0 = now_us();
        for (long i = 0; i < iters; i++)
            if (hgas_put(right, &v, 8)) { fprintf(stderr, "%s\n", hgas_last_error()); return 1; }
        double put_us = (now_us() - t0) / iters;
        hgas_barrier();
        long ar_iters = iters / 100 > 10 ? iters / 100 : 10;
        t0 = now_us();
        for (long i = 0; i < ar_iters; i++)
            if (hgas_allreduce(big, big, count, HGAS_DOUBLE, HGAS_OP_SUM)) {
                fprintf(stderr, "%s\n", hgas_last_error());
                return 1;
            }
        double ar_us = (now_us() - t0) / ar_iters;
        if (rep == 1 && me == 0) {
            printf("{\"impl\": \"hgas-c\", \"op\": \"put8\", \"ranks\": %d, \"us_per_call\": %.3f}\n", n, put_us);
            printf("{\"impl\": \"hgas-c\", \"op\": \"allreduce1M\", \"ranks\": %d, \"us_per_call\": %.3f}\n", n, ar_us);
        }
    }
    hgas_free(box);
    free(big);
    return hgas_finalize() ? 1 : 0;
}
