// The cuda device: the rank's GPU through the CUDA runtime.
//
// - Segments are cudaMalloc'd and exported with legacy CUDA IPC handles (cudaIpcGetMemHandle);
//   a same-node peer maps them with cudaIpcOpenMemHandle when its GPU is the same one or has
//   peer access (NVLink, PCIe P2P), and otherwise stages through host memory.
// - Copies are cudaMemcpyAsync with cudaMemcpyDefault (unified addressing tells the driver
//   which engine and direction) on internal non-blocking streams; completion is tracked with a
//   ring of events per stream.
// - Atomics run as a one-thread kernel, so they are device atomics (also on peer memory).
// - The runtime is linked statically and finds the driver with dlopen, so a build with CUDA
//   runs on machines without one: open_cuda then reports "no GPU" and the kind is off.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "base/log.hpp"
#include "gpu/cuda_kernels.hpp"
#include "gpu/gpu.hpp"

namespace hgas::gpu {

namespace {

constexpr int events_per_stream = 64;

status cuda_fail(const char *what, cudaError_t e) {
    cudaGetLastError();  // clear the sticky-if-not-fatal error state
    return fail(status::transport, "cuda: %s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define CU_TRY(call)                                                        \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) return cuda_fail(#call, e_);                 \
    } while (0)

struct ipc_blob {
    char bus_id[32];
    cudaIpcMemHandle_t handle;
};

std::string to_hex(const void *p, size_t n) {
    static const char *d = "0123456789abcdef";
    std::string s;
    const auto *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) {
        s += d[b[i] >> 4];
        s += d[b[i] & 15];
    }
    return s;
}

bool from_hex(const std::string &s, void *p, size_t n) {
    if (s.size() != 2 * n) return false;
    auto v = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
    auto *b = static_cast<unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
    return true;
}

struct stream_state {
    cudaStream_t s = nullptr;
    std::vector<cudaEvent_t> ev;
    uint64_t recorded = 0, completed = 0;
};

class cuda_device final : public device {
public:
    ~cuda_device() override {
        select();
        for (auto &st : streams_) cudaStreamSynchronize(st.s);
        for (auto &m : mapped_) cudaIpcCloseMemHandle(m.base);
        for (auto &m : own_) cudaFree(m.base);
        for (auto &st : streams_) {
            for (auto e : st.ev) cudaEventDestroy(e);
            cudaStreamDestroy(st.s);
        }
        if (amo_result_) cudaFreeHost(amo_result_);
    }

    static result<std::unique_ptr<device>> open(const open_args &a) {
        int count = 0;
        cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess || count == 0) {
            cudaGetLastError();
            return fail(status::unsupported, "kind cuda is not available: no GPU is visible (%s)",
                        e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount reports 0 devices");
        }
        std::unique_ptr<cuda_device> d(new cuda_device());
        d->dev_ = a.local_rank % count;
        d->count_ = count;
        d->select();
        CU_TRY(cudaFree(nullptr));  // creates the primary context now, not inside a timed call
        cudaDeviceProp prop{};
        CU_TRY(cudaGetDeviceProperties(&prop, d->dev_));
        char bus[32] = {};
        CU_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, d->dev_));
        d->bus_id_ = bus;
        char desc[256];
        snprintf(desc, sizeof desc, "cuda:%d %s (sm_%d%d, %s, %d visible)", d->dev_, prop.name, prop.major,
                 prop.minor, bus, count);
        d->desc_ = desc;
        const int ns = static_cast<int>(a.cfg->integer(setting::gpu_streams));
        d->streams_.resize(ns);
        for (auto &st : d->streams_) {
            CU_TRY(cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking));
            st.ev.resize(events_per_stream);
            for (auto &ev : st.ev) CU_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        }
        CU_TRY(cudaMallocHost(reinterpret_cast<void **>(&d->amo_result_), 64));
        return std::unique_ptr<device>(std::move(d));
    }

    kind which() const override { return kind::cuda; }
    std::string describe() const override { return desc_; }
    int ordinal() const override { return dev_; }
    int streams() const override { return static_cast<int>(streams_.size()); }

