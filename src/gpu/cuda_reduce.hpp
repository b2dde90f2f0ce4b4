// The reduction kernel of the cuda device (cuda_reduce.cu): inout[i] = inout[i] op in[i] (in[i]
// op inout[i] with `rev`) on `count` elements of hgas_dtype_t `type`, both pointers the GPU's
// (device memory, or mapped host memory). The same values as reduce_cpu.hpp, bit for bit.
#pragma once
#include <cstddef>

#include <cuda_runtime.h>

namespace hgas::gpu {

cudaError_t launch_reduce(void *inout, const void *in, size_t count, int type, int op, bool rev, int sms,
                          cudaStream_t s);
// Loads the kernels now (see preload_kernels in cuda_kernels.hpp for why).
cudaError_t preload_reduce_kernels();

}  // namespace hgas::gpu
