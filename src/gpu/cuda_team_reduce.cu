// The one-kernel collectives of small vectors (gpu::device::team_allreduce, gpu.hpp, says the
// protocol): each block learns where every member's vector lies and that the member has
// entered, computes its slice of the output into shared memory (every member's slice combined
// in member order for allreduce, block `me` of every member's vector likewise for
// reduce_scatter; the root's for broadcast; its member's for fcollect; for alltoall its
// member's block addressed to this member), waits
// until every member's block of the same slice has read its inputs, then writes it into dst. One launch and one wait
// per call, where the host-driven direct algorithm costs a kernel and a copy the host waits for each (26 us for 64
// bytes on two H100s, docs/collectives.md).
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <hgas/hgas.h>

#include "gpu/cuda_combine.cuh"
#include "gpu/cuda_team_reduce.hpp"

namespace hgas::gpu {

namespace {

constexpr int threads = 512;
constexpr size_t slice_max = 8192;  // bytes per block: its shared memory
constexpr int M = device::team_kernel_members;
constexpr unsigned B = device::team_kernel_blocks;
static_assert(B * slice_max == device::team_kernel_max_bytes, "a block per slice of the largest vector");

__device__ __forceinline__ uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Combines the elements of a 16-byte word in place: acc = acc op v, element by element.
template <class T>
__device__ __forceinline__ uint4 combine16(uint4 acc, uint4 v, int op) {
    constexpr int k = 16 / sizeof(T);
    T a[k], b[k];
    memcpy(a, &acc, 16);
    memcpy(b, &v, 16);
#pragma unroll
    for (int i = 0; i < k; ++i) a[i] = combine<T>(a[i], b[i], op);
    memcpy(&acc, a, 16);
    return acc;
}

// The words of block b in a flag block (gpu.hpp): entered, done (stream-ordered kernels), the
// sender's vector offset, done (blocking kernels).
__device__ __forceinline__ uint64_t &entered(uint64_t *f, unsigned b, int q) { return f[b * M + q]; }
__device__ __forceinline__ uint64_t &done(uint64_t *f, unsigned b, int q, bool blocking) {
    return f[(blocking ? 3 : 1) * B * M + b * M + q];
}
__device__ __forceinline__ uint64_t &offset(uint64_t *f, unsigned b, int q) {
    return f[2 * B * M + b * M + q];
}

// Reports a failure (the first of the kernel's blocks wins).
__device__ void failed(const device::team_reduce &a, int q, int why, unsigned *report) {
    atomicCAS(report, 0u, static_cast<unsigned>(q + 1) | static_cast<unsigned>(why) |
                              static_cast<unsigned>(a.slot) << device::team_report_slot_shift);
}

// Thread q of a block: waits until word w (this member's, written by member q) holds the epoch.
// It never holds a later one while this kernel runs (gpu.hpp); if it does, the members are out
// of step (a kernel of theirs timed out or failed), reported as such. False on a failure.
__device__ bool wait_word(uint64_t &w, const device::team_reduce &a, int q, unsigned *report) {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> in(w);
    const uint64_t deadline = now_ns() + a.timeout_ns;
    for (unsigned polls = 1;; ++polls) {
        const uint64_t v = in.load(cuda::memory_order_acquire);
        if (v == a.epoch) return true;
        if (v > a.epoch) {
            failed(a, q, device::team_out_of_step, report);
            return false;
        }
        if (polls % 1024 == 0 && now_ns() > deadline) {
            failed(a, q, device::team_timeout, report);
            return false;
        }
    }
}

// Where output byte o comes from: the member and the byte of its vector (fcollect: block o / B
// of the output is member o / B's vector; alltoall: block o / B of the output is block `me` of
// member o / B's vector; allreduce and broadcast: byte o of the vectors).
struct source {
    int q;
    size_t at;
};
__device__ __forceinline__ source source_of(const device::team_reduce &a, size_t o, size_t vbytes) {
    if (a.what == device::team_fcollect_op) return {static_cast<int>(o / vbytes), o % vbytes};
    if (a.what == device::team_alltoall_op)
        return {static_cast<int>(o / vbytes), static_cast<size_t>(a.me) * vbytes + o % vbytes};
    return {a.what == device::team_broadcast_op ? a.root : 0, o};
}
// Where a reduction reads byte o of the output in every member's vector: at o (allreduce), or
// at o of block `me` (reduce_scatter).
__device__ __forceinline__ size_t reduce_at(const device::team_reduce &a, size_t vbytes) {
    return a.what == device::team_reduce_scatter_op ? static_cast<size_t>(a.me) * vbytes : 0;
}
// Whether the output is n blocks of one member's B bytes (fcollect, alltoall).
__host__ __device__ __forceinline__ bool blocks_out(int what) {
    return what == device::team_fcollect_op || what == device::team_alltoall_op;
}

template <class T>
__global__ void __launch_bounds__(threads) team_allreduce_kernel(device::team_reduce a, size_t slice,
                                                                 unsigned *timed_out) {
    extern __shared__ uint4 smem[];
    __shared__ const unsigned char *in[M];
    __shared__ int late, vec;  // a wait timed out (dst is left as it was); every vector 16-byte aligned
    unsigned char *part = reinterpret_cast<unsigned char *>(smem);
    const unsigned b = blockIdx.x;
    const int t = static_cast<int>(threadIdx.x);
    if (t == 0) late = 0;
    // 1. Entry (stream-ordered kernels; the blocking call's host has done it and passes `in`):
    // thread q trades offsets and the epoch with member q (the barrier orders the reads below
    // after every thread's acquire; the release orders the offset before the epoch).
    if (t < a.n && a.blocking) {
        in[t] = static_cast<const unsigned char *>(a.in[t]);
    } else if (t < a.n) {
        if (t == a.me) {
            in[t] = reinterpret_cast<const unsigned char *>(a.base[t]) + a.in_off;
        } else {
            cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(offset(a.flags[t], b, a.me))
                .store(a.in_off | static_cast<uint64_t>(a.fp) << 40, cuda::memory_order_relaxed);
            cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(entered(a.flags[t], b, a.me))
                .store(a.epoch, cuda::memory_order_release);
            if (wait_word(entered(a.flags[a.me], b, t), a, t, timed_out)) {
                const uint64_t w = cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(offset(a.flags[a.me], b, t))
                                       .load(cuda::memory_order_relaxed);
                in[t] = reinterpret_cast<const unsigned char *>(a.base[t]) + (w & ((uint64_t{1} << 40) - 1));
                if (static_cast<uint32_t>(w >> 40) != a.fp) {
                    failed(a, t, device::team_mismatch, timed_out);
                    late = 1;
                }
            } else {
                late = 1;
            }
        }
    }
    __syncthreads();
    if (late) return;
    const size_t vbytes = a.count * sizeof(T);  // one member's vector
    const size_t bytes = blocks_out(a.what) ? vbytes * static_cast<size_t>(a.n) : vbytes;
    if (t == 0) {
        // n blocks of vbytes in or out: each block must keep 16-byte words aligned too
        const bool blocks = blocks_out(a.what) || a.what == device::team_reduce_scatter_op;
        bool v = reinterpret_cast<uintptr_t>(a.dst) % 16 == 0 && (!blocks || vbytes % 16 == 0);
        for (int q = 0; q < a.n; ++q) v = v && reinterpret_cast<uintptr_t>(in[q]) % 16 == 0;
        vec = v;
    }
    __syncthreads();
    // 2. This block's slice of the output: combined in member order (allreduce) or copied from
    // its member (broadcast, fcollect); whole 16-byte words where every vector is aligned (the
    // slice's tail, under 16 bytes, element by element), else element by element.
    const size_t lo = static_cast<size_t>(b) * slice, hi = lo + slice < bytes ? lo + slice : bytes;
    const size_t whole = vec ? lo + (hi - lo) / 16 * 16 : lo;
    const bool reduce = a.what == device::team_allreduce_op || a.what == device::team_reduce_scatter_op;
    const size_t rat = reduce_at(a, vbytes);
    for (size_t o = lo + static_cast<size_t>(t) * 16; o < whole; o += threads * size_t{16}) {
        const source src = reduce ? source{0, rat + o} : source_of(a, o, vbytes);
        uint4 acc = *reinterpret_cast<const uint4 *>(in[src.q] + src.at);
        if (reduce)
            for (int q = 1; q < a.n; ++q)
                acc = combine16<T>(acc, *reinterpret_cast<const uint4 *>(in[q] + rat + o), a.op);
        *reinterpret_cast<uint4 *>(part + (o - lo)) = acc;
    }
    for (size_t o = whole + static_cast<size_t>(t) * sizeof(T); o < hi; o += threads * sizeof(T)) {
        const source src = reduce ? source{0, rat + o} : source_of(a, o, vbytes);
        T acc, v;
        memcpy(&acc, in[src.q] + src.at, sizeof(T));
        if (reduce)
            for (int q = 1; q < a.n; ++q) {
                memcpy(&v, in[q] + rat + o, sizeof(T));
                acc = combine<T>(acc, v, a.op);
            }
        memcpy(part + (o - lo), &acc, sizeof(T));
    }
    __syncthreads();
    // 3. Done: thread q tells member q that this block has read its slice and waits for the
    // same from member q. A relaxed store: every load of the block has returned its value (they
    // are in shared memory, behind the barrier), so no later write of member q's can reach
    // them. The memory model would ask for a release (the barrier is CTA-scope), and that is a
    // system-wide fence: on two H100s it made a stream-ordered allreduce 9.4-9.5 us instead of
    // 7.6-8.3. NCCL's low-latency protocol relies on the same: flags stored after data read.
    if (t < a.n && t != a.me) {
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(done(a.flags[t], b, a.me, a.blocking))
            .store(a.epoch, cuda::memory_order_relaxed);
        if (!wait_word(done(a.flags[a.me], b, t, a.blocking), a, t, timed_out)) late = 1;
    }
    __syncthreads();
    if (late) return;
    // 4. Nobody reads this member's slice any more: write it.
    unsigned char *d = static_cast<unsigned char *>(a.dst);
    for (size_t o = lo + static_cast<size_t>(t) * 16; o < whole; o += threads * size_t{16})
        *reinterpret_cast<uint4 *>(d + o) = *reinterpret_cast<const uint4 *>(part + (o - lo));
    for (size_t o = whole + static_cast<size_t>(t); o < hi; o += threads) d[o] = part[o - lo];
}

template <class T>
cudaError_t launch(const device::team_reduce &a, unsigned *timed_out, cudaStream_t s) {
    const size_t bytes = a.count * sizeof(T) * (blocks_out(a.what) ? static_cast<size_t>(a.n) : 1);
    // Slices of whole 16-byte words, so that every block but the last has no tail.
    const size_t blocks = (bytes + slice_max - 1) / slice_max;
    const size_t slice = ((bytes + blocks - 1) / blocks + 15) / 16 * 16;
    team_allreduce_kernel<T><<<static_cast<unsigned>(blocks), threads, slice, s>>>(a, slice, timed_out);
    return cudaGetLastError();
}

template <class T>
cudaError_t preload_one() {
    cudaFuncAttributes at;
    return cudaFuncGetAttributes(&at, team_allreduce_kernel<T>);
}

}  // namespace

cudaError_t launch_team_allreduce(const device::team_reduce &a, unsigned *timed_out, cudaStream_t s) {
    if (a.count == 0) return cudaSuccess;
    return with_dtype(a.type, [&](auto t) { return launch<typename decltype(t)::type>(a, timed_out, s); });
}

cudaError_t preload_team_reduce_kernels() {
    return for_each_dtype([](auto t) { return preload_one<typename decltype(t)::type>(); });
}

}  // namespace hgas::gpu
