// The one kernel of a team whose members are all rank threads of this process on one GPU
// (gpu.hpp, team_group_call): it computes every member's output from every member's vector.
#pragma once
#include <cuda_runtime.h>

#include "gpu/gpu.hpp"

namespace hgas::gpu {

// Whether the kernel can run `g` as given: every vector it needs present and aligned to its
// element, and no output overlapping another member's vector or output other than the in-place
// forms each collective allows (the caller then takes another path, which says what is wrong).
bool team_group_fits(const device::team_group_args &g);
// Launches it on `s`, at most `max_blocks` blocks.
cudaError_t launch_team_group(const device::team_group_args &g, int max_blocks, cudaStream_t s);
// Loads its kernels now (see preload_kernels in cuda_kernels.hpp for why).
cudaError_t preload_team_group_kernels();

}  // namespace hgas::gpu
