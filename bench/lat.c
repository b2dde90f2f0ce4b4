/* hgas-bench-lat — latency of put, put-with-signal, get, fetch-add and barrier between two
 * ranks (rank 0 measures). Started by `hgasrun -n 2 hgas-bench-lat [options]`; see
 * bench_common.h for the options and the output, docs/bench.md for the method.
 *
 *   put_lat         ping-pong, one-way time: hgas_put of the message, then (for messages
 *                   longer than 8 B) hgas_fence and an 8-byte hgas_put of the round number
 *                   into the peer's flag; an 8-byte message IS the flag (OpenSHMEM's
 *                   shmem_p + shmem_wait_until). The peer waits with hgas_signal_wait_until
 *                   and answers the same way.
 *   put_signal_lat  ping-pong, one-way time: hgas_put_signal(message, flag := round).
 *   get_lat         blocking hgas_get of the message from rank 1, per operation.
 *   fadd_lat        hgas_atomic_fetch_add64 on a word of rank 1, per operation.
 *   barrier_lat     hgas_barrier, per operation. */
#include "bench_common.h"

#include <hgas/hgas.h>

#define CHECK(call)                                                                                        \
    do {                                                                                                   \
        hgas_status_t s_ = (call);                                                                         \
        if (s_ != HGAS_OK) {                                                                               \
            fprintf(stderr, "hgas-bench-lat: %s failed at line %d: %s\n", #call, __LINE__, hgas_last_error()); \
            hgas_abort(1, "benchmark call failed");                                                        \
        }                                                                                                  \
    } while (0)

enum { MAXB = 64 };

static int me, peer;
static unsigned char *sym;  /* symmetric message buffer (max size) */
static uint64_t *flag;      /* symmetric: [0] ping-pong flag, [8] atomic counter */
static unsigned char *loc;  /* local source/destination buffer */
static hgas_gptr_t g_sym, g_flag, g_ctr;

static long lat_iters(const bench_opts_t *o, size_t bytes) {
    return bench_iters(bytes, o->quick ? 2000 : 10000, o->quick ? 8e6 : 32e6, o->quick ? 3 : 10);
}

/* One message of a ping-pong: `s` bytes, then the flag value `v`. */
static void send_put(size_t s, uint64_t v) {
    if (s <= 8) {
        CHECK(hgas_put(g_flag, &v, 8));
        return;
    }
    CHECK(hgas_put(g_sym, loc, s));
    CHECK(hgas_fence());
    CHECK(hgas_put(g_flag, &v, 8));
}
static void send_put_signal(size_t s, uint64_t v) {
    CHECK(hgas_put_signal(g_sym, loc, s, g_flag, v, HGAS_SIGNAL_SET));
}

/* Ping-pong of `send` between rank 0 and 1; rank 0 reports the one-way time. */
static void pingpong(const bench_opts_t *o, const char *name, size_t s, void (*send)(size_t, uint64_t)) {
    const long iters = lat_iters(o, s);
    const long warm = iters / 10 + 1;
    double samples[MAXB];
    uint64_t round = 0;
    int verified = 1;
    bench_fill(loc, s, 1);
    CHECK(hgas_barrier());
    flag[0] = 0;
    CHECK(hgas_barrier());
    /* Round 1 is checked: the receiver looks at the data it got before answering. */
    for (int b = -1; b < o->batches; ++b) {
        const long n = b < 0 ? warm : iters;
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < n; ++i) {
            ++round;
            if (me == 0) {
                send(s, round);
                CHECK(hgas_signal_wait_until(&flag[0], HGAS_CMP_GE, round, NULL));
            } else {
                CHECK(hgas_signal_wait_until(&flag[0], HGAS_CMP_GE, round, NULL));
                if (round == 1) {
                    long bad = s <= 8 ? (flag[0] == 1 ? -1 : 0) : bench_check(sym, s, 1);
                    if (bad >= 0) {
                        fprintf(stderr, "hgas-bench-lat: %s %zu B: byte %ld of the received message is wrong\n",
                                name, s, bad);
                        verified = 0;
                    }
                }
                send(s, round);
            }
        }
        uint64_t t1 = bench_now_ns();
        if (b >= 0) samples[b] = (double)(t1 - t0) / 1e3 / (2.0 * (double)n);
    }
    /* Rank 1 tells rank 0 whether its check passed (through the counter word). */
    int64_t ok = 0;
    CHECK(hgas_barrier());
    if (me == 1 && !verified) CHECK(hgas_atomic_add64(g_ctr, 1)); /* g_ctr points at rank 0 here */
    CHECK(hgas_barrier());
    if (me == 0) {
        ok = (int64_t)flag[8];
        flag[8] = 0;
        bench_report_lat(o, name, s, samples, o->batches, iters, ok == 0, NULL);
    }
    CHECK(hgas_barrier());
}

