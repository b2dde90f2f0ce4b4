// The rank's device state: the context kernels take, the proxy's ring and thread, and the
// stream-ordered operations (device.hpp).
//
// Life of a proxied operation: a kernel's thread claims ticket t (a device-memory counter),
// writes its request into slot t of the ring in pinned host memory and publishes it; the rank's
// proxy thread -- or the rank's own thread, whenever it is inside an hgas call (the progress
// engine's poller) -- takes the rank's API mutex, executes it with rma::*, quiets, and writes
// `done`; the kernel sees done > t (or its reply) and goes on.
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <hgas/impl/device_types.h>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/trace.hpp"
#include "base/trace_streams.hpp"
#include "device/cuda_ops.hpp"
#include "device/device.hpp"
#include "device/proxy.hpp"
#include "gpu/agent_gate.hpp"
#include "gpu/gpu.hpp"
#include "coll/stream.hpp"
#include "msg/msg.hpp"

namespace hgas::device {

namespace {

status cuda_fail(const char *op, const char *what, int e) {
    return fail(status::transport, "%s: %s failed: %s", op, what, cu::error_text(e));
}

struct located {
    int win = -1;
    uint64_t off = 0;
    char *peer = nullptr;  // the GPU's pointer to the target, or nullptr (proxy)
};

class state final : public core::rank_extension {
public:
    static result<state *> of(core::rank &r, const char *op);
    ~state() override { release(); }
    status finalize() override;

    const hgas_device_ctx_t &ctx() const { return ctx_; }
    bool has_gpu() const { return cuda_ != nullptr; }
    int ordinal() const { return cuda_ ? cuda_->ordinal() : -1; }
    bool memops() const { return memops_; }
    // Whether any device operation can reach the proxy (else quiet_on_stream has nothing to do).
    bool proxy_reachable() const { return proxy_reachable_; }
    // HGAS_TRACE on: the user streams' tracks (made at the first stream operation traced).
    trace::stream_tracer &tracer();
    trace::stream_tracer *tracer_if_any() { return tracer_.get(); }
    status select(const char *op) const;
    status check();
    // The host's view of a symmetric address on `rank`, checked like a kernel checks it.
    result<located> locate(const char *op, const void *sym, uint64_t bytes, int rank, const char *what) const;

private:
    explicit state(core::rank &r) : r_(r), live_(std::make_shared<std::atomic<bool>>(true)) {}
    status init();
    status make_windows();
    void run();
    // Executes what the ring holds; the caller holds the rank's API mutex.
    void drain_locked();
    void stop_thread();
    void release();

