// What every GPU test program here starts with: a checked CUDA call, the rank's GPU selected in
// the program's own CUDA runtime, a stream, the device context and an error counter that check
// kernels add to. Ranks are started and hgas initialised by rank_main (tests/ranks), as for
// the CPU rank tests; this header only adds the CUDA side.
#pragma once
#include <hgas/hgas.h>
#include <hgas/hgas_device.cuh>

#include <cuda_runtime.h>

#include "rank_test.hpp"

// A CUDA runtime call that must succeed: on failure the test fails (fatally, as ASSERT) with
// the call and CUDA's name and text for the error.
#define CK(call)                                                                                     \
    do {                                                                                             \
        cudaError_t ck_ = (call);                                                                    \
        ASSERT_EQ(ck_, cudaSuccess) << #call << ": " << cudaGetErrorName(ck_) << " " << cudaGetErrorString(ck_); \
    } while (0)

namespace gpu_test {

inline int me() { return hgas_rank_me(); }
inline int n() { return hgas_rank_n(); }

// Threads a kernel of cooperation scope S is launched with, and the scope's name for messages.
template <hgas::device::scope S>
unsigned threads_of() {
    using hgas::device::scope;
    return S == scope::thread ? 1 : S == scope::warp ? 32 : 256;
}
inline const char *name_of(hgas::device::scope S) {
    using hgas::device::scope;
    return S == scope::thread ? "thread" : S == scope::warp ? "warp" : "block";
}

// Per test: open() selects the rank's GPU and makes a non-blocking stream and a zeroed error
// counter in device memory; the destructor frees them. Ranks as threads each hold their own.
struct rank_gpu {
    cudaStream_t s = nullptr;
    hgas_device_ctx_t c{};  // set by open(true), for kernels that call the device API
    unsigned long long *bad = nullptr;

    rank_gpu() = default;
    rank_gpu(const rank_gpu &) = delete;
    rank_gpu &operator=(const rank_gpu &) = delete;
    ~rank_gpu() {
        if (bad) cudaFree(bad);
        if (s) cudaStreamDestroy(s);
    }

    void open(bool with_ctx = false) {
        ASSERT_TRUE(hgas_kind_available(HGAS_KIND_CUDA)) << "kind cuda is not available on rank " << me();
        ASSERT_GE(hgas_device_gpu(), 0) << "rank " << me() << " has no GPU";
        CK(cudaSetDevice(hgas_device_gpu()));
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        if (with_ctx) HGAS_OK_OR_FAIL(hgas_device_ctx_get(&c));
        CK(cudaMalloc(&bad, sizeof *bad));
        CK(cudaMemset(bad, 0, sizeof *bad));
    }
    // Waits (bounded by HGAS_TIMEOUT) for the stream, then reports device-side errors; never
    // cudaDeviceSynchronize, which a stuck kernel would hang.
    void sync() { HGAS_OK_OR_FAIL(hgas_stream_sync(s)); }
    // The errors counted since the last call (~0 if the counter cannot be read), reset to 0.
    unsigned long long take_bad() {
        unsigned long long v = ~0ull;
        EXPECT_EQ(cudaMemcpy(&v, bad, sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(cudaMemset(bad, 0, sizeof *bad), cudaSuccess);
        return v;
    }
};

}  // namespace gpu_test