    result<void *> alloc_segment(uint16_t seg, size_t n, std::string &blob) override {
        select();
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, n);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return fail(status::no_memory, "cuda: cannot allocate %zu bytes on GPU %d for segment %u: %s; lower "
                        "HGAS_CUDA_HEAP_SIZE / HGAS_CUDA_LOCAL_HEAP_SIZE", n, dev_, seg, cudaGetErrorString(e));
        }
        CU_TRY(cudaMemset(p, 0, n));
        own_.push_back({static_cast<char *>(p), n});
        ipc_blob b{};
        std::snprintf(b.bus_id, sizeof b.bus_id, "%s", bus_id_.c_str());
        CU_TRY(cudaIpcGetMemHandle(&b.handle, p));
        blob = to_hex(&b, sizeof b);
        return p;
    }

    result<void *> map_peer(int peer, const std::string &blob, size_t n) override {
        select();
        ipc_blob b{};
        if (!from_hex(blob, &b, sizeof b))
            return fail(status::bootstrap, "cuda: rank %d's segment handle is malformed", peer);
        int pdev = -1;
        if (cudaDeviceGetByPCIBusId(&pdev, b.bus_id) != cudaSuccess) {
            cudaGetLastError();
            HGASI_DEBUG("mem", "rank %d's GPU %s is not visible here: staging through host memory", peer, b.bus_id);
            return static_cast<void *>(nullptr);
        }
        if (pdev != dev_) {
            int can = 0;
            CU_TRY(cudaDeviceCanAccessPeer(&can, dev_, pdev));
            if (!can) {
                HGASI_DEBUG("mem", "GPU %d has no peer access to GPU %d (rank %d): staging", dev_, pdev, peer);
                return static_cast<void *>(nullptr);
            }
            cudaError_t e = cudaDeviceEnablePeerAccess(pdev, 0);
            if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) return cuda_fail("cudaDeviceEnablePeerAccess", e);
            cudaGetLastError();
        }
        void *p = nullptr;
        CU_TRY(cudaIpcOpenMemHandle(&p, b.handle, cudaIpcMemLazyEnablePeerAccess));
        mapped_.push_back({static_cast<char *>(p), n});
        return p;
    }

    bool owns(const void *p, size_t n) override {
        const char *c = static_cast<const char *>(p);
        for (const auto *v : {&own_, &mapped_})
            for (const auto &m : *v)
                if (c >= m.base && c < m.base + m.size) return n <= static_cast<size_t>(m.base + m.size - c);
        // Any other device pointer of this process (the user's cudaMalloc).
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
    }

    result<ticket> copy_async(void *dst, const void *src, size_t n, int stream) override {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        stream_state &st = streams_[stream];
        CU_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, st.s));
        if (st.recorded - st.completed >= events_per_stream) {  // ring full: retire the oldest
            CU_TRY(cudaEventSynchronize(st.ev[(st.completed + 1) % events_per_stream]));
            ++st.completed;
        }
        ++st.recorded;
        CU_TRY(cudaEventRecord(st.ev[st.recorded % events_per_stream], st.s));
        return ticket{stream, st.recorded};
    }

    result<bool> test(ticket t) override {
        if (t.seq == 0) return true;
        stream_state &st = streams_[t.stream];
        while (st.completed < t.seq) {
            cudaError_t e = cudaEventQuery(st.ev[(st.completed + 1) % events_per_stream]);
            if (e == cudaErrorNotReady) return false;
            if (e != cudaSuccess) return cuda_fail("cudaEventQuery (an earlier copy failed)", e);
            ++st.completed;
        }
        return true;
    }

    result<uint64_t> amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare) override {
        select();
        CU_TRY(launch_amo(p, op, width, operand, compare, amo_result_, streams_[0].s));
        CU_TRY(cudaStreamSynchronize(streams_[0].s));
        return *amo_result_;
    }

    result<void *> alloc_pinned(size_t n) override {
        select();
        void *p = nullptr;
        cudaError_t e = cudaMallocHost(&p, n);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return fail(status::no_memory, "cuda: cannot allocate %zu bytes of pinned host memory: %s", n,
                        cudaGetErrorString(e));
        }
        return p;
    }
    void free_pinned(void *p) override { cudaFreeHost(p); }
    status register_host(void *p, size_t n) override {
        select();
        cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterPortable);
        if (e == cudaErrorHostMemoryAlreadyRegistered) {
            cudaGetLastError();
            return status::ok;
        }
        if (e != cudaSuccess) return cuda_fail("cudaHostRegister", e);
        return status::ok;
    }
    void unregister_host(void *p) override {
        select();
        if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
    }

private:
    cuda_device() = default;
    // The device is per thread in the runtime API; the progress helper calls in too.
    void select() {
        thread_local int selected = -1;
        if (selected != dev_) {
            cudaSetDevice(dev_);
            selected = dev_;
        }
    }

    struct mem_range {
        char *base;
        size_t size;
    };
    int dev_ = 0, count_ = 0;
    std::string bus_id_, desc_;
    std::vector<stream_state> streams_;
    std::vector<mem_range> own_, mapped_;
    uint64_t *amo_result_ = nullptr;
};

}  // namespace

result<std::unique_ptr<device>> open_cuda(const open_args &a) { return cuda_device::open(a); }
bool cuda_built() { return true; }

}  // namespace hgas::gpu