    core::rank &r_;
    gpu::device *cuda_ = nullptr;
    hgas_device_ctx_t ctx_{};
    char *ring_mem_ = nullptr;
    bool ring_pinned_ = false;
    void *dev_words_ = nullptr;       // tail and state (device memory), or host memory without a GPU
    std::vector<void *> dev_tables_;  // per window: the peer table in device memory
    std::vector<char *> host_peer_[HGAS_DEVICE_WINDOWS];
    std::unique_ptr<proxy> proxy_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::shared_ptr<std::atomic<bool>> live_;  // the engine's poller checks it before touching us
    bool draining_ = false;  // under the API mutex
    bool memops_ = false, proxy_reachable_ = false, finalized_ = false;
    uint64_t idle_ns_ = 0, idle_max_ns_ = 0;
    std::unique_ptr<trace::stream_tracer> tracer_;
};

const trace::event_api cu_events = {cu::event_create, cu::event_destroy,    cu::event_record,
                                    cu::event_query,  cu::event_elapsed_ms, cu::event_calibrate};

trace::stream_tracer &state::tracer() {
    if (!tracer_) tracer_ = std::make_unique<trace::stream_tracer>(cu_events, "cuda stream");
    return *tracer_;
}

result<state *> state::of(core::rank &r, const char *op) {
    if (auto *s = dynamic_cast<state *>(r.device_extension().get())) {
        if (s->finalized_) return fail(status::not_initialized, "%s: the rank is finalizing", op);
        return s;
    }
    std::unique_ptr<state> s(new state(r));
    status st = s->init();
    if (st != status::ok) return st;
    state *raw = s.get();
    r.device_extension() = std::move(s);
    // The proxy thread acts for the rank from now on: API calls hold the rank's mutex. It is
    // started under the mutex so that it runs no request before this call has returned.
    if (raw->ctx_.slots) {
        r.set_serialized();
        std::lock_guard<std::recursive_mutex> g(r.api_mutex());
        raw->thread_ = std::thread([raw] {
            trace::thread_name("device proxy");
            raw->run();
        });
    }
    return raw;
}

status state::init() {
    const settings &cfg = r_.cfg();
    const std::string &mode = cfg.text(setting::device_proxy);
    const int64_t slots = cfg.integer(setting::device_proxy_slots);
    if (slots & (slots - 1))
        return fail(status::invalid_setting, "HGAS_DEVICE_PROXY_SLOTS=%lld is not a power of two", (long long)slots);
    idle_ns_ = static_cast<uint64_t>(cfg.integer(setting::device_proxy_idle_us)) * 1000;
    idle_max_ns_ = std::max(idle_ns_, static_cast<uint64_t>(cfg.integer(setting::device_proxy_idle_max_us)) * 1000);
    cuda_ = r_.device(mem::kind::cuda);
    ctx_.me = r_.me();
    ctx_.n = r_.n();
    ctx_.flags = mode == "force" ? HGAS_DEVICE_FORCE_PROXY : mode == "off" ? HGAS_DEVICE_NO_PROXY : 0;
    ctx_.slots = mode == "off" ? 0 : static_cast<uint32_t>(slots);
    ctx_.timeout_ns = static_cast<uint64_t>(r_.timeout() * 1e9);
    ctx_.sync_offset = r_.internal().device_sync;

    // The ring: pinned (and so mapped for the GPU: unified addressing) where there is a GPU;
    // ordinary memory for host producers otherwise. The header is there even with the proxy
    // off: kernels record their errors in it.
    const size_t ring_bytes = HGASI_PROXY_HEADER + static_cast<size_t>(slots) * sizeof(hgasi_proxy_slot_t);
    if (cuda_) {
        HGAS_TRY(select("hgas_device_ctx_get"));
        if (int e = cu::preload()) return cuda_fail("hgas_device_ctx_get", "loading the stream operations' kernels", e);
        if (ctx_.slots) gpu::warn_if_lazy_loading();
        HGAS_TRY_ASSIGN(void *p, cuda_->alloc_pinned(ring_bytes));
        ring_mem_ = static_cast<char *>(p);
        ring_pinned_ = true;
        int e = cu::dev_alloc(&dev_words_, 256);
        if (e) return cuda_fail("hgas_device_ctx_get", "cudaMalloc of the proxy counters", e);
    } else {
        ring_mem_ = static_cast<char *>(std::aligned_alloc(4096, (ring_bytes + 4095) & ~size_t(4095)));
        dev_words_ = std::calloc(1, 256);
        if (!ring_mem_ || !dev_words_) return fail(status::no_memory, "hgas_device_ctx_get: no memory for the proxy ring");
    }
    std::memset(ring_mem_, 0, ring_bytes);
    auto *slot0 = reinterpret_cast<hgasi_proxy_slot_t *>(ring_mem_ + HGASI_PROXY_HEADER);
    for (int64_t i = 0; i < slots; ++i) slot0[i].seq = static_cast<uint64_t>(i);  // free for ticket i
    ctx_.ring = reinterpret_cast<hgasi_proxy_ring_t *>(ring_mem_);
    ctx_.tail = static_cast<uint64_t *>(dev_words_);
    ctx_.state = static_cast<uint64_t *>(dev_words_) + 8;  // its own cache line
    if (cuda_) HGAS_TRY(make_windows());
    else proxy_reachable_ = true;

    proxy_ = std::make_unique<proxy>(r_, ctx_.ring, ctx_.slots);
    // On the rank's own thread, inside any hgas call, requests are served too: a rank that
    // waits in hgas (a barrier, hgas_stream_sync) then never waits for its proxy thread.
    auto live = live_;
    HGAS_TRY(r_.engine().add_poller([this, live](bool on_rank_thread) {
        if (!on_rank_thread || !live->load(std::memory_order_acquire) || finalized_ || !proxy_->pending())
            return status::ok;
        std::unique_lock<std::recursive_mutex> lk(r_.api_mutex(), std::try_to_lock);
        // Only where no operation of the rank is half done (rank::at_safe_point).
        if (lk && r_.at_safe_point()) drain_locked();
        return status::ok;
    }));
    const char *why = "";
    memops_ = cuda_ && cfg.text(setting::stream_memops) == "auto" && cu::memops_available(cuda_->ordinal(), &why);
    HGASI_DEBUG("device", "device context: %d ranks, proxy %s (%u slots), stream memory operations %s%s", ctx_.n,
                mode.c_str(), ctx_.slots, memops_ ? "on" : "off: ", memops_ ? "" : why);
    return status::ok;
}

// The symmetric heaps as this GPU addresses them: [0] the cuda heap (own memory, peers mapped
// through IPC), [1] the host heap (registered with CUDA by the rank: own, and same-node peers'
// shared-memory mappings). A peer whose heap differs in size is left to the proxy, whose host
// path checks bounds against the peer's real size.
status state::make_windows() {
    const uint16_t segs[HGAS_DEVICE_WINDOWS] = {mem::seg_cuda_symmetric, mem::seg_symmetric};
    const bool native = cu::native_host_atomics(cuda_->ordinal());
    for (int w = 0; w < HGAS_DEVICE_WINDOWS; ++w) {
        const uint16_t seg = segs[w];
        hgas_device_window_t &win = ctx_.win[w];
        if (!r_.own_size(seg)) continue;
        win.base = r_.own_base(seg);
        win.size = r_.own_size(seg);
        win.segment = seg;
        win.gpu_atomics = w == 0 ? 1 : native ? 1 : 0;
        std::vector<char *> &t = host_peer_[w];
        t.assign(static_cast<size_t>(r_.n()), nullptr);
        for (int p = 0; p < r_.n(); ++p) {
            const core::peer_segment *ps = r_.segment(static_cast<uint32_t>(p), seg);
            if (!ps || ps->size != win.size) continue;
            if (w == 0) t[p] = ps->dev;
            else t[p] = static_cast<char *>(cu::host_device_pointer(p == r_.me() ? r_.own_base(seg) : ps->direct));
            if (!t[p] || ctx_.flags & HGAS_DEVICE_FORCE_PROXY) proxy_reachable_ = true;
        }
        if (!win.gpu_atomics) proxy_reachable_ = true;
        void *d = nullptr;
        int e = cu::dev_alloc(&d, t.size() * sizeof(char *));
        if (!e) {
            dev_tables_.push_back(d);
            e = cu::copy_to_device(d, t.data(), t.size() * sizeof(char *));
        }
        if (e) return cuda_fail("hgas_device_ctx_get", "copying the peer table to the GPU", e);
        win.peer = static_cast<char *const *>(d);
    }
    ctx_.near_first = r_.me() - r_.me() % HGAS_DEVICE_NEAR;
    ctx_.near_count = std::min(HGAS_DEVICE_NEAR, r_.n() - ctx_.near_first);
    for (int w = 0; w < HGAS_DEVICE_WINDOWS; ++w)
        for (int i = 0; i < ctx_.near_count; ++i)
            ctx_.near[w][i] = host_peer_[w].empty() ? nullptr : host_peer_[w][static_cast<size_t>(ctx_.near_first + i)];
    // Kernels' near_heap() stores to the first near_count ranks without looking at the flags.
    if (ctx_.flags & HGAS_DEVICE_FORCE_PROXY) ctx_.near_count = 0;
    return status::ok;
}

status state::select(const char *op) const {
    if (!cuda_) return status::ok;
    const int e = cu::set_device(cuda_->ordinal());
    return e ? cuda_fail(op, "cudaSetDevice", e) : status::ok;
}

void state::drain_locked() {
    if (draining_) return;  // a request's host path polled the engine: the outer drain goes on
    draining_ = true;
    proxy_->drain(256);
    draining_ = false;
}

void state::run() {
    log_set_rank(r_.me());
    uint64_t last_work = now_ns(), last_poll = 0, sleep_ns = idle_ns_;
    while (!stop_.load(std::memory_order_acquire)) {
        if (!proxy_->pending()) {
            // While the rank's thread is outside hgas, this thread makes the progress it would
            // make: proxied operations of peers' GPUs that need this rank (staged transfers into
            // its GPU memory, active messages) are then served even while the program computes.
            const uint64_t now = now_ns();
            if (now - last_poll > 50000) {
                std::unique_lock<std::recursive_mutex> lk(r_.api_mutex(), std::try_to_lock);
                if (lk) (void)r_.engine().poll();  // a failure reaches the rank's thread at its next call
                last_poll = now;
            }
            // Spin while requests came recently (the latency kernels see), then sleep, longer
            // and longer: a rank whose kernels run for seconds without a proxied request then
            // costs its CPU almost nothing (the CPU time seed 003 measures).
            if (idle_ns_ && now - last_work > 10000000) {
                struct timespec ts{static_cast<time_t>(sleep_ns / 1000000000), static_cast<long>(sleep_ns % 1000000000)};
                nanosleep(&ts, nullptr);
                sleep_ns = std::min(sleep_ns * 2, idle_max_ns_);
            } else {
                sched_yield();
            }
            continue;
        }
        // Held by the rank's thread: it is inside hgas and serves the ring itself.
        std::unique_lock<std::recursive_mutex> lk(r_.api_mutex(), std::try_to_lock);
        if (!lk) {
            sched_yield();
            continue;
        }
        drain_locked();
        last_work = now_ns();
        sleep_ns = idle_ns_;
    }
}

void state::stop_thread() {
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    thread_.join();
}

status state::finalize() {
    stop_thread();
    // What kernels published before the program synchronized is still served.
    {
        std::lock_guard<std::recursive_mutex> g(r_.api_mutex());
        drain_locked();
    }
    finalized_ = true;
    return status::ok;
}

void state::release() {
    live_->store(false, std::memory_order_release);
    stop_thread();
    if (cuda_) {
        (void)select("hgas_finalize");
        tracer_.reset();
        // cudaFree waits for the process's kernels: the copy agents of other rank threads stop
        // meanwhile (gpu/agent_gate.hpp; free_pinned does the same for itself).
        gpu::agent_gate::process().quiesced(gpu::agent_gate::stop_wait_s, [&] {
            for (void *d : dev_tables_) cu::dev_free(d);
            cu::dev_free(dev_words_);
        });
        if (ring_mem_) cuda_->free_pinned(ring_mem_);
    } else {
        std::free(dev_words_);
        std::free(ring_mem_);
    }
    dev_tables_.clear();
    dev_words_ = nullptr;
    ring_mem_ = nullptr;
}

status state::check() {
    hgasi_proxy_ring_t *ring = ctx_.ring;
    const uint64_t code = __atomic_load_n(&ring->error, __ATOMIC_ACQUIRE);
    if (!code) return status::ok;
    const long long rank = static_cast<long long>(__atomic_load_n(&ring->err_rank, __ATOMIC_RELAXED));
    const unsigned long long arg = __atomic_load_n(&ring->err_arg, __ATOMIC_RELAXED);
    __atomic_store_n(&ring->error, 0, __ATOMIC_RELEASE);  // reported once
    const double tmo = r_.timeout();
    switch (code) {
    case HGAS_DEVICE_ERR_TIMEOUT_SIGNAL:
        return fail(status::timeout, "device: a kernel's signal_wait_until on rank %d waited longer than HGAS_TIMEOUT="
                    "%g s for value %llu (the signal never came: a peer stuck or never sending it?)", r_.me(), tmo, arg);
    case HGAS_DEVICE_ERR_TIMEOUT_PROXY:
        return fail(status::timeout, "device: a kernel of rank %d waited for request %llu while the proxy executed "
                    "nothing for HGAS_TIMEOUT=%g s (the proxy stuck in a host operation, or the rank's runtime gone?); "
                    "a request that was never posted stops the proxy there: this rank's later proxied operations "
                    "cannot complete", r_.me(), arg, tmo);
    case HGAS_DEVICE_ERR_TIMEOUT_BARRIER:
        return fail(status::timeout, "device: the device barrier on rank %d waited longer than HGAS_TIMEOUT=%g s for "
                    "rank %lld (it never reached the barrier?)", r_.me(), tmo, rank);
    case HGAS_DEVICE_ERR_TIMEOUT_GRID:
        return fail(status::timeout, "device: a grid_sync on rank %d waited longer than HGAS_TIMEOUT=%g s for the "
                    "other blocks of its kernel (%llu blocks: not all resident at once? use cudaLaunchCooperativeKernel "
                    "or hgas::device::check_resident)", r_.me(), tmo, arg);
    case HGAS_DEVICE_ERR_UNREACHABLE:
        return fail(status::unsupported, "device: a kernel on rank %d addressed rank %lld (offset %llu), which the GPU "
                    "cannot store to, with HGAS_DEVICE_PROXY=off; turn the proxy on", r_.me(), rank, arg);
    case HGAS_DEVICE_ERR_BAD_ADDRESS:
        return fail(status::invalid_arg, "device: a kernel on rank %d passed rank %lld with address 0x%llx: the rank "
                    "must be in [0, %d) and the address a symmetric address of the cuda or host heap (a proxied local "
                    "buffer: global memory, not a stack or shared array); nothing was written", r_.me(), rank, arg, r_.n());
    case HGAS_DEVICE_ERR_MISALIGNED:
        return fail(status::misaligned, "device: a kernel on rank %d used a signal or atomic word at offset %llu on "
                    "rank %lld that is not aligned to its width", r_.me(), arg, rank);
    case HGAS_DEVICE_ERR_BAD_COLL:
        return fail(status::invalid_arg, "device: a kernel collective on rank %lld was called with %s; nothing was "
                    "sent", rank, arg == HGASI_COLL_BAD_TEAM ? "a team that is outside the job or does not hold this rank "
                    "(members start + i * stride, i < size, must be ranks of the job)"
                    : arg == HGASI_COLL_BAD_ROOT ? "a root that is not a member index of the team (0 .. size - 1)"
                    : "a workspace too small for the team (see coll_plan::workspace_bytes) or outside this rank's "
                      "symmetric heaps");
    case HGAS_DEVICE_ERR_PROXY_FAILED: {
        std::string why = proxy_->failure();
        proxy_->clear_failure();
        return fail(status::transport, "device: a proxied operation of rank %d to rank %lld (request %llu) failed on "
                    "the host path: %s", r_.me(), rank, arg, why.c_str());
    }
    default:
        return fail(status::internal, "device: unknown device error %llu on rank %d", (unsigned long long)code, r_.me());
    }
}

result<located> state::locate(const char *op, const void *sym, uint64_t bytes, int rank, const char *what) const {
    if (rank < 0 || rank >= r_.n())
        return fail(status::invalid_arg, "%s: rank %d does not exist (the job has %d ranks)", op, rank, r_.n());
    const char *a = static_cast<const char *>(sym);
    for (int w = 0; w < HGAS_DEVICE_WINDOWS; ++w) {
        const hgas_device_window_t &win = ctx_.win[w];
        if (!win.size || !a || a < win.base || bytes > win.size || static_cast<uint64_t>(a - win.base) > win.size - bytes)
            continue;
        located l;
        l.win = w;
        l.off = static_cast<uint64_t>(a - win.base);
        char *b = host_peer_[w].empty() ? nullptr : host_peer_[w][static_cast<size_t>(rank)];
        l.peer = b && !(ctx_.flags & HGAS_DEVICE_FORCE_PROXY) ? b + l.off : nullptr;
        return l;
    }
    return fail(status::invalid_pointer, "%s: the %s %p (+%llu bytes) is not inside this rank's symmetric cuda or "
                "host heap; allocate it with hgas_malloc_kind", op, what, sym, (unsigned long long)bytes);
}

// A stream operation's state, with a GPU.
result<state *> gpu_state(core::rank &r, const char *op) {
    HGAS_TRY_ASSIGN(state *s, state::of(r, op));
    if (!s->has_gpu())
        return fail(status::unsupported, "%s: this rank has no GPU (kind cuda is unavailable: %s)", op,
                    r.kind_unavailable(mem::kind::cuda).c_str());
    HGAS_TRY(s->select(op));
    return s;
}

status launched(const char *op, const char *what, int e) { return e ? cuda_fail(op, what, e) : status::ok; }

// Traced, what a stream operation enqueues on `strm` becomes one span on the stream's track
// (trace_streams.hpp: events before and after it, read back later). Off: one branch.
class stream_span {
public:
    stream_span(state *s, cudaStream_t strm) : strm_(strm) {
        if (__builtin_expect(trace::on(), 0)) begin(s);
    }
    ~stream_span() {
        if (__builtin_expect(before_ != nullptr, 0)) t_->drop(before_);
    }
    // The enqueue succeeded (else the span is dropped): keep it, with what it moves.
    // `win`: the target's window (0 the cuda heap, else the host heap).
    void keep(const char *op, uint64_t bytes, int peer, int win, int path, trace::stream_op what) {
        if (__builtin_expect(before_ == nullptr, 1)) return;
        trace::fields f;
        f.bytes = bytes;
        f.peer = peer;
        f.kind = static_cast<int8_t>(win == 0 ? HGAS_KIND_CUDA : HGAS_KIND_HOST);
        f.path = static_cast<int8_t>(path);
        f.op = what;
        t_->end(before_, strm_, op, f);
        before_ = nullptr;
    }
    stream_span(const stream_span &) = delete;
    stream_span &operator=(const stream_span &) = delete;

private:
    __attribute__((noinline, cold)) void begin(state *s) {
        t_ = &s->tracer();
        before_ = t_->begin(strm_);
    }
    cudaStream_t strm_;
    trace::stream_tracer *t_ = nullptr;
    void *before_ = nullptr;
};

}  // namespace

status ctx_get(core::rank &r, hgas_device_ctx_t *out) {
    if (!out) return fail(status::invalid_arg, "hgas_device_ctx_get: the result pointer is NULL");
    HGAS_TRY_ASSIGN(state *s, state::of(r, "hgas_device_ctx_get"));
    *out = s->ctx();
    return status::ok;
}

int gpu(core::rank &r) {
    gpu::device *d = r.device(mem::kind::cuda);
    return d ? d->ordinal() : -1;
}

status check(core::rank &r) {
    auto *s = dynamic_cast<state *>(r.device_extension().get());
    return s ? s->check() : status::ok;
}

namespace {
// Waits until the stream's work issued so far is done (cuda's error for it in `e`, 0 if none),
// running the queued stream-ordered collectives it reaches meanwhile: on this thread, when their
// streams reach them (not inside the wait: a collective waits itself). Fails only if the
// stream does not get there within HGAS_TIMEOUT.
status wait_stream(core::rank &r, const char *op, cudaStream_t strm, int &e) {
    e = 0;
    core::safe_point sp(r);  // kernels on the stream may wait for this rank's proxy
    status w = status::ok;
    for (;;) {
        w = r.wait(op, [&] {
            if (coll::stream_ready(r)) return true;
            e = cu::stream_query(strm);
            return e != 1;
        });
        if (w != status::ok || !coll::stream_ready(r)) break;
        coll::stream_pump(r);
    }
    return w;
}
}  // namespace

status stream_sync(core::rank &r, cudaStream_t strm) {
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, "hgas_stream_sync"));
    int e = 0;
    const status w = wait_stream(r, "hgas_stream_sync", strm, e);
    if (w != status::ok) {
        // A kernel that recorded why it is stuck says more than the timeout does.
        status d = s->check();
        return d != status::ok ? d : w;
    }
    if (e) return cuda_fail("hgas_stream_sync", "the stream (an operation on it)", e);
    HGAS_TRY(s->check());
    if (trace::stream_tracer *t = s->tracer_if_any(); __builtin_expect(t != nullptr, 0) && trace::on())
        t->collect(0);  // traced: what the streams finished, read back without waiting
    HGAS_TRY(coll::stream_status(r));  // a stream-ordered collective that failed
    return msg::stream_status(r);  // a stream-ordered message that failed
}

