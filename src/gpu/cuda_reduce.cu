// The reduction kernel of the cuda device: one grid-stride pass over the elements, in the
// element type (typed loads where both buffers are aligned to it, byte loads otherwise: user
// buffers may have any alignment). 16-bit floats are widened to float, combined, and rounded
// to nearest even, as reduce_cpu.hpp does, so that results on the GPU and on the CPU agree bit
// for bit and every rank computes the same value whichever combined it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include <hgas/hgas.h>

#include "gpu/cuda_combine.cuh"
#include "gpu/cuda_reduce.hpp"

namespace hgas::gpu {

namespace {

template <class T>
__device__ __forceinline__ T load(const unsigned char *p, bool aligned) {
    if (aligned) return *reinterpret_cast<const T *>(p);
    T v;
    memcpy(&v, p, sizeof(T));
    return v;
}
template <class T>
__device__ __forceinline__ void store(unsigned char *p, T v, bool aligned) {
    if (aligned) *reinterpret_cast<T *>(p) = v;
    else memcpy(p, &v, sizeof(T));
}

template <class T>
__global__ void reduce_kernel(unsigned char *io, const unsigned char *in, size_t count, int op, bool rev,
                              bool aligned) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const T a = load<T>(io + i * sizeof(T), aligned), b = load<T>(in + i * sizeof(T), aligned);
        store<T>(io + i * sizeof(T), rev ? combine<T>(b, a, op) : combine<T>(a, b, op), aligned);
    }
}

template <class T>
cudaError_t launch(void *inout, const void *in, size_t count, int op, bool rev, int sms, cudaStream_t s) {
    constexpr int threads = 256;
    const bool aligned = reinterpret_cast<uintptr_t>(inout) % alignof(T) == 0 &&
                         reinterpret_cast<uintptr_t>(in) % alignof(T) == 0;
    // Enough blocks to cover the vector, at most 4 per SM (the loop strides over the rest).
    const size_t want = (count + threads - 1) / threads;
    const int blocks = static_cast<int>(std::max<size_t>(1, std::min<size_t>(want, 4 * static_cast<size_t>(sms))));
    reduce_kernel<T><<<blocks, threads, 0, s>>>(static_cast<unsigned char *>(inout),
                                                static_cast<const unsigned char *>(in), count, op, rev, aligned);
    return cudaGetLastError();
}

template <class T>
cudaError_t preload_one() {
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, reduce_kernel<T>);
}

}  // namespace

cudaError_t launch_reduce(void *inout, const void *in, size_t count, int type, int op, bool rev, int sms,
                          cudaStream_t s) {
    if (count == 0) return cudaSuccess;
    if (sms < 1) sms = 1;
    return with_dtype(type, [&](auto t) {
        return launch<typename decltype(t)::type>(inout, in, count, op, rev, sms, s);
    });
}

cudaError_t preload_reduce_kernels() {
    return for_each_dtype([](auto t) { return preload_one<typename decltype(t)::type>(); });
}

}  // namespace hgas::gpu
