// Private to the UCX transport: the transport class, shared by ucx_transport.cpp (setup, RMA
// mode, waits) and am.cpp (the active-message protocol). See README.md for the life of an
// operation in each mode.
//
// Locking rule (the one thing to keep in mind when editing): `ops_mu_` and `err_mu_` are leaf
// locks. No UCX call is ever made while holding them. UCX callbacks run with the worker's
// lock held (UCS_THREAD_MODE_MULTI) and take our locks; a thread holding our lock while
// calling into UCX would deadlock against them. With the `self` UCT transport an AM handler
// even runs inside ucp_am_send_nbx of the sender, on the sender's thread.
#pragma once
#include <thread>
#include <ucp/api/ucp.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.hpp"
#include "transport/transport.hpp"

namespace hgas::transport::ucx {

// Segment ids a rank may register (mem::seg_count today; later kinds add a few).
inline constexpr unsigned k_max_segments = 64;
// Active-message ids of the `am` protocol (am.cpp).
inline constexpr unsigned k_am_request = 0x4801;
inline constexpr unsigned k_am_reply = 0x4802;

enum class data_mode { rma, am };

class ucx_transport;

// One remote rank (also this rank itself: it reaches itself through UCX too).
struct peer_state {
    ucx_transport *owner = nullptr;
    int rank = -1;
    ucp_ep_h ep = nullptr;
    bool err_mode_peer = false;  // UCP_ERR_HANDLING_MODE_PEER (off-node) or NONE (same node)
    // Written by the endpoint error callback (progress context), read by waits on any thread.
    std::atomic<int> ep_error{UCS_OK};
    // Unfinished implicit operations to this peer: nbi requests (rma) or AM ops not yet
    // acknowledged. quiet() waits for zero; timeouts name the peers that are not at zero.
    std::atomic<int64_t> outstanding{0};
};

// A segment of this rank. Fixed slots (no reallocation) because AM handlers read them from the
// progress thread; `ready` publishes base/size (release on register, acquire in handlers).
struct local_seg {
    std::atomic<bool> ready{false};
    void *base = nullptr;
    uint64_t size = 0;
    ucp_mem_h memh = nullptr;
    bool allocated = false;  // memory allocated by UCX (allocate_segment), freed by unmap
};

// A peer's segment as this rank reaches it. Touched only by the rank's thread.
struct remote_seg {
    bool attached = false;
    uint64_t base = 0;
    uint64_t size = 0;
    ucp_rkey_h rkey = nullptr;  // rma mode only
};

// Wire format of the `am` protocol. Both sides are the same build on the same architecture
// (one job), so the structs travel as they are; `magic` catches a mixed-up AM id.
enum class am_kind : uint8_t { put = 1, get = 2, amo = 3, put_signal = 4 };
inline constexpr uint16_t k_am_magic = 0x4855;  // "HU"

struct am_request_hdr {
    uint64_t id;          // initiator's op id, echoed in the reply
    uint64_t offset;      // in segment `seg` of the target
    uint64_t length;      // put/get/put_signal bytes
    uint64_t operand;     // amo operand, or the signal value of put_signal
    uint64_t compare;     // compare_swap
    uint64_t sig_offset;  // put_signal: signal word, in segment `sig_seg`
    uint32_t src;         // initiator rank: the reply goes back on our endpoint to it
    uint16_t seg;
    uint16_t sig_seg;
    uint16_t magic;
    uint8_t kind;         // am_kind
    uint8_t op;           // amo_op or signal_op
    uint8_t width;        // amo: 4 or 8
    uint8_t pad[3];
};
static_assert(sizeof(am_request_hdr) == 64);

struct am_reply_hdr {
    uint64_t id;
    uint64_t value;  // amo: old value. Error: the size of the target segment (for the message)
    int32_t code;    // hgas status of the execution at the target
    uint16_t magic;
    uint8_t kind;
    uint8_t pad;
};
static_assert(sizeof(am_reply_hdr) == 24);

// One AM operation of this rank waiting for its send to complete and its reply to arrive.
// Lives in ucx_transport::ops_ and is erased only once both happened (or at shutdown), so a
// UCX callback holding its address never sees it freed.
struct am_op {
    ucx_transport *owner = nullptr;
    uint64_t id = 0;
    int peer = -1;
    am_kind kind = am_kind::put;
    uint16_t seg = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
    void *dst = nullptr;  // get: where the reply data lands
    // Set under ops_mu_; the waiter polls them without the lock (acquire pairs with the
    // release store in the callback, so `value`/`code`/dst contents are visible once true).
    std::atomic<bool> sent{false};
    std::atomic<bool> replied{false};
    // Guarded by ops_mu_:
    bool detached = false;   // nobody waits: finishing it updates counters and async errors
    bool abandoned = false;  // its waiter timed out: drop late data, report nothing
    status code = status::ok;
    std::string error;       // message for `code`
    uint64_t value = 0;
};

class ucx_transport final : public transport, public tag_channel {
public:
    static result<std::unique_ptr<ucx_transport>> create(const settings &cfg);
    ~ucx_transport() override;

