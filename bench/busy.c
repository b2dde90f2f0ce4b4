/* hgas-bench-busy — get and put latency against a target that computes: rank 1 runs a loop
 * that calls no hgas function for --busy-ms D (default 20) while rank 0 times blocking
 * hgas_get and hgas_put + hgas_quiet of each size on rank 1's memory; the same against an idle
 * target (rank 1 waiting inside hgas_barrier, which makes progress). Run it with the helper
 * thread off and on (HGAS_PROGRESS_THREAD=0/1; hgas-bench --busy does both and prints the
 * table): where the transport lets the target's NIC, shared memory or GPU serve the access the
 * busy target costs nothing; where the target's CPU must act (active messages, staged device
 * memory), without the helper an access waits until the target next enters hgas -- up to D.
 *
 * Memory: `host` (rank 0's malloc'd buffer <-> rank 1's host heap) and `device` (rank 0's and
 * rank 1's symmetric buffers of kind cuda, or sim where there is no GPU). Every point is
 * checked: what a get brought and what a put left on rank 1 are read back and compared.
 *
 * The peer, for host memory where rank 1's heap is mapped here (shm): plain memcpy through the
 * mapping (impl "memcpy"), idle and busy, which shows what a computing neighbour costs the
 * machine itself (at 2-4 MiB a copy slows down with no hgas call in it).
 *
 * Output (bench_common.h): one JSON record per (impl, op, memory, size, target) with the median, the
 * maximum and the first operation's latency of a busy window, and "# " table lines.
 *   mpirun-free: hgasrun -n 2 hgas-bench-busy [--busy-ms D] [common options] */
#include "bench_common.h"

#include <hgas/hgas.h>

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        hgas_status_t s_ = (call);                                                                           \
        if (s_ != HGAS_OK) {                                                                                 \
            fprintf(stderr, "hgas-bench-busy: %s failed at line %d: %s\n", #call, __LINE__, hgas_last_error()); \
            hgas_abort(1, "benchmark call failed");                                                          \
        }                                                                                                    \
    } while (0)

enum { MAXOPS = 4096 };

static int me;
static double busy_ms = 20;
static const char *helper = "off";

/* The target's computation: no hgas call for `ms` milliseconds. */
static void compute(double ms) {
    const uint64_t end = bench_now_ns() + (uint64_t)(ms * 1e6);
    volatile double x = 1.0;
    while (bench_now_ns() < end)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
}

typedef struct point {
    double lat[MAXOPS];
    int n;
    double first_max; /* the largest first-operation latency of a busy window */
} point_t;

/* One window: rank 1 computes (busy) or waits in the barrier (idle); rank 0 runs `op` until
 * `limit` operations, or, when busy, until 60% of the window has passed (later operations
 * would meet a target that is already back in hgas). */
static void window(int busy, long limit, point_t *p, void (*op)(void *), void *arg) {
    CHECK(hgas_barrier());
    if (me == 1) {
        if (busy) compute(busy_ms);
    } else {
        const uint64_t t_start = bench_now_ns();
        for (long i = 0; i < limit && p->n < MAXOPS; ++i) {
            const uint64_t t0 = bench_now_ns();
            op(arg);
            const double us = (double)(bench_now_ns() - t0) / 1e3;
            p->lat[p->n++] = us;
            if (busy && i == 0 && us > p->first_max) p->first_max = us;
            if (busy && (double)(bench_now_ns() - t_start) > 0.6e6 * busy_ms) break;
        }
    }
    CHECK(hgas_barrier());
}

/* One point: idle and busy windows alternate (`batches` of each), so that a drift of the
 * machine over the point (another job, the clock, page placement) lands on both alike. */
static void measure(const bench_opts_t *o, long limit, point_t *idle, point_t *busy, void (*op)(void *), void *arg) {
    idle->n = busy->n = 0;
    idle->first_max = busy->first_max = 0;
    for (int b = 0; b < o->batches; ++b) {
        window(0, limit, idle, op, arg);
        window(1, limit, busy, op, arg);
    }
}

typedef struct opargs {
    hgas_gptr_t target;
    void *local;
    size_t bytes;
    void *raw; /* the target's memory as this process maps it (hgas_local_addr), or NULL */
} opargs_t;

static void do_get(void *a) {
    opargs_t *o = (opargs_t *)a;
    CHECK(hgas_get(o->local, o->target, o->bytes));
}
static void do_put(void *a) {
    opargs_t *o = (opargs_t *)a;
    CHECK(hgas_put(o->target, o->local, o->bytes));
    CHECK(hgas_quiet());  /* complete at the target */
}

/* The peer: the same bytes moved by memcpy through the mapping (no hgas call), so that what a
 * busy target costs the machine itself (shared caches, memory, clock) shows beside what it
 * costs hgas. */
static void do_raw_get(void *a) {
    opargs_t *o = (opargs_t *)a;
    memcpy(o->local, o->raw, o->bytes);
}
static void do_raw_put(void *a) {
    opargs_t *o = (opargs_t *)a;
    memcpy(o->raw, o->local, o->bytes);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* as hgas_quiet on shm */
}

