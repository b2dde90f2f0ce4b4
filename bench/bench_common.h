/* bench_common.h — what every hgas benchmark program (and its OpenSHMEM peer) shares:
 * options, sizes, timing, medians, data patterns, CPU pinning and the report lines.
 *
 * Method (docs/bench.md): every measurement is a number of timed batches of `iters`
 * operations after a warm-up; the reported value is the median over batches of the time per
 * operation (latency) or of the bytes per second (bandwidth); the data is checked once per
 * size before it is timed. Rank 0 measures and prints; rank 1 serves.
 *
 * Output: one JSON object per line on stdout (the tools' format, parsed by hgas-bench), and a
 * table for people on the same stream, each of its lines starting with "# ". Header-only so
 * that the peer (built by oshcc, without the hgas build) uses the very same code. */
#ifndef HGAS_BENCH_COMMON_H
#define HGAS_BENCH_COMMON_H

#define _GNU_SOURCE 1
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../src/base/cpus.h" /* relative: the OpenSHMEM peer is built from this directory alone */

/* Most timed batches per point: the programs' sample arrays hold this many. */
#define BENCH_MAX_BATCHES 64

typedef struct bench_opts {
    size_t min_size, max_size; /* --sizes A:B[:F] */
    unsigned factor;           /* size step (multiply) */
    int quick;                 /* --quick: fewer batches and iterations */
    int batches;               /* timed batches per point */
    int pin;                   /* pin rank r to CPU r % ncpu (--no-pin turns it off) */
    const char *transport;     /* label for the output: shm, ucx, ucx-am, oshmem ... */
    const char *impl;          /* hgas or oshmem */
    const char *only;          /* comma-separated bench names, or NULL for all */
} bench_opts_t;

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "64M" -> 67108864; K, M, G are powers of 1024. 0 on a bad value. */
static inline size_t bench_parse_bytes(const char *s) {
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; ++end; break;
    case 'm': case 'M': v <<= 20; ++end; break;
    case 'g': case 'G': v <<= 30; ++end; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') ++end;
    return *end ? 0 : (size_t)v;
}

static inline void bench_usage(const char *prog) {
    fprintf(stderr,
            "usage: %s [--sizes MIN:MAX[:FACTOR]] [--quick] [--batches N] [--transport LABEL] [--only a,b] "
            "[--no-pin]\n",
            prog);
}

/* Parses the options shared by every benchmark program; exits with 2 on a bad one. */
static inline void bench_parse(int argc, char **argv, bench_opts_t *o, const char *impl) {
    o->min_size = 8;
    o->max_size = 64u << 20;
    o->factor = 2;
    o->quick = 0;
    o->batches = 0;
    o->pin = 1;
    o->transport = "default";
    o->impl = impl;
    o->only = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--no-pin")) {
            o->pin = 0;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            char *c1 = strchr(buf, ':');
            if (!c1) { bench_usage(argv[0]); exit(2); }
            *c1 = 0;
            char *c2 = strchr(c1 + 1, ':');
            if (c2) { *c2 = 0; o->factor = (unsigned)atoi(c2 + 1); }
            o->min_size = bench_parse_bytes(buf);
            o->max_size = bench_parse_bytes(c1 + 1);
            if (!o->min_size || o->max_size < o->min_size || o->factor < 2) {
                fprintf(stderr, "%s: --sizes wants MIN:MAX[:FACTOR] with 0 < MIN <= MAX and FACTOR >= 2, not '%s'\n",
                        argv[0], v);
                exit(2);
            }
            ++i;
        } else if (!strcmp(a, "--batches") && v) {
            /* The programs keep their samples in arrays of BENCH_MAX_BATCHES: more would overrun them. */
            o->batches = atoi(v);
            if (o->batches < 1 || o->batches > BENCH_MAX_BATCHES) {
                fprintf(stderr, "%s: --batches wants 1 to %d, not '%s'\n", argv[0], BENCH_MAX_BATCHES, v);
                exit(2);
            }
            ++i;
        } else if (!strcmp(a, "--transport") && v) {
            o->transport = v;
            ++i;
        } else if (!strcmp(a, "--only") && v) {
            o->only = v;
            ++i;
        } else {
            bench_usage(argv[0]);
            exit(2);
        }
    }
    if (o->batches <= 0) o->batches = o->quick ? 5 : 11;
}

