// The cuda device: the rank's GPU through the CUDA runtime.
//
// - Segments are exported to same-node peers in one of two ways (HGAS_CUDA_IPC; the method
//   travels in the segment blob, so an importer always follows its exporter):
//   vmm: cuMemCreate (pinned device memory, POSIX-fd handle type, rounded to the granularity),
//        cuMemAddressReserve + cuMemMap + cuMemSetAccess for this GPU; the handle is exported
//        as a POSIX fd (cuMemExportToShareableHandle) that peers fetch over a Unix socket
//        (fd_pass.hpp) and import, reserve, map and cuMemSetAccess for their own GPU. This is
//        what NVSHMEM and NCCL use: it needs no cudaMalloc, and access is per mapping.
//   legacy: cudaMalloc'd and exported with cudaIpcGetMemHandle; peers cudaIpcOpenMemHandle.
//   Either way a peer maps them only when its GPU is the same one or has peer access (NVLink,
//   PCIe P2P), and otherwise stages through host memory.
// - The driver API (cuMem*) is not linked (no -lcuda, so that builds run without a driver):
//   its entry points come from cudaGetDriverEntryPointByVersion.
// - Copies are cudaMemcpyAsync with cudaMemcpyDefault (unified addressing tells the driver
//   which engine and direction) on internal non-blocking streams; completion is tracked with a
//   ring of events per stream.
// - Small copies and atomics go to the copy agent (cuda_agent.hpp) when it is on; atomics
//   otherwise run as a one-thread kernel. Either way they are device atomics (also on peer
//   memory). Mid-size device-to-device copies use an SM copy kernel (HGAS_SM_COPY_MAX).
// - The runtime is linked statically and finds the driver with dlopen, so a build with CUDA
//   runs on machines without one: open_cuda then reports "no GPU" and the kind is off.
#include <chrono>
#include <thread>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/shm.hpp"
#include "base/trace_streams.hpp"
#include "gpu/agent_gate.hpp"
#include "gpu/cuda_agent.hpp"
#include "gpu/cuda_kernels.hpp"
#include "gpu/cuda_reduce.hpp"
#include "gpu/cuda_team_group.hpp"
#include "gpu/cuda_team_reduce.hpp"
#include "gpu/team_meet.hpp"
#include "gpu/reduce_cpu.hpp"
#include "gpu/sharing.hpp"
#include "gpu/cuda_vmm.hpp"
#include "gpu/fd_pass.hpp"
#include "gpu/gpu.hpp"
#include "gpu/reg_cache.hpp"

namespace hgas::gpu {

namespace {

constexpr int events_per_stream = 64;

// Timing events for the trace's tracks of the internal streams (base/trace_streams.hpp).
int cuda_result(cudaError_t e) {
    if (e != cudaSuccess) cudaGetLastError();
    return e == cudaSuccess ? 0 : e == cudaErrorNotReady ? 1 : e == 1 ? -1 : static_cast<int>(e);
}
const trace::event_api trace_events = {
    [](void **ev) {
        cudaEvent_t e = nullptr;
        const int r = cuda_result(cudaEventCreate(&e));
        *ev = e;
        return r;
    },
    [](void *ev) { cudaEventDestroy(static_cast<cudaEvent_t>(ev)); },
    [](void *ev, void *s) { return cuda_result(cudaEventRecord(static_cast<cudaEvent_t>(ev), static_cast<cudaStream_t>(s))); },
    [](void *ev) { return cuda_result(cudaEventQuery(static_cast<cudaEvent_t>(ev))); },
    [](float *ms, void *a, void *b) {
        return cuda_result(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(a), static_cast<cudaEvent_t>(b)));
    },
    [](void *ev, uint64_t *host_ns) {
        cudaStream_t s = nullptr;
        int r = cuda_result(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        if (r) return r;
        r = cuda_result(cudaEventRecord(static_cast<cudaEvent_t>(ev), s));
        if (!r) r = cuda_result(cudaEventSynchronize(static_cast<cudaEvent_t>(ev)));
        *host_ns = now_ns();
        cudaStreamDestroy(s);
        return r;
    },
};

// The user ranges this process page-locked for hgas (register_user), by base: how many ranks of
// the process (ranks as threads) hold each.
struct user_pin {
    size_t bytes = 0;
    int ranks = 0;
};
struct user_pins {
    std::mutex m;
    std::map<void *, user_pin> refs;
};
// A stream's state for a timeout message: a failed context (a kernel's fault) reads "failed:
// <why>", not "busy".
const char *stream_word(cudaError_t e) {
    if (e == cudaSuccess) return "idle";
    if (e == cudaErrorNotReady) return "busy";
    thread_local std::string w;
    w = std::string("failed: ") + cudaGetErrorString(e);
    return w.c_str();
}

user_pins &process_user_pins() {
    static user_pins p;
    return p;
}

// Says once per process that lazy loading is on (CUDA initialized before hgas with the default,
// or CUDA_MODULE_LOADING=LAZY), and what it risks.
void warn_lazy_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        using mode_fn = int (*)(int *);  // cuModuleGetLoadingMode(CUmoduleLoadingMode *)
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            cudaGetLastError();
            return;
        }
        int mode = 0;
        if (reinterpret_cast<mode_fn>(f)(&mode) == 0 && mode == 2 /* CU_MODULE_LAZY_LOADING */)
            HGASI_WARN("gpu", "CUDA lazy loading is on (CUDA_MODULE_LOADING=%s): a kernel launched for the first time "
                       "while another kernel waits on hgas (device API or stream operations through the proxy) can "
                       "deadlock until HGAS_TIMEOUT; run with CUDA_MODULE_LOADING=EAGER (hgasrun sets it) or launch "
                       "every kernel once before", getenv("CUDA_MODULE_LOADING") ? getenv("CUDA_MODULE_LOADING") : "unset");
    });
}

