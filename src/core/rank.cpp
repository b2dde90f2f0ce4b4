#include "core/rank.hpp"

#include <atomic>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <sched.h>
#include <thread>

#include "base/crash.hpp"
#include "base/log.hpp"
#include "core/gpu_funnel.hpp"
#include "core/wire_codec.hpp"

namespace hgas::core {

namespace {
thread_local rank *tls_rank = nullptr;
// The rank of a process that hosts exactly one, so that threads other than the one that
// called hgas_init find it. A registry, not rank state: with several ranks per process
// every thread names its rank through set_current() instead.
std::atomic<rank *> g_sole_rank{nullptr};
// With HGAS_THREADS=T, the next thread of this process to call hgas_init gets rank
// process * T + this. A counter of the process's threads, not rank state.
std::atomic<int> g_next_slot{0};
}  // namespace

thread_local int rank::tls_safe_points = 0;
thread_local int rank::tls_api_depth = 0;

void rank::api_lock() {
    if (!api_mu_.try_lock()) {
        api_waiters_.fetch_add(1, std::memory_order_relaxed);
        api_mu_.lock();
        api_waiters_.fetch_sub(1, std::memory_order_relaxed);
    }
    api_grants_.fetch_add(1, std::memory_order_relaxed);
    ++tls_api_depth;
}

void rank::api_unlock() {
    --tls_api_depth;
    api_mu_.unlock();
}

void rank::yield_api_lock() {
    const int depth = tls_api_depth;
    if (!depth || !api_waiters_.load(std::memory_order_relaxed)) return;
    // Let the whole (recursive) lock go, and wait until a waiter has taken it or a few yields
    // passed: std::mutex is not fair, and unlocking then locking at once would mostly win it
    // back before the woken thread runs.
    const uint64_t grants = api_grants_.load(std::memory_order_relaxed);
    for (int i = 0; i < depth; ++i) api_mu_.unlock();
    tls_api_depth = 0;
    for (int i = 0; i < 64 && api_grants_.load(std::memory_order_relaxed) == grants &&
                    api_waiters_.load(std::memory_order_relaxed);
         ++i)
        sched_yield();
    for (int i = 0; i < depth; ++i) api_mu_.lock();
    tls_api_depth = depth;
}

rank *current() {
    // One rank per process, the common case: the process-wide pointer first. libhgas is a
    // shared library, so reading a thread_local is a call (__tls_get_addr), a third of an
    // 8-byte put's cost; the sole rank is set only where no thread has another rank.
    if (rank *s = g_sole_rank.load(std::memory_order_acquire)) return s;
    return tls_rank;
}

void set_current(rank *r) {
    tls_rank = r;
    // A process of several ranks has no sole rank: a thread that called no hgas_init has none.
    if (!r || r->ranks_per_process() == 1) g_sole_rank.store(r, std::memory_order_release);
}

void set_thread_rank(rank *r) { tls_rank = r; }

rank::~rank() {
    device_ext_.reset();  // its proxy thread acts for this rank and uses everything below
    for (auto &[key, a] : attachments_)
        if (a.release) a.release(a.value);
    engine_.stop_helper();
    staging_.reset();
    unregister_host_segments();
    for (auto &t : transports_) t->shutdown();
}

result<std::unique_ptr<rank>> rank::create(int thread_level) {
    std::unique_ptr<rank> r(new rank());
    r->thread_level_ = thread_level;
    // Any thread may call at once: every API call holds the API mutex from the start.
    if (thread_level == HGAS_THREAD_MULTIPLE) r->set_serialized();
    status s = r->init();
    if (s != status::ok) {
        // Tell the others why we are leaving, so they do not wait for us until a timeout.
        if (r->store_) (void)r->store_->abort("rank " + std::to_string(r->job_.rank) + " failed in hgas_init: " +
                                             last_error());
        return s;
    }
    return r;
}

status rank::init() {
    init_thread_ = std::this_thread::get_id();
    phase("start");
    HGAS_TRY_ASSIGN(cfg_, settings::from_env());
    const std::string &lvl = cfg_.text(setting::log_level);
    log_configure(lvl == "error" ? log_level::error : lvl == "info" ? log_level::info
                                                    : lvl == "debug" ? log_level::debug : log_level::warn,
                  cfg_.text(setting::debug).c_str());
    timeout_ = cfg_.seconds(setting::timeout);
    HGAS_TRY_ASSIGN(job_, boot::detect(cfg_));
    ranks_per_process_ = static_cast<int>(cfg_.integer(setting::threads));
    if (ranks_per_process_ > 1) {
        // Ranks as threads: the launcher numbered processes; this thread takes the next slot.
        const int slot = g_next_slot.fetch_add(1, std::memory_order_relaxed);
        if (slot >= ranks_per_process_)
            return fail(status::invalid_setting, "hgas_init: HGAS_THREADS=%d, and this is call %d of hgas_init in "
                        "process %d: each of its %d threads calls hgas_init once", ranks_per_process_, slot + 1,
                        job_.rank, ranks_per_process_);
        if (!cfg_.text(setting::trace).empty())
            return fail(status::unsupported, "HGAS_TRACE is not supported with HGAS_THREADS=%d (the trace writer is "
                        "per process); run with one rank per process to trace", ranks_per_process_);
        job_.rank = job_.rank * ranks_per_process_ + slot;
        job_.size *= ranks_per_process_;
    }
    log_set_rank(job_.rank);
    // With ranks as threads the report names the first rank of the process.
    if (cfg_.flag(setting::crash_report)) crash_report_install(job_.rank);
    transport::direct::set_copy_nt_min(cfg_.bytes(setting::shm_nt_min));
    // Once per job: hgasrun checks its environment, which the ranks inherit, before starting
    // them; without it (srun, mpirun) rank 0 does.
    if (job_.rank == 0 && job_.launcher != "hgasrun" && cfg_.flag(setting::warn_unused_env))
        for (const auto &u : unused_env())
            HGASI_WARN("base", "unused environment variable: %s%s%s (HGAS_WARN_UNUSED_ENV=0 silences this)",
                       u.name.c_str(), u.suggestion.empty() ? "" : " (maybe: ",
                       u.suggestion.empty() ? "" : (u.suggestion + "?)").c_str());
    const double boot_timeout = cfg_.seconds(setting::boot_timeout);
    phase("settings");
    HGAS_TRY_ASSIGN(store_, boot::client::connect(job_, boot_timeout));
    phase("connect");

    // Node names decide who shares memory; host names decide who shares cores (they differ
    // when one machine pretends to be several nodes: hgasrun --nodes, HGAS_NODE_NAME).
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::vector<std::string> names;
    HGAS_TRY(store_->allgather("init.node", job_.node_name + '\n' + host, names, boot_timeout));
    std::vector<std::string> nodes(names.size());
    int same_machine = 0;
    for (size_t i = 0; i < names.size(); ++i) {
        const size_t nl = names[i].find('\n');
        nodes[i] = names[i].substr(0, nl);
        if (nl != std::string::npos && names[i].compare(nl + 1, std::string::npos, host) == 0) ++same_machine;
    }
    topo_ = boot::topology::from_node_names(nodes, job_.rank);
    oversubscribed_ = same_machine > static_cast<int>(std::thread::hardware_concurrency());
    HGASI_DEBUG("core", "rank %d of %d on node %d/%d (local %d/%d), launcher %s", job_.rank, job_.size,
                topo_.node_me, topo_.node_n, topo_.local_rank, topo_.local_n, job_.launcher.c_str());

    phase("nodes");
    HGAS_TRY(create_transports());
    phase("transports");
    HGAS_TRY(open_devices());
    HGAS_TRY(plan_msg_pool(same_machine));
    HGAS_TRY(create_segments());
    HGAS_TRY(create_static_segment());
    phase("segments");
    HGAS_TRY(exchange_segments());

    std::vector<transport::transport *> raw;
    for (auto &t : transports_) raw.push_back(t.get());
    HGAS_TRY(router_.build(raw, job_.size, job_.rank, topo_));
    // The fast path: peers a transport maps directly are reached by plain loads and stores.
    // Peers mapped at their first use get theirs then (attach_peer).
    for (int p = 0; p < job_.size; ++p)
        if (attach_state_[p].load(std::memory_order_relaxed) == 1)
            for (uint16_t s = 0; s < mem::seg_count; ++s)
                if (!mem::is_device_segment(s))
                    peers_[p][s].direct = static_cast<char *>(router_.route(p)->peer_base(p, s));
    HGAS_TRY(register_host_segments());
    engine_.set_transports(raw);

    // Internal symmetric objects: the same allocation sequence on every rank gives the same
    // offsets, before any user allocation.
    // A heap in a fresh shm segment reads as zeros already; zeroing it again would take the
    // pages from /dev/shm that a sparse area (the message rings) is meant to leave untaken.
    const bool fresh_zero = own_[mem::seg_symmetric].mapping.base() != nullptr;
    // zero: false for an area every byte of which is written before it is read (the pool).
    auto alloc = [&](uint64_t bytes, uint64_t &off, bool commit = true, bool zero = true) -> status {
        auto r = sym_heap().allocate(bytes, 64, commit);
        if (!r.ok() && sym_heap().commit_failed()) return r.error();  // /dev/shm is full: commit said so
        if (!r.ok())
            return fail(status::no_memory,
                        "HGAS_HEAP_SIZE=%llu is too small for hgas's internal objects (%llu "
                        "bytes); raise it",
                        (unsigned long long)cfg_.bytes(setting::heap_size), (unsigned long long)bytes);
        off = *r;
        if (!fresh_zero && zero) std::memset(own_base(mem::seg_symmetric) + off, 0, bytes);
        return status::ok;
    };
    // The message layer's pinned pool first: the segment was made that much larger than
    // HGAS_HEAP_SIZE (plan_msg_pool), so what follows comes out of the heap the user asked for
    // and an overflow names those objects. Sparse like the rings: only jobs that message device
    // memory take its pages (where a GPU registers the heap, all of it is page-locked).
    if (internal_.msg_pool_depth)
        HGAS_TRY(alloc(2 * internal_.msg_pool_depth * internal_.msg_pool_chunk, internal_.msg_pool, false, false));
    HGAS_TRY(alloc(internal_objects::max_rounds * 64, internal_.barrier_flags));
    HGAS_TRY(alloc(64, internal_.barrier_entered));
    HGAS_TRY(alloc(uint64_t{internal_objects::coll_team_slots} * internal_objects::coll_team_words * 64,
                   internal_.coll_flags));
    internal_.coll_scratch_size = cfg_.bytes(setting::coll_scratch);
    if (internal_.coll_scratch_size < 4096) internal_.coll_scratch_size = 4096;
    HGAS_TRY(alloc(internal_.coll_scratch_size, internal_.coll_scratch));
    HGAS_TRY(create_staging());
    internal_.msg_slot = cfg_.bytes(setting::msg_slot);
    internal_.msg_slots = static_cast<uint64_t>(cfg_.integer(setting::msg_slots));
    if (internal_.msg_slot < 256 || internal_.msg_slot % 64)
        return fail(status::invalid_setting, "HGAS_MSG_SLOT=%llu: use at least 256, a multiple of 64",
                    (unsigned long long)internal_.msg_slot);
    // The message rings grow with the job (a ring per sending rank) and most stay unused:
    // left sparse, each ring's pages are taken when a sender first writes them (a full
    // /dev/shm then is a SIGBUS that mem/shm_guard.hpp names).
    HGAS_TRY(alloc(msg_area_bytes(job_.size, internal_.msg_slot, internal_.msg_slots), internal_.msg, false));
    HGAS_TRY(alloc(internal_objects::msg_stream_slots * 16, internal_.msg_stream));
    // The device barrier's words, before any user allocation of the cuda heap (zeroed with the
    // segment); every rank with the cuda kind reserves the same offset.
    if (own_size(mem::seg_cuda_symmetric)) {
        auto off = heap(mem::seg_cuda_symmetric).allocate(internal_objects::device_sync_bytes, 64);
        if (!off.ok())
            return fail(status::no_memory, "HGAS_CUDA_HEAP_SIZE is too small for hgas's device barrier words");
        internal_.device_sync = *off;
        off = heap(mem::seg_cuda_symmetric)
                  .allocate(internal_objects::coll_team_slots * internal_objects::coll_kernel_team_words * 8, 64);
        if (!off.ok())
            return fail(status::no_memory, "HGAS_CUDA_HEAP_SIZE is too small for hgas's collective flag words");
        internal_.coll_kernel_flags = *off;
        // The one-kernel alltoall's and reduce_scatter's staging (coll/direct.cpp): where a heap too
        // small for it leaves it out (alike on every rank of one heap size), they take the queue.
        off = heap(mem::seg_cuda_symmetric)
                  .allocate(internal_objects::coll_kernel_staging_slots * internal_objects::coll_kernel_staging_bytes,
                            256);
        internal_.coll_kernel_staging = off.ok() ? *off : 0;
    }
    // What was allocated so far is hgas's own: no user free, put or get reaches it.
    for (auto &h : heaps_) h.seal_runtime_prefix();
    if (cfg_.flag(setting::progress_thread))
        engine_.start_helper(static_cast<unsigned>(cfg_.integer(setting::progress_interval_us)),
                             static_cast<unsigned>(cfg_.integer(setting::progress_spin_us)), job_.rank);
    phase("objects");
    HGAS_TRY(store_->barrier("init.done", boot_timeout));
    phase("barrier");
    if (log_enabled(log_level::info, "core")) log_init_summary();
    return status::ok;
}

void rank::phase(const char *name) {
    struct timespec cpu{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    const uint64_t c = static_cast<uint64_t>(cpu.tv_sec) * 1000000000ull + static_cast<uint64_t>(cpu.tv_nsec);
    if (phase_count_ < phases_.size()) phases_[phase_count_++] = {name, now_ns(), c};
}

status rank::open_devices() {
    gpu::open_args a{&cfg_, job_.job_id, job_.rank, topo_.local_rank, topo_.local_n, ranks_per_process_, &regs_};
    if (cfg_.bytes(setting::cuda_heap_size) == 0) {
        kind_off_[1] = "kind cuda is off: HGAS_CUDA_HEAP_SIZE=0";
    } else {
        auto d = gpu::open_cuda(a);
        if (d.ok()) devices_[1] = std::move(*d);
        else if (d.error() == status::unsupported) kind_off_[1] = last_error();
        else return d.error();
    }
    if (cfg_.bytes(setting::sim_heap_size) == 0) {
        kind_off_[2] = "kind sim is off: set HGAS_SIM_HEAP_SIZE (e.g. 16M) to turn it on";
    } else {
        HGAS_TRY_ASSIGN(devices_[2], gpu::open_sim(a));
    }
    // Mode (d): ranks that are threads of this process issue their GPU work through one thread.
    if (ranks_per_process_ > 1 && cfg_.text(setting::gpu_sharing) == "funneled")
        for (auto &d : devices_)
            if (d) d = funnel_device(std::move(d), job_.rank, timeout_);
    for (auto &d : devices_)
        if (d) HGASI_DEBUG("core", "device %s", d->describe().c_str());
    if (devices_[1] || devices_[2]) {
        gpu::reg_policy::config rc;
        rc.want = cfg_.text(setting::reg_cache) == "auto";
        rc.asked = std::string(cfg_.source(setting::reg_cache)) == "environment";
        rc.min = cfg_.bytes(setting::reg_cache_min);
        rc.max = cfg_.bytes(setting::reg_cache_max);
        rc.reuse_min = cfg_.bytes(setting::reg_cache_reuse_min);
        rc.reuse = static_cast<uint64_t>(cfg_.integer(setting::reg_cache_reuse));
        // The cuda device page-locks; with sim only the entries are recorded (the policy's CI).
        reg_policy_.start(rc, devices_[1].get(), [this] { return staging_ ? staging_->quiet() : status::ok; });
    }
    return status::ok;
}

status rank::cache_user_range(const void *p, size_t n) {
    if (!reg_policy_.active()) return status::ok;
    const auto &pc = reg_policy_.cfg();
    bool cacheable = n >= pc.min || (pc.reuse && n >= pc.reuse_min);  // the sizes the policy may take
    // hgas's host heaps, own and mapped peers', are registered already (the program's static
    // data is not, and may be cached like any user buffer).
    const auto a = reinterpret_cast<uintptr_t>(p);
    for (int r = 0; cacheable && r < job_.size; ++r)
        for (uint16_t s = 0; s < mem::seg_count && peer_attached(r); ++s) {
            const auto b = reinterpret_cast<uintptr_t>(r == job_.rank ? own_[s].base : peers_[r][s].direct);
            const uint64_t sz = r == job_.rank ? own_[s].size : peers_[r][s].size;
            if (b && s != mem::seg_static && !mem::is_device_segment(s) && a < b + sz && a + n > b)
                cacheable = false;
        }
    return reg_policy_.prepare(p, n, cacheable);
}

status rank::register_host_segments() {
    gpu::device *cuda = device(mem::kind::cuda);
    if (!cuda) return status::ok;
    // GPUs copy to and from the host heaps (own and same-node peers') directly: page-locked,
    // these are DMA targets, and the staging rings live in them.
    for (int p = 0; p < job_.size; ++p)
        for (uint16_t s : {mem::seg_symmetric, mem::seg_local}) {
            char *b = p == job_.rank ? own_[s].base : peers_[p][s].direct;
            if (!b || !peers_[p][s].size) continue;
            HGAS_TRY(cuda->register_host(b, peers_[p][s].size));
            registered_.push_back(b);
        }
    return status::ok;
}

void rank::unregister_host_segments() {
    reg_policy_.stop();  // no more unmap reports; what they dropped is unregistered
    gpu::device *cuda = device(mem::kind::cuda);
    if (cuda)
        for (char *b : registered_) cuda->unregister_host(b);
    registered_.clear();
    // The user's registrations, and the cache's, that are still there at finalize.
    for (const auto &e : regs_.clear())
        if (e.pinned && cuda) cuda->unregister_user(reinterpret_cast<void *>(e.base));
}

// hgas_register. Registration is for host memory the program owns: hgas's host heaps are
// registered already, and device memory needs none (device copies reach it as it is).
status rank::register_user(void *p, size_t n) {
    if (!p) return fail(status::invalid_arg, "hgas_register: the pointer is NULL");
    if (n == 0) return fail(status::invalid_arg, "hgas_register: size 0 at %p (give the buffer's length in bytes)", p);
    const auto a = reinterpret_cast<uintptr_t>(p);
    if (n > UINTPTR_MAX - a)
        return fail(status::invalid_arg, "hgas_register: [%p, +%zu) wraps around the address space", p, n);
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        const auto b = reinterpret_cast<uintptr_t>(own_[s].base);
        if (!b || s == mem::seg_static || a >= b + own_[s].size || a + n <= b) continue;
        if (mem::is_device_segment(s))
            return fail(status::invalid_arg, "hgas_register: [%p, +%zu) is hgas %s memory (segment %u): device copies "
                        "reach it without registration", p, n, mem::kind_name(mem::segment_kind(s)), s);
        return fail(status::invalid_arg, "hgas_register: [%p, +%zu) overlaps hgas's host heap (segment %u), which is "
                    "registered with the devices already", p, n, s);
    }
    const mem::kind k = kind_of(p, n);
    if (k != mem::kind::host)
        return fail(status::invalid_arg, "hgas_register: %p is %s device memory: device copies reach it without "
                    "registration (hgas_register is for host buffers)", p, mem::kind_name(k));
    // Cached entries whose pages were unmapped (and maybe mapped again here) are unregistered
    // first: the GPU would otherwise still hold the old registration of these pages.
    HGAS_TRY(reg_policy_.prepare(p, n, false));
    // The cache's own entries give way: the user's registration of these pages wins.
    HGAS_TRY(reg_policy_.drop_cached(p, n));
    gpu::reg_cache::entry clash;
    if (regs_.overlaps(p, n, &clash))
        return fail(status::invalid_arg, "hgas_register: [%p, +%zu) overlaps the registered range [%p, +%zu): "
                    "registrations may not overlap (hgas_deregister that one first)", p, n,
                    reinterpret_cast<void *>(clash.base), clash.size);
    gpu::device *cuda = device(mem::kind::cuda);
    bool pinned = false;
    if (cuda) {
        HGAS_TRY_ASSIGN(pinned, cuda->register_user(p, n));
    }
    gpu::reg_cache::entry e;
    e.base = a;
    e.size = n;
    e.pinned = pinned;
    if (!regs_.insert(e)) {
        if (pinned) cuda->unregister_user(p);
        return fail(status::internal, "hgas_register: [%p, +%zu) could not be recorded", p, n);
    }
    HGASI_DEBUG("mem", "registered [%p, +%zu)%s", p, n, pinned ? " with the GPU" : cuda ? " (pinned already)" : "");
    return status::ok;
}

status rank::deregister_user(void *p) {
    if (!p) return fail(status::invalid_arg, "hgas_deregister: the pointer is NULL");
    gpu::reg_cache::entry e;
    if (!regs_.overlaps(p, 1, &e) || e.cached)  // the cache's own entries are not the user's to release
        return fail(status::invalid_arg, "hgas_deregister: %p is not registered (never passed to hgas_register, or "
                    "deregistered already)", p);
    if (e.base != reinterpret_cast<uintptr_t>(p))
        return fail(status::invalid_arg, "hgas_deregister: %p lies inside the registered range [%p, +%zu) but is not "
                    "its start: pass the pointer given to hgas_register", p, reinterpret_cast<void *>(e.base), e.size);
    // Device copies still in flight from or to the range (the _nbi forms) finish first: the
    // pages must stay locked under a DMA.
    if (staging_) HGAS_TRY(staging_->quiet());
    regs_.remove(p, &e);
    if (e.pinned)
        if (gpu::device *cuda = device(mem::kind::cuda)) cuda->unregister_user(p);
    return status::ok;
}

status rank::create_staging() {
    // Symmetric decision: every rank sees the same segment table, so all allocate the area or
    // none does.
    bool any_device = false;
    for (int p = 0; p < job_.size; ++p)
        for (uint16_t s = 0; s < mem::seg_count; ++s)
            if (mem::is_device_segment(s) && peers_[p][s].size) any_device = true;
    if (!any_device) return status::ok;
    proto::staging_config c;
    c.me = job_.rank;
    c.n = job_.size;
    c.chunk = cfg_.bytes(setting::staging_chunk);
    c.slots = static_cast<int>(cfg_.integer(setting::staging_slots));
    if (c.chunk < 4096 || c.chunk % 64)
        return fail(status::invalid_setting, "HGAS_STAGING_CHUNK=%llu: use at least 4K, a multiple of 64",
                    (unsigned long long)c.chunk);
    // The rings grow with the job: within HGAS_STAGING_AREA_MAX and half the heap,
    // the defaults shrink (proto::staging::plan).
    const uint64_t budget =
        std::min<uint64_t>(cfg_.bytes(setting::staging_area_max), cfg_.bytes(setting::heap_size) / 2);
    const proto::staging_plan plan = proto::staging::plan(
        c.n, c.chunk, c.slots, budget, std::string(cfg_.source(setting::staging_chunk)) == "environment",
        std::string(cfg_.source(setting::staging_slots)) == "environment");
    c.chunk = plan.chunk;
    c.slots = plan.slots;
    const uint64_t bytes = plan.bytes;
    if (plan.shrunk && job_.rank == 0)
        HGASI_INFO("proto", "staging rings for %d ranks: %d slots x %llu B per peer (%llu KiB in all, within %llu KiB: "
                   "HGAS_STAGING_AREA_MAX, half of HGAS_HEAP_SIZE)", c.n, c.slots, (unsigned long long)c.chunk,
                   (unsigned long long)(bytes >> 10), (unsigned long long)(budget >> 10));
    // Sparse like the message rings (init): a ring's pages are taken when a sender first uses it.
    auto off = sym_heap().allocate(bytes, 64, false);
    if (!off.ok())
        return fail(status::no_memory,
                    "HGAS_HEAP_SIZE=%llu is too small for the device staging rings (%llu bytes "
                    "= ranks x HGAS_STAGING_SLOTS x HGAS_STAGING_CHUNK, plus replies); raise it or lower those",
                    (unsigned long long)cfg_.bytes(setting::heap_size), (unsigned long long)bytes);
    internal_.staging = c.area = *off;
    if (!own_[mem::seg_symmetric].mapping.base()) std::memset(own_base(mem::seg_symmetric) + *off, 0, bytes);  // UCX's memory
    // A peer's heap is mapped at its first use: the rings ask at theirs.
    c.peer_sym = [this](int p) -> char * {
        const peer_segment *ps = segment(static_cast<uint32_t>(p), mem::seg_symmetric);
        return ps ? ps->direct : nullptr;
    };
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        c.own_base[s] = own_[s].base;
        c.own_size[s] = own_[s].size;
    }
    for (int k = 0; k < 3; ++k) c.dev[k] = devices_[k].get();
    c.route = [this](int p) { return router_.route(p); };
    c.wait = [this](const char *what, const std::function<bool()> &pred) { return wait(what, pred); };
    staging_ = std::make_unique<proto::staging>(std::move(c));
    proto::staging *st = staging_.get();
    return engine_.add_poller([this, st](bool on_rank_thread) {
        const uint64_t before = st->messages_applied();
        const status s = st->poll(on_rank_thread);
        if (st->messages_applied() != before) engine_.note_work();
        return s;
    });
}

