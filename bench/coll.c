/* hgas-bench-coll — collective latency and bandwidth on every rank of the job (any count),
 * nccl-tests style: for each collective and size, the time per call (median over batches of
 * the slowest rank's batch time), algbw = bytes / time and busbw = algbw x the collective's
 * bus factor (allreduce 2(n-1)/n; fcollect, alltoall (n-1)/n; broadcast, reduce 1).
 *
 *   broadcast   hgas_broadcast of `bytes` from rank 0 (symmetric dst)
 *   reduce      hgas_reduce of bytes/4 floats (SUM) to rank 0
 *   allreduce   hgas_allreduce of bytes/4 floats (SUM)
 *   fcollect    hgas_fcollect, `bytes` per rank (the size column is per rank)
 *   alltoall    hgas_alltoall, `bytes` per pair
 *   barrier     hgas_barrier (size 0)
 *
 * Results are checked once per size before they are timed. Output: JSON lines and a "# " table
 * (bench_common.h); rank 0 prints. */
#include "bench_common.h" /* first: it defines _GNU_SOURCE */

#include <hgas/hgas.h>

#define CHECK(x)                                                                       \
    do {                                                                               \
        hgas_status_t s_ = (x);                                                        \
        if (s_ != HGAS_OK) {                                                           \
            fprintf(stderr, "hgas-bench-coll: %s failed: %s\n", #x, hgas_last_error()); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

typedef enum { C_BCAST, C_REDUCE, C_ALLREDUCE, C_FCOLLECT, C_ALLTOALL, C_BARRIER } coll_t;
static const char *k_names[] = {"broadcast", "reduce", "allreduce", "fcollect", "alltoall", "barrier"};

static int g_me, g_n;
static unsigned char *g_sym, *g_src;

static void run_once(coll_t c, size_t bytes) {
    switch (c) {
    case C_BCAST: CHECK(hgas_broadcast(g_sym, g_src, bytes, 0)); break;
    case C_REDUCE: CHECK(hgas_reduce(g_sym, g_src, bytes / 4, HGAS_FLOAT, HGAS_OP_SUM, 0)); break;
    case C_ALLREDUCE: CHECK(hgas_allreduce(g_sym, g_src, bytes / 4, HGAS_FLOAT, HGAS_OP_SUM)); break;
    case C_FCOLLECT: CHECK(hgas_fcollect(g_sym, g_src, bytes)); break;
    case C_ALLTOALL: CHECK(hgas_alltoall(g_sym, g_src, bytes)); break;
    case C_BARRIER: CHECK(hgas_barrier()); break;
    }
}

/* One call with known data; 1 if every rank got the right result. */
static int verify(coll_t c, size_t bytes) {
    int ok = 1;
    float *f = (float *)g_src, *o = (float *)g_sym;
    switch (c) {
    case C_BCAST:
        bench_fill(g_src, bytes, 3);
        memset(g_sym, 0, bytes);
        run_once(c, bytes);
        ok = bench_check(g_sym, bytes, 3) < 0;
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
        for (size_t i = 0; i < bytes / 4; ++i) f[i] = (float)(g_me + (int)(i % 7));
        run_once(c, bytes);
        if (c == C_ALLREDUCE || g_me == 0)
            for (size_t i = 0; i < bytes / 4; ++i)
                if (o[i] != (float)(g_n * (g_n - 1) / 2 + g_n * (int)(i % 7))) ok = 0;
        break;
    case C_FCOLLECT:
        bench_fill(g_src, bytes, (unsigned)g_me);
        run_once(c, bytes);
        for (int r = 0; r < g_n; ++r) ok &= bench_check(g_sym + (size_t)r * bytes, bytes, (unsigned)r) < 0;
        break;
    case C_ALLTOALL:
        for (int r = 0; r < g_n; ++r) bench_fill(g_src + (size_t)r * bytes, bytes, (unsigned)(g_me * 64 + r));
        run_once(c, bytes);
        for (int r = 0; r < g_n; ++r) ok &= bench_check(g_sym + (size_t)r * bytes, bytes, (unsigned)(r * 64 + g_me)) < 0;
        break;
    case C_BARRIER: run_once(c, bytes); break;
    }
    int all = 0;
    CHECK(hgas_allreduce(&all, &ok, 1, HGAS_INT32, HGAS_OP_MIN));
    return all;
}

static double bus_factor(coll_t c) {
    switch (c) {
    case C_ALLREDUCE: return g_n > 1 ? 2.0 * (g_n - 1) / g_n : 0;
    case C_FCOLLECT:
    case C_ALLTOALL: return g_n > 1 ? (double)(g_n - 1) / g_n : 0;
    default: return 1;
    }
}

int main(int argc, char **argv) {
    bench_opts_t o;
    bench_parse(argc, argv, &o, "hgas");
    CHECK(hgas_init());
    g_me = hgas_rank_me();
    g_n = hgas_rank_n();
    bench_pin(&o, g_me);
    const size_t per = o.max_size < 8 ? 8 : o.max_size;
    CHECK(hgas_malloc(per * (size_t)g_n, (void **)&g_sym));
    g_src = (unsigned char *)malloc(per * (size_t)g_n);
    if (g_me == 0) {
        printf("# hgas-bench-coll: %d ranks, transport %s\n", g_n, o.transport);
        printf("# %-10s %10s %12s %12s %12s %s\n", "collective", "size", "time_us", "algbw_GB/s", "busbw_GB/s",
               "checked");
    }
    for (int ci = 0; ci <= C_BARRIER; ++ci) {
        const coll_t c = (coll_t)ci;
        if (!bench_selected(&o, k_names[c])) continue;
        for (size_t bytes = c == C_BARRIER ? 0 : o.min_size; ; bytes = bench_next_size(&o, bytes)) {
            if (c != C_BARRIER && bytes == 0) break;
            const size_t b = c == C_REDUCE || c == C_ALLREDUCE ? bytes / 4 * 4 : bytes;
            const int verified = verify(c, b);
            const long iters = bench_iters(b ? b : 8, o.quick ? 200 : 1000, o.quick ? 16e6 : 64e6, 3);
            double samples[64];
            const int nb = o.batches > 64 ? 64 : o.batches;
            for (int w = 0; w < 20 && w < iters; ++w) run_once(c, b);  /* warm-up */
            for (int k = 0; k < nb; ++k) {
                CHECK(hgas_barrier());
                const uint64_t t0 = bench_now_ns();
                for (long i = 0; i < iters; ++i) run_once(c, b);
                double us = (double)(bench_now_ns() - t0) / 1e3 / (double)iters, slowest = 0;
                CHECK(hgas_allreduce(&slowest, &us, 1, HGAS_DOUBLE, HGAS_OP_MAX));
                samples[k] = slowest;
            }
            if (g_me == 0) {
                const double med = bench_median(samples, nb);
                const double alg = med > 0 ? (double)b / (med * 1e3) : 0;
                printf("{\"bench\":\"coll_%s\",\"impl\":\"hgas\",\"transport\":\"%s\",\"ranks\":%d,\"bytes\":%zu,"
                       "\"median_us\":%.4f,\"min_us\":%.4f,\"max_us\":%.4f,\"algbw_gbs\":%.4f,\"busbw_gbs\":%.4f,"
                       "\"iters\":%ld,\"batches\":%d,\"verified\":%s}\n",
                       k_names[c], o.transport, g_n, b, med, samples[0], samples[nb - 1], alg, alg * bus_factor(c),
                       iters, nb, verified ? "true" : "false");
                char sz[32];
                bench_size_str(b, sz, sizeof sz);
                printf("# %-10s %10s %12.3f %12.4f %12.4f %s\n", k_names[c], sz, med, alg, alg * bus_factor(c),
                       verified ? "yes" : "NO");
                fflush(stdout);
            }
            if (c == C_BARRIER) break;
        }
    }
    CHECK(hgas_free(g_sym));
    free(g_src);
    CHECK(hgas_finalize());
    return 0;
}
