// GPU work of ranks that are threads of one process (HGAS_GPU_SHARING=funneled, docs/threads.md):
// 'streams' (mode c) leaves each rank its own device object and streams in the process's
// shared CUDA context; 'funneled' (mode d) wraps each rank's device so that every GPU
// operation it issues (copies, packs, marks, device atomics) is handed to one thread of the
// process, which issues all ranks' operations in the order they came.
#pragma once
#include <memory>

#include "gpu/gpu.hpp"

namespace hgas::core {

// `d` behind the process's funnel thread (started with the first funneled device, stopped
// with the last). An operation the funnel thread has not issued within timeout_s (HGAS_TIMEOUT)
// ends the process with a message naming `rank` and the funnel thread's backtrace.
std::unique_ptr<gpu::device> funnel_device(std::unique_ptr<gpu::device> d, int rank, double timeout_s);
// Operations the funnel thread has issued in this process (hgas-info, tests).
uint64_t funneled_operations();

}  // namespace hgas::core
