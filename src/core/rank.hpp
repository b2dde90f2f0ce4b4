// The rank object: all per-rank state of every layer, reached from the calling thread.
// Nothing in hgas keeps rank state in process-wide globals, so that a later release can run
// several ranks as threads of one process; a thread finds its rank through current().
#pragma once
#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <hgas/hgas.h>

#include "base/clock.hpp"
#include "base/settings.hpp"
#include "boot/boot.hpp"
#include "core/handles.hpp"
#include "gpu/reg_cache.hpp"
#include "gpu/reg_policy.hpp"
#include "mem/allocator.hpp"
#include "mem/gptr.hpp"
#include "mem/segment.hpp"
#include "progress/engine.hpp"
#include "proto/router.hpp"
#include "proto/staging.hpp"
#include "transport/transport.hpp"

namespace hgas::core {

// What this rank knows of one segment of one rank.
struct peer_segment {
    char *direct = nullptr;  // host segment the CPU may load and store (self or shm), or nullptr
    char *dev = nullptr;     // device segment this process names (own, or mapped by IPC), or nullptr
    uint64_t size = 0;       // 0: the rank has no such segment
    mem::kind kind = mem::kind::host;
};

// Internal symmetric objects, allocated at init at the same offsets on every rank.
struct internal_objects {
    static constexpr int max_rounds = 32;     // dissemination barrier: ceil(log2(ranks))
    uint64_t barrier_flags = 0;               // max_rounds words, one cache line apart
    uint64_t barrier_epoch = 0;               // barriers completed by this rank
    uint64_t barrier_entered = 0;             // one word: the last barrier this rank entered, for
                                              // peers that time out to see who has not arrived
    uint64_t coll_flags = 0;                  // collective signal words (see coll/): one block of
                                              // coll_team_words words per team slot, slot 0 the world's
    uint64_t coll_epoch = 0;                  // world-team collectives completed by this rank
    uint64_t coll_scratch = 0;                // HGAS_COLL_SCRATCH bytes
    uint64_t coll_scratch_size = 0;
    uint64_t staging = 0;                     // proto::staging's rings, credits and replies (0: none)
    uint64_t device_sync = 0;                 // in the cuda symmetric heap: the device barrier's words
    uint64_t coll_kernel_flags = 0;           // in the cuda symmetric heap: the one-kernel allreduce's
                                              // flags, coll_kernel_team_words per team slot (coll/direct.cpp)
    uint64_t coll_kernel_staging = 0;         // in the cuda symmetric heap: coll_kernel_staging_bytes per
                                              // team slot below coll_kernel_staging_slots (0: none), where
                                              // the one-kernel alltoall and reduce_scatter put a
                                              // private src
    uint64_t msg = 0;                         // msg/'s rings and credit words (msg_area_bytes)
    uint64_t msg_slot = 0;                    // HGAS_MSG_SLOT
    uint64_t msg_slots = 0;                   // HGAS_MSG_SLOTS
    uint64_t msg_pool = 0;                    // msg/'s pinned pool: 2 x depth chunks (0: none)
    uint64_t msg_pool_chunk = 0;              // HGAS_MSG_POOL_CHUNK
    uint64_t msg_pool_depth = 0;              // HGAS_MSG_POOL_DEPTH (chunks per direction)
    uint64_t msg_stream = 0;                  // msg/'s stream-ordered messages: go and done words
    static constexpr uint64_t msg_stream_slots = 256;
    static constexpr uint64_t device_sync_bytes = max_rounds * 64;
    static constexpr int coll_team_slots = 80;   // teams a rank may belong to at once (coll/team.hpp)
    static constexpr int coll_team_words = 97;   // words (64 bytes apart) per team slot
    static constexpr uint64_t coll_kernel_team_words = 4104;  // gpu::device::team_kernel_flag_words
    static constexpr int coll_kernel_staging_slots = 8;      // team slots with a staging block
    static constexpr uint64_t coll_kernel_staging_bytes = 64 * 1024;  // gpu::device::team_kernel_max_bytes
};

// Bytes of the message area (src/msg/msg.hpp has its layout): a ring of `slots` slots of
// `slot` bytes from every rank, then one 64-byte credit word per rank.
inline uint64_t msg_area_bytes(int n, uint64_t slot, uint64_t slots) {
    return static_cast<uint64_t>(n) * (slots * slot + 64);
}

// State a layer above core keeps per rank (the device layer's context and proxy), owned by the
// rank so that it lives and dies with it. finalize() runs first in rank::finalize.
struct rank_extension {
    virtual ~rank_extension() = default;
    virtual status finalize() = 0;
};

class rank {
public:
    rank(const rank &) = delete;
    rank &operator=(const rank &) = delete;
    ~rank();