mem::kind rank::kind_of(const void *p, size_t n) const {
    // hgas's own host heaps first: the common case, and no device call.
    const int s = own_segment_of(p, n);
    if (s >= 0) return mem::segment_kind(static_cast<uint16_t>(s));
    for (mem::kind k : {mem::kind::sim, mem::kind::cuda})
        if (gpu::device *d = device(k); d && d->owns(p, n ? n : 1)) return k;
    return mem::kind::host;
}

// The message layer's pinned pool: a fixed number of chunks whatever the number of peers. It
// lives in the symmetric host segment (mapped by the node's ranks, registered with UCX, and
// page-locked where a GPU is used) but beyond HGAS_HEAP_SIZE: the segment is made that much
// larger, so a program sized to its heap (an OpenSHMEM program asking SHMEM_SYMMETRIC_SIZE=32M for
// a 30 MiB block) still fits, and the pool keeps the chunk size that the staged path's speed needs
// (2 MiB chunks: 0.81 of pinned PCIe on one H200 where 256 KiB ones gave about 0.5;
// docs/messaging.md).
status rank::plan_msg_pool(int ranks_here) {
    internal_.msg_pool_chunk = cfg_.bytes(setting::msg_pool_chunk);
    internal_.msg_pool_depth = static_cast<uint64_t>(cfg_.integer(setting::msg_pool_depth));
    if (internal_.msg_pool_chunk < 4096 || internal_.msg_pool_chunk % 64 || internal_.msg_pool_chunk > (1ull << 31))
        return fail(status::invalid_setting, "HGAS_MSG_POOL_CHUNK=%llu: use 4K to 2G, a multiple of 64",
                    (unsigned long long)internal_.msg_pool_chunk);
    // Every rank on this machine has its pool: a quarter of the machine's memory shared by them
    // is the most it may take, so that a mistaken setting fails here, named, not in the kernel.
    const uint64_t pool = 2 * internal_.msg_pool_depth * internal_.msg_pool_chunk;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const uint64_t limit = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 /
                                                       static_cast<uint64_t>(std::max(ranks_here, 1))
                                                 : UINT64_MAX;
    if (pool > limit)
        return fail(status::invalid_setting,
                    "the message pool (2 x HGAS_MSG_POOL_DEPTH=%llu x HGAS_MSG_POOL_CHUNK=%llu "
                    "= %llu MiB per rank, %d ranks on this machine) would take more than a quarter of its "
                    "memory: lower either setting",
                    (unsigned long long)internal_.msg_pool_depth, (unsigned long long)internal_.msg_pool_chunk,
                    (unsigned long long)(pool >> 20), ranks_here);
    return status::ok;
}