status put_on_stream(core::rank &r, void *dst, const void *src, size_t bytes, int rank, cudaStream_t strm) {
    const char *op = "hgas_put_on_stream";
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    if (bytes && !src) return fail(status::invalid_arg, "%s: the source is NULL but %zu bytes were asked for", op, bytes);
    HGAS_TRY_ASSIGN(located d, s->locate(op, dst, bytes, rank, "destination"));
    if (!bytes) return status::ok;
    if (d.peer) {
        stream_span sp(s, strm);
        const int e = cu::memcpy_async(d.peer, src, bytes, strm);
        if (!e) sp.keep(op, bytes, rank, d.win, 0, trace::op_copy);
        return launched(op, "cudaMemcpyAsync", e);
    }
    if (!s->ctx().slots)
        return fail(status::unsupported, "%s: rank %d's memory is not mapped here and HGAS_DEVICE_PROXY=off", op, rank);
    stream_span sp(s, strm);
    const int e = cu::launch_put(s->ctx(), dst, src, bytes, rank, strm);
    if (!e) sp.keep(op, bytes, rank, d.win, 1, trace::op_kernel);
    return launched(op, "the proxy kernel's launch", e);
}

status put_signal_on_stream(core::rank &r, void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                            hgas_signal_op_t sop, int rank, cudaStream_t strm) {
    const char *op = "hgas_put_signal_on_stream";
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    if (sop != HGAS_SIGNAL_SET && sop != HGAS_SIGNAL_ADD)
        return fail(status::invalid_arg, "%s: signal op %d is neither HGAS_SIGNAL_SET nor HGAS_SIGNAL_ADD", op, sop);
    if (bytes && !src) return fail(status::invalid_arg, "%s: the source is NULL but %zu bytes were asked for", op, bytes);
    HGAS_TRY_ASSIGN(located g, s->locate(op, sig, 8, rank, "signal word"));
    if (g.off % 8) return fail(status::misaligned, "%s: the signal word %p is not 8-byte aligned", op, (void *)sig);
    located d = g;
    if (bytes) {
        HGAS_TRY_ASSIGN(d, s->locate(op, dst, bytes, rank, "destination"));
    }
    if ((bytes && !d.peer) || !g.peer) {
        if (!s->ctx().slots)
            return fail(status::unsupported, "%s: rank %d's memory is not mapped here and HGAS_DEVICE_PROXY=off", op, rank);
        // The kernel takes the direct path for whatever part it can and the proxy for the rest.
        stream_span sp(s, strm);
        const int e = cu::launch_put_signal(s->ctx(), dst, src, bytes, sig, value, sop, rank, strm);
        if (!e) sp.keep(op, bytes, rank, d.win, 1, trace::op_kernel);
        return launched(op, "the put_signal kernel's launch", e);
    }
    // Traced: one span from the copy's start to the signal's write.
    stream_span sp(s, strm);
    if (bytes) HGAS_TRY(launched(op, "cudaMemcpyAsync", cu::memcpy_async(d.peer, src, bytes, strm)));
    // SET on GPU memory: a stream memory operation, ordered after the copy with a memory
    // barrier (its default flags). ADD, and words in host memory: a one-thread kernel.
    if (sop == HGAS_SIGNAL_SET && g.win == 0 && s->memops()) {
        const int e = cu::write64(strm, g.peer, value);
        if (!e) {
            sp.keep(op, bytes, rank, d.win, 0, bytes ? trace::op_copy : trace::op_memop);
            return status::ok;
        }
        // Refused at enqueue (this memory or driver): the kernel does the same, in stream order.
        HGASI_DEBUG("device", "%s: cuStreamWriteValue64 refused (%s); using a kernel", op, cu::error_text(e));
    }
    const int e = cu::launch_put_signal(s->ctx(), nullptr, nullptr, 0, sig, value, sop, rank, strm);
    if (!e) sp.keep(op, bytes, rank, d.win, 0, bytes ? trace::op_copy : trace::op_kernel);
    return launched(op, "the signal kernel's launch", e);
}

