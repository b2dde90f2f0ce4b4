/* gpu_common.h — what the GPU benchmark peers (bench/gpu/) share: options, the multicast-off
 * environment, device discovery that fails loudly, CUDA error checks, iteration counts, and
 * the report lines (one JSON object per measurement plus a "# " table line for people).
 *
 * The records have the shape of the CPU benchmarks' (bench_common.h): bench, impl, transport,
 * bytes, median_us, min_us, max_us, iters, batches, verified (bandwidth records add gbps,
 * max_gbps, min_gbps; median_us is then per operation), followed by what a GPU path needs:
 *   path       the API sequence timed, e.g. "cudaMemcpyAsync", "nvshmem_putmem+nvshmem_quiet"
 *   direction  h2d | d2h | d2d (one GPU) | d2d-peer (GPU of rank/PE 0 to GPU of rank/PE 1)
 *   peer       the peer family: cuda, nvshmem, nccl, user-staging (hgas itself: "hgas")
 *   host_mem   pinned | pageable | registered, where host memory takes part
 *   timing     blocking (time per op, each waited for) | window (N ops, one wait; GB/s) |
 *              pingpong/2 (half a round trip) | device-loop (ops in one kernel, device events)
 *   initiator  host (a CPU thread calls the API) | device (a GPU kernel does)
 *   src_gpu, dst_gpu, device (name of the source GPU), note (optional).
 * docs/bench.md ("GPU peers") describes every program and path. */
#ifndef HGAS_BENCH_GPU_COMMON_H
#define HGAS_BENCH_GPU_COMMON_H

#include "../bench_common.h"

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdarg>
#include <string>
#include <vector>

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                    */

static const char *g_prog = "hgas-gpu";
static int g_rank = 0;          /* 0, or 1 in the second process of a two-process peer */
static int g_check_failed = 0;  /* a data check failed somewhere: exit status 1 at the end */

[[noreturn]] static inline void gpu_die(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: FAILED: %s\n", g_prog, g_rank, msg);
    fflush(stderr);
    fflush(stdout);
    exit(1);
}