status rank::create_segments() {
    uint64_t sizes[mem::seg_count] = {};
    sizes[mem::seg_symmetric] = cfg_.bytes(setting::heap_size);
    sizes[mem::seg_local] = cfg_.bytes(setting::local_heap_size);
    if (device(mem::kind::cuda)) {
        sizes[mem::seg_cuda_symmetric] = cfg_.bytes(setting::cuda_heap_size);
        sizes[mem::seg_cuda_local] = cfg_.bytes(setting::cuda_local_heap_size);
    }
    if (device(mem::kind::sim)) {
        sizes[mem::seg_sim_symmetric] = cfg_.bytes(setting::sim_heap_size);
        sizes[mem::seg_sim_local] = cfg_.bytes(setting::sim_local_heap_size);
    }
    // When UCX, not shm, carries this node's traffic (HGAS_TRANSPORTS without shm), the heaps
    // come from UCX: its shared-memory transports store directly only into memory it allocated.
    transport::transport *ucx_allocates = nullptr;
    if (!cfg_.list_has(setting::transports, "shm") && topo_.local_n > 1)
        for (auto &t : transports_)
            if (std::string(t->name()) == "ucx") ucx_allocates = t.get();
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        if (s == mem::seg_static || !sizes[s]) continue;  // the program's own memory: create_static_segment(); or a kind that is off
        if (sizes[s] < 64 * 1024)
            return fail(status::invalid_setting, "the heap of segment %u is %llu bytes: at least 64K (HGAS_*HEAP_SIZE)",
                        s, (unsigned long long)sizes[s]);
        // The pool past the user's heap (plan_msg_pool): whole chunks, multiples of 64 bytes.
        if (s == mem::seg_symmetric) sizes[s] += 2 * internal_.msg_pool_depth * internal_.msg_pool_chunk;
        own_[s].size = sizes[s];
        if (mem::is_device_segment(s)) {
            HGAS_TRY_ASSIGN(void *p, device(mem::segment_kind(s))->alloc_segment(s, sizes[s], dev_blob_[s]));
            own_[s].base = static_cast<char *>(p);
        } else if (ucx_allocates) {
            HGAS_TRY_ASSIGN(void *p, ucx_allocates->allocate_segment(s, sizes[s]));
            own_[s].base = static_cast<char *>(p);
        } else {
            HGAS_TRY_ASSIGN(own_[s].mapping,
                            mem::host_mapping::create(mem::shm_name(job_.job_id, job_.rank, s), sizes[s]));
            own_[s].base = static_cast<char *>(own_[s].mapping.base());
        }
        heaps_[s] = mem::allocator(sizes[s]);
        // Blocks get their /dev/shm pages as they are handed out, so that a full /dev/shm is
        // an allocation error rather than a SIGBUS at first touch.
        if (own_[s].mapping.base())
            heaps_[s].set_commit([m = &own_[s].mapping](uint64_t off, uint64_t n) { return m->commit(off, n); });
    }
    return status::ok;
}

