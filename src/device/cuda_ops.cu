// The device layer's CUDA calls (cuda_ops.hpp) and the one-thread kernels of the
// stream-ordered operations, which are the device API itself (hgas_device.cuh).
#include <cuda.h>  // types and enums of the driver API only: its functions come from the runtime
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include <hgas/hgas_device.cuh>

#include "device/cuda_ops.hpp"

namespace hgas::device::cu {

namespace {

using write64_fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using wait64_fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using attr_fn = CUresult (*)(int *, CUdevice_attribute, CUdevice);
using get_fn = CUresult (*)(CUdevice *, int);

// The driver's entry points, looked up once per process (they are facts of the driver, not
// state of a rank).
struct driver {
    write64_fn write64 = nullptr;
    wait64_fn wait64 = nullptr;
    attr_fn attr = nullptr;
    get_fn get = nullptr;
};

template <class F>
void lookup(const char *name, unsigned version, F &out) {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        out = reinterpret_cast<F>(p);
    else
        cudaGetLastError();
}

const driver &drv() {
    static driver d;
    static std::once_flag once;
    std::call_once(once, [] {
        // 12000: the _v2 stream memory operations (CUDA 11.7+), the only ones in CUDA 12/13.
        lookup("cuStreamWriteValue64", 12000, d.write64);
        lookup("cuStreamWaitValue64", 12000, d.wait64);
        lookup("cuDeviceGetAttribute", 2000, d.attr);
        lookup("cuDeviceGet", 2000, d.get);
    });
    return d;
}

int err(cudaError_t e) {
    if (e != cudaSuccess) cudaGetLastError();  // clear a non-sticky error for the next call
    return static_cast<int>(e);
}

__global__ void k_put(hgas_device_ctx_t c, void *dst, const void *src, size_t n, int rank) {
    hgas::device::put(c, dst, src, n, rank);
}
__global__ void k_put_signal(hgas_device_ctx_t c, void *dst, const void *src, size_t n, uint64_t *sig, uint64_t value,
                             hgas_signal_op_t op, int rank) {
    hgas::device::put_signal(c, dst, src, n, sig, value, op, rank);
}
__global__ void k_wait(hgas_device_ctx_t c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value) {
    (void)hgas::device::signal_wait_until(c, sig, cmp, value);
}
__global__ void k_barrier(hgas_device_ctx_t c) { hgas::device::barrier(c); }
__global__ void k_store64(volatile unsigned long long *p, unsigned long long v) {
    __threadfence_system();
    *p = v;
    __threadfence_system();
}
__global__ void k_wait_geq64(const volatile unsigned long long *p, unsigned long long v, unsigned long long timeout_ns,
                             volatile unsigned long long *expired, unsigned long long expired_value) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (static_cast<long long>(*p - v) < 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            *expired = expired_value;
            __threadfence_system();
            return;
        }
        __nanosleep(200);
    }
    __threadfence_system();  // what the host completed before the word, before later work
}
__global__ void k_quiet(hgas_device_ctx_t c) { hgas::device::quiet(c); }

}  // namespace

bool built() { return true; }
const char *error_text(int e) {
    if (e < 0) return "the CUDA driver does not provide this operation";
    return cudaGetErrorString(static_cast<cudaError_t>(e));
}
int set_device(int dev) {
    thread_local int selected = -1;
    if (selected == dev) return 0;
    const int e = err(cudaSetDevice(dev));
    if (!e) selected = dev;
    return e;
}
int preload() {
    cudaFuncAttributes a{};
    cudaError_t e = cudaFuncGetAttributes(&a, k_put);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, k_put_signal);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, k_wait);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, k_barrier);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, k_quiet);
    return err(e);
}
int dev_alloc(void **p, size_t n) {
    *p = nullptr;
    int e = err(cudaMalloc(p, n));
    if (!e) e = err(cudaMemset(*p, 0, n));
    return e;
}
void dev_free(void *p) {
    if (p) err(cudaFree(p));
}
int copy_to_device(void *dst, const void *src, size_t n) { return err(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice)); }
void *host_device_pointer(void *host) {
    void *d = nullptr;
    if (!host || cudaHostGetDevicePointer(&d, host, 0) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return d;
}
bool native_host_atomics(int dev) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrHostNativeAtomicSupported, dev) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return v != 0;
}
bool memops_available(int dev, const char **why) {
    const driver &d = drv();
    if (!d.write64 || !d.wait64) {
        *why = "the driver has no cuStreamWriteValue64/cuStreamWaitValue64";
        return false;
    }
    if (d.attr && d.get) {
        CUdevice cd = 0;
        int v = 0;
        if (d.get(&cd, dev) == CUDA_SUCCESS && d.attr(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, cd) == CUDA_SUCCESS &&
            v == 0) {
            *why = "the device reports no 64-bit stream memory operations";
            return false;
        }
    }
    return true;
}

