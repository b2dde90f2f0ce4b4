/* hgas-bench-kinds — latency and bandwidth of put and get between memory kinds: device to
 * device (d2d), host to device (h2d) and device to host (d2h), where "device" is the kind
 * named by --kind (cuda on a GPU machine, sim anywhere). With one rank the target is the rank
 * itself (the same-process path); with two, rank 0 measures against rank 1, over whatever path
 * the runtime picks for that pair (peer GPUs, one GPU shared, or HGAS_PATH=staged).
 *
 *   put_lat_X  blocking hgas_put + hgas_quiet (remote completion), median per operation
 *   get_lat_X  blocking hgas_get
 *   put_bw_X   a window of hgas_put_nbi then hgas_quiet
 *   get_bw_X   a window of hgas_get_nbi then hgas_quiet
 * The source of a put is local memory of the source kind, its target symmetric memory of the
 * destination kind on the target rank (and the reverse for get). Every size is checked once
 * (read back through hgas) before it is timed.
 *
 * Usage: hgasrun -n 1|2 hgas-bench-kinds [--kind cuda|sim] [--dirs d2d,h2d,d2h] [--peer] [--register]
 *        [common options]
 * --register: the host buffers (malloc'd user memory) are registered with hgas_register first,
 * so h2d and d2h show what registration buys over the driver's pageable copies.
 * (the common options are in bench_common.h). --transport labels the path; --peer says the two
 * ranks use different GPUs (direction d2d-peer, as the peers name it). Output: one JSON record
 * per point in the GPU peers' shape (bench put_lat/put_bw/get_lat/get_bw, path, direction).
 * --budget S: the whole run stays within about S seconds: each point's timed loops are cut to
 * its share of S (at least one operation per batch), and once S is spent the remaining sizes
 * are left out with a "# skipped" line, so that a slow path (pageable host buffers without
 * the registration cache) yields what it measured instead of nothing. */
#include "bench_common.h"

#include <hgas/hgas.h>

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        hgas_status_t s_ = (call);                                                                           \
        if (s_ != HGAS_OK) {                                                                                 \
            fprintf(stderr, "hgas-bench-kinds: %s failed at line %d: %s\n", #call, __LINE__, hgas_last_error()); \
            hgas_abort(1, "benchmark call failed");                                                          \
        }                                                                                                    \
    } while (0)

enum { MAXB = 64 };

static int me, target;
static hgas_kind_t dev_kind = HGAS_KIND_CUDA;
static int peer_gpu = 0; /* --peer: the two ranks use different GPUs (direction d2d-peer) */
static int reg_host = 0; /* --register: user host buffers are registered with hgas_register */
static double budget_s = 0; /* --budget: seconds for the whole run (0: no limit) */
static double point_s = 0;  /* each point's share of it */
static uint64_t start_ns;

/* Rank 0's clock decides, for both ranks (they meet in every point's barriers anyway). */
static int budget_spent(void) {
    int mine = me == 0 && budget_s > 0 && (double)(bench_now_ns() - start_ns) / 1e9 > budget_s, any = 0;
    CHECK(hgas_allreduce(&any, &mine, 1, HGAS_INT32, HGAS_OP_MAX));
    return any;
}
/* How many of `want` operations of `op_s` seconds each fit in a batch's share of the point. */
static long fit(long want, double op_s, int batches) {
    if (point_s <= 0 || op_s <= 0) return want;
    const double n = point_s / (double)batches / op_s;
    return n >= (double)want ? want : n < 1 ? 1 : (long)n;
}

/* One JSON record in the GPU peers' shape (bench/gpu/gpu_common.h): the operation as `bench`,
 * the direction and the path as fields, so that bench-plot.py lines hgas up with its peers. */