status rank::create_transports() {
    const auto &wanted = cfg_.list(setting::transports);
    if (wanted.empty())
        return fail(status::invalid_setting, "HGAS_TRANSPORTS is empty: name at least one of self,shm,ucx");
    transport::setup su{&cfg_, &job_, &topo_, store_.get(), oversubscribed_, [this] { return check_alive(); },
                         [this](const std::string &why) { report_peer_lost(why); }};
    // A transport is created only while some rank is still unreached: UCX behind self and shm
    // on one node would route nobody, and its setup (a context, a worker, an address exchange
    // and an endpoint to every rank) was most of a one-node job's start-up (85% at 64 ranks).
    // Every rank sees the same topology, so every rank makes the same choice.
    auto all_reached = [&] {
        for (int p = 0; p < job_.size; ++p) {
            bool reached = false;
            for (auto &t : transports_) reached = reached || t->can_reach(p);
            if (!reached) return false;
        }
        return true;
    };
    for (const auto &name : wanted) {
        if (!transports_.empty() && all_reached()) {
            HGASI_DEBUG("core", "transport %s is not set up: %s reach every rank", name.c_str(),
                        transports_.size() > 1 ? "the ones before it" : transports_[0]->name());
            continue;
        }
        std::unique_ptr<transport::transport> t;
        if (name == "self") t = transport::create_self();
        else if (name == "shm") t = transport::create_shm();
        else if (name == "ucx") {
            auto r = transport::create_ucx(cfg_);
            if (!r.ok()) {
                // Without UCX, a one-node job still runs on self and shm; say so once.
                if (r.error() == status::unsupported && wanted.size() > 1) {
                    HGASI_DEBUG("core", "%s", last_error().c_str());
                    continue;
                }
                return r.error();
            }
            t = std::move(*r);
        }
        HGAS_TRY(t->connect(su));
        transports_.push_back(std::move(t));
    }
    return status::ok;
}