    // hgas_init: settings, bootstrap, segments, transports, internal objects. Collective.
    // `thread_level` is what the program asked of hgas_init_thread (HGAS_THREAD_*).
    static result<std::unique_ptr<rank>> create(int thread_level = HGAS_THREAD_SERIALIZED);
    // hgas_finalize: quiet, barrier, release. Collective.
    status finalize();

    int me() const { return job_.rank; }
    int n() const { return job_.size; }
    const boot::topology &topo() const { return topo_; }
    // The ordinal of the GPU (kind cuda, else sim) that rank `p` uses, or -1 if it has none;
    // with the node (topo().node_of) it says which ranks share a GPU.
    int gpu_of(int p) const { return p >= 0 && p < static_cast<int>(gpu_of_.size()) ? gpu_of_[p] : -1; }
    const boot::job_info &job() const { return job_; }
    const settings &cfg() const { return cfg_; }
    double timeout() const { return timeout_; }
    // More ranks on this machine than cores (alike on every rank of the machine).
    bool oversubscribed() const { return oversubscribed_; }

    // Segment of `r` (nullptr for an unknown rank or segment).
    // A peer on this node is mapped at its first use (HGAS_PEER_ATTACH=lazy): this is where,
    // from whichever thread asks first. nullptr also when the peer cannot be mapped (it has
    // exited): last_error() then names it, and the job is told.
    const peer_segment *segment(uint32_t r, uint16_t seg) const {
        if (r >= peers_.size() || seg >= mem::seg_count) return nullptr;
        if (attach_state_[r].load(std::memory_order_acquire) != 1 &&
            !const_cast<rank *>(this)->attach_peer(static_cast<int>(r)))
            return nullptr;
        return &peers_[r][seg];
    }
    // Whether rank r's segments are mapped here yet (tests), and how many same-node peers
    // are (HGAS_LOG_LEVEL=info prints it at finalize).
    bool peer_attached(int r) const {
        return r >= 0 && static_cast<size_t>(r) < peers_.size() && attach_state_[r].load(std::memory_order_acquire) == 1;
    }
    int peers_attached() const;
    char *own_base(uint16_t seg) const { return own_[seg].base; }
    uint64_t own_size(uint16_t seg) const { return own_[seg].size; }
    // Which own segment holds [p, p+len), or -1.
    int own_segment_of(const void *p, uint64_t len) const;
    // --- static data (mem/static_data.hpp) ---
    // Why the program's globals are not symmetric in this job (HGAS_STATIC_DATA=0, ranks that
    // run different executables, pages that are not the program's own), "" when they are.
    const std::string &static_data_unavailable() const { return static_off_; }
    // --- data attached by layers above the C API (hgas_rank_data_set); released in ~rank ---
    struct attachment {
        void *value = nullptr;
        void (*release)(void *) = nullptr;
    };
    std::map<const void *, attachment> &attachments() { return attachments_; }

    transport::transport *route(int peer) const { return router_.route(peer); }
    const proto::router &router() const { return router_; }
    const std::vector<std::unique_ptr<transport::transport>> &transports() const { return transports_; }

    mem::allocator &sym_heap() { return heaps_[mem::seg_symmetric]; }
    mem::allocator &local_heap() { return heaps_[mem::seg_local]; }
    mem::allocator &heap(uint16_t seg) { return heaps_[seg]; }
    // The device of a kind, or nullptr where this rank has no memory of it.
    gpu::device *device(mem::kind k) const { return devices_[static_cast<int>(k)].get(); }
    // Whether any device kind (cuda, sim) is open: without one every pointer is host memory,
    // and the put/get fast path skips kind_of.
    bool has_devices() const { return devices_[1] || devices_[2]; }
    // Why a kind is unavailable ("" when it is available).
    const std::string &kind_unavailable(mem::kind k) const { return kind_off_[static_cast<int>(k)]; }
    mem::kind default_kind() const { return default_kind_; }
    void set_default_kind(mem::kind k) { default_kind_ = k; }
    // Kind of a local address: a device kind if some device of this rank names it.
    mem::kind kind_of(const void *p, size_t n) const;
    proto::staging *staging() const { return staging_.get(); }
    // hgas_register / hgas_deregister: user host ranges registered with the devices.
    status register_user(void *p, size_t n);
    status deregister_user(void *p);
    gpu::reg_cache &registrations() { return regs_; }
    // The automatic registration cache (HGAS_REG_CACHE): rma calls this before a device copy
    // with the user's host range [p, p+n) at one end.
    status cache_user_range(const void *p, size_t n);
    const gpu::reg_policy &reg_policy() const { return reg_policy_; }
    internal_objects &internal() { return internal_; }
    // Explicit non-blocking operations in flight (hgas_put_nb / hgas_get_nb handles).
    handle_table &handles() { return handles_; }
    boot::client &store() { return *store_; }
    progress::engine &engine() { return engine_; }
    std::unique_ptr<rank_extension> &device_extension() { return device_ext_; }
    // The tagged-message layer's state (src/msg); its finalize() runs after the final barrier,
    // when every message sent to this rank has arrived, to report what was never received.
    std::unique_ptr<rank_extension> &msg_extension() { return msg_ext_; }

