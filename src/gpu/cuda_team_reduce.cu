// The one-kernel allreduce of a small vector (gpu::device::team_allreduce, gpu.hpp): each
// block combines its slice of every member's vector into shared memory, in member order, waits
// until every member's block of the same slice has read its inputs (a flag word per member, in
// each member's device memory), then writes the slice into dst. One launch and one wait per
// call, where the host-driven direct algorithm costs a kernel and a copy the host waits for
// each (26 us for 64 bytes on two H100s, docs/collectives.md).
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

// `vec`: every input and dst 16-byte aligned, so whole 16-byte words of a slice load as one
// (the slice's tail, under 16 bytes, element by element). Byte loads otherwise.
template <class T>
__global__ void __launch_bounds__(threads) team_allreduce_kernel(device::team_reduce a, size_t slice, bool vec,
                                                                 unsigned *timed_out) {
    extern __shared__ uint4 smem[];
    unsigned char *part = reinterpret_cast<unsigned char *>(smem);
    const size_t bytes = a.count * sizeof(T);
    const size_t lo = static_cast<size_t>(blockIdx.x) * slice, hi = lo + slice < bytes ? lo + slice : bytes;
    const size_t whole = vec ? lo + (hi - lo) / 16 * 16 : lo;
    for (size_t o = lo + threadIdx.x * size_t{16}; o < whole; o += threads * size_t{16}) {
        uint4 acc = *reinterpret_cast<const uint4 *>(static_cast<const unsigned char *>(a.in[0]) + o);
        for (int q = 1; q < a.n; ++q)
            acc = combine16<T>(acc, *reinterpret_cast<const uint4 *>(static_cast<const unsigned char *>(a.in[q]) + o),
                               a.op);
        *reinterpret_cast<uint4 *>(part + (o - lo)) = acc;
    }
    for (size_t o = whole + threadIdx.x * sizeof(T); o < hi; o += threads * sizeof(T)) {
        T acc, v;
        memcpy(&acc, static_cast<const unsigned char *>(a.in[0]) + o, sizeof(T));
        for (int q = 1; q < a.n; ++q) {
            memcpy(&v, static_cast<const unsigned char *>(a.in[q]) + o, sizeof(T));
            acc = combine<T>(acc, v, a.op);
        }
        memcpy(part + (o - lo), &acc, sizeof(T));
    }
    __shared__ int late;  // a wait of this block timed out: dst is left as it was
    if (threadIdx.x == 0) late = 0;
    __syncthreads();
    // Thread q tells member q that this block has read member q's slice, then waits for the
    // same from member q: then nobody reads this member's slice any more. The barrier orders
    // the block's loads before the release store (no fence: the release is cumulative).
    const int q = static_cast<int>(threadIdx.x);
    if (q < a.n && q != a.me) {
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system> out(a.flags[q][blockIdx.x * M + a.me]);
        out.store(a.epoch, cuda::memory_order_release);
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system> in(a.flags[a.me][blockIdx.x * M + q]);
        const uint64_t deadline = now_ns() + a.timeout_ns;
        unsigned polls = 0;
        while (in.load(cuda::memory_order_acquire) < a.epoch) {
            if (++polls % 1024 == 0 && now_ns() > deadline) {
                atomicCAS(timed_out, 0u, static_cast<unsigned>(q + 1));
                late = 1;
                break;
            }
        }
    }
    __syncthreads();
    if (late) return;
    unsigned char *d = static_cast<unsigned char *>(a.dst);
    for (size_t o = lo + threadIdx.x * size_t{16}; o < whole; o += threads * size_t{16})
        *reinterpret_cast<uint4 *>(d + o) = *reinterpret_cast<const uint4 *>(part + (o - lo));
    for (size_t o = whole + threadIdx.x; o < hi; o += threads) d[o] = part[o - lo];
}

template <class T>
cudaError_t launch(const device::team_reduce &a, unsigned *timed_out, cudaStream_t s) {
    const size_t bytes = a.count * sizeof(T);
    bool vec = reinterpret_cast<uintptr_t>(a.dst) % 16 == 0;
    for (int q = 0; q < a.n; ++q) vec = vec && reinterpret_cast<uintptr_t>(a.in[q]) % 16 == 0;
    // Slices of whole 16-byte words, so that every block but the last has no tail.
    const size_t blocks = (bytes + slice_max - 1) / slice_max;
    const size_t slice = ((bytes + blocks - 1) / blocks + 15) / 16 * 16;
    team_allreduce_kernel<T><<<static_cast<unsigned>(blocks), threads, slice, s>>>(a, slice, vec, timed_out);
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
    switch (a.type) {
    case HGAS_INT8: return launch<int8_t>(a, timed_out, s);
    case HGAS_INT16: return launch<int16_t>(a, timed_out, s);
    case HGAS_INT32: return launch<int32_t>(a, timed_out, s);
    case HGAS_INT64: return launch<int64_t>(a, timed_out, s);
    case HGAS_UINT8: return launch<uint8_t>(a, timed_out, s);
    case HGAS_UINT16: return launch<uint16_t>(a, timed_out, s);
    case HGAS_UINT32: return launch<uint32_t>(a, timed_out, s);
    case HGAS_UINT64: return launch<uint64_t>(a, timed_out, s);
    case HGAS_FLOAT: return launch<float>(a, timed_out, s);
    case HGAS_DOUBLE: return launch<double>(a, timed_out, s);
    case HGAS_FLOAT16: return launch<__half>(a, timed_out, s);
    case HGAS_BFLOAT16: return launch<__nv_bfloat16>(a, timed_out, s);
    }
    return cudaErrorInvalidValue;
}

cudaError_t preload_team_reduce_kernels() {
    cudaError_t e = cudaSuccess;
    for (cudaError_t x : {preload_one<int8_t>(), preload_one<int16_t>(), preload_one<int32_t>(),
                          preload_one<int64_t>(), preload_one<uint8_t>(), preload_one<uint16_t>(),
                          preload_one<uint32_t>(), preload_one<uint64_t>(), preload_one<float>(),
                          preload_one<double>(), preload_one<__half>(), preload_one<__nv_bfloat16>()})
        if (x != cudaSuccess && e == cudaSuccess) e = x;
    return e;
}

}  // namespace hgas::gpu