status rank::exchange_segments() {
    // One allgather carries, for every segment, its size, what peers need to map it if it is
    // device memory, and each transport's blob if it is host memory.
    codec out;
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        out.u64(own_[s].size);
        out.str(dev_blob_[s]);
        transport::local_segment ls{s, own_[s].base, own_[s].size, own_[s].mapping.name(), own_[s].mapping.fd()};
        for (auto &t : transports_) {
            std::string blob;
            if (own_[s].size && !mem::is_device_segment(s)) HGAS_TRY(t->register_segment(ls, blob));
            out.str(blob);
        }
    }
    // Which GPU this rank uses (for the "same GPU" team): cuda first, else sim.
    {
        gpu::device *g = device(mem::kind::cuda) ? device(mem::kind::cuda) : device(mem::kind::sim);
        out.u64(g ? static_cast<uint64_t>(g->ordinal()) + 1 : 0);
    }
    std::vector<std::string> all;
    phase("register");
    HGAS_TRY(store_->allgather("init.segments", out.hex(), all, cfg_.seconds(setting::boot_timeout)));
    gpu_of_.assign(job_.size, -1);
    phase("exchange");
    peers_.assign(job_.size, {});
    attach_state_.reset(new std::atomic<uint8_t>[job_.size]);
    lazy_blobs_.assign(job_.size, {});
    const size_t nt = transports_.size();
    bool device_segments = false;
    const bool staged_only = cfg_.text(setting::path) == "staged";
    for (int p = 0; p < job_.size; ++p) {
        codec in;
        if (!in.from_hex(all[p])) return fail(status::bootstrap, "segment table of rank %d is corrupt", p);
        for (uint16_t s = 0; s < mem::seg_count; ++s) {
            uint64_t size = 0;
            std::string dblob;
            if (!in.get_u64(size) || !in.get_str(dblob))
                return fail(status::bootstrap, "segment table of rank %d is short", p);
            peer_segment &ps = peers_[p][s];
            ps.size = size;
            ps.kind = mem::segment_kind(s);
            for (size_t ti = 0; ti < nt; ++ti) {
                transport::transport *t = transports_[ti].get();
                std::string blob;
                if (!in.get_str(blob)) return fail(status::bootstrap, "segment table of rank %d is short", p);
                if (!size || mem::is_device_segment(s) || !t->can_reach(p)) continue;
                if (p != job_.rank && t->attaches_lazily()) {
                    if (lazy_blobs_[p].empty()) lazy_blobs_[p].resize(mem::seg_count * nt);
                    lazy_blobs_[p][s * nt + ti] = std::move(blob);  // attach_peer, at the first use
                } else {
                    HGAS_TRY(t->attach_segment(p, s, size, blob));
                }
            }
            if (s + 1 == mem::seg_count) {
                uint64_t g = 0;
                if (!in.get_u64(g)) return fail(status::bootstrap, "segment table of rank %d is short", p);
                gpu_of_[p] = static_cast<int>(g) - 1;
            }
            if (!size || !mem::is_device_segment(s)) continue;
            device_segments = true;
            // Device memory: our own, or a same-node peer's mapped by IPC where the device can
            // reach it (HGAS_PATH=staged keeps every peer unmapped, to test the staged path).
            if (p == job_.rank) {
                ps.dev = own_[s].base;
            } else if (gpu::device *d = device(ps.kind); d && !staged_only && topo_.node_of[p] == topo_.node_me) {
                HGAS_TRY_ASSIGN(void *m, d->map_peer(p, dblob, size));
                ps.dev = static_cast<char *>(m);
            }
        }
    }
    for (int p = 0; p < job_.size; ++p) attach_state_[p].store(lazy_blobs_[p].empty() ? 1 : 0, std::memory_order_relaxed);
    phase("attach");
    // Every peer has mapped our segments once all have passed this barrier: drop the names so
    // nothing is left in /dev/shm however the job ends from here on. Peers that attach lazily
    // use no names (the descriptors this rank keeps open), so without device segments (mapped
    // here by name) and with every transport that reaches a peer lazy, nobody needs the barrier.
    bool eager = device_segments;
    for (auto &t : transports_)
        for (int p = 0; p < job_.size && !eager && !t->attaches_lazily(); ++p) eager = p != job_.rank && t->can_reach(p);
    if (eager) HGAS_TRY(store_->barrier("init.attached", cfg_.seconds(setting::boot_timeout)));
    phase("attached");
    for (auto &t : transports_) t->segments_attached();
    for (auto &d : devices_)
        if (d) d->segments_attached();
    for (auto &o : own_) o.mapping.unlink();
    return status::ok;
}

