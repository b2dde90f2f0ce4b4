// Kernels of the cuda device: an atomic on device memory executed by one thread, so that
// host-initiated atomics on GPU memory (own, or a peer's mapped through IPC) are true device
// atomics that concur correctly with kernels updating the same word.
#include <cstdint>

#include "gpu/cuda_kernels.hpp"

namespace hgas::gpu {

namespace {

template <class T>
__device__ T amo_dev(T *p, int op, T v, T cmp) {
    switch (static_cast<amo_op>(op)) {
    case amo_op::fetch: return atomicAdd(p, T(0));
    case amo_op::set: atomicExch(p, v); return 0;
    case amo_op::add:
    case amo_op::fetch_add: return atomicAdd(p, v);
    case amo_op::swap: return atomicExch(p, v);
    case amo_op::compare_swap: return atomicCAS(p, cmp, v);
    case amo_op::and_:
    case amo_op::fetch_and: return atomicAnd(p, v);
    case amo_op::or_:
    case amo_op::fetch_or: return atomicOr(p, v);
    case amo_op::xor_:
    case amo_op::fetch_xor: return atomicXor(p, v);
    }
    return 0;
}

__global__ void amo_kernel(void *p, int op, unsigned width, unsigned long long v, unsigned long long cmp,
                           unsigned long long *result) {
    unsigned long long old;
    if (width == 4)
        old = amo_dev<unsigned int>(static_cast<unsigned int *>(p), op, static_cast<unsigned int>(v),
                                    static_cast<unsigned int>(cmp));
    else
        old = amo_dev<unsigned long long>(static_cast<unsigned long long *>(p), op, v, cmp);
    *result = old;  // pinned host memory: read by the host after the stream synchronizes
    __threadfence_system();
}

}  // namespace

cudaError_t launch_amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *result,
                       cudaStream_t s) {
    amo_kernel<<<1, 1, 0, s>>>(p, static_cast<int>(op), width, operand, compare,
                               reinterpret_cast<unsigned long long *>(result));
    return cudaGetLastError();
}

}  // namespace hgas::gpu