static void report_impl(const bench_opts_t *o, const char *impl, const char *op, const char *mem, const char *kind,
                        size_t s, const char *target, point_t *p, int verified);
static void report(const bench_opts_t *o, const char *op, const char *mem, const char *kind, size_t s,
                   const char *target, point_t *p, int verified) {
    report_impl(o, "hgas", op, mem, kind, s, target, p, verified);
}
static void report_impl(const bench_opts_t *o, const char *impl, const char *op, const char *mem, const char *kind,
                        size_t s, const char *target, point_t *p, int verified) {
    if (me != 0) return;
    double mx = 0;
    for (int i = 0; i < p->n; ++i) mx = p->lat[i] > mx ? p->lat[i] : mx;
    const double med = p->n ? bench_median(p->lat, p->n) : 0;
    printf("{\"bench\":\"busy_%s\",\"impl\":\"%s\",\"transport\":\"%s\",\"mem\":\"%s\",\"kind\":\"%s\","
           "\"target\":\"%s\",\"helper\":\"%s\",\"busy_ms\":%.1f,\"bytes\":%zu,\"median_us\":%.4f,\"max_us\":%.4f,"
           "\"first_us\":%.4f,\"ops\":%d,\"verified\":%s}\n",
           op, impl, o->transport, mem, kind, target, helper, busy_ms, s, med, mx, p->first_max, p->n,
           verified ? "true" : "false");
    char sz[32];
    bench_size_str(s, sz, sizeof sz);
    printf("# busy  %-7s %-6s helper %-3s %-3s %-6s %8s  %-4s target %10.3f us  (max %.3f, %d ops)%s\n", o->transport,
           impl, helper, op, mem, sz, target, med, mx, p->n, verified ? "" : "  DATA CHECK FAILED");
    fflush(stdout);
}

/* get and put of every size between rank 0's `local` and rank 1's `remote` (symmetric), idle
 * then busy. `check` is a host buffer for reading back. */
static void sweep(const bench_opts_t *o, const char *mem, const char *kind, void *local, void *remote,
                  unsigned char *check, unsigned char *pat) {
    static point_t idle, busy;
    hgas_gptr_t g_remote, g_local;
    CHECK(hgas_ptr(remote, 1, &g_remote));
    CHECK(hgas_ptr(local, 0, &g_local));
    for (size_t s = o->min_size; s; s = bench_next_size(o, s)) {
        const long iters = bench_iters(s, o->quick ? 100 : 400, o->quick ? 4e6 : 16e6, 3);
        opargs_t a = {g_remote, local, s, NULL};
        /* get: rank 1's memory holds round 1's pattern; rank 0 reads it back into `local`. */
        int ok = 1;
        if (me == 1) {
            bench_fill(pat, s, 1);
            hgas_gptr_t mine;
            CHECK(hgas_ptr(remote, 1, &mine));
            CHECK(hgas_put(mine, pat, s));
            CHECK(hgas_quiet());
        }
        measure(o, iters, &idle, &busy, do_get, &a);
        if (me == 0) {
            memset(check, 0, s);
            CHECK(hgas_get(check, g_local, s));  /* what the gets left in `local` */
            ok = bench_check(check, s, 1) < 0;
            if (!ok) fprintf(stderr, "hgas-bench-busy: get %s %zu B: wrong data\n", mem, s);
        }
        report(o, "get", mem, kind, s, "idle", &idle, ok);
        report(o, "get", mem, kind, s, "busy", &busy, ok);
        CHECK(hgas_barrier());  /* the check is done before rank 1 changes the memory */
        /* put: rank 0's `local` holds round 2's pattern; rank 1's memory is read back. */
        if (me == 0) {
            bench_fill(pat, s, 2);
            CHECK(hgas_put(g_local, pat, s));
            CHECK(hgas_quiet());
        }
        measure(o, iters, &idle, &busy, do_put, &a);
        if (me == 0) {
            memset(check, 0, s);
            CHECK(hgas_get(check, g_remote, s));
            ok = bench_check(check, s, 2) < 0;
            if (!ok) fprintf(stderr, "hgas-bench-busy: put %s %zu B: wrong data at the target\n", mem, s);
        }
        report(o, "put", mem, kind, s, "idle", &idle, ok);
        report(o, "put", mem, kind, s, "busy", &busy, ok);
        CHECK(hgas_barrier());
    }
}