status cuda_fail(const char *what, cudaError_t e) {
    cudaGetLastError();  // clear the sticky-if-not-fatal error state
    return fail(status::transport, "cuda: %s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define CU_TRY(call)                                                        \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) return cuda_fail(#call, e_);                 \
    } while (0)

// The segment blob: 'L' + hex(ipc_blob) for legacy handles, 'V' + hex(vmm_blob) for VMM.
struct ipc_blob {
    char bus_id[32];
    cudaIpcMemHandle_t handle;
};
struct vmm_blob {
    char bus_id[32];
    uint64_t size;  // bytes mapped (a multiple of the allocation granularity)
    uint32_t key;   // what to ask the exporter's fd server for: the segment number
    char sock_tag[17];  // the random part of the exporter's fd server name (fdpass::socket_name)
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
    // copy_waited's copies: `waited`, the id of the one last on the stream with no event (0:
    // none; its ticket is done when the stream has drained); `flushed`, those given an event
    // since (id, event seq), because work came after them.
    uint64_t waited = 0;
    std::vector<std::pair<uint64_t, uint64_t>> flushed;
};

class cuda_device final : public device {
public:
    ~cuda_device() override {
        select();
        tracer_.reset();  // reads back what it can while the streams exist
        if (ring_) {
            agent_gate::process().remove(this);
            __atomic_store_n(&ring_->stop, 1, __ATOMIC_RELEASE);
            cudaStreamSynchronize(agent_stream_);
            cudaStreamDestroy(agent_stream_);
        }
        for (auto &st : streams_) cudaStreamSynchronize(st.s);
        fd_server_.reset();  // before the fds it hands out are closed
        user_fd_server_.reset();
        for (auto &[b, u] : exported_)
            if (u.fd >= 0) close(u.fd);
        // The frees wait for the process's kernels: other rank threads' agents stop meanwhile.
        agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { release_all(); });
    }

private:
    void release_all() {
        if (ring_) cudaFreeHost(ring_);
        for (auto &[p, m] : vmm_user_mapped_) vmm::release(m);
        for (auto &[p, m] : vmm_user_own_) vmm::release(m);
        for (auto &m : mapped_)
            if (!m.vmm) cudaIpcCloseMemHandle(m.base);
        for (auto &m : own_)
            if (!m.vmm) cudaFree(m.base);
        for (auto &m : vmm_mapped_) vmm::release(m);
        for (auto &m : vmm_own_) vmm::release(m);
        for (auto &st : streams_) {
            for (auto e : st.ev) cudaEventDestroy(e);
            cudaStreamDestroy(st.s);
        }
        if (amo_result_) cudaFreeHost(amo_result_);
        if (team_timed_out_) cudaFreeHost(team_timed_out_);
        for (auto &o : team_order_)
            if (o.ev) cudaEventDestroy(o.ev);
        for (auto &r : team_ready_)
            for (cudaEvent_t e : r)
                if (e) cudaEventDestroy(e);
        for (auto &b : reduce_stage_)
            if (b.p) cudaFree(b.p);
    }

public:
    static result<std::unique_ptr<device>> open(const open_args &a) {
        // CUDA's lazy loading (its default) lets a kernel's first launch wait for the running
        // kernels; with kernels that wait on hgas's proxy that is a deadlock (docs/device.md).
        // Eager unless the user chose; no effect once this process has initialized CUDA.
        setenv("CUDA_MODULE_LOADING", "EAGER", 0);
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
        CU_TRY(preload_kernels());
        CU_TRY(preload_reduce_kernels());
        CU_TRY(preload_team_reduce_kernels());
        CU_TRY(preload_team_group_kernels());
        cudaDeviceProp prop{};
        CU_TRY(cudaGetDeviceProperties(&prop, d->dev_));
        char bus[32] = {};
        CU_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, d->dev_));
        d->bus_id_ = bus;
        char desc[512];
        snprintf(desc, sizeof desc, "cuda:%d %s (sm_%d%d, %s, %d visible)", d->dev_, prop.name, prop.major,
                 prop.minor, bus, count);
        d->desc_ = desc;
        d->job_id_ = a.job_id;
        d->rank_ = a.rank;
        d->regs_ = a.regs;
        d->ipc_timeout_ = a.cfg->seconds(setting::boot_timeout);
        // The export method. Forced vmm where the GPU cannot is an error naming the setting, not
        // a silent fallback: the user asked for it.
        const std::string &ipc = a.cfg->text(setting::cuda_ipc);
        std::string why;
        const bool vmm_ok = ipc != "legacy" && vmm::supported(d->dev_, why);
        if (ipc == "vmm" && !vmm_ok)
            return fail(status::invalid_setting, "HGAS_CUDA_IPC=vmm, but GPU %d (%s) cannot export VMM memory as POSIX "
                        "file descriptors: %s; use HGAS_CUDA_IPC=auto or legacy", d->dev_, prop.name, why.c_str());
        d->vmm_ = vmm_ok;
        if (ipc == "auto" && !vmm_ok)
            HGASI_DEBUG("mem", "GPU %d: legacy CUDA IPC handles (HGAS_CUDA_IPC=auto): %s", d->dev_, why.c_str());
        if (d->vmm_) {
            d->desc_ += ", ipc vmm";
        } else {
            d->desc_ += ", ipc legacy";
        }
        const int ns = static_cast<int>(a.cfg->integer(setting::gpu_streams));
        d->streams_.resize(ns);
        for (auto &st : d->streams_) {
            CU_TRY(cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking));
            st.ev.resize(events_per_stream);
            for (auto &ev : st.ev) CU_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        }
        CU_TRY(cudaMallocHost(reinterpret_cast<void **>(&d->amo_result_), 64));
        d->sm_count_ = prop.multiProcessorCount;
        d->host_ptr_ok_ = prop.canUseHostPointerForRegisteredMem != 0;
        // Ranks round-robin over the GPUs: with more local ranks than GPUs, some share one.
        d->shared_ = a.local_n > count;
        d->sm_copy_max_ = a.cfg->bytes(setting::sm_copy_max);
        d->sm_copy_min_ = a.cfg->bytes(setting::gpu_agent_max);  // below it, the agent or the copy engines
        // On a GPU that time-slices between processes the agent, a kernel that keeps running,
        // holds the GPU for its process's whole slice (sharing.hpp): there it serves atomics
        // only, unless the environment asks for it. Copies go to the copy engines, which
        // switch apart from kernels; atomics stay, because without the agent each one is a
        // kernel of its own, waiting for a slice (a kernel's 16,384 proxied fetch-adds then
        // took longer than HGAS_TIMEOUT, test_device_staged on an H100).
        const char *pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
        const gpu_share share{a.local_n, a.ranks_per_process, count,
                              a.cfg->text(setting::gpu_sharing) == "mps" || (pipe && *pipe)};
        const bool agent_asked = std::string(a.cfg->source(setting::gpu_agent)) == "environment";
        const bool copies = agent_asked || !time_sliced(share);
        // A team kernel waits for the other members' kernels: not where they wait for a slice.
        d->team_kernels_ = !time_sliced(share);
        CU_TRY(cudaMallocHost(reinterpret_cast<void **>(&d->team_timed_out_), 64));
        d->team_timed_out_[0] = d->team_timed_out_[1] = 0;
        if (a.cfg->flag(setting::gpu_agent) && !copies) {
            d->desc_ += ", copy agent for atomics only (GPU time-sliced between processes; HGAS_GPU_AGENT=1 for copies too)";
            HGASI_DEBUG("device", "GPU %d: the copy agent serves atomics only: %d ranks in processes of %d share %d GPU(s) "
                        "without MPS", d->dev_, a.local_n, a.ranks_per_process, count);
        }
        if (a.cfg->flag(setting::gpu_agent)) {
            if (copies) {
                d->agent_max_ = a.cfg->bytes(setting::gpu_agent_max);
                d->agent_gpu_max_ = a.cfg->bytes(setting::gpu_agent_gpu_max);
            }
            d->agent_peers_ = copies && a.cfg->flag(setting::gpu_agent_peers);
            d->agent_idle_ns_ = static_cast<uint64_t>(a.cfg->integer(setting::gpu_agent_idle_us)) * 1000;
            CU_TRY(cudaMallocHost(reinterpret_cast<void **>(&d->ring_), sizeof(agent::ring)));
            std::memset(static_cast<void *>(d->ring_), 0, sizeof(agent::ring));
            d->ring_->exit_seq = 1;  // the first agent starts at sequence number 1
            CU_TRY(cudaStreamCreateWithFlags(&d->agent_stream_, cudaStreamNonBlocking));
            cuda_device *me = d.get();
            agent_gate::process().add(me, &d->ring_->stop,
                                      [me] { return cudaStreamQuery(me->agent_stream_) != cudaErrorNotReady; });
        }
        return std::unique_ptr<device>(std::move(d));
    }

    kind which() const override { return kind::cuda; }
    std::string describe() const override { return desc_; }
    int ordinal() const override { return dev_; }
    int streams() const override { return static_cast<int>(streams_.size()); }

    result<void *> alloc_segment(uint16_t seg, size_t n, std::string &blob) override {
        select();
        if (vmm_) return alloc_vmm(seg, n, blob);
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, n);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return fail(status::no_memory, "cuda: cannot allocate %zu bytes on GPU %d for segment %u: %s; lower "
                        "HGAS_CUDA_HEAP_SIZE / HGAS_CUDA_LOCAL_HEAP_SIZE", n, dev_, seg, cudaGetErrorString(e));
        }
        CU_TRY(cudaMemset(p, 0, n));
        own_.push_back({static_cast<char *>(p), n, dev_});
        ipc_blob b{};
        std::snprintf(b.bus_id, sizeof b.bus_id, "%s", bus_id_.c_str());
        CU_TRY(cudaIpcGetMemHandle(&b.handle, p));
        blob = "L" + to_hex(&b, sizeof b);
        return p;
    }

    result<void *> map_peer(int peer, const std::string &blob, size_t n) override {
        select();
        const bool vmm = !blob.empty() && blob[0] == 'V';
        ipc_blob lb{};
        vmm_blob vb{};
        if (blob.empty() || (blob[0] != 'L' && !vmm) ||
            !(vmm ? from_hex(blob.substr(1), &vb, sizeof vb) : from_hex(blob.substr(1), &lb, sizeof lb)))
            return fail(status::bootstrap, "cuda: rank %d's segment handle is malformed", peer);
        const char *bus = vmm ? vb.bus_id : lb.bus_id;
        int pdev = -1;
        if (cudaDeviceGetByPCIBusId(&pdev, bus) != cudaSuccess) {
            cudaGetLastError();
            HGASI_DEBUG("mem", "rank %d's GPU %s is not visible here: staging through host memory", peer, bus);
            return static_cast<void *>(nullptr);
        }
        if (pdev != dev_) {
            int can = 0;
            CU_TRY(cudaDeviceCanAccessPeer(&can, dev_, pdev));
            if (!can) {
                HGASI_DEBUG("mem", "GPU %d has no peer access to GPU %d (rank %d): staging", dev_, pdev, peer);
                return static_cast<void *>(nullptr);
            }
            // Legacy mappings (and cudaMalloc'd memory in general) need peer access enabled for
            // this context; VMM mappings get their access from cuMemSetAccess alone.
            if (!vmm) {
                cudaError_t e = cudaDeviceEnablePeerAccess(pdev, 0);
                if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                    return cuda_fail("cudaDeviceEnablePeerAccess", e);
                cudaGetLastError();
            }
        }
        if (vmm) return import_vmm(peer, pdev, vb, n);
        void *p = nullptr;
        CU_TRY(cudaIpcOpenMemHandle(&p, lb.handle, cudaIpcMemLazyEnablePeerAccess));
        mapped_.push_back({static_cast<char *>(p), n, pdev});
        return p;
    }

    // Every peer has imported our fds: stop serving them and close them (the allocations stay,
    // held by our own handles and mappings).
    void segments_attached() override {
        fd_server_.reset();
        std::lock_guard<std::mutex> g(export_mu_);
        for (auto &m : vmm_own_)
            if (m.fd >= 0) {
                close(m.fd);
                m.fd = -1;
            }
    }

    bool owns(const void *p, size_t n) override { return classify(p, n) == mem_class::device; }

    // --- user allocations shared with same-node peers (large tagged messages) ---------------
    // Legacy allocations by a CUDA IPC handle; VMM allocations (cuMemCreate + cuMemMap) made
    // with the POSIX-fd handle type by their fd, which same-node peers fetch from this rank's
    // user fd server (fd_pass.hpp) and map; VMM memory made without that handle type,
    // stream-ordered pool memory and managed memory are not exported (the pool path). The handle
    // or fd of an allocation is kept, checked against the driver's buffer id each time (the id
    // changes when the address is freed and allocated again).
    bool export_user(const void *p, size_t n, user_export &e) override {
        select();
        const char *c = static_cast<const char *>(p);
        for (const auto *v : {&own_, &mapped_})
            for (const auto &m : *v)
                if (c >= m.base && c < m.base + m.size) return false;  // hgas's heaps: the one-sided path
        const udrv &d = user_driver();
        if (!d.range || !d.attr) return false;
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        if (attr.type != cudaMemoryTypeDevice || attr.device != dev_) return false;
        CUdeviceptr base = 0;
        size_t size = 0;
        unsigned long long id = 0;
        const CUdeviceptr dp = reinterpret_cast<CUdeviceptr>(p);
        if (d.range(&base, &size, dp) != CUDA_SUCCESS || d.attr(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, dp) != CUDA_SUCCESS)
            return false;
        if (dp + n > base + size) return false;
        std::lock_guard<std::mutex> g(user_mu_);
        auto it = exported_.find(base);
        if (it == exported_.end() || it->second.size != size || it->second.id != id) {
            if (it != exported_.end()) {  // freed and made again: the old fd would show the old memory
                if (it->second.fd >= 0) close(it->second.fd);
                exported_.erase(it);
            }
            user_handle u{size, id, {}, -1, 0};
            if (cudaIpcGetMemHandle(&u.h, reinterpret_cast<void *>(base)) != cudaSuccess) {
                cudaGetLastError();  // VMM or pool memory: not exportable by an IPC handle
                u.fd = vmm::export_fd(base);
                if (u.fd < 0) return false;  // not VMM, or not shareable as an fd
                if (!user_fd_server_) {
                    auto srv = fdpass::server::start(fdpass::socket_name(job_id_, rank_, "cuda-user", fd_tag_),
                                                     [this](uint32_t key) { return user_fd(key); });
                    if (!srv.ok()) {
                        close(u.fd);
                        return false;
                    }
                    user_fd_server_ = std::move(*srv);
                }
                u.key = ++next_user_key_;
                trim_user_fds();
            }
            it = exported_.insert_or_assign(base, u).first;
        }
        e = user_export{};
        e.base = base;
        e.size = size;
        e.buffer_id = id;
        e.offset = dp - base;
        e.kind = static_cast<uint8_t>(kind::cuda);
        std::snprintf(e.bus_id, sizeof e.bus_id, "%s", bus_id_.c_str());
        if (it->second.fd >= 0) {
            vmm_handle vh;
            vh.key = it->second.key;
            std::snprintf(vh.sock_tag, sizeof vh.sock_tag, "%s", fd_tag_.c_str());
            e.handle_len = sizeof vh;
            std::memcpy(e.handle, &vh, sizeof vh);
            return true;
        }
        static_assert(sizeof(cudaIpcMemHandle_t) <= sizeof e.handle && sizeof(cudaIpcMemHandle_t) != sizeof(vmm_handle));
        e.handle_len = sizeof(cudaIpcMemHandle_t);
        std::memcpy(e.handle, &it->second.h, sizeof(cudaIpcMemHandle_t));
        return true;
    }

    // The user fd server's provider (its own thread).
    int user_fd(uint32_t key) {
        std::lock_guard<std::mutex> g(user_mu_);
        for (const auto &[b, u] : exported_)
            if (u.fd >= 0 && u.key == key) return u.fd;
        return -1;
    }
    // An exported fd keeps its allocation's memory alive after the program frees it, so at
    // most user_fd_max are kept (the oldest closed first; a peer that asks for a closed one
    // gets no fd and takes the pinned pool). Under user_mu_.
    void trim_user_fds() {
        constexpr size_t user_fd_max = 64;
        size_t n = 0;
        for (const auto &[b, u] : exported_) n += u.fd >= 0;
        while (n-- >= user_fd_max) {
            auto oldest = exported_.end();
            for (auto i = exported_.begin(); i != exported_.end(); ++i)
                if (i->second.fd >= 0 && (oldest == exported_.end() || i->second.key < oldest->second.key)) oldest = i;
            close(oldest->second.fd);
            exported_.erase(oldest);
        }
    }

    result<void *> import_user(int peer, const user_export &e) override {
        select();
        vmm_handle vh;
        std::memcpy(&vh, e.handle, sizeof vh);
        const bool by_fd = vh.valid(e.handle_len);
        if (!by_fd && e.handle_len != sizeof(cudaIpcMemHandle_t))
            return fail(status::invalid_arg, "cuda: rank %d's buffer handle is malformed", peer);
        char bus[sizeof e.bus_id + 1] = {};
        std::memcpy(bus, e.bus_id, sizeof e.bus_id);
        int pdev = -1;
        if (cudaDeviceGetByPCIBusId(&pdev, bus) != cudaSuccess) {
            cudaGetLastError();
            return static_cast<void *>(nullptr);  // that GPU is not visible here
        }
        if (pdev != dev_) {
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, dev_, pdev) != cudaSuccess || !can) {
                cudaGetLastError();
                return static_cast<void *>(nullptr);
            }
        }
        if (by_fd) return import_user_fd(peer, pdev, e, vh);
        cudaIpcMemHandle_t h;
        std::memcpy(&h, e.handle, sizeof h);
        void *p = nullptr;
        cudaError_t err = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
        if (err != cudaSuccess) {
            cudaGetLastError();
            HGASI_DEBUG("mem", "cuda: cannot map rank %d's buffer (%s): staging", peer, cudaGetErrorString(err));
            return static_cast<void *>(nullptr);
        }
        return p;
    }

    // A peer's VMM allocation: its fd from the peer's user fd server, imported, mapped and
    // made accessible to this GPU. Anything that fails leaves the message to the pinned pool.
    result<void *> import_user_fd(int peer, int pdev, const user_export &e, const vmm_handle &vh) {
        std::string why;
        if (!vmm::supported(dev_, why)) {
            HGASI_DEBUG("mem", "cuda: rank %d's buffer is VMM memory but %s: staging", peer, why.c_str());
            return static_cast<void *>(nullptr);
        }
        const std::string tag(vh.sock_tag, strnlen(vh.sock_tag, sizeof vh.sock_tag));
        auto fd = fdpass::fetch(fdpass::socket_name(job_id_, peer, "cuda-user", tag), vh.key, ipc_timeout_);
        if (!fd.ok()) {
            HGASI_DEBUG("mem", "cuda: no fd for rank %d's VMM buffer: staging", peer);
            return static_cast<void *>(nullptr);
        }
        auto m = vmm::import(*fd, e.size, pdev, dev_);
        if (!m.ok()) {
            HGASI_DEBUG("mem", "cuda: cannot map rank %d's VMM buffer: staging", peer);
            return static_cast<void *>(nullptr);
        }
        void *p = reinterpret_cast<void *>(m->va);
        std::lock_guard<std::mutex> g(user_mu_);
        vmm_user_mapped_[p] = *m;
        return p;
    }

    void close_user(void *p) override {
        select();
        {
            std::lock_guard<std::mutex> g(user_mu_);
            auto it = vmm_user_mapped_.find(p);
            if (it != vmm_user_mapped_.end()) {
                agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { vmm::release(it->second); });
                vmm_user_mapped_.erase(it);
                return;
            }
        }
        if (agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { return cudaIpcCloseMemHandle(p); }) != cudaSuccess)
            cudaGetLastError();
    }

    result<void *> alloc_user_vmm(size_t n, void *, bool exportable) override {
        select();
        HGAS_TRY_ASSIGN(vmm::mapping m, vmm::allocate_user(dev_, n, exportable));
        std::lock_guard<std::mutex> g(user_mu_);
        vmm_user_own_[m.va] = m;
        return reinterpret_cast<void *>(m.va);
    }

    result<void *> alloc_user(size_t n, void *) override {
        select();
        void *p = nullptr;
        CU_TRY(cudaMalloc(&p, n ? n : 1));
        return p;
    }
    status free_user(void *p) override {
        select();
        {
            std::lock_guard<std::mutex> g(user_mu_);
            auto e = exported_.find(reinterpret_cast<CUdeviceptr>(p));
            if (e != exported_.end()) {
                if (e->second.fd >= 0) close(e->second.fd);
                exported_.erase(e);
            }
            auto it = vmm_user_own_.find(reinterpret_cast<CUdeviceptr>(p));
            if (it != vmm_user_own_.end()) {
                agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { vmm::release(it->second); });
                vmm_user_own_.erase(it);
                return status::ok;
            }
        }
        CU_TRY(agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { return cudaFree(p); }));
        return status::ok;
    }

    result<ticket> mark(int stream) override {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        std::lock_guard<std::mutex> g(stream_mu_);
        return record(stream);
    }

    result<ticket> copy_async(void *dst, const void *src, size_t n, int stream, bool track) override {
        return copy(dst, src, n, stream, track, false);
    }
    // No event: cudaEventRecord and the queries of it added 0.5-1 us to a blocking copy-engine
    // copy (H200, 512 KiB-2 MiB within the GPU: 11.3-12.5 us against 10.8-12.1 with the
    // stream's own query, cudaMemcpyAsync + cudaStreamSynchronize 11.5-11.7 in the same run).
    result<ticket> copy_waited(void *dst, const void *src, size_t n, int stream) override {
        return copy(dst, src, n, stream, true, true);
    }
    // copy_async, or (waited) one whose copy-engine ticket is done when the stream has drained.
    result<ticket> copy(void *dst, const void *src, size_t n, int stream, bool track, bool waited) {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        // Small copies whose ends the GPU's threads reach go to the agent: one PCIe round trip
        // and a posted write instead of a copy-engine submission and an event (H100, 8 B: 4.3 us
        // against 11.4 us within the GPU, 4.5 against 8.4 to host memory; docs/paths.md). On a
        // GPU that other processes share, the agent runs only in this process's time slices
        // while theirs run kernels (copy engines are scheduled apart from kernels), so there it
        // serves only copies within the GPU's memory, as it always did.
        bool src_unregistered = false;  // the driver's answer for src, asked once
        if (n <= agent_max_ && ring_ &&
            (shared_ ? on_this_gpu(dst, n) && on_this_gpu(src, n)
                     : agent_reaches(dst, n) && agent_reaches(src, n, &src_unregistered)))
            return agent_copy(dst, src, n);
        // Within this GPU's memory the agent's block beats a copy-engine submission for larger
        // copies too (H100, 2 ranks: 128 KiB in 7.2 us against 13.0; 512 KiB 15.2 against 14.3).
        if (n > agent_max_ && n <= agent_gpu_max_ && ring_ && on_this_gpu(dst, n) && on_this_gpu(src, n))
            return agent_copy(dst, src, n);
        // A small copy from pageable memory into GPU memory the agent serves: the bytes go into
        // the agent's ring (this thread copies them), so the driver stages nothing and a shared
        // GPU's copy costs about what one within its memory does (H100, 2 ranks on the GPU, 8 B
        // to 2 KiB: 6.4-6.6 us against 6.7-9.7 for cudaMemcpyAsync from pinned memory and
        // 8.9-10.2 through the copy engines before). Only pageable sources: this thread reads
        // the bytes now, and pinned ones may still be written by work queued on a stream (a
        // pool chunk a kernel packs), which the copy engines would wait for. Only tracked
        // copies: an untracked one is followed by work on its stream that reads what it wrote
        // (a layout's block table, then the gather kernel), and the agent is on no such stream.
        if (track && n <= agent::inline_max && n <= agent_max_ && ring_ &&
            (shared_ ? on_this_gpu(dst, n) : agent_reaches(dst, n)) &&
            (src_unregistered || classify(src, n) == mem_class::pageable))
            return agent_copy(dst, src, n, true);
        std::lock_guard<std::mutex> g(stream_mu_);  // the rank's thread and its helper share streams
        HGAS_TRY(flush_waited());
        stream_state &st = streams_[stream];
        if (n > sm_copy_min_ && n < sm_copy_max_ && classify(dst, n) == mem_class::device &&
            classify(src, n) == mem_class::device) {
            // One block per 64 KiB, at most two per SM: enough loads in flight for NVLink.
            const int blocks = static_cast<int>(std::min<size_t>((n + 65535) / 65536, 2 * static_cast<size_t>(sm_count_)));
            void *before = trace_begin(st.s);
            CU_TRY(launch_sm_copy(dst, src, n, blocks, st.s));
            trace_end(before, st.s, trace::op_kernel, n);
            if (waited) return waited_ticket(stream);
            return track ? record(stream) : result<ticket>(ticket{stream, 0});
        }
        // A host end that runs across the edge of a registration (hgas_register, the cache):
        // the driver takes the whole range as page-locked from its first byte and refuses it,
        // so such a copy goes in pieces, each inside one registration or outside all of them.
        void *before = trace_begin(st.s);
        for (size_t pos = 0; pos < n;) {
            const size_t len = std::min(uniform_run(static_cast<const char *>(src) + pos, n - pos),
                                        uniform_run(static_cast<char *>(dst) + pos, n - pos));
            CU_TRY(cudaMemcpyAsync(static_cast<char *>(dst) + pos, static_cast<const char *>(src) + pos, len,
                                   cudaMemcpyDefault, st.s));
            pos += len;
        }
        trace_end(before, st.s, trace::op_copy, n);
        if (waited) return waited_ticket(stream);
        return track ? record(stream) : result<ticket>(ticket{stream, 0});
    }

    result<ticket> gather(char *packed, char *buf, const blocks &b, bool unpack, int stream) override {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        std::lock_guard<std::mutex> g(stream_mu_);
        HGAS_TRY(flush_waited());
        void *before = trace_begin(streams_[stream].s);
        CU_TRY(launch_gather(packed, buf, b.base, b.n, b.s, b.block, b.table, b.count, unpack, sm_count_,
                             streams_[stream].s));
        // Bytes of the strided shape (a table's sizes live in device memory: 0 then).
        trace_end(before, streams_[stream].s, trace::op_pack, b.table ? 0 : b.n[0] * b.n[1] * b.n[2] * b.block);
        return record(stream);
    }

    // The reduction kernel on the stream. An `in` in host memory is read by the kernel where
    // the GPU maps it (the registered heaps, pinned memory), else first copied into a device
    // buffer of the stream's own (in stream order, so the next call may reuse it).
    result<ticket> reduce(void *inout, const void *in, size_t count, int type, int op, bool rev, int stream) override {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        const size_t bytes = count * reduce_dtype_size(type);
        if (!bytes) return ticket{stream, 0};
        if (classify(inout, bytes) != mem_class::device)
            return fail(status::invalid_pointer, "cuda: reduce: %p (+%zu) is not GPU memory", inout, bytes);
        const void *src = in;
        const mem_class c = classify(in, bytes);
        if (c != mem_class::device) {
            void *mapped = nullptr;
            src = nullptr;
            // The kernel reads a pinned operand through its mapping only when every page of it is
            // registered (one registration hgas knows, or the driver's answer page by page up to
            // 64 pages); a range with an unregistered page would end the context.
            // Asked only of pinned operands (a pageable one is staged anyway).
            static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
            const bool whole = c == mem_class::pinned &&
                               ((regs_ && regs_->find(in, bytes)) ||
                                (bytes <= 64 * page && host_pages_mapped(static_cast<const char *>(in), bytes)));
            if (whole && cudaHostGetDevicePointer(&mapped, const_cast<void *>(in), 0) == cudaSuccess)
                src = mapped;
            else
                cudaGetLastError();  // not mapped: staged below
        }
        std::lock_guard<std::mutex> g(stream_mu_);
        HGAS_TRY(flush_waited());
        stream_state &st = streams_[stream];
        void *before = trace_begin(st.s);
        if (!src) {
            if (reduce_stage_.size() < streams_.size()) reduce_stage_.resize(streams_.size());
            auto &b = reduce_stage_[stream];
            if (b.size < bytes) {
                if (b.p) {
                    CU_TRY(cudaStreamSynchronize(st.s));  // the old buffer may still be read
                    agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { return cudaFree(b.p); });
                    b = {};
                }
                CU_TRY(cudaMalloc(&b.p, bytes));
                b.size = bytes;
            }
            // In pieces inside one registration or outside all (as copy_async: the driver refuses
            // a host range that runs across a registration's edge).
            for (size_t pos = 0; pos < bytes;) {
                const size_t len = uniform_run(static_cast<const char *>(in) + pos, bytes - pos);
                CU_TRY(cudaMemcpyAsync(static_cast<char *>(b.p) + pos, static_cast<const char *>(in) + pos, len,
                                       cudaMemcpyDefault, st.s));
                pos += len;
            }
            src = b.p;
        }
        CU_TRY(launch_reduce(inout, src, count, type, op, rev, sm_count_, st.s));
        trace_end(before, st.s, trace::op_reduce, bytes);
        return record(stream);
    }

    bool team_kernels() const override { return team_kernels_; }

    // The one-kernel collectives (cuda_team_reduce.cu): blocking on an internal stream, or on
    // the user's stream. The caller (coll/direct.cpp) passes pointers this GPU maps and at most
    // team_kernel_max_bytes of dst.
    result<ticket> team_allreduce(const team_reduce &a, int stream, bool user_stream, void *user) override {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        if (!team_kernels_)
            return fail(status::unsupported, "cuda: a team kernel on a GPU time-sliced between processes");
        const size_t vbytes = a.count * reduce_dtype_size(a.type);
        const bool blocks = a.what == team_fcollect_op || a.what == team_alltoall_op;  // n blocks of vbytes out
        const size_t bytes = blocks ? vbytes * static_cast<size_t>(a.n) : vbytes;
        if (a.n < 1 || a.n > team_kernel_members || a.me < 0 || a.me >= a.n || bytes > team_kernel_max_bytes ||
            a.slot < 0 || a.slot >= team_kernel_slots || a.root < 0 || a.root >= a.n || a.blocking == user_stream)
            return fail(status::internal, "cuda: team_allreduce: %d members (me %d), slot %d, %zu bytes: out of range",
                        a.n, a.me, a.slot, bytes);
        if (a.in_process && a.blocking) return team_blocking_group(a, stream);
        return team_flags(a, stream, user_stream, user);
    }

    // A blocking call of rank threads meets on the host (team_group) where it can.
    result<ticket> team_blocking_group(const team_reduce &a, int stream) {
        team_group_call c;
        c.what = a.what;
        c.root = a.root;
        c.n = a.n;
        c.me = a.me;
        c.slot = a.slot;
        c.count = a.count;
        c.type = a.type;
        c.op = a.op;
        c.in = a.in[a.me];
        c.out = a.dst;
        c.usable = true;  // the kernel's vectors: this GPU's heaps
        c.key = a.group_key;
        c.timeout_s = static_cast<double>(a.timeout_ns) / 1e9;
        c.name = "a blocking collective of rank threads";
        c.progress = a.progress;
        HGAS_TRY_ASSIGN(group_ran ran, team_group(c, stream, false, nullptr));
        if (ran == group_ran::other_paths) return team_flags(a, stream, false, nullptr);
        std::lock_guard<std::mutex> g(stream_mu_);
        return record(stream);
    }

    // The members of the team are rank threads of this process: they meet on the host
    // (team_meet.hpp) and, where every one is on this GPU with device vectors, the last to
    // arrive issues the call for all (gpu.hpp, team_group_call).
    result<group_ran> team_group(const team_group_call &c, int stream, bool user_stream, void *user) override {
        select();
        if (stream < 0 || stream >= streams()) stream = 0;
        // A root out of range is the caller's argument error (c.valid is false, so nothing runs).
        if (c.n < 2 || c.n > team_group_members || c.me < 0 || c.me >= c.n || c.slot < 0 ||
            c.slot >= team_kernel_slots || (c.valid && (c.root < 0 || c.root >= c.n)))
            return fail(status::internal, "cuda: team_group: %d members (me %d), slot %d, root %d: out of range", c.n,
                        c.me, c.slot, c.root);
        cudaStream_t s = user_stream ? static_cast<cudaStream_t>(user) : streams_[stream].s;
        team_meet::member m;
        m.in = c.in;
        m.out = c.out;
        m.stream = s;
        m.gpu = dev_;
        m.args.what = c.what;
        m.args.root = c.root;
        m.args.type = c.type;
        m.args.op = c.op;
        m.args.count = c.count;
        m.usable = c.usable && c.valid;
        status pre = status::ok;
        std::string pre_msg;
        {
            // The call's place on this member's stream, for the last member's stream to wait for.
            std::lock_guard<std::mutex> g(stream_mu_);
            cudaEvent_t &ready = team_ready_[static_cast<size_t>(c.slot)][user_stream ? 0 : 1];
            cudaError_t e = ready ? cudaSuccess : cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
            if (e == cudaSuccess) e = cudaEventRecord(ready, s);
            if (e == cudaSuccess) {
                m.ready = ready;
            } else {
                pre = cuda_fail("cudaEventRecord (a collective's place on its stream)", e);
                pre_msg = last_error();
                m.broken = true;  // the others learn at the meeting, not after HGAS_TIMEOUT
            }
        }
        auto launch = [&](const std::vector<team_meet::member> &all) -> result<void *> {
            return team_group_launch(c, all, s);
        };
        HGAS_TRY_ASSIGN(team_meet::outcome o,
                        team_meet::process().arrive(c.key, c.n, c.me, m, c.timeout_s, launch, c.name, c.progress));
        if (o.broken >= 0 || o.mismatch >= 0 || !o.done) team_meet::process().leave(c.key);
        if (pre != status::ok) return fail(pre, "%s", pre_msg.c_str());
        if (o.broken >= 0)
            return fail(status::internal, "%s: member %d of the team could not take part (a CUDA call failed there; "
                        "its own call says which)", c.name, o.broken);
        if (!c.valid) return group_ran::other_paths;  // the caller returns this member's own error
        if (o.mismatch >= 0) {  // nothing ran; reported as the kernels would (stream-ordered: at the sync)
            if (!user_stream)
                return fail(status::invalid_arg,
                            "%s: members 0 and %d of the team called the collective with other "
                            "arguments than each other (another collective, count, type, op or root): every member "
                            "must pass the same",
                            c.name, o.mismatch);
            const unsigned w = static_cast<unsigned>(o.mismatch + 1) | static_cast<unsigned>(team_mismatch) |
                               static_cast<unsigned>(c.slot) << team_report_slot_shift;
            unsigned zero = 0;
            __atomic_compare_exchange_n(team_timed_out_ + report_stream, &zero, w, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE);
            return group_ran::mismatch;
        }
        if (!o.done) return group_ran::other_paths;  // not one GPU, not device vectors, or a member's bad argument
        cudaError_t e = cudaSuccess;
        if (!o.last) {
            std::lock_guard<std::mutex> g(stream_mu_);
            const status f = flush_waited();
            e = f == status::ok ? cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(o.done), 0) : cudaErrorUnknown;
        }
        // The last to leave has seen every other member's stream take its wait: the event can go.
        if (team_meet::process().leave(c.key)) cudaEventDestroy(static_cast<cudaEvent_t>(o.done));
        if (e != cudaSuccess) return cuda_fail("cudaStreamWaitEvent (for a collective of rank threads)", e);
        return group_ran::ran;
    }

    // The last member's part (team_meet's launcher): nullptr where the group cannot run here.
    result<void *> team_group_launch(const team_group_call &c, const std::vector<team_meet::member> &all, cudaStream_t s) {
        team_group_args k;
        k.what = c.what;
        k.root = c.root;
        k.n = c.n;
        k.count = c.count;
        k.type = c.type;
        k.op = c.op;
        for (int q = 0; q < c.n; ++q) {
            const team_meet::member &x = all[static_cast<size_t>(q)];
            if (x.gpu != dev_ || !x.usable) return static_cast<void *>(nullptr);
            k.in[q] = c.what == team_broadcast_op && q != c.root ? nullptr : x.in;
            k.out[q] = c.what == team_reduce_op && q != c.root ? nullptr : x.out;
        }
        if (c.what != team_barrier_op) {
            if (!team_group_fits(k)) return static_cast<void *>(nullptr);
            // Device memory of this GPU (or managed): another GPU's would need peer access.
            for (int q = 0; q < c.n; ++q)
                for (const void *p : {k.in[q], static_cast<const void *>(k.out[q])}) {
                    if (!p) continue;
                    cudaPointerAttributes at{};
                    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
                        cudaGetLastError();
                        return static_cast<void *>(nullptr);
                    }
                    if (at.type != cudaMemoryTypeManaged && (at.type != cudaMemoryTypeDevice || at.device != dev_))
                        return static_cast<void *>(nullptr);
                }
        }
        select();
        std::lock_guard<std::mutex> g(stream_mu_);
        HGAS_TRY(flush_waited());
        cudaEvent_t done = nullptr;
        CU_TRY(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        auto failed = [&](const char *call, cudaError_t e) {
            cudaEventDestroy(done);
            return cuda_fail(call, e);
        };
        for (int q = 0; q < c.n; ++q)
            if (q != c.me)
                if (cudaError_t e = cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(all[static_cast<size_t>(q)].ready), 0);
                    e != cudaSuccess)
                    return failed("cudaStreamWaitEvent (for a member's stream)", e);
        if (c.what != team_barrier_op) {
            const size_t es = reduce_dtype_size(c.type);
            void *before = trace_begin(s);
            if (cudaError_t e = launch_team_group(k, sm_count_ * 4, s); e != cudaSuccess)
                return failed("the collective kernel of rank threads", e);
            trace_end(before, s, trace::op_reduce, c.count * es);
        }
        if (cudaError_t e = cudaEventRecord(done, s); e != cudaSuccess) return failed("cudaEventRecord", e);
        return static_cast<void *>(done);
    }

    // One kernel per member, each waiting inside the GPU for the others' (cuda_team_reduce.cu).
    result<ticket> team_flags(const team_reduce &a, int stream, bool user_stream, void *user) {
        const size_t vbytes = a.count * reduce_dtype_size(a.type);
        const bool blocks = a.what == team_fcollect_op || a.what == team_alltoall_op;  // n blocks of vbytes out
        const size_t bytes = blocks ? vbytes * static_cast<size_t>(a.n) : vbytes;
        std::lock_guard<std::mutex> g(stream_mu_);
        HGAS_TRY(flush_waited());
        cudaStream_t s = user_stream ? static_cast<cudaStream_t>(user) : streams_[stream].s;
        unsigned *report = team_timed_out_ + (a.blocking ? report_blocking : report_stream);
        void *before = trace_begin(s);
        if (a.blocking) {  // on an internal stream, one at a time (the caller waits): no ordering to add
            CU_TRY(launch_team_allreduce(a, report, s));
            trace_end(before, s, trace::op_reduce, bytes);
            return record(stream);
        }
        // The team's stream-ordered kernels run in call order on this GPU: one on another stream
        // than the last waits for the last one's event. Streams are told apart by their ids,
        // which CUDA never reuses (a destroyed stream's handle may come back for a new one);
        // a wait on every call cost about 1.5 us a call on an H100.
        team_order &o = team_order_[static_cast<size_t>(a.slot)];
        if (!o.ev) CU_TRY(cudaEventCreateWithFlags(&o.ev, cudaEventDisableTiming));
        unsigned long long id = 0;
        const bool known = cudaStreamGetId(s, &id) == cudaSuccess;
        if (!known) cudaGetLastError();
        if (o.used && (!known || id != o.stream_id)) CU_TRY(cudaStreamWaitEvent(s, o.ev, 0));
        if (a.copy_src && a.copy_src != a.copy_to)
            CU_TRY(cudaMemcpyAsync(a.copy_to, a.copy_src, a.copy_bytes, cudaMemcpyDefault, s));
        CU_TRY(launch_team_allreduce(a, report, s));
        trace_end(before, s, trace::op_reduce, bytes);
        CU_TRY(cudaEventRecord(o.ev, s));
        o.used = true;
        o.stream_id = known ? id : ~0ull;
        return ticket{};
    }
    status team_quiesce(int slot, double timeout_s) override {
        if (slot < 0 || slot >= team_kernel_slots) return status::ok;
        team_order &o = team_order_[static_cast<size_t>(slot)];
        if (!o.used) return status::ok;
        select();
        // Polled with a deadline: the stream may wait for work of this rank's that never comes.
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
        for (;;) {
            const cudaError_t e = cudaEventQuery(o.ev);
            if (e == cudaSuccess) break;
            if (e != cudaErrorNotReady) CU_TRY(e);
            if (std::chrono::steady_clock::now() > end)
                return fail(status::timeout, "cuda: the team's last allreduce kernel did not finish within HGAS_TIMEOUT "
                            "(%.0f s): its stream has not reached it", timeout_s);
            std::this_thread::yield();
        }
        o.used = false;
        return status::ok;
    }
    int team_kernel_timed_out(int which) override {
        return static_cast<int>(__atomic_exchange_n(team_timed_out_ + (which == report_stream), 0u, __ATOMIC_ACQ_REL));
    }

    // The longest prefix of [p, p+n) that lies inside one registered user range or outside all.
    size_t uniform_run(const void *p, size_t n) {
        reg_cache::entry e;
        if (!regs_ || !regs_->overlaps(p, n, &e)) return n;
        const auto a = reinterpret_cast<uintptr_t>(p);
        if (e.base <= a) return std::min<size_t>(n, e.base + e.size - a);  // inside e: up to its end
        return e.base - a;                                                // before e: up to its start
    }

    // Traced, an operation on an internal stream is a span on the stream's track (trace_streams.hpp);
    // the caller holds stream_mu_. Copies that the agent serves run in its kernel: no span.
    void *trace_begin(cudaStream_t s) {
        if (__builtin_expect(!trace::on(), 1)) return nullptr;
        if (!tracer_) tracer_ = std::make_unique<trace::stream_tracer>(trace_events, "cuda stream (hgas internal)");
        return tracer_->begin(s);
    }
    void trace_end(void *before, cudaStream_t s, trace::stream_op op, uint64_t bytes) {
        if (__builtin_expect(before == nullptr, 1)) return;
        trace::fields f;
        f.bytes = bytes;
        f.op = op;
        const char *name = trace::current();
        tracer_->end(before, s, name ? name : "copy", f);
    }

    result<ticket> record(int stream) {
        stream_state &st = streams_[stream];
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
        if (t.stream == agent_stream_id) return agent_test(t.seq);
        std::lock_guard<std::mutex> g(stream_mu_);
        stream_state &st = streams_[t.stream];
        if (t.seq & waited_bit) {
            const uint64_t id = t.seq & ~waited_bit;
            if (st.waited == id) {  // still last on its stream: done when the stream has drained
                const cudaError_t e = cudaStreamQuery(st.s);
                if (e == cudaErrorNotReady) return false;
                if (e != cudaSuccess) return cuda_fail("cudaStreamQuery (an earlier copy failed)", e);
                st.waited = 0;
                return true;
            }
            for (auto it = st.flushed.begin(); it != st.flushed.end(); ++it)
                if (it->first == id) {
                    HGAS_TRY_ASSIGN(bool done, test_seq(st, it->second));
                    if (done) st.flushed.erase(it);
                    return done;
                }
            return true;  // found done before
        }
        return test_seq(st, t.seq);
    }

    // Whether the stream's event `seq` has completed (caller holds stream_mu_).
    result<bool> test_seq(stream_state &st, uint64_t seq) {
        while (st.completed < seq) {
            cudaError_t e = cudaEventQuery(st.ev[(st.completed + 1) % events_per_stream]);
            if (e == cudaErrorNotReady) return false;
            if (e != cudaSuccess) return cuda_fail("cudaEventQuery (an earlier copy failed)", e);
            ++st.completed;
        }
        return true;
    }

    std::string ticket_state(ticket t) override {
        char b[512];
        if (t.stream == agent_stream_id && ring_) {
            // The first descriptor not done, as the host wrote it: after a fault, what the agent
            // was running (a payload slot lies inside the ring).
            const uint64_t done = __atomic_load_n(&ring_->done, __ATOMIC_ACQUIRE), next = done + 1;
            const agent::desc &d = ring_->d[next % agent::ring_slots];
            const uint32_t op = d.w[1].a & 0xffffu;
            std::snprintf(b, sizeof b, "the copy agent of GPU %d: waiting for descriptor %llu; done %llu, posted %llu, "
                          "agent running %llu, its last exit at %llu, agent stream %s; descriptor %llu (tag %u): %s "
                          "%u bytes to %p from %p (ring %p, +%zu)", dev_,
                          (unsigned long long)t.seq, (unsigned long long)done,
                          (unsigned long long)agent_seq_, (unsigned long long)__atomic_load_n(&ring_->alive, __ATOMIC_ACQUIRE),
                          (unsigned long long)__atomic_load_n(&ring_->exit_seq, __ATOMIC_ACQUIRE),
                          stream_word(cudaStreamQuery(agent_stream_)), (unsigned long long)next, d.w[0].tag,
                          op == agent::op_copy ? "copy" : op == agent::op_copy_inline ? "inline copy"
                          : op == agent::op_amo ? "atomic" : "unknown op",
                          d.w[0].a, reinterpret_cast<void *>(d.w[0].b),
                          op == agent::op_copy ? reinterpret_cast<void *>(d.w[1].b) : nullptr,
                          static_cast<void *>(ring_), sizeof(agent::ring));
            return b;
        }
        if (t.stream < 0 || static_cast<size_t>(t.stream) >= streams_.size()) return {};
        std::lock_guard<std::mutex> g(stream_mu_);
        const stream_state &st = streams_[t.stream];
        const cudaError_t e = cudaStreamQuery(st.s);
        if (t.seq & waited_bit)
            std::snprintf(b, sizeof b,
                          "GPU %d stream %d: waiting for blocking copy %llu (%s); %llu recorded, %llu "
                          "completed; the stream is %s",
                          dev_, t.stream, (unsigned long long)(t.seq & ~waited_bit),
                          st.waited == (t.seq & ~waited_bit) ? "done when the stream has drained" : "by its event",
                          (unsigned long long)st.recorded, (unsigned long long)st.completed, stream_word(e));
        else
            std::snprintf(b, sizeof b,
                          "GPU %d stream %d: waiting for copy %llu; %llu recorded, %llu completed; the "
                          "stream is %s",
                          dev_, t.stream, (unsigned long long)t.seq, (unsigned long long)st.recorded,
                          (unsigned long long)st.completed, stream_word(e));
        return b;
    }

    result<uint64_t> amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare) override {
        select();
        if (ring_) {
            std::unique_lock<std::mutex> lk(agent_mu_);
            std::optional<agent_gate::pass> gp(agent_gate::process());
            HGAS_TRY_ASSIGN(uint64_t s, agent_post(agent::op_amo, p, nullptr, width, operand, compare,
                                                   static_cast<uint32_t>(op)));
            gp.reset();
            lk.unlock();
            const deadline dl(30);
            for (;;) {
                HGAS_TRY_ASSIGN(bool done, agent_test(s));
                if (done) break;
                if (dl.expired()) return fail(status::timeout, "cuda: the copy agent did not answer an atomic in 30 s");
            }
            return __atomic_load_n(&ring_->results[s % agent::ring_slots], __ATOMIC_ACQUIRE);
        }
        std::lock_guard<std::mutex> g(agent_mu_);  // amo_result_ is shared by the threads
        ticket t{};
        {
            // Launched and its event recorded under the stream lock, so the wait below is for
            // this kernel and what came before it, not for work another thread puts on stream
            // 0 afterwards (a team kernel waiting for its peers, say).
            std::lock_guard<std::mutex> sg(stream_mu_);
            HGAS_TRY(flush_waited());
            CU_TRY(launch_amo(p, op, width, operand, compare, amo_result_, streams_[0].s));
            HGAS_TRY_ASSIGN(ticket r, record(0));
            t = r;
        }
        const deadline dl(30);
        for (;;) {
            HGAS_TRY_ASSIGN(bool done, test(t));
            if (done) break;
            if (dl.expired())
                return fail(status::timeout,
                            "cuda: the atomic kernel did not finish in 30 s (it stays queued: the "
                            "atomic may still take effect)");
            std::this_thread::yield();  // the rank's other threads take stream_mu_ too
        }
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
        pinned_.push_back({static_cast<char *>(p), n, -1});
        return p;
    }
    void free_pinned(void *p) override {
        for (size_t i = 0; i < pinned_.size(); ++i)
            if (pinned_[i].base == p) pinned_.erase(pinned_.begin() + static_cast<long>(i));
        agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { return cudaFreeHost(p); });
    }
    // hgas_register: mapped too, so that kernels may use the range directly (with unified
    // addressing the device pointer of registered memory is the host pointer).
    // Page-locking is the process's, registrations are the rank's: ranks that are threads of
    // one process may each register the same range (their own hgas_register, or their caches),
    // and the pages must stay locked until the last of them lets go; one rank's
    // cudaHostUnregister would otherwise unpin what another rank's copies still treat as pinned.
    result<bool> register_user(void *p, size_t n) override {
        select();
        user_pins &up = process_user_pins();
        std::lock_guard<std::mutex> g(up.m);
        if (auto it = up.refs.find(p); it != up.refs.end() && it->second.bytes == n) {
            ++it->second.ranks;  // another rank of this process locked exactly this range
            return true;
        }
        cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterPortable | cudaHostRegisterMapped);
        if (e == cudaErrorHostMemoryAlreadyRegistered) {  // the program registered it itself: keep that
            cudaGetLastError();
            return false;
        }
        if (e != cudaSuccess) {
            cudaGetLastError();
            return fail(status::invalid_arg, "hgas_register: cudaHostRegister of [%p, +%zu) failed: %s (%s)%s", p, n,
                        cudaGetErrorString(e), cudaGetErrorName(e),
                        e == cudaErrorInvalidValue ? " (read-only or unmapped pages?)" : "");
        }
        up.refs[p] = user_pin{n, 1};
        return true;
    }
    void unregister_user(void *p) override {
        select();
        user_pins &up = process_user_pins();
        {
            std::lock_guard<std::mutex> g(up.m);
            if (auto it = up.refs.find(p); it != up.refs.end() && it->second.ranks > 1) {
                --it->second.ranks;  // still registered by another rank of the process
                return;
            }
        }
        // The gate before up.m, never inside it: another rank's quiesced call (its registration
        // cache dropping entries) unregisters inside the closed gate and takes up.m there, so
        // closing the gate while holding up.m deadlocked two rank threads (seen on an H200:
        // test_register_cuda_threads hung until its 300 s limit).
        agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] {
            std::lock_guard<std::mutex> g(up.m);
            if (auto it = up.refs.find(p); it != up.refs.end()) {
                if (--it->second.ranks > 0) return;  // another rank registered it meanwhile
                up.refs.erase(it);
            }
            if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
        });
    }
    status register_host(void *p, size_t n) override {
        select();
        // Mapped: the copy agent's threads reach hgas's host heaps by their host pointers.
        cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterPortable | cudaHostRegisterMapped);
        if (e == cudaErrorHostMemoryAlreadyRegistered) {
            cudaGetLastError();
            return status::ok;
        }
        if (e != cudaSuccess) return cuda_fail("cudaHostRegister", e);
        pinned_.push_back({static_cast<char *>(p), n, -1});
        return status::ok;
    }
    void unregister_host(void *p) override {
        select();
        for (size_t i = 0; i < pinned_.size(); ++i)
            if (pinned_[i].base == p) pinned_.erase(pinned_.begin() + static_cast<long>(i));
        if (agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { return cudaHostUnregister(p); }) != cudaSuccess)
            cudaGetLastError();
    }