status signal_wait_on_stream(core::rank &r, const uint64_t *sig, int cmp_arg, uint64_t value, cudaStream_t strm) {
    const char *op = "hgas_signal_wait_on_stream";
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    if (cmp_arg < HGAS_CMP_EQ || cmp_arg > HGAS_CMP_LE)
        return fail(status::invalid_arg, "%s: comparison %d is not an hgas_cmp_t", op, cmp_arg);
    const auto cmp = static_cast<hgas_cmp_t>(cmp_arg);
    HGAS_TRY_ASSIGN(located g, s->locate(op, sig, 8, r.me(), "signal word"));
    if (g.off % 8) return fail(status::misaligned, "%s: the signal word %p is not 8-byte aligned", op, (const void *)sig);
    stream_span sp(s, strm);  // traced: the wait's span is the time the stream spent in it
    if (g.win == 0 && s->memops() && (cmp == HGAS_CMP_EQ || cmp == HGAS_CMP_GE)) {
        const char *own = s->ctx().win[0].base + g.off;  // this rank's own word: no force-proxy here
        const int e = cu::wait64(strm, own, value, cmp == HGAS_CMP_EQ);
        if (!e) {
            sp.keep(op, 8, -1, g.win, -1, trace::op_memop);
            return status::ok;
        }
        HGASI_DEBUG("device", "%s: cuStreamWaitValue64 refused (%s); using a kernel", op, cu::error_text(e));
    }
    const int e = cu::launch_wait(s->ctx(), sig, cmp, value, strm);
    if (!e) sp.keep(op, 8, -1, g.win, -1, trace::op_kernel);
    return launched(op, "the wait kernel's launch", e);
}

