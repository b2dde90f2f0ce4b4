/* hgas-bench-msg — OSU-style two-sided message benchmarks, written once for hgas (default) and
 * for MPI (compiled with -DBENCH_MPI by mpicc: the peer the ratios are taken against). Two
 * ranks, rank 0 measures; options and output as bench_common.h.
 *
 *   msg_lat    ping-pong of blocking send/recv, one-way time (osu_latency)
 *   msg_bw     window of 64 non-blocking sends, the receiver's 64 receives, a 4-byte ack per
 *              window (osu_bw)
 *   msg_bibw   the same window in both directions at once (osu_bibw)
 *   msg_rate   msg_bw's loop with 8-byte messages, reported as time per message (osu_mbw_mr
 *              for one pair)
 * Buffers are the program's (malloc), page-aligned. Data is checked once per size. */
#include "bench_common.h"

enum { MAXB = 64, WINDOW = 64 };

#ifdef BENCH_MPI
#include <mpi.h>
typedef MPI_Request req_t;
#define IMPL "mpi"
static void b_init(int *argc, char ***argv) { MPI_Init(argc, argv); }
static int b_rank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static void b_send(const void *b, size_t n, int d, int t) { MPI_Send(b, (int)n, MPI_BYTE, d, t, MPI_COMM_WORLD); }
static void b_recv(void *b, size_t n, int s, int t) { MPI_Recv(b, (int)n, MPI_BYTE, s, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static void b_isend(const void *b, size_t n, int d, int t, req_t *q) { MPI_Isend(b, (int)n, MPI_BYTE, d, t, MPI_COMM_WORLD, q); }
static void b_irecv(void *b, size_t n, int s, int t, req_t *q) { MPI_Irecv(b, (int)n, MPI_BYTE, s, t, MPI_COMM_WORLD, q); }
static void b_waitall(req_t *q, int n) { MPI_Waitall(n, q, MPI_STATUSES_IGNORE); }
static void b_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void b_finalize(void) { MPI_Finalize(); }
#else
#include <hgas/hgas.h>
typedef hgas_handle_t req_t;
#define IMPL "hgas"
#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        hgas_status_t s_ = (call);                                                                           \
        if (s_ != HGAS_OK) {                                                                                 \
            fprintf(stderr, "hgas-bench-msg: %s failed at line %d: %s\n", #call, __LINE__, hgas_last_error()); \
            hgas_abort(1, "benchmark call failed");                                                          \
        }                                                                                                    \
    } while (0)
static void b_init(int *argc, char ***argv) { (void)argc; (void)argv; CHECK(hgas_init()); }
static int b_rank(void) { return hgas_rank_me(); }
static void b_send(const void *b, size_t n, int d, int t) { CHECK(hgas_send(b, n, d, t)); }
static void b_recv(void *b, size_t n, int s, int t) { CHECK(hgas_recv(b, n, s, t, NULL)); }
static void b_isend(const void *b, size_t n, int d, int t, req_t *q) { CHECK(hgas_isend(b, n, d, t, q)); }
static void b_irecv(void *b, size_t n, int s, int t, req_t *q) { CHECK(hgas_irecv(b, n, s, t, NULL, q)); }
static void b_waitall(req_t *q, int n) { CHECK(hgas_wait_all(q, (size_t)n)); }
static void b_barrier(void) { CHECK(hgas_barrier()); }
static void b_finalize(void) { CHECK(hgas_finalize()); }
#endif

static int me, peer;
static unsigned char *sbuf, *rbuf;

static long lat_iters(const bench_opts_t *o, size_t s) {
    return bench_iters(s, o->quick ? 2000 : 10000, o->quick ? 8e6 : 32e6, o->quick ? 3 : 10);
}

static int check_once(size_t s) {
    /* one exchange with a pattern, checked on both sides' receive */
    bench_fill(sbuf, s, 3);
    memset(rbuf, 0, s);
    if (me == 0) {
        b_send(sbuf, s, peer, 9);
        b_recv(rbuf, s, peer, 9);
    } else {
        b_recv(rbuf, s, peer, 9);
        b_send(sbuf, s, peer, 9);
    }
    return bench_check(rbuf, s, 3) < 0;
}

static void msg_lat(const bench_opts_t *o, size_t s) {
    const long iters = lat_iters(o, s);
    double samples[MAXB];
    int ok = check_once(s);
    b_barrier();
    for (int b = -1; b < o->batches; ++b) {
        const long n = b < 0 ? iters / 10 + 1 : iters;
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < n; ++i) {
            if (me == 0) {
                b_send(sbuf, s, peer, 1);
                b_recv(rbuf, s, peer, 1);
            } else {
                b_recv(rbuf, s, peer, 1);
                b_send(sbuf, s, peer, 1);
            }
        }
        if (b >= 0) samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (2.0 * (double)n);
    }
    if (me == 0) bench_report_lat(o, "msg_lat", s, samples, o->batches, iters, ok, NULL);
    b_barrier();
}

/* One window: `dir` 0 = rank 0 sends, 1 = both send (bibw). */
static void window(size_t s, int both) {
    req_t q[2 * WINDOW];
    int n = 0;
    int ack = 0;
    const int sends = me == 0 || both, recvs = me == 1 || both;
    if (recvs)
        for (int k = 0; k < WINDOW; ++k) b_irecv(rbuf + (size_t)k * s, s, peer, 2, &q[n++]);
    if (sends)
        for (int k = 0; k < WINDOW; ++k) b_isend(sbuf, s, peer, 2, &q[n++]);
    b_waitall(q, n);
    if (me == 1) b_send(&ack, sizeof ack, peer, 3);
    else b_recv(&ack, sizeof ack, peer, 3);
}

static void msg_bw(const bench_opts_t *o, const char *name, size_t s, int both) {
    const long windows = bench_iters(s * WINDOW, o->quick ? 50 : 200, o->quick ? 64e6 : 256e6, 3);
    double samples[MAXB];
    int ok = check_once(s);
    b_barrier();
    for (int b = -1; b < o->batches; ++b) {
        const long n = b < 0 ? windows / 10 + 1 : windows;
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < n; ++i) window(s, both);
        if (b >= 0) samples[b] = (double)(bench_now_ns() - t0) / 1e9;
    }
    if (me == 0) {
        if (!strcmp(name, "msg_rate")) {
            for (int b = 0; b < o->batches; ++b) samples[b] = samples[b] * 1e6 / (double)(windows * WINDOW);
            bench_report_lat(o, name, s, samples, o->batches, windows * WINDOW, ok, "time per message");
        } else {
            const double bytes = (double)s * WINDOW * (double)windows * (both ? 2 : 1);
            bench_report_bw(o, name, s, samples, o->batches, windows * WINDOW, bytes, ok, NULL);
        }
    }
    b_barrier();
}

int main(int argc, char **argv) {
    bench_opts_t o;
    bench_parse(argc, argv, &o, IMPL);
    b_init(&argc, &argv);
    me = b_rank();
    peer = 1 - me;
    bench_pin(&o, me);
    const size_t cap = o.max_size * WINDOW + 4096;
    if (posix_memalign((void **)&sbuf, 4096, o.max_size + 4096) || posix_memalign((void **)&rbuf, 4096, cap)) {
        fprintf(stderr, "hgas-bench-msg: out of memory\n");
        return 1;
    }
    memset(sbuf, 1, o.max_size);
    memset(rbuf, 0, cap);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s)) {
        if (bench_selected(&o, "msg_lat")) msg_lat(&o, s);
        if (bench_selected(&o, "msg_bw")) msg_bw(&o, "msg_bw", s, 0);
        if (bench_selected(&o, "msg_bibw")) msg_bw(&o, "msg_bibw", s, 1);
    }
    if (bench_selected(&o, "msg_rate")) msg_bw(&o, "msg_rate", 8, 0);
    free(sbuf);
    free(rbuf);
    b_finalize();
    return 0;
}
