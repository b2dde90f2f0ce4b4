/* peer_shmem_coll.c — the OpenSHMEM peer of hgas-bench-coll: the same collectives, sizes,
 * method and output (bench_common.h), with OpenSHMEM 1.4 calls, so that an OpenSHMEM
 * implementation (Open MPI's OSHMEM: build with oshcc, run with oshrun) is measured the same
 * way in the same run. Time per call = median over batches of the slowest PE's batch time.
 *
 *   broadcast   shmem_broadcast64 from PE 0 (PE 0's own dest is not written, as 1.4 says)
 *   reduce      shmem_float_sum_to_all (OpenSHMEM has no rooted reduce: an allreduce)
 *   allreduce   shmem_float_sum_to_all
 *   fcollect    shmem_fcollect64, `bytes` per PE
 *   alltoall    shmem_alltoall64, `bytes` per pair
 *   barrier     shmem_barrier_all
 *
 * Sizes are rounded down to multiples of 8 (the 64-bit forms). */
#include "bench_common.h"

#include <shmem.h>

static const char *k_names[] = {"broadcast", "reduce", "allreduce", "fcollect", "alltoall", "barrier"};
static long psync[SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE : SHMEM_BCAST_SYNC_SIZE];
static long psync2[SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE : SHMEM_BCAST_SYNC_SIZE];
static float pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE > 1 << 16 ? SHMEM_REDUCE_MIN_WRKDATA_SIZE : 1 << 16];
static double dwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long long_sync[SHMEM_REDUCE_SYNC_SIZE];
static double t_in, t_out;
static int g_n;
static unsigned char *g_sym, *g_src;
static unsigned g_call;

/* Alternating pSync arrays: back-to-back collectives may not reuse one without a barrier. */
static long *next_psync(void) { return (g_call++ & 1) ? psync2 : psync; }

static void run_once(int c, size_t bytes) {
    switch (c) {
    case 0: shmem_broadcast64(g_sym, g_src, bytes / 8, 0, 0, 0, g_n, next_psync()); break;
    case 1:
    case 2: shmem_float_sum_to_all((float *)g_sym, (float *)g_src, (int)(bytes / 4), 0, 0, g_n, pwrk, next_psync()); break;
    case 3: shmem_fcollect64(g_sym, g_src, bytes / 8, 0, 0, g_n, next_psync()); break;
    case 4: shmem_alltoall64(g_sym, g_src, bytes / 8, 0, 0, g_n, next_psync()); break;
    case 5: shmem_barrier_all(); break;
    }
}

int main(int argc, char **argv) {
    bench_opts_t o;
    bench_parse(argc, argv, &o, "oshmem");
    shmem_init();
    const int me = shmem_my_pe();
    g_n = shmem_n_pes();
    bench_pin(&o, me);
    for (size_t i = 0; i < sizeof psync / sizeof psync[0]; ++i) psync[i] = psync2[i] = SHMEM_SYNC_VALUE;
    for (size_t i = 0; i < sizeof long_sync / sizeof long_sync[0]; ++i) long_sync[i] = SHMEM_SYNC_VALUE;
    const size_t per = o.max_size < 8 ? 8 : o.max_size;
    g_sym = shmem_malloc(per * (size_t)g_n);
    g_src = shmem_malloc(per * (size_t)g_n);  /* OpenSHMEM 1.4: sources symmetric too */
    shmem_barrier_all();
    for (int c = 0; c <= 5; ++c) {
        if (!bench_selected(&o, k_names[c])) continue;
        for (size_t bytes = c == 5 ? 0 : o.min_size;; bytes = bench_next_size(&o, bytes)) {
            if (c != 5 && bytes == 0) break;
            const size_t b = c == 5 ? 0 : (bytes < 8 ? 8 : bytes / 8 * 8);
            if (c == 1 || c == 2 ? b / 4 > sizeof pwrk / sizeof pwrk[0] * 2 : 0) { /* pWrk too small */
                if (c == 5) break;
                continue;
            }
            const long iters = bench_iters(b ? b : 8, o.quick ? 200 : 1000, o.quick ? 16e6 : 64e6, 3);
            double samples[64];
            const int nb = o.batches > 64 ? 64 : o.batches;
            for (int w = 0; w < 20 && w < iters; ++w) run_once(c, b);
            for (int k = 0; k < nb; ++k) {
                shmem_barrier_all();
                const uint64_t t0 = bench_now_ns();
                for (long i = 0; i < iters; ++i) run_once(c, b);
                t_in = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
                shmem_barrier_all();
                shmem_double_max_to_all(&t_out, &t_in, 1, 0, 0, g_n, dwrk, long_sync);
                shmem_barrier_all();
                samples[k] = t_out;
            }
            if (me == 0) {
                const double med = bench_median(samples, nb);
                printf("{\"bench\":\"coll_%s\",\"impl\":\"oshmem\",\"transport\":\"%s\",\"ranks\":%d,\"bytes\":%zu,"
                       "\"median_us\":%.4f,\"min_us\":%.4f,\"max_us\":%.4f,\"iters\":%ld,\"batches\":%d}\n",
                       k_names[c], o.transport, g_n, b, med, samples[0], samples[nb - 1], iters, nb);
                char sz[32];
                bench_size_str(b, sz, sizeof sz);
                printf("# %-10s %10s %12.3f\n", k_names[c], sz, med);
                fflush(stdout);
            }
            if (c == 5) break;
        }
    }
    shmem_free(g_sym);
    shmem_free(g_src);
    shmem_finalize();
    return 0;
}
