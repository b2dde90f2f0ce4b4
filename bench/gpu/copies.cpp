/* hgas-gpu-peers — what the CUDA runtime alone does between host memory and GPU memory, inside
 * one GPU, and between two GPUs: the copy peers of hgas's GPU paths. One process, no hgas.
 *
 *   h2d_pinned    cudaMemcpyAsync host (cudaMallocHost) -> GPU A
 *   h2d_pageable  cudaMemcpyAsync host (malloc)        -> GPU A
 *   d2h_pinned    cudaMemcpyAsync GPU A -> host (cudaMallocHost)
 *   d2h_pageable  cudaMemcpyAsync GPU A -> host (malloc)
 *   d2d           cudaMemcpyAsync GPU A -> GPU A (another buffer)
 *   peer          cudaMemcpyPeerAsync GPU A -> GPU B (peer access enabled when the GPUs allow it)
 * A and B are --devices (default 0,1); `peer` is skipped on a machine with one GPU.
 *
 * Each path gives three records per size:
 *   put_lat  one copy then cudaStreamSynchronize, time per copy (timing "blocking"): what a
 *            blocking cudaMemcpy costs, with the DMA finished
 *   put_lat  the same, completed by spinning on cudaStreamQuery (timing "polled"; path
 *            "..., cudaStreamQuery loop"): how hgas's blocking copy-engine copies complete
 *   put_bw   N copies back to back on one stream, then one cudaStreamSynchronize (timing
 *            "window"): GB/s = N * bytes / time; median_us is the time per copy
 * Every copy of a size goes to the same destination (as OSU does), so small sizes run from
 * caches. Before timing, each (path, size) copies a pattern into a poisoned destination and
 * compares it in host memory. */
#include "gpu_common.h"

#include <algorithm>