    const char *name() const override { return "ucx"; }
    caps capabilities() const override;
    status connect(const setup &s) override;
    bool can_reach(int peer) const override { return peer >= 0 && peer < static_cast<int>(peers_.size()); }
    status register_segment(const local_segment &seg, std::string &blob) override;
    result<void *> allocate_segment(uint16_t seg, uint64_t size) override;
    status native_amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *result);
    status attach_segment(int peer, uint16_t seg, uint64_t size, const std::string &blob) override;
    void shutdown() override;

    status put(remote dst, const void *src, size_t n, bool nbi) override;
    status get(void *dst, remote src, size_t n, bool nbi) override;
    status put_nb(remote dst, const void *src, size_t n, pending &p) override;
    status get_nb(void *dst, remote src, size_t n, pending &p) override;
    status test(pending &p, bool &done) override;
    status amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare,
               uint64_t *result) override;
    status put_signal(remote dst, const void *src, size_t n, remote sig, signal_op op,
                      uint64_t value, bool nbi) override;
    status fence() override;
    status quiet() override;
    status progress() override;
    uint64_t progressed() const override { return progressed_.load(std::memory_order_relaxed); }
    // A step of serving a peer's active-message request (its arrival, a rendezvous payload
    // landed, a reply sent): what keeps the helper thread awake. The rank's own operations'
    // completions do not count, or an initiator's helper would spin on its own worker and
    // contend for its lock with the rank's calls.
    void note_served() { progressed_.fetch_add(1, std::memory_order_relaxed); }
    // Rendezvous transfers of peers' requests under way (a put's payload coming in, a get's
    // reply going out): each takes several progress calls of this side, some a long transfer
    // apart, during which nothing counts as served, so the helper slept between them: the likely
    // reason why a busy target's 2-4 MiB accesses over active messages were up to 1.5x slower
    // than an idle one's (one H200; src/progress/README.md).
    bool serving() const override { return serving_.load(std::memory_order_relaxed) > 0; }
    void serving_add(int d) { serving_.fetch_add(d, std::memory_order_relaxed); }

    data_mode mode() const { return mode_; }

    // Tag matching for the message layer (tag.cpp).
    tag_channel *tags() override { return this; }
    bool cuda_memory() const override { return cuda_memory_; }
    status tag_send(int peer, uint64_t tag, const void *buf, size_t n, bool host, tag_op *op) override;
    bool tag_take(uint64_t want, uint64_t mask, uint64_t &tag, size_t &len, void *&msg) override;
    status tag_recv(void *msg, void *buf, size_t n, bool host, int peer, tag_op *op) override;
    bool tag_peer_failed(int peer) const override { return peer_dead(peer); }
    bool tag_any_failed() const override { return any_ep_error_.load(std::memory_order_acquire); }

    // --- used by UCX callbacks (static functions of the two .cpp files) -----------------
    void on_ep_error(peer_state &p, ucs_status_t st);
    void nbi_done(peer_state &p, ucs_status_t st);
    // An implicit operation failed; quiet() reports the first such failure.
    void record_async_error(status st, std::string msg);
    // AM protocol entry points (am.cpp).
    ucs_status_t am_on_request(const am_request_hdr &h, void *data, size_t length,
                               const ucp_am_recv_param_t *param);
    ucs_status_t am_on_reply(const am_reply_hdr &h, void *data, size_t length,
                             const ucp_am_recv_param_t *param);
    void am_mark_sent(am_op *op, ucs_status_t st);
    void am_mark_replied(am_op *op, status code, std::string error, uint64_t value);
    void am_send_reply(int src, const am_reply_hdr &h, const void *data, size_t len);
    void am_finish_put_at_target(const am_request_hdr &h);