status barrier_on_stream(core::rank &r, cudaStream_t strm) {
    const char *op = "hgas_barrier_on_stream";
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    if (!s->ctx().win[0].size)
        return fail(status::unsupported, "%s: the device barrier needs the cuda heap (HGAS_CUDA_HEAP_SIZE > 0)", op);
    stream_span sp(s, strm);
    const int e = cu::launch_barrier(s->ctx(), strm);
    if (!e) sp.keep(op, 0, -1, 0, -1, trace::op_kernel);
    return launched(op, "the barrier kernel's launch", e);
}

namespace {
// The stream writes the operation's sequence number into its go word, then waits until the
// message layer has written it into the done word: the message starts when the stream reaches
// it, and later work waits for its completion. Both words are in this rank's host heap, which
// the GPU maps; stream memory operations where the driver has them (hgas_stream_sync is the
// deadline), else one-thread kernels on the GPU's pointers (bypassing the proxy: the words are
// hgas's own), whose wait gives up after HGAS_TIMEOUT and marks the go word expired (~seq).
template <class Slot, class Cancel>
status words_on_stream(core::rank &r, const char *op, state *s, const Slot &w, Cancel cancel, cudaStream_t strm,
                       uint64_t bytes) {
    // Traced: the span lasts from the stream's reaching the message (go) to its completion (done).
    stream_span sp(s, strm);
    void *go = cu::host_device_pointer(w.go), *done = cu::host_device_pointer(w.done);
    int e = go && done ? 0 : -1;
    if (!e) {
        e = s->memops() ? cu::write64(strm, go, w.seq) : -1;
        if (e) e = cu::launch_store64(go, w.seq, strm);
    }
    if (!e && (!s->memops() || cu::wait64(strm, done, w.seq, false)))
        e = cu::launch_wait_geq64(done, w.seq, s->ctx().timeout_ns, go, ~w.seq, strm);
    if (e) {
        cancel(r, w.seq);
        if (e == -1 && !(go && done))
            return fail(status::unsupported, "%s: the GPU cannot address this rank's host heap (not registered with "
                        "CUDA)", op);
        return cuda_fail(op, "enqueueing the message on the stream", e);
    }
    sp.keep(op, bytes, -1, 1, 1, trace::op_memop);
    return status::ok;
}
}  // namespace

