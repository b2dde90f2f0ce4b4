/* hgas-bench-coll-gpu — collectives on GPU memory: hgas against NCCL in the same run, the same
 * ranks, the same buffers' sizes (nccl-tests style: size, time, algbw, busbw).
 *
 * Started by hgasrun: one process per rank, or with --threads T ranks as threads of one process
 * (each thread runs the whole program for its rank; docs/threads.md). Rank 0 calls
 * ncclGetUniqueId and sends the id to the others with hgas_broadcast; every rank calls
 * ncclCommInitRank on its hgas GPU. NCCL puts one rank on one GPU: where ranks share a GPU (2
 * ranks, 1 GPU), the program says so and measures hgas alone (rank threads sharing a GPU do not
 * try: NCCL refuses two ranks of one process on one GPU).
 *
 * Collectives: allreduce (float sum), broadcast (root 0), allgather (hgas fcollect),
 * reduce_scatter (float sum) and alltoall, `bytes` per rank's buffer as nccl-tests counts
 * (allgather / alltoall / reduce_scatter: bytes is the whole receive / send vector). Each size
 * is checked once per implementation (values against a CPU reference), then timed:
 *   hgas        the blocking call, host clock per batch of iterations
 *   hgas-stream the _on_stream call, a batch enqueued on one stream, then hgas_stream_sync
 *   nccl        a batch enqueued on one stream, then cudaStreamSynchronize
 * busbw = algbw x (allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall (n-1)/n; broadcast
 * 1). Latency sizes up to 64 KiB report the median time; from 64 MiB the bus bandwidth matters.
 * JSON lines ("bench":"coll_gpu") go to stdout; `# ratio` lines give hgas/NCCL time per size.
 *
 * Options: --max BYTES (largest size, default 64M), --iters N (default 20 at small sizes),
 * --only a,b (collectives). Set HGAS_CUDA_HEAP_SIZE to at least 4 x max + 64M. */
#include <hgas/hgas.h>
#include <hgas/hgas_device.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../apps/common/rank_launch.hpp"  // ranks as threads (hgasrun --threads)
#include "../bench_common.h"