static void get_lat(const bench_opts_t *o, size_t s) {
    const long iters = lat_iters(o, s);
    double samples[MAXB];
    if (me == 1) bench_fill(sym, s, 2);
    CHECK(hgas_barrier());
    if (me == 0) {
        memset(loc, 0, s);
        CHECK(hgas_get(loc, g_sym, s));
        long bad = bench_check(loc, s, 2);
        if (bad >= 0) fprintf(stderr, "hgas-bench-lat: get_lat %zu B: byte %ld is wrong\n", s, bad);
        for (long i = 0; i < iters / 10 + 1; ++i) CHECK(hgas_get(loc, g_sym, s));
        for (int b = 0; b < o->batches; ++b) {
            uint64_t t0 = bench_now_ns();
            for (long i = 0; i < iters; ++i) CHECK(hgas_get(loc, g_sym, s));
            samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
        }
        bench_report_lat(o, "get_lat", s, samples, o->batches, iters, bad < 0, NULL);
    }
    CHECK(hgas_barrier());
}

static void fadd_lat(const bench_opts_t *o) {
    const long iters = o->quick ? 5000 : 20000;
    double samples[MAXB];
    flag[8] = 0;
    CHECK(hgas_barrier());
    if (me == 0) {
        int64_t old = -1, total = 0;
        CHECK(hgas_atomic_fetch_add64(g_ctr, 1, &old));
        int ok = old == 0;
        ++total;
        for (long i = 0; i < iters / 10; ++i, ++total) CHECK(hgas_atomic_fetch_add64(g_ctr, 1, &old));
        for (int b = 0; b < o->batches; ++b) {
            uint64_t t0 = bench_now_ns();
            for (long i = 0; i < iters; ++i) CHECK(hgas_atomic_fetch_add64(g_ctr, 1, &old));
            samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
            total += iters;
        }
        ok = ok && old == total - 1;
        if (!ok) fprintf(stderr, "hgas-bench-lat: fadd_lat: the counter went wrong (last old value %lld, expected %lld)\n",
                         (long long)old, (long long)(total - 1));
        bench_report_lat(o, "fadd_lat", 8, samples, o->batches, iters, ok, NULL);
    }
    CHECK(hgas_barrier());
    flag[8] = 0;
    CHECK(hgas_barrier());
}

static void barrier_lat(const bench_opts_t *o) {
    const long iters = o->quick ? 2000 : 10000;
    double samples[MAXB];
    for (long i = 0; i < iters / 10; ++i) CHECK(hgas_barrier());
    for (int b = 0; b < o->batches; ++b) {
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < iters; ++i) CHECK(hgas_barrier());
        samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
    }
    if (me == 0) bench_report_lat(o, "barrier_lat", 0, samples, o->batches, iters, 1, NULL);
    CHECK(hgas_barrier());
}

int main(int argc, char **argv) {
    bench_opts_t o;
    bench_parse(argc, argv, &o, "hgas");
    if (o.batches > MAXB) o.batches = MAXB;
    bench_heap_env("HGAS_HEAP_SIZE", &o);
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-lat: hgas_init: %s\n", hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    if (hgas_rank_n() != 2) {
        if (me == 0) fprintf(stderr, "hgas-bench-lat: run with 2 ranks (hgasrun -n 2), not %d\n", hgas_rank_n());
        hgas_finalize();
        return 2;
    }
    peer = 1 - me;
    bench_pin(&o, me);
    CHECK(hgas_malloc(o.max_size, (void **)&sym));
    CHECK(hgas_calloc(16, sizeof(uint64_t), (void **)&flag));
    loc = (unsigned char *)malloc(o.max_size);
    memset(loc, 0, o.max_size);
    CHECK(hgas_ptr(sym, peer, &g_sym));
    CHECK(hgas_ptr(&flag[0], peer, &g_flag));
    /* The counter lives on rank 1 for fadd_lat; rank 1's own pointer points at rank 0's
     * counter, which pingpong uses to report a failed check. */
    CHECK(hgas_ptr(&flag[8], me == 0 ? 1 : 0, &g_ctr));

    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_lat")) pingpong(&o, "put_lat", s, send_put);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_signal_lat")) pingpong(&o, "put_signal_lat", s, send_put_signal);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "get_lat")) get_lat(&o, s);
    if (bench_selected(&o, "fadd_lat")) fadd_lat(&o);
    if (bench_selected(&o, "barrier_lat")) barrier_lat(&o);

    free(loc);
    CHECK(hgas_free(flag));
    CHECK(hgas_free(sym));
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
