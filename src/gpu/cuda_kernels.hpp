// Kernel launchers of the cuda device (cuda_kernels.cu), callable from host C++.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "base/ops.hpp"

namespace hgas::gpu {

namespace agent {
struct ring;
}

// Loads this layer's kernels into the current device's context now. With lazy loading (the
// default since CUDA 12.2) a kernel's first launch loads its module, and loading may wait for
// the context's running kernels: a user kernel spinning until the runtime's copy agent serves
// its request would then deadlock with the agent's first launch.
cudaError_t preload_kernels();
// The copy agent (cuda_agent.hpp): serves ring descriptors from `next` until idle for idle_ns.
cudaError_t launch_agent(agent::ring *ring, uint64_t next, uint64_t idle_ns, cudaStream_t s);
// A copy by `blocks` blocks of SM threads.
cudaError_t launch_sm_copy(void *dst, const void *src, size_t n, int blocks, cudaStream_t s);

// Gather (pack) or scatter (unpack) of a layout's blocks (device::gather): strided when table
// is null, else `count` (buf offset, packed offset, bytes) triples in device memory.
cudaError_t launch_gather(char *packed, char *buf, uint64_t base, const uint64_t n[3], const uint64_t s[3],
                          uint64_t block, const uint64_t *table, uint64_t count, bool unpack, int sms,
                          cudaStream_t st);

// One-thread atomic on device memory `p`; the old value lands in `result` (pinned host).
cudaError_t launch_amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *result,
                       cudaStream_t s);

}  // namespace hgas::gpu