bool rank::attach_peer(int p) {
    std::lock_guard<std::mutex> lk(attach_mu_);
    if (attach_state_[p].load(std::memory_order_acquire) == 1) return true;
    const status s = attach_peer_locked(p);
    if (s == status::ok) {
        attach_state_[p].store(1, std::memory_order_release);
        return true;
    }
    // Most often the peer has exited: say so to the job, naming it, before this rank's own
    // error ends it with a message that would blame this rank. From the rank's thread only:
    // the store client is not shared with the helper or the device proxy while the rank's
    // thread may be inside a store call (the store notices the dead peer by itself anyway).
    const std::string why = "rank " + std::to_string(job_.rank) + " cannot reach rank " + std::to_string(p) +
                            " at its first use (mapping its shared memory): " + last_error();
    if (std::this_thread::get_id() == init_thread_) report_peer_lost(why);
    (void)fail(s == status::unsupported ? s : status::peer_failed, "%s", why.c_str());
    return false;
}

status rank::attach_peer_locked(int p) {
    const size_t nt = transports_.size();
    gpu::device *cuda = device(mem::kind::cuda);
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        peer_segment &ps = peers_[p][s];
        if (!ps.size || mem::is_device_segment(s)) continue;
        for (size_t ti = 0; ti < nt; ++ti) {
            const std::string &blob = lazy_blobs_[p][s * nt + ti];
            if (!blob.empty()) HGAS_TRY(transports_[ti]->attach_segment(p, s, ps.size, blob));
        }
        ps.direct = static_cast<char *>(router_.route(p)->peer_base(p, s));
        // As register_host_segments does at init for the peers mapped then.
        if (cuda && ps.direct && (s == mem::seg_symmetric || s == mem::seg_local)) {
            HGAS_TRY(cuda->register_host(ps.direct, ps.size));
            registered_.push_back(ps.direct);
        }
    }
    HGASI_DEBUG("core", "attached rank %d", p);
    lazy_blobs_[p].clear();
    lazy_blobs_[p].shrink_to_fit();
    return status::ok;
}