static void report(const bench_opts_t *o, const char *bench, const char *dirname, size_t bytes, double *samples,
                   int n, long iters, double batch_bytes, int verified) {
    char dir[32];
    snprintf(dir, sizeof dir, "%s%s", dirname, peer_gpu && !strcmp(dirname, "d2d") ? "-peer" : "");
    double med = bench_median(samples, n);
    char sz[32];
    bench_size_str(bytes, sz, sizeof sz);
    if (batch_bytes > 0) {
        printf("{\"bench\":\"%s\",\"impl\":\"hgas\",\"transport\":\"%s\",\"path\":\"%s\",\"direction\":\"%s\","
               "\"bytes\":%zu,\"gbps\":%.4f,\"max_gbps\":%.4f,\"min_gbps\":%.4f,\"median_us\":%.4f,\"iters\":%ld,"
               "\"batches\":%d,\"initiator\":\"host\",\"verified\":%s}\n",
               bench, o->transport, o->transport, dir, bytes, batch_bytes / med / 1e9, batch_bytes / samples[0] / 1e9,
               batch_bytes / samples[n - 1] / 1e9, med / (double)iters * 1e6, iters, n, verified ? "true" : "false");
        printf("# hgas %-10s %-8s %-9s %8s %10.3f GB/s%s\n", o->transport, bench, dir, sz, batch_bytes / med / 1e9,
               verified ? "" : "  DATA CHECK FAILED");
    } else {
        printf("{\"bench\":\"%s\",\"impl\":\"hgas\",\"transport\":\"%s\",\"path\":\"%s\",\"direction\":\"%s\","
               "\"bytes\":%zu,\"median_us\":%.4f,\"min_us\":%.4f,\"max_us\":%.4f,\"iters\":%ld,\"batches\":%d,"
               "\"initiator\":\"host\",\"verified\":%s}\n",
               bench, o->transport, o->transport, dir, bytes, med, samples[0], samples[n - 1], iters, n,
               verified ? "true" : "false");
        printf("# hgas %-10s %-8s %-9s %8s %10.3f us%s\n", o->transport, bench, dir, sz, med,
               verified ? "" : "  DATA CHECK FAILED");
    }
    fflush(stdout);
}

typedef struct dir {
    const char *name;   /* d2d, h2d, d2h */
    hgas_kind_t src, dst;
} dir_t;

/* Local memory of a kind: host is malloc'd (user memory), device is symmetric (hgas's). */
typedef struct buf {
    void *p;
    int sym;
} buf_t;

static void buf_alloc(buf_t *b, hgas_kind_t k, size_t n) {
    if (k == HGAS_KIND_HOST) {
        /* Whole pages: a registration pins whole pages, and two buffers must not share one. */
        b->p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
        if (!b->p) { fprintf(stderr, "hgas-bench-kinds: out of memory\n"); hgas_abort(1, "oom"); }
        memset(b->p, 0, n);
        b->sym = 0;
        if (reg_host) CHECK(hgas_register(b->p, n));
    } else {
        CHECK(hgas_malloc_kind(n, k, &b->p));
        b->sym = 1;
    }
}
static void buf_free(buf_t *b) {
    if (b->sym) {
        CHECK(hgas_free(b->p));
        return;
    }
    if (reg_host) CHECK(hgas_deregister(b->p));
    free(b->p);
}

/* Writes / checks a pattern in local memory of any kind (device memory through hgas). */
static void fill_local(buf_t *b, size_t n, unsigned round, unsigned char *tmp) {
    if (!b->sym) { bench_fill(b->p, n, round); return; }
    hgas_gptr_t g;
    CHECK(hgas_ptr(b->p, me, &g));
    bench_fill(tmp, n, round);
    CHECK(hgas_put(g, tmp, n));
}
static long check_local(buf_t *b, size_t n, unsigned round, unsigned char *tmp) {
    if (!b->sym) return bench_check(b->p, n, round);
    hgas_gptr_t g;
    CHECK(hgas_ptr(b->p, me, &g));
    CHECK(hgas_get(tmp, g, n));
    return bench_check(tmp, n, round);
}

/* Operations per quiet: the peers' window (bench/gpu/gpu_common.h gpu_bw_ops: up to 1000
 * operations or 256 MiB, at least 2), so that hgas's put_nbi...quiet and the peers'
 * cudaMemcpyAsync...synchronize are timed alike. (A 16 MiB window put one quiet, a full
 * synchronization, after every 32 MiB transfer: 5% of the time at that size.) */
