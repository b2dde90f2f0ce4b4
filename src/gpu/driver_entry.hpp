// One entry point of the CUDA driver API, through the runtime (cudaGetDriverEntryPointByVersion):
// hgas never links libcuda, so that its CUDA builds load where no driver is installed. Header
// only and plain C++17: nvcc-compiled files of other layers (device/cuda_ops.cu) include it.
#pragma once
#include <cuda_runtime.h>

namespace hgas::gpu {

// Sets `out` to the driver's `name` at ABI `version` (e.g. 12000), or leaves it unchanged and
// returns false where the driver lacks it; clears the runtime's error state either way.
template <class F>
bool driver_entry(const char *name, unsigned version, F &out) {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess && p) {
        out = reinterpret_cast<F>(p);
        return true;
    }
    cudaGetLastError();
    return false;
}

}  // namespace hgas::gpu