status send_on_stream(core::rank &r, const char *op, uint32_t ctx, const void *buf, size_t bytes, int dest, int tag,
                      const msg::layout *l, cudaStream_t strm) {
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    HGAS_TRY_ASSIGN(msg::stream_slot w, msg::stream_send(r, op, msg::send_args{ctx, buf, bytes, dest, tag}, l));
    return words_on_stream(r, op, s, w, msg::stream_cancel, strm, bytes);
}

status recv_on_stream(core::rank &r, const char *op, uint32_t ctx, void *buf, size_t bytes, int src, int tag,
                      hgas_msg_info_t *info, const msg::layout *l, cudaStream_t strm) {
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    HGAS_TRY_ASSIGN(msg::stream_slot w,
                    msg::stream_recv(r, op, msg::recv_args{ctx, buf, bytes, src, tag, info}, l));
    return words_on_stream(r, op, s, w, msg::stream_cancel, strm, bytes);
}

namespace {
// Whether CUDA gives each context one hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1, which
// it reads when it creates the context; Megatron-LM sets it). Read once, at the first
// stream-ordered collective (after the context exists, as CUDA read it).
bool one_hardware_queue() {
    static const bool one = [] {
        const char *v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        return v && std::strtol(v, nullptr, 10) == 1;
    }();
    return one;
}

// Waits as hgas_stream_sync does, but leaves the errors that earlier operations recorded for
// hgas_stream_sync to return: the collective that waits here must still run, so that its
// members stay in step. Fails only if the stream does not get there within HGAS_TIMEOUT or
// fails itself.
status drain_stream(core::rank &r, const char *op, cudaStream_t strm) {
    int e = 0;
    HGAS_TRY(wait_stream(r, op, strm, e));
    return e ? cuda_fail(op, "the stream (an operation before this collective)", e) : status::ok;
}
}  // namespace