private:
    enum class mem_class { device, pinned, pageable };
    struct stage_buf {
        void *p = nullptr;
        size_t size = 0;
    };
    std::vector<stage_buf> reduce_stage_;  // per stream: host operands the GPU cannot map
    static constexpr int agent_stream_id = -1;
    // The seq of copy_waited's tickets: this bit and the copy's id (stream_state::waited).
    static constexpr uint64_t waited_bit = uint64_t(1) << 63;
    uint64_t waited_ids_ = 0;

    // The ticket of a copy copy_waited just put on `stream` (caller holds stream_mu_).
    ticket waited_ticket(int stream) {
        streams_[stream].waited = ++waited_ids_;
        return ticket{stream, waited_bit | waited_ids_};
    }
    // Before more work goes on an internal stream: a waited copy still last on its stream gets
    // an event now, so that its ticket waits for it alone -- not for a collective's kernel that
    // another thread of the rank puts behind it, which may wait for this thread's next step
    // (caller holds stream_mu_).
    status flush_waited() {
        for (size_t i = 0; i < streams_.size(); ++i) {
            stream_state &st = streams_[i];
            if (!st.waited) continue;
            HGAS_TRY_ASSIGN(ticket t, record(static_cast<int>(i)));
            st.flushed.emplace_back(st.waited, t.seq);
            st.waited = 0;
        }
        return status::ok;
    }

    cuda_device() = default;

    // Where a pointer points, as the GPU sees it: hgas's segments and registrations first
    // (no driver call), then the driver's view of the user's pointer.
    mem_class classify(const void *p, size_t n) {
        const char *c = static_cast<const char *>(p);
        for (const auto *v : {&own_, &mapped_})
            for (const auto &m : *v)
                if (c >= m.base && c < m.base + m.size)
                    return n <= static_cast<size_t>(m.base + m.size - c) ? mem_class::device : mem_class::pageable;
        for (const auto &m : pinned_)
            if (c >= m.base && c < m.base + m.size && n <= static_cast<size_t>(m.base + m.size - c))
                return mem_class::pinned;
        // The user's registrations (hgas_register): pinned, known without a driver call.
        if (regs_ && regs_->find(p, n)) return mem_class::pinned;
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
            cudaGetLastError();
            return mem_class::pageable;
        }
        if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) return mem_class::device;
        // The driver answers for one address: a range that runs past the end of its
        // registration is pinned only in part (its last byte tells; a hole between two
        // registrations inside one range is not looked for here: agent_reaches looks at every page).
        if (attr.type == cudaMemoryTypeHost)
            return n <= 1 || host_page_mapped(c + n - 1, false) ? mem_class::pinned : mem_class::pageable;
        return mem_class::pageable;
    }

    // Whether the page of p is page-locked (and, with at_p, the GPU reaches it at p itself).
    bool host_page_mapped(const char *p, bool at_p = true) {
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return attr.type == cudaMemoryTypeHost && (!at_p || attr.devicePointer == p);
    }

    // Whether every page of [p, p + n) after p's own is registered and mapped as well. A range
    // may start in a registered page and run into one that is not: a small vector in a heap
    // page that the registration cache holds, ending in the next page. The agent, which reads
    // and writes host memory through the mapping, then touched an unmapped page: an illegal
    // memory access that ended the context (seen on an H200, a 128-byte put in test_kinds). At
    // most agent_max / page size + 1 driver calls, and none for a range inside one page.
    bool host_pages_mapped(const char *p, size_t n) {
        static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
        const uintptr_t a = reinterpret_cast<uintptr_t>(p), end = a + n;
        for (uintptr_t q = (a & ~(page - 1)) + page; q < end; q += page)
            if (!host_page_mapped(reinterpret_cast<const char *>(q))) return false;
        return true;
    }

    // --- the copy agent -----------------------------------------------------------------
    // Posts one descriptor (caller holds agent_mu_); returns its sequence number.
    // With `carry`, the `len` bytes at src are copied into the descriptor's payload slot and the
    // agent copies from there.
    result<uint64_t> agent_post(uint32_t op, void *dst, const void *src, uint32_t len, uint64_t operand,
                                uint64_t compare, uint32_t aop, bool carry = false, uint32_t flags = 0) {
        const uint64_t s = ++agent_seq_;
        // The slot is free once the descriptor that used it last is done.
        if (s > static_cast<uint64_t>(agent::ring_slots)) {
            const deadline dl(30);
            while (__atomic_load_n(&ring_->done, __ATOMIC_ACQUIRE) < s - agent::ring_slots) {
                HGAS_TRY(agent_alive_check(s - agent::ring_slots));
                if (dl.expired()) return fail(status::timeout, "cuda: the copy agent is stuck (30 s)");
            }
        }
        agent::desc &d = ring_->d[s % agent::ring_slots];
        const auto tag = static_cast<uint32_t>(s);
        if (carry && op == agent::op_copy && len <= agent::desc_inline_max) {
            // The bytes in the descriptor's words 2 and 3 (little-endian, as the agent reads them).
            uint64_t lo = 0, hi = 0;
            std::memcpy(&lo, src, std::min<uint32_t>(len, 8));
            if (len > 8) std::memcpy(&hi, static_cast<const char *>(src) + 8, len - 8);
            agent::word_store(&d.w[0], {tag, len, reinterpret_cast<uint64_t>(dst)});
            agent::word_store(&d.w[1], {tag, agent::op_copy_inline, 0});
            agent::word_store(&d.w[2], {tag, flags, lo});
            agent::word_store(&d.w[3], {tag, 0, hi});
            HGAS_TRY(agent_alive_check(s));
            return s;
        }
        if (carry) {
            unsigned char *slot = ring_->payload[s % agent::ring_slots];
            std::memcpy(slot, src, len);
            src = slot;
            // The payload's stores before the descriptor's: x86 keeps stores in order; this keeps
            // the compiler from moving them past the word stores below.
            std::atomic_signal_fence(std::memory_order_release);
        }
        agent::word_store(&d.w[0], {tag, len, reinterpret_cast<uint64_t>(dst)});
        agent::word_store(&d.w[1], {tag, op | aop << 16, reinterpret_cast<uint64_t>(src)});
        agent::word_store(&d.w[2], {tag, flags, operand});
        agent::word_store(&d.w[3], {tag, 0, compare});
        HGAS_TRY(agent_alive_check(s));
        return s;
    }

    // (Re)launches the agent when it has exited with work outstanding (caller holds agent_mu_).
    status agent_alive_check(uint64_t want) {
        if (__atomic_load_n(&ring_->alive, __ATOMIC_ACQUIRE)) return status::ok;
        if (__atomic_load_n(&ring_->done, __ATOMIC_ACQUIRE) >= want) return status::ok;
        const uint64_t from = __atomic_load_n(&ring_->exit_seq, __ATOMIC_ACQUIRE);
        __atomic_store_n(&ring_->alive, 1, __ATOMIC_RELEASE);
        CU_TRY(launch_agent(ring_, from, agent_idle_ns_, agent_stream_));
        return status::ok;
    }

    // A copy through the agent; both ends are places the GPU reaches.
    result<ticket> agent_copy(void *dst, const void *src, size_t n, bool carry = false) {
        const uint32_t flags = in_gpu_segment(dst, n) ? agent::dst_gpu : 0;
        std::lock_guard<std::mutex> g(agent_mu_);
        agent_gate::pass gp(agent_gate::process());
        HGAS_TRY_ASSIGN(uint64_t s,
                        agent_post(agent::op_copy, dst, src, static_cast<uint32_t>(n), 0, 0, 0, carry, flags));
        return ticket{agent_stream_id, s};
    }

    result<bool> agent_test(uint64_t s) {
        if (__atomic_load_n(&ring_->done, __ATOMIC_ACQUIRE) >= s) return true;
        if (__atomic_load_n(&ring_->alive, __ATOMIC_ACQUIRE)) return false;  // running: nothing to relaunch
        std::lock_guard<std::mutex> g(agent_mu_);
        agent_gate::pass gp(agent_gate::process());  // no relaunch while the agents are stopped
        HGAS_TRY(agent_alive_check(s));
        return false;
    }
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
        int dev = -1;      // the GPU of device memory
        bool vmm = false;  // a VMM mapping (released through vmm_own_ / vmm_mapped_)
    };

    result<void *> alloc_vmm(uint16_t seg, size_t n, std::string &blob) {
        HGAS_TRY_ASSIGN(vmm::mapping m, vmm::allocate(dev_, n, seg, "segment " + std::to_string(seg)));
        status s = [&]() -> status {
            CU_TRY(cudaMemset(reinterpret_cast<void *>(m.va), 0, m.size));
            CU_TRY(agent_gate::process().quiesced(agent_gate::stop_wait_s, [] { return cudaDeviceSynchronize(); }));
            return status::ok;
        }();
        if (s != status::ok) {
            agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] { vmm::release(m); });
            return s;
        }
        char *p = reinterpret_cast<char *>(m.va);
        {
            std::lock_guard<std::mutex> g(export_mu_);  // the fd server's thread reads vmm_own_
            vmm_own_.push_back(m);
        }
        own_.push_back({p, n, dev_, true});
        // The fd server, started with the first segment (before the segment tables are
        // exchanged, so that it listens before any peer asks).
        if (!fd_server_) {
            HGAS_TRY_ASSIGN(fd_server_, fdpass::server::start(fdpass::socket_name(job_id_, rank_, "cuda-ipc", fd_tag_),
                                                               [this](uint32_t key) { return exported_fd(key); }));
        }
        vmm_blob b{};
        std::snprintf(b.bus_id, sizeof b.bus_id, "%s", bus_id_.c_str());
        b.size = m.size;
        b.key = seg;
        std::snprintf(b.sock_tag, sizeof b.sock_tag, "%s", fd_tag_.c_str());
        blob = "V" + to_hex(&b, sizeof b);
        return static_cast<void *>(p);
    }

    int exported_fd(uint32_t key) {
        std::lock_guard<std::mutex> g(export_mu_);
        for (const auto &m : vmm_own_)
            if (m.key == key) return m.fd;
        return -1;
    }

    result<void *> import_vmm(int peer, int pdev, const vmm_blob &b, size_t n) {
        std::string why;
        if (!vmm::supported(pdev, why))
            return fail(status::unsupported, "cuda: rank %d exported its segment with VMM, but this process cannot map "
                        "it (%s); set HGAS_CUDA_IPC=legacy on every rank", peer, why.c_str());
        if (b.size < n) return fail(status::bootstrap, "cuda: rank %d's VMM segment is smaller than its size", peer);
        const std::string tag(b.sock_tag, strnlen(b.sock_tag, sizeof b.sock_tag));
        HGAS_TRY_ASSIGN(int fd,
                        fdpass::fetch(fdpass::socket_name(job_id_, peer, "cuda-ipc", tag), b.key, ipc_timeout_));
        HGAS_TRY_ASSIGN(vmm::mapping m, vmm::import(fd, b.size, pdev, dev_));
        vmm_mapped_.push_back(m);
        mapped_.push_back({reinterpret_cast<char *>(m.va), n, pdev, true});
        return reinterpret_cast<void *>(m.va);
    }

    // Whether [p, p+n) lies in a segment of this GPU's memory that hgas knows (its own heaps, or
    // a peer's mapped heap on the same GPU), without asking the driver.
    bool in_gpu_segment(const void *p, size_t n) {
        const char *c = static_cast<const char *>(p);
        for (const auto *v : {&own_, &mapped_})
            for (const auto &m : *v)
                if (c >= m.base && c < m.base + m.size)
                    return m.dev == dev_ && n <= static_cast<size_t>(m.base + m.size - c);
        return false;
    }
    // Device memory of this rank's GPU: its segments, same-GPU peers' segments, or the user's.
    bool on_this_gpu(const void *p, size_t n) {
        const char *c = static_cast<const char *>(p);
        for (const auto *v : {&own_, &mapped_})
            for (const auto &m : *v)
                if (c >= m.base && c < m.base + m.size)
                    return m.dev == dev_ && n <= static_cast<size_t>(m.base + m.size - c);
        // Host memory hgas knows (its pinned buffers, the user's registrations) without asking
        // the driver: a 128 KiB put from a registered buffer asked it on every call.
        for (const auto &m : pinned_)
            if (c >= m.base && c < m.base + m.size) return false;
        if (regs_ && regs_->overlaps(p, 1)) return false;
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return attr.type == cudaMemoryTypeDevice && attr.device == dev_;
    }
    // Whether the agent's threads load and store [p, p+n) directly and may: memory of this GPU, a
    // peer's heap mapped for it (same GPU; a peer GPU's with HGAS_GPU_AGENT_PEERS), or
    // page-locked host memory that the GPU addresses by its host pointer (hgas's pinned pool and
    // host heaps; the user's cudaMallocHost'd or mapped-registered buffers).
    // `unregistered` (when given) is set where the driver called p plain pageable host memory, so
    // that the caller need not ask it again (a driver call on every small put).
    bool agent_reaches(const void *p, size_t n, bool *unregistered = nullptr) {
        const char *c = static_cast<const char *>(p);
        for (const auto *v : {&own_, &mapped_})
            for (const auto &m : *v)
                if (c >= m.base && c < m.base + m.size)
                    return (m.dev == dev_ || agent_peers_) && n <= static_cast<size_t>(m.base + m.size - c);
        if (host_ptr_ok_)
            for (const auto &m : pinned_)
                if (c >= m.base && c < m.base + m.size) return n <= static_cast<size_t>(m.base + m.size - c);
        cudaPointerAttributes attr{};
        if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        if (attr.type == cudaMemoryTypeDevice) return attr.device == dev_;
        if (unregistered && attr.type == cudaMemoryTypeUnregistered) *unregistered = true;
        return attr.type == cudaMemoryTypeHost && host_ptr_ok_ && attr.devicePointer == p && host_pages_mapped(c, n);
    }
    int dev_ = 0, count_ = 0;
    bool host_ptr_ok_ = false;  // the GPU uses host pointers of registered memory as they are
    bool shared_ = false;       // other ranks of the node use this GPU too
    bool agent_peers_ = false;  // HGAS_GPU_AGENT_PEERS: the agent serves peer GPUs' memory too
    std::string bus_id_, desc_;
    // Export (HGAS_CUDA_IPC): vmm_ true exports with VMM and POSIX fds.
    bool vmm_ = false;
    std::string job_id_;
    int rank_ = 0;
    double ipc_timeout_ = 60;
    std::vector<vmm::mapping> vmm_own_, vmm_mapped_;
    std::mutex export_mu_;
    std::unique_ptr<fdpass::server> fd_server_;
    const std::string fd_tag_ = random_tag();  // the random part of fd_server_'s name
    reg_cache *regs_ = nullptr;
    std::vector<stream_state> streams_;
    std::vector<mem_range> own_, mapped_, pinned_;
    uint64_t *amo_result_ = nullptr;
    bool team_kernels_ = false;             // team_allreduce runs here (not time-sliced)
    unsigned *team_timed_out_ = nullptr;    // pinned: the team kernels' timeout reports (blocking, stream)
    // Per team slot: the event after the team's last stream-ordered kernel on this GPU.
    struct team_order {
        cudaEvent_t ev = nullptr;
        bool used = false;
        unsigned long long stream_id = ~0ull;  // cudaStreamGetId of its stream
    };
    std::vector<team_order> team_order_ = std::vector<team_order>(team_kernel_slots);
    // Per team slot, stream-ordered and blocking: the event a member's stream records at a
    // collective of rank threads (team_group), for the last member's stream to wait for.
    std::vector<std::array<cudaEvent_t, 2>> team_ready_ = std::vector<std::array<cudaEvent_t, 2>>(team_kernel_slots);
    int sm_count_ = 1;
    uint64_t sm_copy_min_ = 0, sm_copy_max_ = 0, agent_max_ = 0, agent_gpu_max_ = 0, agent_idle_ns_ = 0;
    agent::ring *ring_ = nullptr;  // pinned; nullptr when the agent is off
    cudaStream_t agent_stream_ = nullptr;
    std::mutex agent_mu_;
    std::mutex stream_mu_;
    std::unique_ptr<trace::stream_tracer> tracer_;  // HGAS_TRACE: the internal streams' tracks
    uint64_t agent_seq_ = 0;
    // Exported user allocations (export_user), by base.
    struct user_handle {
        size_t size;
        unsigned long long id;
        cudaIpcMemHandle_t h;  // legacy
        int fd;                // VMM: the exported fd (else -1)
        uint32_t key;          // VMM: what peers ask the user fd server for
    };
    std::map<CUdeviceptr, user_handle> exported_;
    std::map<void *, vmm::mapping> vmm_user_mapped_;     // peers' VMM buffers mapped here
    std::map<CUdeviceptr, vmm::mapping> vmm_user_own_;  // alloc_user_vmm's
    std::unique_ptr<fdpass::server> user_fd_server_;    // from the first VMM export
    uint32_t next_user_key_ = 0;
    std::mutex user_mu_;
    // Driver calls export_user needs, through cudaGetDriverEntryPointByVersion (no -lcuda).
    struct udrv {
        CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr) = nullptr;  // cuMemGetAddressRange
        CUresult (*attr)(void *, CUpointer_attribute, CUdeviceptr) = nullptr;  // cuPointerGetAttribute
    };
    static const udrv &user_driver() {
        static udrv d;
        static std::once_flag once;
        std::call_once(once, [] {
            auto look = [](const char *name, void *&out) {
                cudaDriverEntryPointQueryResult q{};
                if (cudaGetDriverEntryPointByVersion(name, &out, 12000, cudaEnableDefault, &q) != cudaSuccess ||
                    q != cudaDriverEntryPointSuccess) {
                    out = nullptr;
                    cudaGetLastError();
                }
            };
            void *f = nullptr;
            look("cuMemGetAddressRange", f);
            d.range = reinterpret_cast<decltype(d.range)>(f);
            look("cuPointerGetAttribute", f);
            d.attr = reinterpret_cast<decltype(d.attr)>(f);
        });
        return d;
    }
};

}  // namespace