namespace {

struct path_def {
    const char *name;       /* --only token */
    const char *path;       /* record's path */
    const char *direction;
    const char *host_mem;
    void *dst;
    const void *src;
    bool dst_host, src_host;
    bool peer;
    int src_dev, dst_dev;
};

cudaStream_t g_stream;
unsigned char *g_pat;  /* pageable: the expected bytes of the current size */
unsigned char *g_chk;  /* pinned: where device results are read back */

void enqueue(const path_def &p, size_t s) {
    if (p.peer) CK(cudaMemcpyPeerAsync(p.dst, p.dst_dev, p.src, p.src_dev, s, g_stream));
    else CK(cudaMemcpyAsync(p.dst, p.src, s, cudaMemcpyDefault, g_stream));
}

/* Pattern into the source, poison into the destination, one copy, compare. */
int check(const path_def &p, size_t s) {
    if (p.src_host) memcpy(const_cast<void *>(p.src), g_pat, s);
    else CK(cudaMemcpy(const_cast<void *>(p.src), g_pat, s, cudaMemcpyDefault));
    if (p.dst_host) {
        memset(p.dst, 0xEE, s);
    } else {
        int cur;
        CK(cudaGetDevice(&cur));
        CK(cudaSetDevice(p.dst_dev));
        CK(cudaMemset(p.dst, 0xEE, s));
        CK(cudaDeviceSynchronize());
        CK(cudaSetDevice(cur));
    }
    CK(cudaDeviceSynchronize());
    enqueue(p, s);
    CK(cudaStreamSynchronize(g_stream));
    const unsigned char *got = (const unsigned char *)p.dst;
    if (!p.dst_host) {
        CK(cudaMemcpy(g_chk, p.dst, s, cudaMemcpyDefault));
        got = g_chk;
    }
    char what[128];
    snprintf(what, sizeof what, "%s (%s)", p.name, p.path);
    return gpu_verify(got, g_pat, s, what);
}

void measure(const gpu_opts &o, const path_def &p, size_t s) {
    const int ok = check(p, s);
    gpu_point pt{"put_lat", "cuda", p.path, p.direction, p.host_mem, "blocking", p.src_dev, p.dst_dev, NULL, "host"};
    std::vector<double> samples((size_t)o.batches);

    const long it = gpu_lat_iters(o, s);
    for (long i = 0; i < it / 10 + 1; ++i) {
        enqueue(p, s);
        CK(cudaStreamSynchronize(g_stream));
    }
    for (int b = 0; b < o.batches; ++b) {
        double t0 = gpu_now_s();
        for (long i = 0; i < it; ++i) {
            enqueue(p, s);
            CK(cudaStreamSynchronize(g_stream));
        }
        samples[(size_t)b] = (gpu_now_s() - t0) * 1e6 / (double)it;
    }
    gpu_report_lat(o, pt, s, samples.data(), o.batches, it, ok);

    /* The same copies completed by spinning on cudaStreamQuery, as hgas's blocking copies
     * through the copy engines are (its wait also polls the rank's progress and deadline):
     * what the completion mechanism itself costs against cudaStreamSynchronize. */
    for (long i = 0; i < it / 10 + 1; ++i) {
        enqueue(p, s);
        while (cudaStreamQuery(g_stream) == cudaErrorNotReady) {
        }
    }
    for (int b = 0; b < o.batches; ++b) {
        double t0 = gpu_now_s();
        for (long i = 0; i < it; ++i) {
            enqueue(p, s);
            cudaError_t e;
            while ((e = cudaStreamQuery(g_stream)) == cudaErrorNotReady) {
            }
            CK(e);
        }
        samples[(size_t)b] = (gpu_now_s() - t0) * 1e6 / (double)it;
    }
    char polled[96];
    snprintf(polled, sizeof polled, "%s, cudaStreamQuery loop", p.path);
    gpu_point pq = pt;
    pq.path = polled;
    pq.timing = "polled";
    gpu_report_lat(o, pq, s, samples.data(), o.batches, it, ok);

    const long n = gpu_bw_ops(o, s);
    for (long i = 0; i < n / 10 + 1; ++i) enqueue(p, s);
    CK(cudaStreamSynchronize(g_stream));
    for (int b = 0; b < o.batches; ++b) {
        double t0 = gpu_now_s();
        for (long i = 0; i < n; ++i) enqueue(p, s);
        CK(cudaStreamSynchronize(g_stream));
        samples[(size_t)b] = gpu_now_s() - t0;
    }
    pt.bench = "put_bw";
    pt.timing = "window";
    gpu_report_bw(o, pt, s, samples.data(), o.batches, n, (double)n * (double)s, ok);
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-gpu-peers";
    gpu_safe_env();
    gpu_opts o;
    gpu_parse(argc, argv, &o,
              "measurements (--only): h2d_pinned h2d_pageable d2h_pinned d2h_pageable d2d peer\n");
    const int ndev = gpu_count_or_die();
    const int A = o.devices[0], B = o.devices[1];
    if (A >= ndev) gpu_die("--devices: GPU %d does not exist (%d visible)", A, ndev);
    const bool have_peer = B < ndev && B != A;
    gpu_pin(o, 0);
    g_device_name = gpu_device_name(A);
    g_transport = o.transport;

    const size_t max = o.max_size;
    CK(cudaSetDevice(A));
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    unsigned char *h_pin = NULL, *d_a = NULL, *d_b = NULL, *d_peer = NULL;
    CK(cudaMallocHost((void **)&h_pin, max));
    CK(cudaMallocHost((void **)&g_chk, max));
    unsigned char *h_page = (unsigned char *)malloc(max);
    g_pat = (unsigned char *)malloc(max);
    if (!h_page || !g_pat) gpu_die("malloc of %zu bytes failed", max);
    memset(h_page, 0, max); /* touch every page before timing */
    memset(h_pin, 0, max);
    CK(cudaMalloc((void **)&d_a, max));
    CK(cudaMalloc((void **)&d_b, max));

    int can01 = 0, can10 = 0;
    if (have_peer) {
        CK(cudaDeviceCanAccessPeer(&can01, A, B));
        CK(cudaDeviceCanAccessPeer(&can10, B, A));
        CK(cudaSetDevice(B));
        CK(cudaMalloc((void **)&d_peer, max));
        if (can10) CK(cudaDeviceEnablePeerAccess(A, 0));
        CK(cudaSetDevice(A));
        if (can01) CK(cudaDeviceEnablePeerAccess(B, 0));
    }

    printf("# hgas-gpu-peers: GPU %d = %s, %d GPU(s) visible", A, g_device_name.c_str(), ndev);
    if (have_peer) printf("; peer GPU %d, peer access %d->%d %s", B, A, B, can01 ? "enabled" : "not possible (staged by CUDA)");
    printf("; sizes %zu..%zu x%u; median of %d batches\n", o.min_size, o.max_size, o.factor, o.batches);
    fflush(stdout);

    const path_def paths[] = {
        {"h2d_pinned", "cudaMemcpyAsync", "h2d", "pinned", d_a, h_pin, false, true, false, A, A},
        {"h2d_pageable", "cudaMemcpyAsync", "h2d", "pageable", d_a, h_page, false, true, false, A, A},
        {"d2h_pinned", "cudaMemcpyAsync", "d2h", "pinned", h_pin, d_a, true, false, false, A, A},
        {"d2h_pageable", "cudaMemcpyAsync", "d2h", "pageable", h_page, d_a, true, false, false, A, A},
        {"d2d", "cudaMemcpyAsync", "d2d", NULL, d_b, d_a, false, false, false, A, A},
        {"peer", can01 ? "cudaMemcpyPeerAsync" : "cudaMemcpyPeerAsync (no peer access)", "d2d-peer", NULL, d_peer,
         d_a, false, false, true, A, B},
    };
    if (!have_peer && gpu_selected(o, "peer"))
        gpu_skip("peer (cudaMemcpyPeerAsync)", ndev < 2 ? "needs 2 GPUs; this machine has 1"
                                                        : "--devices names the same GPU twice or a missing one");
    const auto sizes = gpu_sizes(o);
    for (const auto &p : paths) {
        if (!gpu_selected(o, p.name)) continue;
        if (p.peer && !have_peer) continue;
        for (size_t s : sizes) {
            bench_fill(g_pat, s, 1);
            measure(o, p, s);
        }
    }

    CK(cudaStreamDestroy(g_stream));
    CK(cudaFree(d_a));
    CK(cudaFree(d_b));
    if (d_peer) CK(cudaFree(d_peer));
    CK(cudaFreeHost(h_pin));
    CK(cudaFreeHost(g_chk));
    free(h_page);
    free(g_pat);
    if (g_check_failed) fprintf(stderr, "hgas-gpu-peers: FAILED: a data check failed (see above)\n");
    return g_check_failed ? 1 : 0;
}
