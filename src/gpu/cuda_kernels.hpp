// Kernel launchers of the cuda device (cuda_kernels.cu), callable from host C++.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "base/ops.hpp"

namespace hgas::gpu {

// One-thread atomic on device memory `p`; the old value lands in `result` (pinned host).
cudaError_t launch_amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *result,
                       cudaStream_t s);

}  // namespace hgas::gpu
