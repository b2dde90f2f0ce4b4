// CUDA virtual memory management for the cuda heaps (HGAS_CUDA_IPC=vmm): an allocation made
// with cuMemCreate, exported as a POSIX fd that same-node peers receive over a Unix socket
// (fd_pass.hpp) and map for their own GPU. The driver's entry points come through
// cudaGetDriverEntryPointByVersion (no -lcuda), looked up once per process.
#pragma once
#include <cuda.h>  // types and enums of the driver API only

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.hpp"

namespace hgas::gpu::vmm {

// One mapping, own or imported, and what undoing it takes.
struct mapping {
    CUdeviceptr va = 0;
    size_t size = 0;  // bytes mapped: a multiple of the allocation granularity
    CUmemGenericAllocationHandle handle = 0;
    bool has_handle = false, mapped = false;
    int fd = -1;       // own: the exported fd, until every peer has imported it
    uint32_t key = 0;  // own: what peers ask the fd server for (the segment)
};

// Whether GPU `dev` (runtime ordinal) can export VMM allocations as POSIX fds; `why` says what
// is missing.
bool supported(int dev, std::string &why);

// At least `n` bytes of GPU `dev`'s memory, mapped read-write for it and exported as an fd.
// Not zeroed. `what` names the allocation in the error (the segment).
result<mapping> allocate(int dev, size_t n, uint32_t key, const std::string &what);
// The same for a user buffer (tests and benchmarks: memory a program made with cuMemCreate):
// with `exportable` false it is made without a shareable handle type and not exported.
result<mapping> allocate_user(int dev, size_t n, bool exportable);

// The POSIX fd of the VMM allocation (cuMemCreate) mapped at `p`, which the caller owns; -1
// where `p` is not VMM memory or its allocation cannot be shared as an fd (made without
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR): then it is not exported at all.
int export_fd(CUdeviceptr p);

// The allocation of GPU `owner` that `fd` exports (`size` bytes), mapped read-write for GPU
// `dev` (the same one when two ranks share a GPU). Closes `fd`.
result<mapping> import(int fd, size_t size, int owner, int dev);

// Unmaps, frees the address range, releases the handle and closes the fd; `m` is empty after.
void release(mapping &m);

}  // namespace hgas::gpu::vmm
