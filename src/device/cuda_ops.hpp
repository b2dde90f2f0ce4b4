// What the device layer needs from CUDA, behind plain functions: cuda_ops.cu (nvcc, C++17,
// so it includes no hgas-internal header) or cuda_ops_none.cpp (a build without CUDA). Every
// function returns 0 or a CUDA error code (error_text names it); none throws.
//
// Stream memory operations come from the driver through cudaGetDriverEntryPointByVersion, never
// by linking libcuda, so that binaries load on machines without a driver.
#pragma once
#include <cstddef>
#include <cstdint>

#include <hgas/hgas_device.h>

namespace hgas::device::cu {

bool built();
const char *error_text(int e);
int set_device(int dev);
// Loads the stream operations' kernels into the current device's context (see
// gpu/cuda_kernels.hpp: a lazily loaded kernel's first launch may wait for running kernels).
int preload();
int dev_alloc(void **p, size_t n);  // zeroed device memory
void dev_free(void *p);
int copy_to_device(void *dst, const void *src, size_t n);
// The GPU's address of registered or pinned host memory, or nullptr where the GPU cannot use it.
void *host_device_pointer(void *host);
// The link to the host has native atomics (GPU atomics on host memory are atomic with the CPU's).
bool native_host_atomics(int dev);
// Stream memory operations (64-bit write and wait) are usable on `dev`; else *why says why.
bool memops_available(int dev, const char **why);

int memcpy_async(void *dst, const void *src, size_t n, cudaStream_t s);
int write64(cudaStream_t s, void *p, uint64_t v);
int wait64(cudaStream_t s, const void *p, uint64_t v, bool eq);  // eq: ==, else (int64)(*p - v) >= 0
// The same by one-thread kernels, on host memory the GPU maps (`p`: the GPU's pointer), where
// stream memory operations are off: a store of v, and a wait until (int64)(*p - v) >= 0 that
// gives up after timeout_ns and then stores `expired_value` into *expired.
int launch_store64(void *p, uint64_t v, cudaStream_t s);
int launch_wait_geq64(const void *p, uint64_t v, uint64_t timeout_ns, void *expired, uint64_t expired_value,
                      cudaStream_t s);
// 0 done, 1 not yet, else a CUDA error (an earlier failure on the stream).
int stream_query(cudaStream_t s);

// Timing events for the trace's stream tracks (base/trace_streams.hpp, event_api): void * are
// cudaEvent_t and cudaStream_t. event_query: 0 completed, 1 not yet, else an error.
int event_create(void **ev);
void event_destroy(void *ev);
int event_record(void *ev, void *stream);
int event_query(void *ev);
int event_elapsed_ms(float *ms, void *from, void *to);
// Records `ev` on a new non-blocking stream, waits for it, *host_ns: the steady clock then.
int event_calibrate(void *ev, uint64_t *host_ns);

// One-thread kernels that run the device API in stream order (impl: hgas_device.cuh).
int launch_put(const hgas_device_ctx_t &c, void *dst, const void *src, size_t n, int rank, cudaStream_t s);
int launch_put_signal(const hgas_device_ctx_t &c, void *dst, const void *src, size_t n, uint64_t *sig, uint64_t value,
                      hgas_signal_op_t op, int rank, cudaStream_t s);
int launch_wait(const hgas_device_ctx_t &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, cudaStream_t s);
int launch_barrier(const hgas_device_ctx_t &c, cudaStream_t s);
int launch_quiet(const hgas_device_ctx_t &c, cudaStream_t s);

}  // namespace hgas::device::cu
