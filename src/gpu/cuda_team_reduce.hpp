// The one-kernel allreduce of the cuda device (cuda_team_reduce.cu; gpu.hpp's team_allreduce
// says what it does). `timed_out` is pinned host memory: 1 + the member a block's wait for
// timed out, left 0 otherwise.
#pragma once
#include <cuda_runtime.h>

#include "gpu/gpu.hpp"

namespace hgas::gpu {

cudaError_t launch_team_allreduce(const device::team_reduce &a, unsigned *timed_out, cudaStream_t s);
// Loads the kernels now (see preload_kernels in cuda_kernels.hpp for why).
cudaError_t preload_team_reduce_kernels();

}  // namespace hgas::gpu