int memcpy_async(void *dst, const void *src, size_t n, cudaStream_t s) {
    return err(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
}
int write64(cudaStream_t s, void *p, uint64_t v) {
    const driver &d = drv();
    if (!d.write64) return -1;
    // Default flags: the write waits for (and is ordered after) the stream's earlier memory
    // operations, with a memory barrier: the data a put copied is visible before the signal.
    return static_cast<int>(d.write64(s, reinterpret_cast<CUdeviceptr>(p), v, CU_STREAM_WRITE_VALUE_DEFAULT));
}
// Whether this GPU can flush remote writes after a stream wait (CUDA: without the flush, work
// after a wait satisfied by a peer's signal may miss that peer's earlier data writes).
static bool can_flush_remote_writes(const driver &d, cudaStream_t s) {
    static std::atomic<int> known[64];  // 0 unknown, 1 no, 2 yes; per device
    int dev = 0;
    if (cudaStreamGetDevice(s, &dev) != cudaSuccess) {  // the stream's GPU, not the thread's
        cudaGetLastError();
        return false;
    }
    if (dev < 0 || dev >= 64) return false;
    if (!known[dev]) {
        int v = 0;
        CUdevice cd = 0;
        known[dev] = d.attr && d.get && d.get(&cd, dev) == CUDA_SUCCESS &&
                             d.attr(&v, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, cd) == CUDA_SUCCESS && v
                         ? 2
                         : 1;
    }
    return known[dev] == 2;
}
int wait64(cudaStream_t s, const void *p, uint64_t v, bool eq) {
    const driver &d = drv();
    if (!d.wait64) return -1;
    unsigned flags = eq ? CU_STREAM_WAIT_VALUE_EQ : CU_STREAM_WAIT_VALUE_GEQ;
    if (can_flush_remote_writes(d, s)) flags |= CU_STREAM_WAIT_VALUE_FLUSH;
    return static_cast<int>(d.wait64(s, reinterpret_cast<CUdeviceptr>(p), v, flags));
}
int event_create(void **ev) {
    cudaEvent_t e = nullptr;
    const int r = err(cudaEventCreate(&e));
    *ev = r ? nullptr : e;
    return r;
}
void event_destroy(void *ev) { cudaEventDestroy(static_cast<cudaEvent_t>(ev)); }
int event_record(void *ev, void *s) {
    return err(cudaEventRecord(static_cast<cudaEvent_t>(ev), static_cast<cudaStream_t>(s)));
}
int event_query(void *ev) {
    const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(ev));
    if (e == cudaErrorNotReady) {
        cudaGetLastError();
        return 1;
    }
    return e == cudaErrorInvalidValue ? -1 : err(e);  // 1 means "not yet"
}
int event_elapsed_ms(float *ms, void *from, void *to) {
    return err(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(from), static_cast<cudaEvent_t>(to)));
}
int event_calibrate(void *ev, uint64_t *host_ns) {
    cudaStream_t s = nullptr;
    int r = err(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (r) return r;
    r = err(cudaEventRecord(static_cast<cudaEvent_t>(ev), s));
    if (!r) r = err(cudaEventSynchronize(static_cast<cudaEvent_t>(ev)));
    // The clock base/clock.hpp's now_ns() reads.
    *host_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
    cudaStreamDestroy(s);
    return r;
}

int stream_query(cudaStream_t s) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return 0;
    if (e == cudaErrorNotReady) {
        cudaGetLastError();
        return 1;
    }
    return err(e);
}

int launch_put(const hgas_device_ctx_t &c, void *dst, const void *src, size_t n, int rank, cudaStream_t s) {
    k_put<<<1, 1, 0, s>>>(c, dst, src, n, rank);
    return err(cudaGetLastError());
}
int launch_put_signal(const hgas_device_ctx_t &c, void *dst, const void *src, size_t n, uint64_t *sig, uint64_t value,
                      hgas_signal_op_t op, int rank, cudaStream_t s) {
    k_put_signal<<<1, 1, 0, s>>>(c, dst, src, n, sig, value, op, rank);
    return err(cudaGetLastError());
}
int launch_store64(void *p, uint64_t v, cudaStream_t s) {
    k_store64<<<1, 1, 0, s>>>(static_cast<volatile unsigned long long *>(p), v);
    return err(cudaGetLastError());
}
int launch_wait_geq64(const void *p, uint64_t v, uint64_t timeout_ns, void *expired, uint64_t expired_value,
                      cudaStream_t s) {
    k_wait_geq64<<<1, 1, 0, s>>>(static_cast<const volatile unsigned long long *>(p), v, timeout_ns,
                                 static_cast<volatile unsigned long long *>(expired), expired_value);
    return err(cudaGetLastError());
}
int launch_wait(const hgas_device_ctx_t &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, cudaStream_t s) {
    k_wait<<<1, 1, 0, s>>>(c, sig, cmp, value);
    return err(cudaGetLastError());
}
int launch_barrier(const hgas_device_ctx_t &c, cudaStream_t s) {
    k_barrier<<<1, 1, 0, s>>>(c);
    return err(cudaGetLastError());
}
int launch_quiet(const hgas_device_ctx_t &c, cudaStream_t s) {
    k_quiet<<<1, 1, 0, s>>>(c);
    return err(cudaGetLastError());
}

}  // namespace hgas::device::cu