int rank::peers_attached() const {
    int k = 0;
    for (int p = 0; p < job_.size; ++p) k += p != job_.rank && topo_.node_of[p] == topo_.node_me && peer_attached(p);
    return k;
}

int rank::own_segment_of(const void *p, uint64_t len) const {
    // An address one past the end of a segment is in bounds for an empty range, but where the
    // next segment starts right there (heaps are mapped aligned, so they may touch), it is that
    // segment's first byte: a segment that holds the byte wins over one it only ends at.
    const char *c = static_cast<const char *>(p);
    int at_end = -1;
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        const char *b = own_[s].base;
        if (!b || c < b || !mem::in_bounds(static_cast<uint64_t>(c - b), len, own_[s].size)) continue;
        if (static_cast<uint64_t>(c - b) < own_[s].size) return s;
        if (at_end < 0) at_end = s;
    }
    return at_end;
}

status rank::check_alive() {
    // The one check every wait makes (rank::wait, the transports' own waits through
    // setup::job_alive, hgas_progress): a look at the store socket for its ABORTED notice or
    // its close. Rate-limited, so that a wait may call it on every round; once the job has
    // ended every call fails at once.
    if (job_ended_.load(std::memory_order_acquire))
        return fail(status::peer_failed, "the job is ending: %s", end_reason_.c_str());
    const uint64_t now = now_ns();
    if (now - last_alive_check_ns_.load(std::memory_order_relaxed) < 1000000) return status::ok;
    // The device proxy's thread may wait too; the store client is single-threaded, and one
    // thread's look is as good as the other's.
    std::unique_lock<std::mutex> lk(alive_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return status::ok;
    last_alive_check_ns_.store(now, std::memory_order_relaxed);
    std::string why;
    if (store_->aborted(&why)) {
        // A job exit (shmem_global_exit on some rank) is not a failure to report: every rank
        // ends with the status it asked for, wherever it is waiting.
        int code = 0;
        if (store_->exit_requested(&code)) {
            HGASI_DEBUG("boot", "rank %d exits with status %d: %s", me(), code, why.c_str());
            std::fflush(nullptr);
            _exit(code);
        }
        end_reason_ = why;
        job_ended_.store(true, std::memory_order_release);
        return fail(status::peer_failed, "the job is ending: %s", why.c_str());
    }
    return status::ok;
}

void rank::report_peer_lost(const std::string &why) {
    // Under srun/mpirun nothing watches the processes: if this rank exits on the error before
    // the store notices the dead peer's closed connection (a big process takes a while to
    // die), the job's message would blame this rank. Tell the store first; the first reason
    // it hears is the one every rank reports.
    std::lock_guard<std::mutex> lk(alive_mu_);
    if (job_ended_.load(std::memory_order_acquire)) return;
    std::string ended;
    if (store_->aborted(&ended)) return;
    (void)store_->abort(why);
}

status rank::poll() {
    HGAS_TRY(engine_.poll());
    return check_alive();
}

// HGAS_LOG_LEVEL=info: what this rank chose, one line per topic, so that a user can see which
// transport reaches which peer and which memory kinds exist without a debugger.
void rank::log_init_summary() const {
    HGASI_INFO("core", "rank %d of %d: node %d of %d (\"%s\"), local rank %d of %d, launcher %s", job_.rank,
               job_.size, topo_.node_me, topo_.node_n, job_.node_name.c_str(), topo_.local_rank, topo_.local_n,
               job_.launcher.c_str());
    // Peers by transport, as ranges: "shm: 0-3; ucx: 4-7".
    std::string text;
    for (const auto &t : transports_) {
        std::string ranks;
        for (int p = 0; p < job_.size;) {
            if (router_.route(p) != t.get()) {
                ++p;
                continue;
            }
            int q = p;
            while (q + 1 < job_.size && router_.route(q + 1) == t.get()) ++q;
            ranks += (ranks.empty() ? "" : ",") + std::to_string(p) + (q > p ? "-" + std::to_string(q) : "");
            p = q + 1;
        }
        if (!ranks.empty()) text += (text.empty() ? "" : "; ") + std::string(t->name()) + ": " + ranks;
    }
    HGASI_INFO("core", "transports by peer rank: %s", text.c_str());
    // Where init's time went (docs/bench.md: hgas-bench --init), phase by phase.
    std::string ph;
    for (size_t i = 1; i < phase_count_; ++i) {
        char b[64];
        std::snprintf(b, sizeof b, "%s%s %.1f/%.1f", i > 1 ? ", " : "", phases_[i].name,
                      (phases_[i].ns - phases_[i - 1].ns) / 1e6, (phases_[i].cpu_ns - phases_[i - 1].cpu_ns) / 1e6);
        ph += b;
    }
    if (phase_count_ > 1)
        HGASI_INFO("core", "init took %.1f ms (%.1f ms of CPU): %s (ms wall/CPU)",
                   (phases_[phase_count_ - 1].ns - phases_[0].ns) / 1e6,
                   (phases_[phase_count_ - 1].cpu_ns - phases_[0].cpu_ns) / 1e6, ph.c_str());
    HGASI_INFO("core", "symmetric heap %llu bytes (HGAS_HEAP_SIZE), progress thread %s",
               (unsigned long long)cfg_.bytes(setting::heap_size),
               cfg_.flag(setting::progress_thread) ? "on" : "off (HGAS_PROGRESS_THREAD=0)");
    const char *names[] = {"host", "cuda", "sim"};
    for (int k = 1; k < 3; ++k)
        HGASI_INFO("core", "memory kind %s: %s", names[k],
                   kind_off_[k].empty() ? (devices_[k] ? "on" : "off") : kind_off_[k].c_str());
}

status rank::finalize() {
    if (finalized_) return status::ok;
    finalized_ = true;
    HGASI_INFO("core", "rank %d finalizing; it mapped %d of its %d peers on the node (HGAS_PEER_ATTACH=%s)", job_.rank,
               peers_attached(), topo_.local_n - 1, cfg_.text(setting::peer_attach).c_str());
    status s = status::ok;
    if (device_ext_) s = device_ext_->finalize();
    if (staging_) s = staging_->quiet();
    for (auto &t : transports_) {
        status q = t->quiet();
        if (s == status::ok) s = q;
    }
    status b = store_->barrier("finalize", timeout_);
    if (b == status::timeout) {
        // The store named the ranks that have not reached hgas_finalize. This rank is leaving,
        // so they would wait for it in turn: end the job with that message, so that the
        // launcher names the culprit rather than the first rank to exit.
        const std::string why = "hgas_finalize on rank " + std::to_string(me()) + ": " + last_error();
        (void)store_->abort(why);
        b = fail(status::timeout, "%s", why.c_str());
    }
    if (s == status::ok) s = b;
    if (msg_ext_ && b == status::ok) {
        status m = msg_ext_->finalize();
        if (s == status::ok) s = m;
    }
    engine_.stop_helper();
    staging_.reset();
    unregister_host_segments();
    for (auto &t : transports_) t->shutdown();
    (void)store_->finalize();
    return s;
}

}  // namespace hgas::core