[[noreturn]] static inline void gpu_die_cuda(const char *call, cudaError_t e, const char *file, int line) {
    gpu_die("CUDA error %s (%s) from %s at %s:%d", cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
}

/* Every CUDA runtime call goes through CK; a kernel launch is followed by CK_LAUNCH(). */
#define CK(call)                                                                 \
    do {                                                                         \
        cudaError_t ck_e_ = (call);                                              \
        if (ck_e_ != cudaSuccess) gpu_die_cuda(#call, ck_e_, __FILE__, __LINE__); \
    } while (0)
#define CK_LAUNCH() CK(cudaGetLastError())

/* ---------------------------------------------------------------------------------------- */
/* Environment: NVLink multicast stays off on these shared machines. A program that uses it
 * can put the host's GPUs out of service, so the safe value wins over whatever was set.    */

static inline void gpu_safe_env(void) {
    static const char *const kv[][2] = {
        {"NCCL_NVLS_ENABLE", "0"}, {"NVSHMEM_DISABLE_NVLS", "1"}, {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"}};
    for (auto &p : kv) {
        const char *v = getenv(p[0]);
        if (v && strcmp(v, p[1]) != 0)
            fprintf(stderr, "%s: %s=%s replaced by %s: NVLink multicast must stay off on shared machines\n", g_prog,
                    p[0], v, p[1]);
        setenv(p[0], p[1], 1);
    }
}

/* Number of CUDA devices, or a clear error and exit status 1 when there is none (no driver,
 * no device, or CUDA_VISIBLE_DEVICES hides them all). */
static inline int gpu_count_or_die(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        fprintf(stderr,
                "%s: FAILED: no CUDA device: cudaGetDeviceCount says %s (%s). This program measures GPU paths; "
                "run it on a machine with an NVIDIA GPU and driver (tools/gpu-check.sh).\n",
                g_prog, e == cudaSuccess ? "0 devices" : cudaGetErrorName(e),
                e == cudaSuccess ? "none visible" : cudaGetErrorString(e));
        exit(1);
    }
    return n;
}

static inline std::string gpu_device_name(int dev) {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    std::string s;
    for (const char *c = p.name; *c; ++c) s += (*c == '"' || *c == '\\') ? '_' : *c;
    return s;
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                   */

struct gpu_opts {
    size_t min_size = 8, max_size = 256u << 20;
    unsigned factor = 2;
    bool sizes_given = false;
    int quick = 0;
    int batches = 0;
    int pin = 0;
    std::string only;           /* comma-separated names, empty for all */
    int devices[2] = {0, 1};    /* GPU of rank/PE 0 and of rank/PE 1 (or source and peer) */
    bool devices_given = false;
    double timeout_s = 600;
    std::string transport = "gpu";
};

static inline void gpu_usage(FILE *f, const char *extra) {
    fprintf(f,
            "usage: %s [--sizes MIN:MAX[:F]] [--quick] [--batches N] [--only a,b] [--devices A[,B]]\n"
            "          [--timeout S] [--pin] [--transport LABEL] [-h]\n"
            "  --sizes      message sizes MIN..MAX, each F times the last (default 8:256M:2; --quick 8:256M:8)\n"
            "  --quick      5 batches instead of 11, fewer operations per batch\n"
            "  --batches N  timed batches per point (the median is reported)\n"
            "  --only a,b   only these measurements (names below)\n"
            "  --devices    GPU of rank 0 and of rank 1 (default 0,1)\n"
            "  --timeout S  end with status 124 after S seconds (default 600)\n"
            "  --pin        pin rank r to CPU r (default: not pinned; the GPUs do the work)\n"
            "%s"
            "Output: one JSON object per measurement on stdout, a table on lines starting with '# '.\n"
            "Exit status: 0 all measured and checked; 1 a failure (no CUDA device, a CUDA/NVSHMEM/NCCL error,\n"
            "a data check); 2 bad options; 124 timeout. A measurement this machine cannot make (e.g. two GPUs\n"
            "needed, one present) is skipped with a '# skipped:' line, not an error.\n",
            g_prog, extra ? extra : "");
}

static inline void gpu_parse(int argc, char **argv, gpu_opts *o, const char *extra_help) {
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            gpu_usage(stdout, extra_help);
            exit(0);
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--pin")) {
            o->pin = 1;
        } else if (!strcmp(a, "--no-pin")) {
            o->pin = 0;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            char *c1 = strchr(buf, ':');
            char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (c1) *c1 = 0;
            if (c2) *c2 = 0;
            o->min_size = bench_parse_bytes(buf);
            o->max_size = c1 ? bench_parse_bytes(c1 + 1) : 0;
            o->factor = c2 ? (unsigned)atoi(c2 + 1) : 2;
            if (!c1 || !o->min_size || o->max_size < o->min_size || o->factor < 2) {
                fprintf(stderr, "%s: --sizes wants MIN:MAX[:FACTOR] with 0 < MIN <= MAX and FACTOR >= 2, not '%s'\n",
                        g_prog, v);
                exit(2);
            }
            o->sizes_given = true;
            ++i;
        } else if (!strcmp(a, "--batches") && v) {
            o->batches = atoi(v);
            if (o->batches < 1 || o->batches > 1000) {
                fprintf(stderr, "%s: --batches wants 1..1000, not '%s'\n", g_prog, v);
                exit(2);
            }
            ++i;
        } else if (!strcmp(a, "--only") && v) {
            o->only = v;
            ++i;
        } else if (!strcmp(a, "--devices") && v) {
            int n = sscanf(v, "%d,%d", &o->devices[0], &o->devices[1]);
            if (n < 1 || o->devices[0] < 0 || (n == 2 && o->devices[1] < 0)) {
                fprintf(stderr, "%s: --devices wants A[,B] (CUDA device numbers), not '%s'\n", g_prog, v);
                exit(2);
            }
            if (n == 1) o->devices[1] = o->devices[0] + 1;
            o->devices_given = true;
            ++i;
        } else if (!strcmp(a, "--timeout") && v) {
            o->timeout_s = atof(v);
            if (o->timeout_s <= 0) {
                fprintf(stderr, "%s: --timeout wants seconds > 0, not '%s'\n", g_prog, v);
                exit(2);
            }
            ++i;
        } else if (!strcmp(a, "--transport") && v) {
            o->transport = v;
            ++i;
        } else {
            fprintf(stderr, "%s: unknown or incomplete option '%s'\n", g_prog, a);
            gpu_usage(stderr, extra_help);
            exit(2);
        }
    }
    if (!o->sizes_given && o->quick) o->factor = 8;
    if (o->batches <= 0) o->batches = o->quick ? 5 : 11;
}

/* 1 if `name` is selected by --only (or --only was not given). */
static inline int gpu_selected(const gpu_opts &o, const char *name) {
    if (o.only.empty()) return 1;
    const std::string n = name;
    size_t p = 0;
    for (;;) {
        size_t e = o.only.find(',', p);
        if (o.only.compare(p, e == std::string::npos ? std::string::npos : e - p, n) == 0) return 1;
        if (e == std::string::npos) return 0;
        p = e + 1;
    }
}

static inline std::vector<size_t> gpu_sizes(const gpu_opts &o) {
    std::vector<size_t> v;
    for (size_t s = o.min_size;; s *= o.factor) {
        if (s >= o.max_size) {
            v.push_back(o.max_size);
            break;
        }
        v.push_back(s);
    }
    return v;
}

/* Operations per timed batch. Latency: up to 1000 (200 with --quick) for small messages,
 * fewer as they grow so a batch moves about 64 MiB (16 MiB), at least 3 (2). Bandwidth
 * windows: up to 1000 (200) operations, about 256 MiB (64 MiB) of data, at least 2 (1). */
static inline long gpu_lat_iters(const gpu_opts &o, size_t bytes) {
    return bench_iters(bytes, o.quick ? 200 : 1000, o.quick ? 16.0 * (1 << 20) : 64.0 * (1 << 20), o.quick ? 2 : 3);
}
static inline long gpu_bw_ops(const gpu_opts &o, size_t bytes) {
    return bench_iters(bytes, o.quick ? 200 : 1000, o.quick ? 64.0 * (1 << 20) : 256.0 * (1 << 20), o.quick ? 1 : 2);
}

static inline void gpu_pin(const gpu_opts &o, int rank) {
    bench_opts_t b;
    memset(&b, 0, sizeof b);
    b.pin = o.pin;
    bench_pin(&b, rank);
}

/* ---------------------------------------------------------------------------------------- */
/* Data checks: the pattern of bench_common.h, compared in host memory.                      */

/* Index of the first byte where `got` differs from `want`, or -1. */
static inline long gpu_first_diff(const unsigned char *got, const unsigned char *want, size_t n) {
    if (memcmp(got, want, n) == 0) return -1;
    for (size_t k = 0; k < n; ++k)
        if (got[k] != want[k]) return (long)k;
    return -1;
}

/* Compares and reports a failed check on stderr; returns 1 when the data is right. */
static inline int gpu_verify(const unsigned char *got, const unsigned char *want, size_t n, const char *what) {
    long bad = gpu_first_diff(got, want, n);
    if (bad < 0) return 1;
    fprintf(stderr, "%s: rank %d: DATA CHECK FAILED: %s, %zu B: byte %ld is 0x%02x, expected 0x%02x\n", g_prog,
            g_rank, what, n, bad, got[bad], want[bad]);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Report                                                                                    */

struct gpu_point {
    const char *bench;      /* put_lat, put_bw, put_signal_lat, get_lat ... */
    const char *impl;       /* cuda, nvshmem, nccl, user-staging */
    const char *path;       /* the API sequence timed */
    const char *direction;  /* h2d, d2h, d2d, d2d-peer */
    const char *host_mem;   /* pinned, pageable, registered, or NULL */
    const char *timing;     /* blocking, window, pingpong/2, device-loop */
    int src_gpu, dst_gpu;
    const char *note;       /* or NULL */
    const char *initiator;  /* who starts the operation: NULL or "host", or "device" (a kernel) */
};

static std::string g_device_name = "?";
static std::string g_transport = "gpu";

static inline void gpu_extra_json(const gpu_point &p, char *out, size_t n) {
    int k = snprintf(out, n, ",\"path\":\"%s\",\"direction\":\"%s\",\"peer\":\"%s\"", p.path, p.direction, p.impl);
    if (p.host_mem) k += snprintf(out + k, n - (size_t)k, ",\"host_mem\":\"%s\"", p.host_mem);
    k += snprintf(out + k, n - (size_t)k,
                  ",\"timing\":\"%s\",\"initiator\":\"%s\",\"src_gpu\":%d,\"dst_gpu\":%d,\"device\":\"%s\"", p.timing,
                  p.initiator ? p.initiator : "host", p.src_gpu, p.dst_gpu, g_device_name.c_str());
    if (p.note) snprintf(out + k, n - (size_t)k, ",\"note\":\"%s\"", p.note);
}

static inline void gpu_label(const gpu_point &p, char *out, size_t n) {
    if (p.host_mem) snprintf(out, n, "%s [%s]", p.path, p.host_mem);
    else snprintf(out, n, "%s", p.path);
}

/* Latency: samples are microseconds per operation, one per batch. */
static inline void gpu_report_lat(const gpu_opts &o, const gpu_point &p, size_t bytes, double *samples, int n,
                                  long iters, int verified) {
    double med = bench_median(samples, n), mn = samples[0], mx = samples[n - 1];
    char extra[1024], label[256], sz[32];
    gpu_extra_json(p, extra, sizeof extra);
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"transport\":\"%s\",\"bytes\":%zu,\"median_us\":%.4f,\"min_us\":%.4f,"
           "\"max_us\":%.4f,\"iters\":%ld,\"batches\":%d,\"verified\":%s%s}\n",
           p.bench, p.impl, g_transport.c_str(), bytes, med, mn, mx, iters, n, verified ? "true" : "false", extra);
    gpu_label(p, label, sizeof label);
    bench_size_str(bytes, sz, sizeof sz);
    printf("# %-12s %-14s %-8s %-46s %6s %10.3f us   (min %.3f, max %.3f, %ld x %d, %s)%s\n", p.impl, p.bench,
           p.direction, label, sz, med, mn, mx, iters, n, p.timing, verified ? "" : "  DATA CHECK FAILED");
    fflush(stdout);
    if (!verified) g_check_failed = 1;
    (void)o;
}

/* Bandwidth: samples are seconds per batch; a batch moved `batch_bytes` in `iters` ops. */
static inline void gpu_report_bw(const gpu_opts &o, const gpu_point &p, size_t bytes, double *samples, int n,
                                 long iters, double batch_bytes, int verified) {
    double med = bench_median(samples, n);
    double gbps = batch_bytes / med / 1e9, best = batch_bytes / samples[0] / 1e9;
    double worst = batch_bytes / samples[n - 1] / 1e9, per_op_us = med / (double)iters * 1e6;
    char extra[1024], label[256], sz[32];
    gpu_extra_json(p, extra, sizeof extra);
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"transport\":\"%s\",\"bytes\":%zu,\"gbps\":%.4f,\"max_gbps\":%.4f,"
           "\"min_gbps\":%.4f,\"median_us\":%.4f,\"iters\":%ld,\"batches\":%d,\"verified\":%s%s}\n",
           p.bench, p.impl, g_transport.c_str(), bytes, gbps, best, worst, per_op_us, iters, n,
           verified ? "true" : "false", extra);
    gpu_label(p, label, sizeof label);
    bench_size_str(bytes, sz, sizeof sz);
    printf("# %-12s %-14s %-8s %-46s %6s %10.3f GB/s %9.3f us/op (best %.3f, worst %.3f GB/s, %ld ops x %d, %s)%s\n",
           p.impl, p.bench, p.direction, label, sz, gbps, per_op_us, best, worst, iters, n, p.timing,
           verified ? "" : "  DATA CHECK FAILED");
    fflush(stdout);
    if (!verified) g_check_failed = 1;
    (void)o;
}

static inline void gpu_skip(const char *what, const char *why) {
    printf("# skipped: %s: %s\n", what, why);
    fflush(stdout);
    fprintf(stderr, "%s: skipped: %s: %s\n", g_prog, what, why);
}

static inline double gpu_now_s(void) { return (double)bench_now_ns() / 1e9; }

/* Sets `name` to `value` unless the user set it. */
static inline void gpu_default_env(const char *name, const char *value) {
    if (!getenv(name)) setenv(name, value, 1);
}

enum { GPU_MAXB = 1000 };

#endif /* HGAS_BENCH_GPU_COMMON_H */