static long window_of(const bench_opts_t *o, size_t s) {
    return bench_iters(s, o->quick ? 200 : 1000, o->quick ? 64.0 * (1 << 20) : 256.0 * (1 << 20), o->quick ? 1 : 2);
}

static void run_dir(const bench_opts_t *o, const dir_t *d) {
    char name[32];
    buf_t loc, sym;  /* loc: local operand (put source / get destination), sym: the target */
    int is_put;
    unsigned char *tmp = (unsigned char *)malloc(o->max_size);
    for (is_put = 1; is_put >= 0; --is_put) {
        /* put: local = src kind, target = dst kind; get: target = src kind, local = dst kind */
        buf_alloc(&loc, is_put ? d->src : d->dst, o->max_size);
        CHECK(hgas_malloc_kind(o->max_size, is_put ? d->dst : d->src, &sym.p));
        sym.sym = 1;
        hgas_gptr_t g;
        CHECK(hgas_ptr(sym.p, target, &g));
        for (int lat = 1; lat >= 0; --lat) {
            snprintf(name, sizeof name, "%s_%s", is_put ? "put" : "get", lat ? "lat" : "bw");
            if (!bench_selected(o, name) && !bench_selected(o, d->name)) continue;
            for (size_t s = o->min_size; s; s = bench_next_size(o, s)) {
                if (lat && s > (4u << 20)) break; /* latency: up to 4 MiB */
                if (budget_spent()) {
                    if (me == 0)
                        printf("# skipped %s %s from %zu B on: the time budget (--budget %g s) is spent\n", name,
                               d->name, s, budget_s);
                    break;
                }
                int ok = 1;
                /* check: the measuring rank moves a known pattern once; the owner looks at it */
                if (me == 0) {
                    if (is_put) fill_local(&loc, s, 5, tmp);
                } else {
                    if (!is_put) fill_local(&sym, s, 5, tmp);
                }
                if (target == 0 && !is_put) fill_local(&sym, s, 5, tmp);
                CHECK(hgas_barrier());
                if (me == 0) {
                    if (is_put) CHECK(hgas_put(g, loc.p, s));
                    else CHECK(hgas_get(loc.p, g, s));
                    CHECK(hgas_quiet());
                    if (!is_put && check_local(&loc, s, 5, tmp) >= 0) ok = 0;
                }
                CHECK(hgas_barrier());
                if (is_put && me == target && check_local(&sym, s, 5, tmp) >= 0) {
                    fprintf(stderr, "hgas-bench-kinds: %s %zu B arrived wrong\n", name, s);
                    ok = 0;
                }
                int all_ok = 0;
                CHECK(hgas_allreduce(&all_ok, &ok, 1, HGAS_INT32, HGAS_OP_MIN));
                if (me == 0) {
                    double samples[MAXB];
                    if (lat) {
                        long iters = bench_iters(s, o->quick ? 50 : 200, o->quick ? 64e6 : 256e6, 3);
                        const long warm = iters / 5 + 2;
                        const uint64_t w0 = bench_now_ns();
                        for (long i = 0; i < warm; ++i) { /* warm-up */
                            if (is_put) { CHECK(hgas_put(g, loc.p, s)); CHECK(hgas_quiet()); }
                            else CHECK(hgas_get(loc.p, g, s));
                        }
                        iters = fit(iters, (double)(bench_now_ns() - w0) / 1e9 / (double)warm, o->batches);
                        for (int b = 0; b < o->batches; ++b) {
                            uint64_t t0 = bench_now_ns();
                            for (long i = 0; i < iters; ++i) {
                                if (is_put) { CHECK(hgas_put(g, loc.p, s)); CHECK(hgas_quiet()); }
                                else CHECK(hgas_get(loc.p, g, s));
                            }
                            samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
                        }
                        report(o, name, d->name, s, samples, o->batches, iters, 0, all_ok);
                    } else {
                        const long window = window_of(o, s);
                        long rounds = bench_iters(s * (size_t)window, o->quick ? 20 : 100,
                                                  o->quick ? 256e6 : 1e9, 2);
                        const uint64_t w0 = bench_now_ns();
                        for (int w = 0; w < 2; ++w) { /* warm-up */
                            for (long i = 0; i < window; ++i) {
                                if (is_put) CHECK(hgas_put_nbi(g, loc.p, s));
                                else CHECK(hgas_get_nbi(loc.p, g, s));
                            }
                            CHECK(hgas_quiet());
                        }
                        rounds = fit(rounds, (double)(bench_now_ns() - w0) / 1e9 / 2.0, o->batches);
                        for (int b = 0; b < o->batches; ++b) {
                            uint64_t t0 = bench_now_ns();
                            for (long r = 0; r < rounds; ++r) {
                                for (long i = 0; i < window; ++i) {
                                    if (is_put) CHECK(hgas_put_nbi(g, loc.p, s));
                                    else CHECK(hgas_get_nbi(loc.p, g, s));
                                }
                                CHECK(hgas_quiet());
                            }
                            samples[b] = (double)(bench_now_ns() - t0) / 1e9;
                        }
                        report(o, name, d->name, s, samples, o->batches, rounds * window,
                                               (double)s * (double)window * (double)rounds, all_ok);
                    }
                }
                CHECK(hgas_barrier());
            }
        }
        CHECK(hgas_free(sym.p));
        buf_free(&loc);
    }
    free(tmp);
}