    // Serialization of API calls with the rank's internal threads that act for it (the device
    // proxy) and, at HGAS_THREAD_MULTIPLE, with the program's other threads: once serialized,
    // every API call holds api_mutex() (recursive) for its duration (api_guard).
    std::recursive_mutex &api_mutex() { return api_mu_; }
    bool serialized() const { return serialized_.load(std::memory_order_relaxed); }
    void set_serialized() { serialized_.store(true, std::memory_order_relaxed); }
    // Ranks of this process (HGAS_THREADS): more than 1 when ranks are threads of it.
    int ranks_per_process() const { return ranks_per_process_; }
    // The level hgas_init_thread granted (HGAS_THREAD_*).
    int thread_level() const { return thread_level_; }
    // api_guard's lock and unlock: they count the calling thread's depth, so that a wait at a
    // safe point can let the whole lock go (yield_api_lock) and take it back as deep as it was.
    void api_lock();
    void api_unlock();
    // At HGAS_THREAD_MULTIPLE, inside a wait at a safe point: if other threads wait for the API
    // mutex, let them have it for a while (a thread blocked in a signal wait or a barrier must
    // not keep its rank's other threads out of hgas). Nothing happens at lower levels.
    void yield_api_lock();
    // The calling thread waits between operations (a signal wait, a barrier round, a handle
    // wait, a stream sync, hgas_progress): work that issues new operations for the rank (the
    // device proxy's requests, another thread's calls at HGAS_THREAD_MULTIPLE) may run inside
    // the wait. Anywhere else an operation may be half done (a staging slot claimed, a reply
    // awaited), and a nested one would corrupt it. Counted per thread: the proxy thread or
    // another program thread acting for the rank is not at this thread's safe point.
    bool at_safe_point() const { return tls_safe_points > 0; }
    void enter_safe_point() { ++tls_safe_points; }
    void leave_safe_point() { --tls_safe_points; }
    static thread_local int tls_safe_points;
    static thread_local int tls_api_depth;  // api_guard locks this thread holds (of its rank)

    // Progress plus a check that the job is still alive (the store's abort notice).
    status poll();
    // Spins on pred() with progress, up to HGAS_TIMEOUT. `what` names the wait in the message.
    template <class Pred>
    status wait(const char *what, Pred pred);

private:
    rank() = default;
    status init();
    void log_init_summary() const;
    // init's phases: a name and the time it ended (HGAS_LOG_LEVEL=info prints them).
    void phase(const char *name);
    struct phase_mark {
        const char *name;
        uint64_t ns, cpu_ns;  // wall clock, and the calling thread's CPU time
    };
    std::array<phase_mark, 16> phases_{};
    size_t phase_count_ = 0;
    status open_devices();
    status plan_msg_pool(int ranks_here);
    status create_segments();
    status create_staging();
    status register_host_segments();
    void unregister_host_segments();
    status create_transports();
    status create_static_segment();  // static data: in core/static_segment.cpp
    status exchange_segments();
    // Maps rank p's host segments through the transports that attach lazily, sets their direct
    // pointers and registers them with the GPU; false (last_error naming p) when p is gone.
    bool attach_peer(int p);
    status attach_peer_locked(int p);
    status check_alive();
    void report_peer_lost(const std::string &why);  // setup::peer_lost