/* 1 if `name` is selected by --only (or --only was not given). */
static inline int bench_selected(const bench_opts_t *o, const char *name) {
    if (!o->only) return 1;
    size_t n = strlen(name);
    for (const char *p = o->only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Next size of the sweep, or 0 past the end. The last size is always max_size itself. */
static inline size_t bench_next_size(const bench_opts_t *o, size_t s) {
    if (s >= o->max_size) return 0;
    size_t n = s * o->factor;
    return n > o->max_size ? o->max_size : n;
}

/* Pins the calling process to one CPU chosen by its rank, so that the two ranks of a
 * benchmark never share a core: rank r takes the r-th CPU of the order in src/base/cpus.h
 * (the first hardware thread of every physical core first, so that the ranks are not SMT
 * siblings where a core is free). Peers are pinned the same way. Threads started before the
 * call (hgas's helper thread, at hgas_init) keep the process's whole CPU set. */
static inline void bench_pin(const bench_opts_t *o, int rank) {
    if (!o->pin) return;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) == 0) return;
    static int order[CPU_SETSIZE];
    const int n = hgas_cpu_order(&allowed, NULL, order, CPU_SETSIZE);
    if (n <= 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(order[rank % n], &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("bench: sched_setaffinity");
}

/* Iterations per batch: `base` for small messages, fewer as messages grow so that a batch
 * moves about `budget` bytes, never fewer than `floor`. */
static inline long bench_iters(size_t bytes, long base, double budget, long floor) {
    double it = budget / (double)bytes;
    if (it > (double)base) it = (double)base;
    if (it < (double)floor) it = (double)floor;
    return (long)it;
}

static int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The byte at position k of the pattern for a message of `bytes` bytes, round `round`. */
static inline unsigned char bench_pattern(size_t bytes, size_t k, unsigned round) {
    return (unsigned char)((k * 131u + bytes * 7u + round * 29u + 1u) & 0xffu);
}
static inline void bench_fill(void *buf, size_t bytes, unsigned round) {
    unsigned char *p = (unsigned char *)buf;
    for (size_t k = 0; k < bytes; ++k) p[k] = bench_pattern(bytes, k, round);
}
/* Index of the first wrong byte, or -1 when the buffer holds the pattern. */
static inline long bench_check(const void *buf, size_t bytes, unsigned round) {
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t k = 0; k < bytes; ++k)
        if (p[k] != bench_pattern(bytes, k, round)) return (long)k;
    return -1;
}

static inline void bench_size_str(size_t b, char *out, size_t n) {
    if (b >= (1u << 20) && b % (1u << 20) == 0) snprintf(out, n, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0) snprintf(out, n, "%zuK", b >> 10);
    else snprintf(out, n, "%zu", b);
}

/* Latency result: `samples` holds the per-operation time of each batch in microseconds. */
static inline void bench_report_lat(const bench_opts_t *o, const char *bench, size_t bytes, double *samples,
                                    int n, long iters, int verified, const char *note) {
    double med = bench_median(samples, n);
    double mn = samples[0], mx = samples[n - 1];
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"transport\":\"%s\",\"bytes\":%zu,\"median_us\":%.4f,"
           "\"min_us\":%.4f,\"max_us\":%.4f,\"iters\":%ld,\"batches\":%d,\"verified\":%s%s%s%s}\n",
           bench, o->impl, o->transport, bytes, med, mn, mx, iters, n, verified ? "true" : "false",
           note ? ",\"note\":\"" : "", note ? note : "", note ? "\"" : "");
    char sz[32];
    bench_size_str(bytes, sz, sizeof sz);
    printf("# %-8s %-7s %-16s %8s %10.3f us   (min %.3f, max %.3f, %ld x %d)%s\n", o->impl, o->transport, bench, sz,
           med, mn, mx, iters, n, verified ? "" : "  DATA CHECK FAILED");
    fflush(stdout);
}

/* Bandwidth result: `samples` holds the seconds of each batch that moved `batch_bytes`. */
static inline void bench_report_bw(const bench_opts_t *o, const char *bench, size_t bytes, double *samples, int n,
                                   long iters, double batch_bytes, int verified, const char *note) {
    double med = bench_median(samples, n); /* seconds per batch */
    double gbps = batch_bytes / med / 1e9, best = batch_bytes / samples[0] / 1e9;
    double worst = batch_bytes / samples[n - 1] / 1e9;
    double per_op_us = med / (double)iters * 1e6;
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"transport\":\"%s\",\"bytes\":%zu,\"gbps\":%.4f,\"max_gbps\":%.4f,"
           "\"min_gbps\":%.4f,\"median_us\":%.4f,\"iters\":%ld,\"batches\":%d,\"verified\":%s%s%s%s}\n",
           bench, o->impl, o->transport, bytes, gbps, best, worst, per_op_us, iters, n, verified ? "true" : "false",
           note ? ",\"note\":\"" : "", note ? note : "", note ? "\"" : "");
    char sz[32];
    bench_size_str(bytes, sz, sizeof sz);
    printf("# %-8s %-7s %-16s %8s %10.3f GB/s (best %.3f, worst %.3f, %ld ops x %d)%s\n", o->impl, o->transport, bench,
           sz, gbps, best, worst, iters, n, verified ? "" : "  DATA CHECK FAILED");
    fflush(stdout);
}

/* Sets `name` to the symmetric heap size the sweep needs unless the user set it. */
static inline void bench_heap_env(const char *name, const bench_opts_t *o) {
    if (getenv(name)) return;
    char v[64];
    snprintf(v, sizeof v, "%zuM", (o->max_size >> 20) + 32);
    setenv(name, v, 1);
}

#endif /* HGAS_BENCH_COMMON_H */