int main(int argc, char **argv) {
    /* Our own options first; the rest are the common ones. */
    const char *dirs = "d2d,h2d,d2h";
    int k = 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
            dev_kind = !strcmp(argv[i + 1], "sim") ? HGAS_KIND_SIM : HGAS_KIND_CUDA;
            ++i;
        } else if (!strcmp(argv[i], "--peer")) {
            peer_gpu = 1;
        } else if (!strcmp(argv[i], "--register")) {
            reg_host = 1;
        } else if (!strcmp(argv[i], "--dirs") && i + 1 < argc) {
            dirs = argv[++i];
        } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            budget_s = atof(argv[++i]);
            if (budget_s <= 0) {
                fprintf(stderr, "hgas-bench-kinds: --budget %s: give seconds > 0\n", argv[i]);
                return 2;
            }
        } else {
            argv[k++] = argv[i];
        }
    }
    argc = k;
    bench_opts_t o;
    bench_parse(argc, argv, &o, "hgas");
    if (o.batches > MAXB) o.batches = MAXB;
    bench_heap_env("HGAS_HEAP_SIZE", &o);
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "hgas-bench-kinds: hgas_init: %s\n", hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    if (hgas_rank_n() > 2) {
        if (me == 0) fprintf(stderr, "hgas-bench-kinds: run with 1 or 2 ranks, not %d\n", hgas_rank_n());
        hgas_finalize();
        return 2;
    }
    if (!hgas_kind_available(dev_kind)) {
        fprintf(stderr, "hgas-bench-kinds: kind %s is not available on rank %d: %s\n", hgas_kind_name(dev_kind), me,
                hgas_last_error());
        hgas_finalize();
        return 2;
    }
    target = hgas_rank_n() == 2 ? 1 : 0;
    bench_pin(&o, me);
    start_ns = bench_now_ns();
    if (budget_s > 0) { /* every (direction, operation, size) point gets an equal share */
        long points = 0;
        for (size_t s = o.min_size; s; s = bench_next_size(&o, s)) points += s <= (4u << 20) ? 2 : 1;
        int ndirs = 0;
        for (const char *d = dirs; *d; ++d) ndirs += *d == ',';
        points *= 2 * (ndirs + 1); /* put and get, each direction */
        point_s = budget_s / (double)(points > 0 ? points : 1);
    }
    const dir_t all[] = {{"d2d", dev_kind, dev_kind}, {"h2d", HGAS_KIND_HOST, dev_kind}, {"d2h", dev_kind, HGAS_KIND_HOST}};
    for (int i = 0; i < 3; ++i)
        if (strstr(dirs, all[i].name)) run_dir(&o, &all[i]);
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
