// A stand-in for <cuda_runtime.h> that runs himeno's GPU code on the CPU (HIMENO_EMULATE), so
// that machines without a GPU test the kernels and the GPU modes' logic: indexing, halos, the
// deterministic gosa, the order of work between streams, events and the CPU.
//
// Only what himeno uses. Semantics kept on purpose:
//  - Streams are lazy: work runs only when something needs it (an event query, a stream waiting
//    on an event, a synchronous copy, a free). A missing cudaStreamWaitEvent or event wait thus
//    gives wrong results here instead of passing by luck of timing.
//  - The first query of each recorded event answers cudaErrorNotReady (the waits must poll).
//  - Kernels run block by block; the threads of a block are fibers switched at __syncthreads
//    and at warp shuffles, so barriers and shuffles behave as on the GPU.
//  - cudaMalloc'd and pinned memory starts as NaN bytes (0xff), so unwritten reads show.
// Not modelled: concurrency between streams, timing, memory spaces (device pointers are host
// memory: the halo buffers are host memory here, not cuda).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

// --- device-side builtins --------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static  // blocks run one at a time in one OS thread

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

namespace emu {
extern dim3 g_block_idx, g_block_dim, g_grid_dim;
const dim3 &thread_idx();
void sync_block();
void sync_warp();
unsigned lane_exchange_slot();  // this thread's index into the warp exchange buffers
extern double g_xchg_d[1024];

template <class T>
T shfl_down(T v, unsigned off) {
    static_assert(std::is_same_v<T, double>, "the emulator shuffles doubles only");
    const unsigned me = lane_exchange_slot(), lane = me & 31;
    g_xchg_d[me] = v;
    sync_warp();
    const T r = lane + off < 32 ? g_xchg_d[me + off] : v;
    sync_warp();
    return r;
}
}  // namespace emu

#define threadIdx (::emu::thread_idx())
#define blockIdx (::emu::g_block_idx)
#define blockDim (::emu::g_block_dim)
#define gridDim (::emu::g_grid_dim)

inline void __syncthreads() { emu::sync_block(); }
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned off) { return emu::shfl_down(v, off); }
template <class T>
T __ldg(const T *p) { return *p; }
template <class T>
T __ldcs(const T *p) { return *p; }
// Built with -ffp-contract=off: each is one IEEE operation rounded to nearest, as on the GPU.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline int min(int a, int b) { return a < b ? a : b; }

// --- runtime API -----------------------------------------------------------------------------
enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorUnsupportedPtxVersion = 222,
    cudaErrorNotReady = 600,
};
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
enum cudaDeviceAttr { cudaDevAttrMemoryClockRate = 36, cudaDevAttrGlobalMemoryBusWidth = 37 };
#define cudaStreamNonBlocking 0x01
#define cudaEventDisableTiming 0x02

namespace emu {
struct stream;
struct event;
}  // namespace emu
typedef emu::stream *cudaStream_t;
typedef emu::event *cudaEvent_t;

struct cudaDeviceProp {
    char name[256];
    int major, minor, multiProcessorCount;
    size_t totalGlobalMem;
};

const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d);
cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int d);
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int d);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t n);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind k);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind k, cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s);
template <class T>
cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc(reinterpret_cast<void **>(p), n); }
template <class T>
cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMallocHost(reinterpret_cast<void **>(p), n); }

namespace emu {
/// Queues `run(grid, block)` on stream s; the body runs once per thread, as the kernel would.
void enqueue_kernel(cudaStream_t s, dim3 grid, dim3 block, const char *name, void (*body)(void *), void *state,
                    void (*destroy)(void *));

/// `kernel<<<grid, block, 0, s>>>(args...)`: the arguments are converted to the kernel's
/// parameter types now, as CUDA copies them at the launch.
template <class... P, class... A>
void launch(cudaStream_t s, dim3 grid, dim3 block, const char *name, void (*kernel)(P...), A &&...args) {
    using state_t = std::pair<void (*)(P...), std::tuple<std::decay_t<P>...>>;
    auto *st = new state_t(kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...));
    enqueue_kernel(
        s, grid, block, name, [](void *x) {
            auto *t = static_cast<state_t *>(x);
            std::apply(t->first, t->second);
        },
        st, [](void *x) { delete static_cast<state_t *>(x); });
}
}  // namespace emu