result<std::unique_ptr<device>> open_cuda(const open_args &a) { return cuda_device::open(a); }
void warn_if_lazy_loading() { warn_lazy_once(); }
bool cuda_built() { return true; }

std::vector<std::string> cuda_machine() {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        return {std::string("no GPU visible (") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")"};
    }
    std::vector<std::string> out;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
        std::string peers;
        for (int q = 0; q < count; ++q) {
            int can = 0;
            if (q != d && cudaDeviceCanAccessPeer(&can, d, q) == cudaSuccess)
                peers += std::string(peers.empty() ? "" : ", ") + std::to_string(q) + (can ? " yes" : " no");
        }
        char line[512];
        snprintf(line, sizeof line, "GPU %d: %s, sm_%d%d, %.0f GiB%s%s", d, p.name, p.major, p.minor,
                 p.totalGlobalMem / 1073741824.0, peers.empty() ? "" : "; peer access to GPU ", peers.c_str());
        out.push_back(line);
    }
    cudaGetLastError();
    return out;
}

std::vector<std::string> cuda_ipc_plan(const std::string &setting) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return {"HGAS_CUDA_IPC=" + setting + ", no GPU visible: nothing to export"};
    }
    std::vector<std::string> out;
    for (int d = 0; d < count; ++d) {
        std::string why;
        const bool ok = vmm::supported(d, why);
        std::string line = "GPU " + std::to_string(d) + ": ";
        if (setting == "legacy")
            line += "legacy CUDA IPC handles (HGAS_CUDA_IPC=legacy)";
        else if (ok)
            line += "VMM (cuMemCreate), POSIX fds passed over a Unix socket (HGAS_CUDA_IPC=" + setting + ")";
        else if (setting == "vmm")
            line += "refused: HGAS_CUDA_IPC=vmm but " + why;
        else
            line += "legacy CUDA IPC handles (HGAS_CUDA_IPC=auto: " + why + ")";
        out.push_back(line);
    }
    cudaGetLastError();
    return out;
}

}  // namespace hgas::gpu