int main(int argc, char **argv) {
    /* Our own option first; the rest are bench_common's. */
    int n = 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--busy-ms") && i + 1 < argc) {
            busy_ms = atof(argv[++i]);
            if (busy_ms <= 0 || busy_ms > 10000) {
                fprintf(stderr, "hgas-bench-busy: --busy-ms wants milliseconds in (0, 10000], not '%s'\n", argv[i]);
                return 2;
            }
        } else {
            argv[n++] = argv[i];
        }
    }
    argc = n;
    bench_opts_t o;
    bench_parse(argc, argv, &o, "hgas");
    const char *pt = getenv("HGAS_PROGRESS_THREAD");
    helper = pt && (!strcmp(pt, "1") || !strcmp(pt, "on") || !strcmp(pt, "yes") || !strcmp(pt, "true")) ? "on" : "off";
    bench_heap_env("HGAS_HEAP_SIZE", &o);
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-busy: hgas_init: %s\n", hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    if (hgas_rank_n() != 2) {
        if (me == 0) fprintf(stderr, "hgas-bench-busy: run with 2 ranks (hgasrun -n 2), not %d\n", hgas_rank_n());
        hgas_finalize();
        return 2;
    }
    bench_pin(&o, me);
    unsigned char *hsym, *check = malloc(o.max_size), *pat = malloc(o.max_size), *hloc = malloc(o.max_size);
    CHECK(hgas_malloc(o.max_size, (void **)&hsym));
    memset(hloc, 0, o.max_size);
    if (me == 0)
        printf("# hgas-bench-busy: transport %s, helper thread %s, target busy for %.1f ms a window, %d windows a "
               "point\n", o.transport, helper, busy_ms, o.batches);
    /* host: rank 0's own buffer as the local end; `local` must be symmetric only for the
     * read-back, so rank 0 reads what a get left in hloc directly. */
    {
        static point_t idle, busy;
        hgas_gptr_t g_remote;
        CHECK(hgas_ptr(hsym, 1, &g_remote));
        for (size_t s = o.min_size; s; s = bench_next_size(&o, s)) {
            const long iters = bench_iters(s, o.quick ? 100 : 400, o.quick ? 4e6 : 16e6, 3);
            opargs_t a = {g_remote, hloc, s, hgas_local_addr(g_remote)};
            if (me == 1) bench_fill(hsym, s, 1);
            if (me == 0) memset(hloc, 0, s);
            measure(&o, iters, &idle, &busy, do_get, &a);
            int ok = me != 0 || bench_check(hloc, s, 1) < 0;
            if (!ok) fprintf(stderr, "hgas-bench-busy: get host %zu B: wrong data\n", s);
            report(&o, "get", "host", "host", s, "idle", &idle, ok);
            report(&o, "get", "host", "host", s, "busy", &busy, ok);
            CHECK(hgas_barrier());  /* the check is done before rank 1 changes the memory */
            if (me == 0) bench_fill(hloc, s, 2);
            if (me == 1) memset(hsym, 0, s);
            CHECK(hgas_barrier());
            measure(&o, iters, &idle, &busy, do_put, &a);
            if (me == 0) {
                CHECK(hgas_get(check, g_remote, s));
                ok = bench_check(check, s, 2) < 0;
                if (!ok) fprintf(stderr, "hgas-bench-busy: put host %zu B: wrong data at the target\n", s);
            }
            report(&o, "put", "host", "host", s, "idle", &idle, ok);
            report(&o, "put", "host", "host", s, "busy", &busy, ok);
            CHECK(hgas_barrier());
            /* The peer, where the target's heap is mapped here (shm): memcpy, get then put. Rank 1
             * learns whether rank 0 runs it from the same mapping test on its side. */
            int raw = me == 0 ? a.raw != NULL : 0;
            CHECK(hgas_allreduce(&raw, &raw, 1, HGAS_INT32, HGAS_OP_MAX));
            for (int dir = 0; raw && dir < 2; ++dir) {
                if (me == 1) bench_fill(hsym, s, 1);
                if (me == 0) {
                    if (dir == 0) memset(hloc, 0, s);
                    else bench_fill(hloc, s, 2);
                }
                CHECK(hgas_barrier());
                measure(&o, iters, &idle, &busy, dir ? do_raw_put : do_raw_get, &a);
                ok = 1;
                if (me == 0) ok = bench_check(dir ? (unsigned char *)a.raw : hloc, s, dir ? 2 : 1) < 0;
                report_impl(&o, "memcpy", dir ? "put" : "get", "host", "host", s, "idle", &idle, ok);
                report_impl(&o, "memcpy", dir ? "put" : "get", "host", "host", s, "busy", &busy, ok);
                CHECK(hgas_barrier());
            }
        }
    }
    /* device: cuda where there is a GPU, else sim memory. */
    const hgas_kind_t k = hgas_kind_available(HGAS_KIND_CUDA) ? HGAS_KIND_CUDA
                          : hgas_kind_available(HGAS_KIND_SIM) ? HGAS_KIND_SIM : HGAS_KIND_DEFAULT;
    if (k == HGAS_KIND_DEFAULT) {
        if (me == 0) printf("# no device memory (no GPU, HGAS_SIM_HEAP_SIZE=0): host memory only\n");
    } else {
        void *dsym;
        CHECK(hgas_malloc_kind(2 * o.max_size, k, &dsym));
        /* rank 0's local end: the second half of its own buffer; rank 1's: the first half. */
        sweep(&o, "device", hgas_kind_name(k), (char *)dsym + o.max_size, dsym, check, pat);
        CHECK(hgas_free(dsym));
    }
    CHECK(hgas_free(hsym));
    free(check);
    free(pat);
    free(hloc);
    hgas_finalize();
    return 0;
}