    settings cfg_;
    boot::job_info job_;
    boot::topology topo_;
    std::unique_ptr<boot::client> store_;
    // This rank's segments: POSIX shared memory (mapping), or memory a transport allocated
    // (when UCX carries same-node traffic: see create_segments).
    struct own_segment {
        mem::host_mapping mapping;
        char *base = nullptr;
        uint64_t size = 0;
    };
    std::array<own_segment, mem::seg_count> own_;
    std::vector<std::array<peer_segment, mem::seg_count>> peers_;
    // Per peer: 1 once its segments are mapped (or need no mapping), else 0. Written under
    // attach_mu_ after peers_[p] is filled in, read without a lock (acquire) by segment().
    std::unique_ptr<std::atomic<uint8_t>[]> attach_state_;
    std::mutex attach_mu_;
    std::thread::id init_thread_;  // the rank's thread: the one that ran hgas_init
    // Per peer, segment and transport: the blobs a lazily attaching transport has not used yet.
    std::vector<std::vector<std::string>> lazy_blobs_;
    std::array<mem::allocator, mem::seg_count> heaps_;
    gpu::reg_cache regs_;  // before devices_: they hold a pointer to it
    gpu::reg_policy reg_policy_{regs_};  // stopped in unregister_host_segments, before devices_ go
    std::array<std::unique_ptr<gpu::device>, 3> devices_;  // by mem::kind; [host] stays empty
    std::vector<int> gpu_of_;  // by rank: its GPU's ordinal, -1 for none (exchange_segments)
    std::array<std::string, 3> kind_off_;
    std::array<std::string, mem::seg_count> dev_blob_;    // device segments: what peers map
    mem::kind default_kind_ = mem::kind::host;
    std::unique_ptr<proto::staging> staging_;
    std::vector<char *> registered_;  // host ranges registered with the cuda device
    std::string static_off_;  // static data: see static_data_unavailable()
    std::map<const void *, attachment> attachments_;
    std::vector<std::unique_ptr<transport::transport>> transports_;
    proto::router router_;
    progress::engine engine_;
    internal_objects internal_;
    handle_table handles_;
    std::unique_ptr<rank_extension> device_ext_;
    std::unique_ptr<rank_extension> msg_ext_;
    std::recursive_mutex api_mu_;
    std::atomic<bool> serialized_{false};
    int thread_level_ = HGAS_THREAD_SERIALIZED;
    int ranks_per_process_ = 1;
    std::atomic<int> api_waiters_{0};      // threads blocked in api_lock
    std::atomic<uint64_t> api_grants_{0};  // api_lock acquisitions, so a yield sees one happen
    double timeout_ = 300;
    bool oversubscribed_ = false;  // more ranks on this node than cores
    std::atomic<uint64_t> last_alive_check_ns_{0};
    std::mutex alive_mu_;                 // check_alive: one thread at a time reads the store
    std::atomic<bool> job_ended_{false};  // the store announced the job's end: end_reason_ set
    std::string end_reason_;
    bool finalized_ = false;
};

// Holds the rank's API mutex for one API call when the rank is serialized (no lock at all
// otherwise: the single-threaded fast path is unchanged).
class api_guard {
public:
    explicit api_guard(rank &r) : r_(r.serialized() ? &r : nullptr) {
        if (r_) r_->api_lock();
    }
    ~api_guard() {
        if (r_) r_->api_unlock();
    }
    api_guard(const api_guard &) = delete;
    api_guard &operator=(const api_guard &) = delete;

private:
    rank *r_;
};

// Marks a wait of the rank's thread as a safe point (rank::at_safe_point) for its duration.
class safe_point {
public:
    explicit safe_point(rank &r) : r_(r) { r_.enter_safe_point(); }
    ~safe_point() { r_.leave_safe_point(); }
    safe_point(const safe_point &) = delete;
    safe_point &operator=(const safe_point &) = delete;

private:
    rank &r_;
};

// The calling thread's rank, or nullptr before init / after finalize.
rank *current();
// Install/remove the rank for the calling thread (and as the process's only rank, so that
// other threads of a one-rank process find it too).
void set_current(rank *r);
// The calling thread's rank only (never the process's sole rank): a thread that acts for a
// rank it did not create (hgas_thread_attach), or nullptr to stop.
void set_thread_rank(rank *r);

template <class Pred>
status rank::wait(const char *what, Pred pred) {
    if (pred()) return status::ok;
    // The deadline is set at the first budget tick, not here: a short wait (a ping-pong's)
    // then costs no clock read, and a long one starts its timeout 1024 polls late.
    uint64_t end_ns = 0;
    poll_budget budget;
    spin_backoff backoff(oversubscribed_);
    for (;;) {
        if (pred()) return status::ok;
        HGAS_TRY(engine_.poll());
        if (thread_level_ == HGAS_THREAD_MULTIPLE && tls_safe_points > 0) yield_api_lock();
        backoff.idle();
        if (budget.tick()) {
            // Rate-limited: a look at the store at most once a millisecond. A peer that died
            // after satisfying this wait (it left a barrier before this rank saw that it had
            // and then crashed) must not fail it: the condition is looked at once more.
            if (status alive = check_alive(); alive != status::ok) return pred() ? status::ok : alive;
            const uint64_t now = now_ns();
            if (!end_ns) end_ns = now + static_cast<uint64_t>(timeout_ * 1e9);
            if (now >= end_ns)
                return fail(status::timeout, "%s did not complete within HGAS_TIMEOUT=%g s on rank %d (a peer stuck "
                            "or not calling the matching collective?)", what, timeout_, me());
        }
    }
}

}  // namespace hgas::core