private:
    ucx_transport() = default;

    // Setup helpers.
    status init_context();
    status register_am_handlers();
    void close_endpoints();

    // Waits: every one progresses the worker, has the HGAS_TIMEOUT deadline, and stops early
    // when the endpoint to `peer` failed (peer < 0: any peer).
    template <class Done>
    status wait_until(Done &&done, const char *what, int peer);
    // Waits for a request returned by an *_nbx call and frees it.
    status wait_request(ucs_status_ptr_t req, const char *what, int peer);
    // The failure status for an operation on `peer`: peer_failed when its endpoint died.
    status ucs_failure(ucs_status_t st, const char *what, int peer);
    status peer_failure(int peer, const char *what);
    status timeout_failure(const char *what, int peer);
    bool peer_dead(int peer) const {
        return peer >= 0 && peers_[peer]->ep_error.load(std::memory_order_acquire) != UCS_OK;
    }
    // A peer whose endpoint failed (and, if asked, that has outstanding operations), or -1.
    int first_dead_peer(bool with_outstanding) const;

    // RMA mode: validates a target range against the attached segment (a cheap second check;
    // the initiator's core already checked it).
    status check_target(remote r, size_t n, const char *what);
    // Posts one operation: `post(param)` returns the *_nbx result. Blocking: waits for local
    // completion. nbi: counts it; its callback uncounts it and records a failure.
    template <class Post>
    status issue(bool nbi, int peer, const char *what, Post &&post);

    // AM mode (am.cpp).
    status am_check(remote r, const char *what);
    am_op *am_new_op(am_kind kind, remote r, uint64_t length, void *dst);
    status am_send(am_op *op, const am_request_hdr &h, const void *data, size_t n);
    // Waits until the op is finished, collects its result and erases it.
    status am_wait(am_op *op, const char *what, uint64_t *value);
    // Lets callbacks finish the op (after local completion, for blocking puts and nbi ops).
    void am_detach(am_op *op);
    // Under ops_mu_: erase a detached op whose send and reply both completed.
    void am_maybe_finish_locked(am_op *op);
    status am_put(remote dst, const void *src, size_t n, bool wait_local, am_op **out);
    status am_get(void *dst, remote src, size_t n, bool nbi, am_op **out);
    status am_amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare,
                  uint64_t *result);
    status am_put_signal(remote dst, const void *src, size_t n, remote sig, signal_op op,
                         uint64_t value, bool nbi);
    status am_test(pending &p, bool &done);
    status complete_all(const char *what);

    // Async errors of implicit operations.
    status take_async_error();

    data_mode mode_ = data_mode::rma;
    bool multi_thread_ = false;
    bool cuda_memory_ = false;  // this UCX was built with CUDA memory support
    double timeout_s_ = 300;
    double boot_timeout_s_ = 300;  // the address exchange at connect
    std::function<status()> job_alive_;  // setup::job_alive
    std::function<void(const std::string &)> peer_lost_;  // setup::peer_lost
    bool yield_when_idle_ = false;
    bool native_amo_ = true;  // rma mode, same-node peers: try UCX atomics first  // more ranks on this node than cores: see wait_until
    int me_ = 0;
    int size_ = 1;
    bool connected_ = false;
    bool shut_down_ = false;
    std::atomic<bool> closing_{false};       // shutdown started: failures are expected, not news
    std::atomic<bool> any_ep_error_{false};  // some peer_state::ep_error is set

    ucp_context_h context_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    std::vector<std::unique_ptr<peer_state>> peers_;
    std::array<local_seg, k_max_segments> local_{};
    std::vector<std::array<remote_seg, k_max_segments>> remote_;  // [peer][seg]

    // Sum of peer_state::outstanding; quiet() waits for it to reach zero.
    std::atomic<int64_t> outstanding_{0};
    // progress() calls under way (helper thread); shutdown waits for none.
    std::atomic<int> in_progress_{0};
    std::atomic<uint64_t> progressed_{0};  // note_served() calls
    std::atomic<int> serving_{0};          // serving(): rendezvous transfers for peers under way

    std::mutex err_mu_;
    status async_code_ = status::ok;
    std::string async_msg_;

    std::mutex ops_mu_;
    std::unordered_map<uint64_t, std::unique_ptr<am_op>> ops_;
    uint64_t next_op_id_ = 1;  // rank thread only
};

template <class Done>
status ucx_transport::wait_until(Done &&done, const char *what, int peer) {
    deadline dl(timeout_s_);
    poll_budget budget;
    spin_backoff backoff(yield_when_idle_);  // an AM is answered by the target's CPU
    while (!done()) {
        if (ucp_worker_progress(worker_) == 0) backoff.idle();
        if (peer_dead(peer)) {
            if (done()) break;
            return peer_failure(peer, what);
        }
        if (budget.tick()) {
            // The job's end (a rank killed, hgas_abort) may be the only news of a dead same-node
            // peer: UCX's shared-memory endpoints do not report it.
            if (job_alive_) HGAS_TRY(job_alive_());
            if (dl.expired()) return timeout_failure(what, peer);
        }
    }
    return status::ok;
}

// printf into a std::string (for messages built on a callback thread, where fail() would set
// the wrong thread's last error).
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Hex codec for binary blobs travelling through the bootstrap store as text.
std::string hex_encode(const void *data, size_t n);
bool hex_decode(const std::string &text, std::string &out);

}  // namespace hgas::transport::ucx
