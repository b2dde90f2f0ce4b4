/* hgas-bench-bw — bandwidth of put, get and put-with-signal between two ranks (rank 0
 * measures, rank 1 only serves). Started by `hgasrun -n 2 hgas-bench-bw [options]`; see
 * bench_common.h for the options and the output, docs/bench.md for the method.
 *
 *   put_bw         a window of hgas_put_nbi of the message to rank 1, then hgas_quiet
 *   get_bw         a window of hgas_get_nbi of the message from rank 1, then hgas_quiet
 *   put_signal_bw  a window of hgas_put_signal_nbi (signal += 1), then hgas_quiet
 * GB/s = 1e9 bytes per second, from the median batch. The window is 64 messages up to
 * 64 KiB and about 4 MiB of data above (at least one message). */
#include "bench_common.h"

#include <hgas/hgas.h>

#define CHECK(call)                                                                                       \
    do {                                                                                                  \
        hgas_status_t s_ = (call);                                                                        \
        if (s_ != HGAS_OK) {                                                                              \
            fprintf(stderr, "hgas-bench-bw: %s failed at line %d: %s\n", #call, __LINE__, hgas_last_error()); \
            hgas_abort(1, "benchmark call failed");                                                       \
        }                                                                                                 \
    } while (0)

enum { MAXB = 64 };
enum kind { PUT, GET, PUT_SIGNAL };

static int me;
static unsigned char *sym;  /* symmetric message buffer (max size) */
static uint64_t *sig;       /* symmetric: [0] signal of put_signal_bw, [8] check result */
static unsigned char *loc;  /* local source/destination */
static hgas_gptr_t g_sym, g_sig, g_res;

static long window_of(size_t s) {
    if (s <= 65536) return 64;
    long w = (long)((4u << 20) / s);
    return w < 1 ? 1 : w;
}

static void issue(enum kind k, size_t s, long window) {
    for (long w = 0; w < window; ++w) {
        switch (k) {
        case PUT: CHECK(hgas_put_nbi(g_sym, loc, s)); break;
        case GET: CHECK(hgas_get_nbi(loc, g_sym, s)); break;
        case PUT_SIGNAL: CHECK(hgas_put_signal_nbi(g_sym, loc, s, g_sig, 1, HGAS_SIGNAL_ADD)); break;
        }
    }
    CHECK(hgas_quiet());
}

static void bw(const bench_opts_t *o, const char *name, enum kind k, size_t s) {
    const long window = window_of(s);
    /* A batch moves about 64 MiB (16 MiB with --quick), at least 2 windows. */
    const long rounds = bench_iters(s * (size_t)window, o->quick ? 200 : 1000, o->quick ? 16e6 : 64e6, 2);
    double samples[MAXB];
    int ok = 1;

    /* Check first: one window with a known pattern, looked at by the side that receives. */
    sig[0] = 0;
    sig[8] = 0;
    if (k == GET) {
        if (me == 1) bench_fill(sym, s, 3);
    } else if (me == 0) {
        bench_fill(loc, s, 3);
    }
    CHECK(hgas_barrier());
    if (me == 0) issue(k, s, 1);
    CHECK(hgas_barrier());
    if (k == GET && me == 0) {
        long bad = bench_check(loc, s, 3);
        if (bad >= 0) fprintf(stderr, "hgas-bench-bw: %s %zu B: byte %ld is wrong\n", name, s, bad), ok = 0;
    } else if (k != GET && me == 1) {
        long bad = bench_check(sym, s, 3);
        int sig_ok = k != PUT_SIGNAL || sig[0] == 1;
        if (bad >= 0 || !sig_ok) {
            fprintf(stderr, "hgas-bench-bw: %s %zu B: byte %ld is wrong or the signal is %llu\n", name, s, bad,
                    (unsigned long long)sig[0]);
            CHECK(hgas_atomic_add64(g_res, 1));
        }
    }
    CHECK(hgas_barrier());
    if (me == 0) {
        ok = ok && sig[8] == 0;
        for (long r = 0; r < rounds / 10 + 1; ++r) issue(k, s, window);
        for (int b = 0; b < o->batches; ++b) {
            uint64_t t0 = bench_now_ns();
            for (long r = 0; r < rounds; ++r) issue(k, s, window);
            samples[b] = (double)(bench_now_ns() - t0) / 1e9;
        }
        bench_report_bw(o, name, s, samples, o->batches, rounds * window, (double)s * (double)window * (double)rounds,
                        ok, NULL);
    }
    CHECK(hgas_barrier());
}

int main(int argc, char **argv) {
    bench_opts_t o;
    bench_parse(argc, argv, &o, "hgas");
    if (o.batches > MAXB) o.batches = MAXB;
    bench_heap_env("HGAS_HEAP_SIZE", &o);
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-bw: hgas_init: %s\n", hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    if (hgas_rank_n() != 2) {
        if (me == 0) fprintf(stderr, "hgas-bench-bw: run with 2 ranks (hgasrun -n 2), not %d\n", hgas_rank_n());
        hgas_finalize();
        return 2;
    }
    bench_pin(&o, me);
    CHECK(hgas_malloc(o.max_size, (void **)&sym));
    CHECK(hgas_calloc(16, sizeof(uint64_t), (void **)&sig));
    loc = (unsigned char *)malloc(o.max_size);
    memset(loc, 0, o.max_size);
    CHECK(hgas_ptr(sym, 1, &g_sym));
    CHECK(hgas_ptr(&sig[0], 1, &g_sig));
    CHECK(hgas_ptr(&sig[8], 0, &g_res)); /* rank 1 reports a failed check to rank 0 here */

    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_bw")) bw(&o, "put_bw", PUT, s);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "get_bw")) bw(&o, "get_bw", GET, s);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_signal_bw")) bw(&o, "put_signal_bw", PUT_SIGNAL, s);

    free(loc);
    CHECK(hgas_free(sig));
    CHECK(hgas_free(sym));
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