namespace {

// Per rank: thread_local, so that rank threads of one process keep their own.
thread_local int me, np;
thread_local bool nccl_ok = false;
thread_local ncclComm_t comm = nullptr;
thread_local cudaStream_t st;
thread_local std::string nccl_why;

void die(const char *what, const char *why) {
    std::fprintf(stderr, "hgas-bench-coll-gpu: rank %d: %s: %s\n", me, what, why);
    std::exit(1);
}
#define HCK(call) \
    do { if ((call) != HGAS_OK) die(#call, hgas_last_error()); } while (0)
#define CCK(call) \
    do { cudaError_t e_ = (call); if (e_ != cudaSuccess) die(#call, cudaGetErrorString(e_)); } while (0)
#define NCK(call) \
    do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) die(#call, ncclGetErrorString(r_)); } while (0)

enum coll { c_allreduce, c_broadcast, c_allgather, c_reduce_scatter, c_alltoall, c_count };
const char *names[] = {"allreduce", "broadcast", "allgather", "reduce_scatter", "alltoall"};
double bus_factor(int c) {
    if (c == c_allreduce) return 2.0 * (np - 1) / np;
    if (c == c_broadcast) return 1.0;
    return double(np - 1) / np;
}

// Buffers: symmetric (hgas needs symmetric destinations), used by both implementations.
thread_local char *sbuf, *rbuf;
thread_local std::vector<float> h;

// One collective of `bytes` (nccl-tests sizes) by implementation impl (0 hgas, 1 hgas-stream, 2 nccl).
void run(int impl, int c, size_t bytes) {
    const size_t per = bytes / np;  // per-rank block of allgather / alltoall / reduce_scatter
    const size_t fl = bytes / 4;
    switch (c) {
    case c_allreduce:
        if (impl == 0) HCK(hgas_allreduce(rbuf, sbuf, fl, HGAS_FLOAT, HGAS_OP_SUM));
        else if (impl == 1) HCK(hgas_allreduce_on_stream(rbuf, sbuf, fl, HGAS_FLOAT, HGAS_OP_SUM, st));
        else NCK(ncclAllReduce(sbuf, rbuf, fl, ncclFloat, ncclSum, comm, st));
        return;
    case c_broadcast:
        if (impl == 0) HCK(hgas_broadcast(rbuf, sbuf, bytes, 0));
        else if (impl == 1) HCK(hgas_broadcast_on_stream(rbuf, sbuf, bytes, 0, st));
        else NCK(ncclBroadcast(sbuf, rbuf, bytes, ncclInt8, 0, comm, st));
        return;
    case c_allgather:
        if (impl == 0) HCK(hgas_fcollect(rbuf, sbuf, per));
        else if (impl == 1) HCK(hgas_team_fcollect_on_stream(HGAS_TEAM_WORLD, rbuf, sbuf, per, st));
        else NCK(ncclAllGather(sbuf, rbuf, per, ncclInt8, comm, st));
        return;
    case c_reduce_scatter:
        if (impl == 0) HCK(hgas_team_reduce_scatter(HGAS_TEAM_WORLD, rbuf, sbuf, per / 4, HGAS_FLOAT, HGAS_OP_SUM));
        else if (impl == 1)
            HCK(hgas_team_reduce_scatter_on_stream(HGAS_TEAM_WORLD, rbuf, sbuf, per / 4, HGAS_FLOAT, HGAS_OP_SUM, st));
        else NCK(ncclReduceScatter(sbuf, rbuf, per / 4, ncclFloat, ncclSum, comm, st));
        return;
    case c_alltoall:
        if (impl == 0) HCK(hgas_alltoall(rbuf, sbuf, per));
        else if (impl == 1) HCK(hgas_team_alltoall_on_stream(HGAS_TEAM_WORLD, rbuf, sbuf, per, st));
        else {
            NCK(ncclGroupStart());
            for (int p = 0; p < np; ++p) {
                NCK(ncclSend(sbuf + p * per, per, ncclInt8, p, comm, st));
                NCK(ncclRecv(rbuf + p * per, per, ncclInt8, p, comm, st));
            }
            NCK(ncclGroupEnd());
        }
        return;
    }
}

void sync(int impl) {
    if (impl == 1) HCK(hgas_stream_sync(st));
    else if (impl == 2) CCK(cudaStreamSynchronize(st));
}

// Source: float element i of rank r = (r + 1) * (i % 13) (exact sums); checked on the host.
bool check(int impl, int c, size_t bytes) {
    const size_t fl = bytes / 4, per = bytes / np;
    h.resize(std::max<size_t>(fl, 1));
    for (size_t i = 0; i < fl; ++i) h[i] = float((me + 1) * (i % 13));
    CCK(cudaMemcpy(sbuf, h.data(), fl * 4, cudaMemcpyHostToDevice));
    CCK(cudaMemset(rbuf, 0, bytes));
    CCK(cudaDeviceSynchronize());
    HCK(hgas_barrier());
    run(impl, c, bytes);
    sync(impl);
    std::vector<float> got(fl);
    CCK(cudaMemcpy(got.data(), rbuf, fl * 4, cudaMemcpyDeviceToHost));
    const float sum_r = float(np * (np + 1) / 2);
    for (size_t i = 0; i < fl; ++i) {
        float want;
        const size_t blk = i * 4 / std::max<size_t>(per, 1), in_blk = i - blk * (per / 4);
        switch (c) {
        case c_allreduce: want = sum_r * float(i % 13); break;
        case c_broadcast: want = float(i % 13); break;
        case c_allgather: want = float((blk + 1) * (in_blk % 13)); break;
        case c_reduce_scatter:
            if (i >= per / 4) continue;
            want = sum_r * float((me * (per / 4) + i) % 13);
            break;
        default: want = float((blk + 1) * ((me * (per / 4) + in_blk) % 13)); break;  // alltoall
        }
        if (got[i] != want) {
            std::printf("# DATA CHECK FAILED: %s %s %zu bytes: rank %d element %zu is %g, not %g\n",
                        impl == 2 ? "nccl" : impl == 1 ? "hgas-stream" : "hgas", names[c], bytes, me, i, got[i], want);
            return false;
        }
    }
    return true;
}

double time_one(int impl, int c, size_t bytes, long iters) {
    run(impl, c, bytes);  // warm-up
    sync(impl);
    double best = 1e30;
    for (int b = 0; b < 3; ++b) {
        HCK(hgas_barrier());
        const uint64_t t0 = bench_now_ns();
        for (long k = 0; k < iters; ++k) run(impl, c, bytes);
        sync(impl);
        double us = double(bench_now_ns() - t0) / 1e3 / double(iters);
        // Every rank's time, the slowest counts (a collective ends when its last rank does).
        HCK(hgas_allreduce(&us, &us, 1, HGAS_DOUBLE, HGAS_OP_MAX));
        best = std::min(best, us);
    }
    return best;
}

struct options {
    size_t max = size_t{64} << 20;
    long base_iters = 20;
    std::string only;
};

// The whole benchmark for one rank, between its hgas_init and hgas_finalize.
int bench_rank(const options &o) {
    const size_t max = o.max;
    const long base_iters = o.base_iters;
    const std::string &only = o.only;
    me = hgas_rank_me();
    np = hgas_rank_n();
    if (!hgas_kind_available(HGAS_KIND_CUDA)) die("kind cuda", "not available (no GPU?)");
    CCK(cudaSetDevice(hgas_device_gpu()));
    CCK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const size_t cap = max + 4096;
    HCK(hgas_malloc_kind(cap, HGAS_KIND_CUDA, (void **)&sbuf));
    HCK(hgas_malloc_kind(cap, HGAS_KIND_CUDA, (void **)&rbuf));

    // NCCL: the id travels by hgas_broadcast (symmetric host memory).
    ncclUniqueId *id;
    HCK(hgas_malloc(sizeof *id, (void **)&id));
    int ngpu = 0;
    cudaGetDeviceCount(&ngpu);
    const bool threads_share_gpu = apps::ranks_per_process() > 1 && ngpu < apps::ranks_per_process();
    if (me == 0 && !threads_share_gpu) NCK(ncclGetUniqueId(id));
    HCK(hgas_broadcast(id, id, sizeof *id, 0));
    int ok = 1;
    if (threads_share_gpu) {
        ok = 0;
        nccl_why = "rank threads of one process share a GPU";
    } else if (ncclResult_t nr = ncclCommInitRank(&comm, np, *id, me); nr != ncclSuccess) {
        ok = 0;
        nccl_why = ncclGetErrorString(nr);
    }
    int all_ok = ok;
    HCK(hgas_allreduce(&all_ok, &ok, 1, HGAS_INT32, HGAS_OP_MIN));
    nccl_ok = all_ok == 1;
    if (me == 0) {
        std::printf("# hgas-bench-coll-gpu: %d ranks (%d per process), %d GPU(s) visible; NCCL %s\n", np,
                    apps::ranks_per_process(), ngpu, nccl_ok ? "initialized" : "not available");
        if (!nccl_ok)
            std::printf("# NCCL not measured: %s%s%s; NCCL needs one GPU per rank, these %d ranks share %d GPU(s)\n",
                        threads_share_gpu ? "not tried (" : "ncclCommInitRank failed (",
                        nccl_why.empty() ? "on another rank" : nccl_why.c_str(), ")", np, ngpu);
        std::printf("# %-15s %10s %-12s %12s %10s %10s\n", "collective", "bytes", "impl", "time_us", "algbw", "busbw");
    }

    std::vector<size_t> sizes;
    for (size_t s = 64; s <= std::min<size_t>(max, 64 << 10); s *= 4) sizes.push_back(s);
    if (max >= (64 << 10)) sizes.push_back(64 << 10);
    for (size_t s = size_t{1} << 20; s <= max; s *= 8) sizes.push_back(s);
    if (max >= (size_t{64} << 20)) sizes.push_back(max);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

    int failed = 0;
    for (int c = 0; c < c_count; ++c) {
        if (!only.empty() && ("," + only + ",").find("," + std::string(names[c]) + ",") == std::string::npos) continue;
        for (size_t bytes : sizes) {
            // Whole floats per rank block.
            const size_t b = bytes / (4 * np) * (4 * np);
            if (!b) continue;
            const long iters = b <= (size_t{1} << 20) ? base_iters : std::max(3L, base_iters / 4);
            double t[3] = {0, 0, 0};
            for (int impl = 0; impl < 3; ++impl) {
                if (impl == 2 && !nccl_ok) continue;
                const bool v = check(impl, c, b);
                int vi = v ? 1 : 0, vall = 0;
                HCK(hgas_allreduce(&vall, &vi, 1, HGAS_INT32, HGAS_OP_MIN));
                if (!vall) ++failed;
                t[impl] = time_one(impl, c, b, iters);
                const double algbw = double(b) / t[impl] / 1e3, busbw = algbw * bus_factor(c);
                const char *impl_name = impl == 0 ? "hgas" : impl == 1 ? "hgas-stream" : "nccl";
                if (me == 0) {
                    std::printf("{\"bench\":\"coll_gpu\",\"impl\":\"%s\",\"coll\":\"%s\",\"ranks\":%d,\"gpus\":%d,"
                                "\"threads\":%d,\"bytes\":%zu,\"median_us\":%.3f,\"algbw_gbps\":%.3f,\"busbw_gbps\":%.3f,"
                                "\"iters\":%ld,\"verified\":%s}\n",
                                impl_name, names[c], np, ngpu, apps::ranks_per_process(), b, t[impl], algbw, busbw, iters, vall ? "true" : "false");
                    std::printf("# %-15s %10zu %-12s %12.2f %10.2f %10.2f%s\n", names[c], b, impl_name, t[impl], algbw,
                                busbw, vall ? "" : "  DATA CHECK FAILED");
                }
            }
            if (me == 0 && nccl_ok)
                std::printf("# ratio %-15s %10zu hgas/nccl time %.2f (stream %.2f)\n", names[c], b, t[0] / t[2],
                            t[1] / t[2]);
            std::fflush(stdout);
        }
    }
    if (comm) ncclCommDestroy(comm);
    HCK(hgas_free(id));
    HCK(hgas_free(sbuf));
    HCK(hgas_free(rbuf));
    cudaStreamDestroy(st);
    return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--max") && i + 1 < argc) o.max = bench_parse_bytes(argv[++i]);
        else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) o.base_iters = std::atol(argv[++i]);
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) o.only = argv[++i];
        else {
            std::fprintf(stderr, "usage: hgasrun -n N [--threads T] %s [--max BYTES] [--iters N] [--only allreduce,...]\n",
                         argv[0]);
            return 2;
        }
    }
    return apps::run_ranks("hgas-bench-coll-gpu", [&o] { return bench_rank(o); });
}