// The same two words for a collective (coll/stream.hpp): the rank's thread runs it in
// hgas_stream_sync once the stream has reached it. With one hardware work queue that cannot
// work: the stream's wait for the host would sit in the queue ahead of the copies and kernels
// that the host part issues on this device (a device vector's), and the rank would wait for
// itself (on two GPUs, rank threads' collectives over 64 KiB stalled until HGAS_TIMEOUT). There
// the collective runs at the call instead: the stream's earlier work first (as hgas_stream_sync
// waits for it), then the blocking collective; the stream's later work is enqueued after the
// call returns, so the stream's order holds, and an error is returned by the call itself. The
// call then returns only once every member has called it, like a blocking collective: a
// program whose member posts, after its collective call, the message or put that another
// member's earlier stream work waits for stalls here until HGAS_TIMEOUT.
status coll_on_stream(core::rank &r, const char *op, std::function<status()> run, cudaStream_t strm) {
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    if (one_hardware_queue()) {
        HGAS_TRY(drain_stream(r, op, strm));
        return run();
    }
    HGAS_TRY_ASSIGN(coll::stream_slot w, coll::stream_enqueue(r, op, std::move(run)));
    return words_on_stream(r, op, s, w, coll::stream_cancel, strm, 0);
}

status quiet_on_stream(core::rank &r, cudaStream_t strm) {
    const char *op = "hgas_quiet_on_stream";
    HGAS_TRY_ASSIGN(state *s, gpu_state(r, op));
    // Copies and memory operations complete in stream order; only the proxy needs waiting for.
    if (!s->ctx().slots || !s->proxy_reachable()) return status::ok;
    stream_span sp(s, strm);
    const int e = cu::launch_quiet(s->ctx(), strm);
    if (!e) sp.keep(op, 0, -1, 0, -1, trace::op_kernel);
    return launched(op, "the quiet kernel's launch", e);
}

status grid_check(int grid_blocks, int max_resident, const char *what) {
    if (max_resident < 0)
        return fail(status::invalid_arg, "hgas::device::check_resident: the occupancy query failed: %s",
                    what ? what : "?");
    if (grid_blocks <= 0)
        return fail(status::invalid_arg, "hgas::device::check_resident: %d blocks: launch at least one", grid_blocks);
    if (grid_blocks > max_resident)
        return fail(status::invalid_arg, "hgas::device::check_resident: %d blocks (with the reserve) but at most %d %s "
                    "on this GPU: blocks that wait for each other (grid_sync, grid_wait_until on a signal a later block "
                    "sends) would deadlock; launch at most %d", grid_blocks, max_resident, what ? what : "", max_resident);
    return status::ok;
}

}  // namespace hgas::device
