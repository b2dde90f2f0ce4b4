// Tagged messages: rings with credits, matching, eager and rendezvous (README.md).
#include "msg/msg.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "coll/coll.hpp"
#include "gpu/ipc_cache.hpp"
#include "msg/layout.hpp"
#include "rma/rma.hpp"

namespace hgas::msg {
namespace {

enum msg_type : uint32_t {
    t_eager = 1,     // the whole message in the slot
    t_rts = 2,       // rendezvous: a large message is ready (seg/offset: its buffer, if in a segment)
    t_cts = 3,       // to the sender: send the data (seg/offset: the posted buffer, if in a segment)
    t_data = 4,      // to the receiver: `len` bytes of message rreq at `offset`
    t_fin_send = 5,  // to the sender: the receiver got the message by itself (get)
    t_fin_recv = 6,  // to the receiver: the sender put the whole message into the posted buffer
    t_pdata = 7,     // to the receiver: `aux` bytes at `offset` wait in the sender's pool chunk `seg`
    t_pfree = 8,     // to the sender: pool chunk `seg` was read; `aux` more bytes of sreq are delivered
    t_utag = 9,      // not a slot: a message that arrived by the transport's tag matching (unexpected_msg::umsg)
    t_eager_short = 10,  // in a slot only: an eager message of up to short_max bytes in the
                         // header's second half (read as t_eager; see post)
};
// An eager message of up to short_max bytes travels in the header's second half (the fields
// from sreq on, which an eager message does not use), so that the slot's first 64-byte line
// holds all of it: the receiver takes one line the sender wrote instead of two (8-byte
// msg_rate on the 2-core machine: each line costs a transfer between cores).
constexpr size_t short_at = 32, short_max = 32;
constexpr uint16_t no_seg = 0xffff;
constexpr uint16_t f_discard = 1;  // cts: the receive was too small; the sender just completes
constexpr uint16_t f_dev_dst = 2;  // cts: the posted buffer is device memory
constexpr uint16_t f_ipc = 4;      // rts: the payload is a gpu::user_export of the sender's buffer
constexpr uint16_t f_held = 8;     // t_utag: received into hgas's store (umsg is its tag_xfer), not in UCX
// Internal streams of the pool's copies (shared with proto::staging's outgoing and incoming
// copies: the same directions, and streams are FIFO).
constexpr int stream_out = 1, stream_in = 2;

// Messages by the transport's tag matching (README "Messages by UCX tag matching"): the 64-bit
// tag is 1 marker bit, the scope (12 bits), the source rank (20 bits), the tag (31 bits).
constexpr uint64_t utag_marker = 1ull << 63;
constexpr uint32_t utag_ctx_max = (1u << 12) - 1;
constexpr int utag_rank_max = (1 << 20) - 1;
uint64_t utag_word(uint32_t ctx, int src, int tag) {
    return utag_marker | (uint64_t(ctx) & utag_ctx_max) << 51 | (uint64_t(src) & utag_rank_max) << 31 |
           (uint64_t(uint32_t(tag)) & 0x7fffffffu);
}
uint32_t utag_ctx(uint64_t w) { return static_cast<uint32_t>(w >> 51) & utag_ctx_max; }
int utag_src(uint64_t w) { return static_cast<int>(w >> 31) & utag_rank_max; }
int utag_tag(uint64_t w) { return static_cast<int>(w & 0x7fffffffu); }

// The first 64 bytes of a slot. `seq` is written last: the slot holds message `seq` of its
// ring once the word equals it (sequence numbers start at 1, so a zeroed ring holds none).
struct hdr {
    uint64_t seq;
    uint32_t type;
    int32_t tag;
    uint32_t ctx;
    uint32_t len;     // payload bytes in this slot
    uint64_t bytes;   // the message's size
    uint64_t sreq;    // the send request's id at the sender
    uint64_t rreq;    // the receive request's id at the receiver
    uint64_t offset;  // data: offset in the message; rts/cts: offset of the buffer in `seg`
    uint16_t seg;
    uint16_t flags;
    uint32_t aux;     // pdata, pfree: the chunk's bytes
};
static_assert(sizeof(hdr) == 64);
static_assert(offsetof(hdr, sreq) == 32, "a short eager message starts where the fields it does not use do");

// The header of a t_eager_short slot as the t_eager message it is: its first half, the rest
// as an eager header has it.
inline hdr short_hdr(const hdr &in) {
    hdr h{};
    std::memcpy(&h, &in, short_at);
    h.type = t_eager;
    h.seg = no_seg;
    return h;
}

class state;

// One send or receive that did not complete at once; owned by its handle (or by the blocking
// call's stack). The state refers to it while it is in flight and forgets it when it dies.
struct request final : rma::completion {
    state *st = nullptr;
    bool is_send = false;
    bool done = false;
    status err = status::ok;
    std::string err_msg;
    uint64_t id = 0;
    uint32_t ctx = 0;
    int peer = 0;  // send: dest; recv: src or HGAS_ANY_RANK
    int tag = 0;
    const void *sbuf = nullptr;
    void *rbuf = nullptr;
    size_t bytes = 0;  // send: message size; recv: capacity
    mem::kind kind = mem::kind::host;
    hgas_msg_info_t *info = nullptr;
    size_t arrived = 0, expected = 0;  // recv, chunked rendezvous
    size_t staged = 0, freed = 0;      // send through the pool: bytes copied into chunks, read by the receiver
    uint64_t rreq = 0;                 // send through the pool: the receive's id at the receiver
    producer *prod = nullptr;          // send: bytes produced on demand (msg.hpp)
    consumer *cons = nullptr;          // recv: told of arrived prefixes
    size_t produced = 0;               // send with prod: bytes made valid so far

    status test(core::rank &r, bool &d) override;
    ~request() override;

    // Requests are recycled through a small free list per thread: a window of receives would
    // otherwise allocate and free one each, and the allocator's own per-thread cache holds too
    // few of this size to serve a window (the 8-byte message rate is bounded by such costs).
    static void *operator new(size_t n);
    static void operator delete(void *p) noexcept;
};

// The free list: trivially destructible, so that a request deleted at any point of a thread's
// exit (a rank finalized by an atexit handler, after the thread's own destructors) still finds
// it usable; `closed` then sends every request straight back to the allocator.
struct request_pool {
    static constexpr int keep = 128;
    void *slot[keep];
    int n;
    bool closed;
};
thread_local request_pool t_request_pool;  // zero-initialized
// Gives the list back at thread exit and closes it.
struct request_pool_drain {
    void arm() {}
    ~request_pool_drain() {
        request_pool &f = t_request_pool;
        while (f.n > 0) ::operator delete(f.slot[--f.n]);
        f.closed = true;
    }
};
thread_local request_pool_drain t_request_pool_drain;

void *request::operator new(size_t n) {
    request_pool &f = t_request_pool;
    if (n != sizeof(request) || f.n == 0) return ::operator new(n);
    return f.slot[--f.n];
}
void request::operator delete(void *p) noexcept {
    request_pool &f = t_request_pool;
    if (!p) return;
    if (f.closed || f.n == request_pool::keep) {
        ::operator delete(p);
        return;
    }
    if (f.n == 0) t_request_pool_drain.arm();  // registers the drain's destructor for this thread
    f.slot[f.n++] = p;
}

struct out_item {
    hdr h{};
    request *req = nullptr;  // eager, rts, data: the send
    size_t off = 0;          // data: next byte to send
    std::vector<char> payload;  // rts with f_ipc: the export
};

struct unexpected_msg {
    int src = 0;
    hdr h{};
    // The payload (eager: the message; rts by IPC: the export), small ones inline so that an
    // unexpected 8-byte message costs no allocation of its own.
    uint32_t len = 0;
    char small[48];
    std::unique_ptr<char[]> big;
    unexpected_msg(int s, const hdr &hh, const char *p, size_t n) : src(s), h(hh), len(static_cast<uint32_t>(n)) {
        char *d = small;
        if (n > sizeof small) {
            big.reset(new char[n]);
            d = big.get();
        }
        if (n) std::memcpy(d, p, n);
    }
    // A message that arrived by the transport's tag matching (h.type t_utag): its handle, no payload.
    unexpected_msg(int s, const hdr &hh, void *um) : src(s), h(hh), umsg(um) {}
    void *umsg = nullptr;
    const char *data() const { return big ? big.get() : small; }
    size_t size() const { return len; }
};

// One send or receive posted to the transport's tag matching. `op` is written by a transport
// callback, so the object stays (in state::tag_ops_, a list: stable addresses) until op.done;
// `q` is forgotten when the request dies first.
struct tag_xfer {
    transport::tag_op op;
    request *q = nullptr;
    int peer = 0;
    bool is_send = false;
    std::vector<char> temp;  // a host copy: device memory not given to the transport, or a truncated message
    void *dst = nullptr;     // receive through temp: where the message goes once it arrived
    mem::kind dkind = mem::kind::host;
    // An unexpected message taken out of UCX into temp (the unexpected store): an entry of
    // state::unexpected_ refers to it until a receive matches it.
    bool held = false;
    // A send waiting for the receiver's credit (state::tag_queue_): what to post then.
    bool queued = false;
    uint64_t word = 0;
    const void *from = nullptr;
    size_t n = 0;
    bool host = false;
};

struct peer_state {
    uint64_t next_in = 1;  // next sequence number expected in the ring from this peer
    uint32_t in_slot = 0, out_slot = 0;  // slots of next_in and of the next send: (seq - 1) % slots
    uint64_t consumed = 0, returned = 0;
    uint64_t sent = 0;     // slots sent to this peer
    uint64_t credit_seen = 0;  // the peer's credit word as last read (it only grows)
    // Slots taken whose bytes a device copy still reads (ring_copy), oldest first: credits go
    // back only up to the first of them.
    std::deque<uint64_t> held;
    std::deque<out_item> out;
};

class state final : public core::rank_extension {
public:
    explicit state(core::rank &r) : r_(r) {
        const auto &io = r.internal();
        area_ = io.msg;
        slot_ = io.msg_slot;
        slots_ = io.msg_slots;
        payload_max_ = slot_ - sizeof(hdr);
        unexpected_max_ = r.cfg().bytes(setting::msg_unexpected_max);
        peers_.resize(r.n());
        bounce_.resize(slot_);
        ctxs_.insert(0);
        stream_area_ = io.msg_stream;
        pool_ = io.msg_pool;
        pool_chunk_ = io.msg_pool_chunk;
        pool_depth_ = static_cast<int>(io.msg_pool_depth);
        for (int i = pool_depth_ - 1; i >= 0; --i) {
            free_send_.push_back(i);
            free_recv_.push_back(i);
        }
        stats_.pool_bytes = 2ull * pool_depth_ * pool_chunk_;
        stats_.ring_bytes = static_cast<uint64_t>(r.n()) * slots_ * slot_;
        // HGAS_PATH=staged stages every device transfer: user buffers are not mapped either.
        ipc_threshold_ = r.cfg().text(setting::path) == "staged" ? 0 : r.cfg().bytes(setting::msg_ipc_threshold);
        ipc_no_access_.assign(r.n(), false);
        async_ring_copies_ = r.cfg().flag(setting::msg_async_ring_copy);
        setup_tags();
    }
    ~state() override {
        // Transfers UCX may still complete (a handle that died, the job's end): their ops must
        // outlive the transport's callbacks, so they are left allocated.
        for (auto it = tag_ops_.begin(); it != tag_ops_.end();) {
            auto next = std::next(it);
            if (!it->op.done.load(std::memory_order_acquire)) {
                static auto *kept = new std::list<tag_xfer>;
                kept->splice(kept->end(), tag_ops_, it);
            }
            it = next;
        }
    }

    status finalize() override;

    core::rank &rank() { return r_; }
    const stats &counters() const { return stats_; }
    stats &counters() { return stats_; }

    // --- checks ---
    status check_ctx(const char *op, uint32_t ctx) const {
        if (ctx != 0 && !ctxs_.count(ctx))  // the world scope always exists
            return fail(status::invalid_arg, "%s: message scope %u does not exist on rank %d (create it with "
                        "hgas_msg_ctx_create; HGAS_MSG_CTX_WORLD is 0)", op, ctx, r_.me());
        return status::ok;
    }
    result<uint32_t> ctx_create() {
        const uint32_t id = next_ctx_++;
        uint64_t mine[3] = {id, ~uint64_t(id), tags_ ? 1u : 0u}, agreed[3];
        // max of id and of ~id: equal to (id, ~id) only if every rank has the same id. The
        // third: whether any rank has UCX tag peers, so that the scope limit of that path
        // fails the call on every rank alike (not only on the ranks with such peers).
        HGAS_TRY(coll::allreduce(r_, agreed, mine, 3, HGAS_UINT64, HGAS_OP_MAX));
        if (agreed[0] != id || agreed[1] != ~uint64_t(id))
            return fail(status::invalid_arg, "hgas_msg_ctx_create: ranks disagree on the scope (rank %d would create "
                        "scope %u, another rank a later one): every rank must create scopes in the same order", r_.me(),
                        id);
        if (agreed[2] && id > utag_ctx_max)
            return fail(status::no_memory, "hgas_msg_ctx_create: scope %u is past the last one that messages over "
                        "UCX tag matching can carry (%u; HGAS_MSG_UCX_TAG): destroy scopes no longer used, or set "
                        "HGAS_MSG_UCX_TAG=off", id, utag_ctx_max);
        ctxs_.insert(id);
        return id;
    }
    status ctx_destroy(uint32_t ctx) {
        if (ctx == 0) return fail(status::invalid_arg, "hgas_msg_ctx_destroy: HGAS_MSG_CTX_WORLD cannot be destroyed");
        HGAS_TRY(check_ctx("hgas_msg_ctx_destroy", ctx));
        HGAS_TRY(progress());
        report_unreceived("hgas_msg_ctx_destroy", ctx, false);
        ctxs_.erase(ctx);
        return status::ok;
    }

    // --- operations ---
    status isend(const send_args &a, hgas_handle_t *h, bool blocking);
    status isend_tag(const send_args &a, mem::kind k, hgas_handle_t *h, bool blocking);
    status irecv(const recv_args &a, hgas_handle_t *h, bool blocking);
    status iprobe(uint32_t ctx, int src, int tag, int *flag, hgas_msg_info_t *info);
    status progress();
    void forget(request *q);
    // Stream-ordered messages (msg.hpp).
    result<stream_slot> stream_add(const char *op, bool is_send, const send_args &sa, const recv_args &ra,
                                   const layout *l);
    void stream_cancel(uint64_t seq);
    status stream_status() {
        const status s = stream_err_;
        stream_err_ = status::ok;
        return s == status::ok ? s : fail(s, "%s", stream_err_msg_.c_str());
    }
    // Waits (a safe point) until q is done; its error, or the wait's (timeout, a dead peer).
    status wait_done(const char *what, request &q) {
        core::safe_point sp(r_);
        status err = status::ok;
        HGAS_TRY(r_.wait(what, [&] {
            err = progress();
            return err != status::ok || q.done;
        }));
        HGAS_TRY(err);
        return q.err == status::ok ? status::ok : fail(q.err, "%s", q.err_msg.c_str());
    }

private:
    // The end of isend/irecv once the request is queued or posted: a blocking call waits for
    // it; a non-blocking one that is already done returns HGAS_HANDLE_DONE (and its error),
    // otherwise a handle that owns the request.
    status finish(const char *what, std::unique_ptr<request> q, hgas_handle_t *h, bool blocking) {
        if (blocking) return wait_done(what, *q);
        if (q->done) {
            *h = HGAS_HANDLE_DONE;
            return q->err == status::ok ? status::ok : fail(q->err, "%s", q->err_msg.c_str());
        }
        *h = rma::make_handle(r_, std::move(q));
        return status::ok;
    }

    // Ring geometry.
    uint64_t ring_offset(int src, uint64_t seq) const {  // in any rank's symmetric heap
        return ring_offset_slot(src, (seq - 1) % slots_);
    }
    // The same from the slot index (peer_state keeps it: no division per message).
    uint64_t ring_offset_slot(int src, uint64_t slot) const {
        return area_ + static_cast<uint64_t>(src) * slots_ * slot_ + slot * slot_;
    }
    uint64_t credit_offset(int t) const { return area_ + static_cast<uint64_t>(r_.n()) * slots_ * slot_ + t * 64ull; }
    char *own(uint64_t off) const { return r_.own_base(mem::seg_symmetric) + off; }
    uint64_t credit(int t) const {
        return __atomic_load_n(reinterpret_cast<const uint64_t *>(own(credit_offset(t))), __ATOMIC_ACQUIRE);
    }
    // The credit word's line is the receiver's to write: read it only when the credit last seen
    // is spent, not once per message (an 8-byte message rate spent a quarter of the send there).
    bool has_credit(int t) {
        peer_state &p = peers_[t];
        if (p.sent - p.credit_seen < slots_) return true;
        p.credit_seen = credit(t);
        return p.sent - p.credit_seen < slots_;
    }

    status copy(void *dst, mem::kind dk, const void *src, mem::kind sk, size_t n);
    // Send q's first `upto` bytes are valid (asks its producer); a receive's prefix arrived.
    status produce(request *q, size_t upto) {
        if (!q->prod || upto <= q->produced) return status::ok;
        HGAS_TRY(q->prod->ensure(upto));
        if (upto < q->bytes) ++stats_.pack_steps;
        q->produced = upto;
        return status::ok;
    }
    status arrived(request *q) {
        if (!q->cons) return status::ok;
        if (q->arrived < q->expected) ++stats_.unpack_steps;
        return q->cons->arrived(q->arrived);
    }
    status post(int t, hdr &h, const void *payload, mem::kind pk, size_t len);
    status flush(int t);
    status flush_all();
    status poll_rings();
    // Messages by the transport's tag matching.
    void setup_tags();
    status poll_tags();
    status pump_tags();
    status deliver_tag(request *q, int src, const hdr &h, void *umsg);
    status tag_failure(const tag_xfer &x);
    // Flow control of the tag path (README "Tag matching"): what a message costs the
    // receiver while it is not taken out of UCX, the sender's room, the receiver's credit.
    uint64_t tag_cost(size_t bytes) const { return bytes <= payload_max_ ? bytes + sizeof(hdr) : sizeof(hdr); }
    uint64_t tag_credit(int t) const {  // the ring's credit word is unused for a tag peer; its next word
        return __atomic_load_n(reinterpret_cast<const uint64_t *>(own(credit_offset(t) + 8)), __ATOMIC_ACQUIRE);
    }
    bool tag_room(int t, size_t bytes) const {
        const uint64_t out = tag_sent_cost_[t] - tag_credit(t);
        return out == 0 || out + tag_cost(bytes) <= tag_window_;
    }
    status post_tag(tag_xfer &x);
    status flush_tags();
    result<bool> take_tag(uint64_t w, size_t len, void *m);
    status take_posted_tags();
    status tag_taken(int src, size_t bytes);
    std::unique_ptr<request> new_send(const send_args &a, mem::kind k);
    result<bool> take(int src, uint64_t seq, const hdr &h, const char *payload);
    // ring_seq: the payload is slot ring_seq of src's ring (0: elsewhere, copied at once).
    status deliver(request *q, int src, const hdr &h, const char *payload, void *umsg = nullptr, uint64_t ring_seq = 0);
    bool ring_copy_ok(const request *q) const {
        return async_ring_copies_ && q->kind != mem::kind::host && r_.device(q->kind) != nullptr;
    }
    // seq 0: the bytes are not in a ring slot but in `keep` (an unexpected message's copy),
    // which the copy owns until it has finished.
    status start_ring_copy(request *q, int src, uint64_t seq, const hdr &h, const char *payload, bool data,
                           std::unique_ptr<char[]> keep = nullptr);
    status pump_ring_copies();
    void release_held(int src, uint64_t seq);
    status on_cts(int src, const hdr &h);
    status on_pfree(const hdr &h);
    status pump_pool();
    // Rendezvous by IPC (README): the sender's side, and the receiver's.
    void export_user(int dest, mem::kind k, const void *buf, size_t bytes, hdr &m, std::vector<char> &payload);
    result<bool> start_ipc(request *q, int src, const hdr &h, const char *payload);
    status pump_ipc();
    void close_mappings(std::vector<gpu::ipc_cache::entry> &&v);
    void queue(int t, const hdr &h) {
        peers_[t].out.push_back(out_item{h, nullptr, 0, {}});
        ++queued_;
    }
    // Pool chunks: `depth` for sending, then `depth` for receiving, in the symmetric host heap.
    uint64_t send_chunk(int c) const { return pool_ + static_cast<uint64_t>(c) * pool_chunk_; }
    // How much of a message one chunk carries: bytes / HGAS_MSG_POOL_DEPTH rounded up to 4 KiB,
    // so that a message of a few chunks still overlaps its copy out, its transport and its copy
    // in, but at least a quarter of a chunk (each piece costs a device copy and two ring
    // messages) and at most a chunk. With the defaults (4 x 2 MiB) messages up to 2 MiB go in
    // 512 KiB pieces and those from 8 MiB in whole chunks. The receiver takes whatever length
    // each announces.
    size_t pool_piece(size_t bytes) const {
        const size_t depth = static_cast<size_t>(pool_depth_);
        const size_t even = (bytes + depth - 1) / depth;
        return std::min<size_t>(pool_chunk_, std::max<size_t>(pool_chunk_ / 4, (even + 4095) & ~size_t(4095)));
    }
    uint64_t recv_chunk(int c) const { return pool_ + static_cast<uint64_t>(pool_depth_ + c) * pool_chunk_; }
    status return_credits(int src);
    bool matches(const request *q, int src, const hdr &h) const {
        return q->ctx == h.ctx && (q->peer == HGAS_ANY_RANK || q->peer == src) &&
               (q->tag == HGAS_ANY_TAG || q->tag == h.tag);
    }
    void complete(request *q, status s = status::ok) {
        if (q->done) return;
        q->done = true;
        q->err = s;
        if (s != status::ok) q->err_msg = last_error();
        live_.erase(q->id);
    }
    void set_info(request *q, int src, int tag, size_t bytes) {
        if (q->info) {
            q->info->source = src;
            q->info->tag = tag;
            q->info->bytes = bytes;
        }
    }
    status truncated(request *q, int src, const hdr &h) {
        set_info(q, src, h.tag, h.bytes);
        return fail(status::truncated, "hgas_recv: the message from rank %d with tag %d has %llu bytes but the receive "
                    "buffer holds only %zu; the message was consumed, nothing was written (post a larger buffer, or "
                    "hgas_probe first for the size)", src, h.tag, (unsigned long long)h.bytes, q->bytes);
    }
    void report_unreceived(const char *where, int64_t ctx, bool all);

    core::rank &r_;
    uint64_t area_ = 0, slot_ = 0, slots_ = 0, payload_max_ = 0, unexpected_max_ = 0;
    std::vector<peer_state> peers_;
    std::vector<char> bounce_;  // a slot assembled here for peers whose heap is not mapped
    std::deque<request *> posted_;  // a deque: no allocation per posted receive
    std::deque<unexpected_msg> unexpected_;
    uint64_t unexpected_bytes_ = 0;
    std::unordered_map<uint64_t, request *> live_;  // rendezvous in flight, by id
    uint64_t next_id_ = 1;
    transport::tag_channel *tags_ = nullptr;  // the transport's tag matching, if any peer uses it
    std::vector<bool> tag_peer_;              // per peer: messages go by tag matching, not the rings
    std::list<tag_xfer> tag_ops_;
    // Tag path flow control: per peer, the cost this rank sent and the sends waiting for
    // credit (in order); the cost taken from each sender and returned to it.
    uint64_t tag_window_ = 0;
    std::vector<uint64_t> tag_sent_cost_, tag_taken_, tag_returned_;
    std::vector<std::deque<tag_xfer *>> tag_queue_;
    size_t tag_queued_ = 0;
    // A message taken out of UCX's queue for which the store had no room: the first to take.
    struct tag_msg {
        uint64_t w = 0;
        size_t len = 0;
        void *m = nullptr;
    } tag_stalled_;
    std::set<uint32_t> ctxs_;
    uint32_t next_ctx_ = 1;
    int start_ = 0;      // ring to poll first (fairness)
    bool busy_ = false;  // progress is running further up this thread's stack
    bool finalizing_ = false;
    size_t queued_ = 0;  // out items over all peers
    stats stats_;

    // The pinned pool (README "Pinned pool"): fixed chunks, whatever the number of peers.
    struct chunk_op {  // a copy into (sending) or out of (receiving) a chunk
        int chunk;     // receiving: -1 when the copy reads the sender's chunk where it is mapped
        uint64_t id;  // the request's id (it may have died since: looked up again)
        size_t off, len;
        gpu::device *d;  // nullptr: a CPU copy, done already
        gpu::ticket tk;
        int src = -1;  // receiving from the sender's mapped chunk: its rank, and the t_pfree
        hdr pfree{};   // that frees the chunk once the copy has read it
    };
    struct pull {
        int src;
        hdr h;
    };
    uint64_t pool_ = 0, pool_chunk_ = 0;
    int pool_depth_ = 0;
    std::vector<int> free_send_, free_recv_;
    std::deque<request *> pool_sends_;  // sends with bytes not yet copied into a chunk
    std::deque<chunk_op> out_copies_;   // device -> send chunk, in submission order
    std::deque<chunk_op> in_copies_;    // recv chunk -> device, in submission order
    std::deque<pull> pulls_;            // announced chunks not yet read

    // Eager messages and ring data chunks into device memory, copied out of their ring slot
    // asynchronously (README "Device copies out of the ring"), in submission order.
    struct ring_copy {
        int src;
        uint64_t seq;  // the slot of src's ring it reads (0: none, it reads `keep`)
        uint64_t id;   // the receive's id (it may have died since: looked up again)
        size_t len;
        bool data;  // a chunk of a rendezvous (counts towards `arrived`), else the whole message
        gpu::device *d;
        gpu::ticket tk;
        std::unique_ptr<char[]> keep;
    };
    bool async_ring_copies_ = true;
    std::deque<ring_copy> ring_copies_;

    // Rendezvous by IPC: peers' user allocations mapped here, and the copies out of them.
    struct ipc_op {
        uint64_t id;  // the receive's id (it may have died since: looked up again)
        int src;
        uint64_t sreq;
        gpu::device *d;
        gpu::ticket tk;
    };
    uint64_t ipc_threshold_ = 0;
    std::vector<bool> ipc_no_access_;  // per peer: its buffers cannot be mapped here
    gpu::ipc_cache ipc_cache_;
    std::deque<ipc_op> ipc_ops_;       // in submission order (one stream: FIFO)
    std::vector<gpu::ipc_cache::entry> ipc_graveyard_;  // to close once no copy is in flight

    // Stream-ordered messages, in the order they were enqueued.
    struct stream_op {
        uint64_t seq;
        bool is_send, started = false, expired = false;
        send_args s;
        recv_args rv;
        std::shared_ptr<layout> lay;  // a typed message
        const char *op = nullptr;
        hgas_handle_t h = HGAS_HANDLE_DONE;
    };
    uint64_t *stream_word(uint64_t seq, int which) const {  // 0: go, 1: done
        const uint64_t slot = seq % core::internal_objects::msg_stream_slots;
        return reinterpret_cast<uint64_t *>(own(stream_area_ + slot * 16 + which * 8));
    }
    status pump_streams();
    uint64_t stream_area_ = 0, next_stream_seq_ = 1;
    std::deque<stream_op> stream_ops_;
    bool streaming_ = false;  // pump_streams is running further up the stack
    status stream_err_ = status::ok;
    std::string stream_err_msg_;
};

state *state_of(core::rank &r, const char *op) {
    auto *s = static_cast<state *>(r.msg_extension().get());
    if (!s) (void)fail(status::internal, "%s: the message layer was not set up at hgas_init", op);
    return s;
}

// --- requests ------------------------------------------------------------------------------

status request::test(core::rank &r, bool &d) {
    if (!done) HGAS_TRY(st->progress());
    d = done;
    if (done && err != status::ok) return fail(err, "%s", err_msg.c_str());
    return status::ok;
}

request::~request() {
    if (!done && st) st->forget(this);
}

void state::forget(request *q) {
    // Device copies still writing into q's buffer: the buffer may go with the request (a typed
    // receive's scratch does), so they finish first (bounded by HGAS_TIMEOUT).
    auto wait_copy = [&](gpu::device *d, gpu::ticket tk) {
        const deadline dl(r_.timeout());
        while (!dl.expired()) {
            auto done = d->test(tk);
            if (!done.ok() || *done) return;
        }
    };
    if (q->id) {
        for (const ring_copy &c : ring_copies_)
            if (c.id == q->id) wait_copy(c.d, c.tk);
        for (const chunk_op &o : in_copies_)
            if (o.id == q->id && o.d) wait_copy(o.d, o.tk);
    }
    posted_.erase(std::remove(posted_.begin(), posted_.end(), q), posted_.end());
    for (auto it = pool_sends_.begin(); it != pool_sends_.end();)
        it = *it == q ? pool_sends_.erase(it) : it + 1;
    live_.erase(q->id);
    for (auto it = tag_ops_.begin(); it != tag_ops_.end();) {
        if (it->q != q) {
            ++it;
        } else if (it->queued) {  // never handed to UCX: dropped, as a ring's queued send is
            auto &dq = tag_queue_[it->peer];
            dq.erase(std::find(dq.begin(), dq.end(), &*it));
            --tag_queued_;
            it = tag_ops_.erase(it);
        } else {
            it->q = nullptr;
            ++it;
        }
    }
    for (auto &p : peers_)
        for (auto it = p.out.begin(); it != p.out.end();)
            if (it->req == q) {
                it = p.out.erase(it);
                --queued_;
            } else {
                ++it;
            }
}

// --- moving bytes --------------------------------------------------------------------------

status state::copy(void *dst, mem::kind dk, const void *src, mem::kind sk, size_t n) {
    if (!n) return status::ok;
    if (dk == mem::kind::host && sk == mem::kind::host) {
        std::memcpy(dst, src, n);
        return status::ok;
    }
    proto::staging *st = r_.staging();
    if (!st) return fail(status::internal, "hgas messages: device memory without the staging area");
    return st->copy(dst, dk, src, sk, n);
}

// Writes one slot into t's ring from this rank: header and payload, then the sequence word.
// The caller checked the credit.
status state::post(int t, hdr &h, const void *payload, mem::kind pk, size_t len) {
    peer_state &p = peers_[t];
    const uint64_t seq = p.sent + 1;
    const uint64_t off = ring_offset_slot(r_.me(), p.out_slot);
    h.seq = seq;
    h.len = static_cast<uint32_t>(len);
    const core::peer_segment *ps = r_.segment(t, mem::seg_symmetric);
    // A short eager message from host memory: header's first half and the bytes in one line.
    const bool in_line = h.type == t_eager && len <= short_max && pk == mem::kind::host;
    const size_t at = in_line ? short_at : sizeof(hdr);  // where the payload starts (and the header ends)
    if (in_line) h.type = t_eager_short;
    if (ps && ps->direct) {
        char *s = ps->direct + off;
        std::memcpy(s + 8, reinterpret_cast<const char *>(&h) + 8, at - 8);
        HGAS_TRY(copy(s + at, mem::kind::host, payload, pk, len));
        transport::direct::store_fence();
        __atomic_store_n(reinterpret_cast<uint64_t *>(s), seq, __ATOMIC_RELEASE);
    } else {
        char *b = bounce_.data();
        std::memcpy(b + 8, reinterpret_cast<const char *>(&h) + 8, at - 8);
        HGAS_TRY(copy(b + at, mem::kind::host, payload, pk, len));
        HGAS_TRY(rma::put_signal(r_, mem::make_gptr(t, mem::seg_symmetric, off + 8), b + 8, at - 8 + len,
                                 mem::make_gptr(t, mem::seg_symmetric, off), seq, HGAS_SIGNAL_SET, false,
                                 rma::issuer::runtime));  // the rings are hgas's own objects
    }
    if (in_line) h.type = t_eager;
    p.sent = seq;
    if (++p.out_slot == slots_) p.out_slot = 0;
    return status::ok;
}

// Sends what is queued for t, in order, as far as credits allow.
status state::flush(int t) {
    peer_state &p = peers_[t];
    while (!p.out.empty() && has_credit(t)) {
        out_item &it = p.out.front();
        request *q = it.req;
        switch (it.h.type) {
        case t_eager:
            HGAS_TRY(post(t, it.h, q->sbuf, q->kind, q->bytes));
            complete(q);
            break;
        case t_data: {
            const size_t len = std::min<size_t>(payload_max_, q->bytes - it.off);
            HGAS_TRY(produce(q, it.off + len));
            it.h.offset = it.off;
            HGAS_TRY(post(t, it.h, static_cast<const char *>(q->sbuf) + it.off, q->kind, len));
            it.off += len;
            if (it.off < q->bytes) continue;
            complete(q);
            break;
        }
        default:  // rts and control messages: the header alone (an rts by IPC: and the export)
            HGAS_TRY(post(t, it.h, it.payload.data(), mem::kind::host, it.payload.size()));
            break;
        }
        p.out.pop_front();
        --queued_;
    }
    return status::ok;
}

status state::flush_all() {
    if (!queued_) return status::ok;
    for (int t = 0; t < r_.n(); ++t)
        if (!peers_[t].out.empty()) HGAS_TRY(flush(t));
    return status::ok;
}

status state::return_credits(int src) {
    if (finalizing_) return status::ok;  // after the final barrier peers may be unmapping their heaps
    peer_state &p = peers_[src];
    const uint64_t owed = p.consumed - p.returned;
    if (!owed || owed < std::max<uint64_t>(1, slots_ / 2)) return status::ok;
    HGAS_TRY(rma::signal_update(r_, mem::make_gptr(src, mem::seg_symmetric, credit_offset(r_.me())),
                                HGAS_SIGNAL_SET, p.consumed, rma::issuer::runtime));
    p.returned = p.consumed;
    return status::ok;
}

status state::poll_rings() {
    const int n = r_.n();
    for (int i = 0, src = start_; i < n; ++i, src = src + 1 == n ? 0 : src + 1) {
        peer_state &p = peers_[src];
        for (;;) {
            const char *s = own(ring_offset_slot(src, p.in_slot));
            if (__atomic_load_n(reinterpret_cast<const uint64_t *>(s), __ATOMIC_ACQUIRE) != p.next_in) break;
            hdr h;
            std::memcpy(&h, s, sizeof h);
            const char *payload = s + sizeof(hdr);
            if (h.type == t_eager_short) {
                h = short_hdr(h);
                payload = s + short_at;
            }
            HGAS_TRY_ASSIGN(bool taken, take(src, p.next_in, h, payload));
            if (!taken) break;  // flow control: the unexpected queue is full; the sender waits
            ++p.next_in;
            if (++p.in_slot == slots_) p.in_slot = 0;
            p.consumed = p.held.empty() ? p.next_in - 1 : p.held.front() - 1;
            // Credits go back at the half-way mark: a sender that waits for one has the whole
            // ring outstanding, so once it is consumed at least half is owed.
            HGAS_TRY(return_credits(src));
        }
    }
    if (++start_ == n) start_ = 0;
    return status::ok;
}

// One message from `src`'s ring; false: leave it there for now.
result<bool> state::take(int src, uint64_t seq, const hdr &h, const char *payload) {
    switch (h.type) {
    case t_eager:
    case t_rts: {
        for (auto it = posted_.begin(); it != posted_.end(); ++it) {
            if (!matches(*it, src, h)) continue;
            request *q = *it;
            if (it == posted_.begin()) posted_.pop_front();  // the common case, without erase's shuffle
            else posted_.erase(it);
            HGAS_TRY(deliver(q, src, h, payload, nullptr, seq));
            return true;
        }
        const uint64_t len = h.len;  // eager: the message; rts by IPC: the export
        if (len && !unexpected_.empty() && unexpected_bytes_ + len > unexpected_max_) {
            ++stats_.flow_stalls;
            return false;
        }
        unexpected_.emplace_back(src, h, payload, len);
        unexpected_bytes_ += len;
        ++stats_.unexpected;
        stats_.unexpected_bytes_peak = std::max(stats_.unexpected_bytes_peak, unexpected_bytes_);
        return true;
    }
    case t_cts: HGAS_TRY(on_cts(src, h)); return true;
    case t_data: {
        auto it = live_.find(h.rreq);
        if (it == live_.end()) return true;  // the receive was abandoned (its handle died)
        request *q = it->second;
        if (h.len && ring_copy_ok(q)) {
            HGAS_TRY(start_ring_copy(q, src, seq, h, payload, true));
            return true;
        }
        HGAS_TRY(copy(static_cast<char *>(q->rbuf) + h.offset, q->kind, payload, mem::kind::host, h.len));
        q->arrived += h.len;
        status s = arrived(q);
        if (s != status::ok || q->arrived >= q->expected) complete(q, s);
        return true;
    }
    case t_fin_send: {
        auto it = live_.find(h.sreq);
        if (it != live_.end()) complete(it->second);
        return true;
    }
    case t_fin_recv: {
        auto it = live_.find(h.rreq);
        if (it != live_.end()) complete(it->second);
        return true;
    }
    case t_pdata: pulls_.push_back(pull{src, h}); return true;  // read by pump_pool
    case t_pfree: HGAS_TRY(on_pfree(h)); return true;
    }
    return fail(status::internal, "hgas messages: rank %d's ring from rank %d holds message type %u (corrupted?)",
                r_.me(), src, h.type);
}

// Starts the device copy of an eager message (or a rendezvous chunk) out of slot `seq` of
// src's ring into q's buffer. The slot stays src's until the copy has read it: its credit
// waits (peer_state::held), the slots after it are taken meanwhile. One host-to-device copy
// cost 6-10 us when the rank waited for each (H100), and a day of episim receives thousands.
status state::start_ring_copy(request *q, int src, uint64_t seq, const hdr &h, const char *payload, bool data,
                              std::unique_ptr<char[]> keep) {
    gpu::device *d = r_.device(q->kind);
    if (!q->id || !live_.count(q->id)) {  // an eager receive: tracked from here on
        q->id = next_id_++;
        live_[q->id] = q;
    }
    char *dst = static_cast<char *>(q->rbuf) + (data ? h.offset : 0);
    auto tk = d->copy_async(dst, payload, h.len, stream_in % d->streams());
    if (!tk.ok()) {
        complete(q, tk.error());  // the slot goes back at once: nothing reads it
        return status::ok;
    }
    ring_copies_.push_back(ring_copy{src, seq, q->id, h.len, data, d, *tk, std::move(keep)});
    if (seq) peers_[src].held.push_back(seq);
    ++stats_.ring_copies;
    return status::ok;
}

// Copies out of ring slots that finished, oldest first: the receive gets its bytes (and
// completes with the last of them), the slot's credit can go back.
status state::pump_ring_copies() {
    while (!ring_copies_.empty()) {
        ring_copy &c = ring_copies_.front();
        auto done = c.d->test(c.tk);
        if (done.ok() && !*done) break;
        const status err = done.ok() ? status::ok : done.error();
        auto it = live_.find(c.id);
        if (it != live_.end()) {
            request *q = it->second;
            if (err != status::ok) {
                complete(q, err);
            } else if (!c.data) {
                complete(q);
            } else {
                q->arrived += c.len;
                const status s = arrived(q);
                if (s != status::ok || q->arrived >= q->expected) complete(q, s);
            }
        }
        const int src = c.src;
        const uint64_t seq = c.seq;
        ring_copies_.pop_front();
        if (!seq) continue;
        release_held(src, seq);
        HGAS_TRY(return_credits(src));
    }
    return status::ok;
}

// Slot `seq` of src's ring is read: credits may go back up to the next slot still held.
void state::release_held(int src, uint64_t seq) {
    peer_state &p = peers_[src];
    auto h = std::find(p.held.begin(), p.held.end(), seq);
    if (h != p.held.end()) p.held.erase(h);
    p.consumed = p.held.empty() ? p.next_in - 1 : p.held.front() - 1;
}

// Whether rank `peer`'s segment `seg` is reached by a one-sided get/put that writes the
// other end's buffer once (mapped memory, or host memory the transport reaches).
bool one_sided_ok(core::rank &r, int peer, uint16_t seg) {
    const core::peer_segment *ps = r.segment(static_cast<uint32_t>(peer), seg);
    if (!ps || !ps->size) return false;
    return ps->kind == mem::kind::host || ps->dev;
}

// A matched message for receive q.
status state::deliver(request *q, int src, const hdr &h, const char *payload, void *umsg, uint64_t ring_seq) {
    if (h.type == t_utag) return deliver_tag(q, src, h, umsg);
    if (h.type == t_eager) {
        if (h.bytes > q->bytes) {
            complete(q, truncated(q, src, h));
            return status::ok;
        }
        if (ring_seq && h.len && ring_copy_ok(q)) {
            set_info(q, src, h.tag, h.bytes);
            return start_ring_copy(q, src, ring_seq, h, payload, false);
        }
        status s = copy(q->rbuf, q->kind, payload, mem::kind::host, h.len);
        if (s == status::ok) set_info(q, src, h.tag, h.bytes);
        complete(q, s);
        return status::ok;
    }
    // Rendezvous.
    hdr c{};
    c.ctx = h.ctx;
    c.tag = h.tag;
    c.bytes = h.bytes;
    c.sreq = h.sreq;
    c.seg = no_seg;
    if (h.bytes > q->bytes) {
        c.type = t_cts;
        c.flags = f_discard;
        peers_[src].out.push_back(out_item{c, nullptr, 0, {}});
        ++queued_;
        complete(q, truncated(q, src, h));
        return status::ok;
    }
    set_info(q, src, h.tag, h.bytes);
    if (h.flags & f_ipc) {
        // The sender's buffer is a user device allocation it exported: copy straight out of it
        // (false: not reachable from here; the pool below).
        HGAS_TRY_ASSIGN(bool started, start_ipc(q, src, h, payload));
        if (started) return status::ok;
    }
    if (h.seg != no_seg && one_sided_ok(r_, src, h.seg)) {
        // The sender's buffer is in one of its segments: read it straight into the posted buffer.
        ++stats_.rndv_one_sided;
        status s = rma::get(r_, q->rbuf, mem::make_gptr(src, h.seg, h.offset), h.bytes, false);
        c.type = t_fin_send;
        peers_[src].out.push_back(out_item{c, nullptr, 0, {}});
        ++queued_;
        complete(q, s);
        return status::ok;
    }
    q->id = next_id_++;
    q->expected = h.bytes;
    q->arrived = 0;
    live_[q->id] = q;
    c.type = t_cts;
    c.rreq = q->id;
    if (q->kind != mem::kind::host) c.flags |= f_dev_dst;
    const int seg = r_.own_segment_of(q->rbuf, q->bytes);
    if (seg >= 0) {
        c.seg = static_cast<uint16_t>(seg);
        c.offset = static_cast<uint64_t>(static_cast<char *>(q->rbuf) - r_.own_base(static_cast<uint16_t>(seg)));
    }
    peers_[src].out.push_back(out_item{c, nullptr, 0, {}});
    ++queued_;
    return status::ok;
}

// The receiver of send sreq is ready.
status state::on_cts(int src, const hdr &h) {
    auto it = live_.find(h.sreq);
    if (it == live_.end()) return status::ok;
    request *q = it->second;
    if (h.flags & f_discard) {
        complete(q);  // the receive failed with a truncation error; the send is over
        return status::ok;
    }
    if (h.seg != no_seg && one_sided_ok(r_, src, h.seg)) {
        ++stats_.rndv_one_sided;
        status s = produce(q, q->bytes);
        if (s == status::ok) s = rma::put(r_, mem::make_gptr(src, h.seg, h.offset), q->sbuf, q->bytes, false);
        if (s == status::ok) s = rma::fence(r_);  // the data before the notice
        hdr f{};
        f.type = t_fin_recv;
        f.rreq = h.rreq;
        peers_[src].out.push_back(out_item{f, nullptr, 0, {}});
        ++queued_;
        complete(q, s);
        return status::ok;
    }
    if (pool_depth_ && (q->kind != mem::kind::host || (h.flags & f_dev_dst))) {
        // Device memory at either end and no one-sided path: pipelined through the pools.
        ++stats_.rndv_pool;
        q->rreq = h.rreq;
        q->staged = q->freed = 0;
        pool_sends_.push_back(q);
        return status::ok;
    }
    ++stats_.rndv_chunked;
    hdr d{};
    d.type = t_data;
    d.rreq = h.rreq;
    d.bytes = q->bytes;
    peers_[src].out.push_back(out_item{d, q, 0, {}});
    ++queued_;
    return status::ok;
}

// The receiver read `aux` bytes of send sreq out of send chunk `seg`.
status state::on_pfree(const hdr &h) {
    if (h.seg >= pool_depth_)
        return fail(status::internal, "hgas messages: rank %d was told to free pool chunk %u of %d (corrupted ring?)",
                    r_.me(), h.seg, pool_depth_);
    free_send_.push_back(h.seg);
    --stats_.pool_send_in_use;
    auto it = live_.find(h.sreq);
    if (it == live_.end()) return status::ok;  // the send's handle died
    request *q = it->second;
    q->freed += h.aux;
    if (q->freed >= q->bytes) complete(q);
    return status::ok;
}

// The sender's half of the rendezvous by IPC: a large message from a user device allocation to
// a rank of this node carries the allocation's export in its RTS (README "Rendezvous by IPC").
void state::export_user(int dest, mem::kind k, const void *buf, size_t bytes, hdr &m, std::vector<char> &payload) {
    if (!ipc_threshold_ || bytes < ipc_threshold_ || k == mem::kind::host) return;
    if (payload_max_ < sizeof(gpu::user_export)) return;  // rings of tiny slots
    const auto &node = r_.topo().node_of;
    if (dest != r_.me() && (node.size() <= static_cast<size_t>(dest) || node[dest] != node[r_.me()])) return;
    gpu::device *d = r_.device(k);
    gpu::user_export e;
    if (!d || !d->export_user(buf, bytes, e)) return;
    m.flags |= f_ipc;
    payload.resize(sizeof e);
    std::memcpy(payload.data(), &e, sizeof e);
}

// The receiver's half: maps the sender's allocation (once: the cache) and copies the message
// into the posted buffer with one device copy; FIN goes back when the copy has finished.
// False where it cannot (no such device here, kinds that do not mix, no peer access): the
// caller answers CTS and the message takes the pool.
result<bool> state::start_ipc(request *q, int src, const hdr &h, const char *payload) {
    if (h.len < sizeof(gpu::user_export) || ipc_no_access_[src]) return false;
    gpu::user_export e;
    std::memcpy(&e, payload, sizeof e);
    const auto k = static_cast<mem::kind>(e.kind);
    gpu::device *d = k == mem::kind::host ? nullptr : r_.device(k);
    if (!d || (q->kind != mem::kind::host && q->kind != k)) return false;
    if (e.offset + h.bytes > e.size)
        return fail(status::internal, "hgas messages: rank %d announced %llu bytes at %llu of a %llu-byte allocation",
                    src, (unsigned long long)h.bytes, (unsigned long long)e.offset, (unsigned long long)e.size);
    void *base = nullptr;
    if (src == r_.me()) {
        base = reinterpret_cast<void *>(e.base);  // our own allocation: no mapping
    } else {
        std::vector<gpu::ipc_cache::entry> stale;
        base = ipc_cache_.find(src, e, stale);
        close_mappings(std::move(stale));
        if (base) {
            ++stats_.ipc_hits;
        } else {
            auto m = d->import_user(src, e);
            if (!m.ok() || !*m) {
                if (!m.ok())
                    HGASI_DEBUG("msg", "rank %d: cannot map rank %d's buffer (%s): through the pool", r_.me(), src,
                                last_error().c_str());
                ipc_no_access_[src] = true;  // the same for every later buffer of that peer
                return false;
            }
            base = *m;
            ++stats_.ipc_opens;
            std::vector<gpu::ipc_cache::entry> evicted;
            ipc_cache_.insert(src, e, base, evicted);
            close_mappings(std::move(evicted));
        }
        stats_.ipc_invalidated = ipc_cache_.invalidated;
    }
    ++stats_.rndv_ipc;
    q->id = next_id_++;
    live_[q->id] = q;
    ipc_op o{q->id, src, h.sreq, d, {}};
    auto tk = d->copy_async(q->rbuf, static_cast<const char *>(base) + e.offset, h.bytes, stream_in % d->streams());
    if (!tk.ok()) {  // the sender completes; the receive fails
        complete(q, tk.error());
        o.d = nullptr;
    } else {
        o.tk = *tk;
    }
    ipc_ops_.push_back(o);
    return true;
}

// IPC copies that finished: the receive completes and the sender hears FIN (it may reuse its
// buffer). Mappings dropped meanwhile are closed once no copy is in flight.
status state::pump_ipc() {
    while (!ipc_ops_.empty()) {
        ipc_op &o = ipc_ops_.front();
        if (o.d) {
            HGAS_TRY_ASSIGN(bool done, o.d->test(o.tk));
            if (!done) break;
        }
        hdr f{};
        f.type = t_fin_send;
        f.sreq = o.sreq;
        queue(o.src, f);
        auto it = live_.find(o.id);
        if (it != live_.end()) complete(it->second);
        ipc_ops_.pop_front();
    }
    if (ipc_ops_.empty() && !ipc_graveyard_.empty()) {
        for (auto &x : ipc_graveyard_)
            if (gpu::device *d = r_.device(x.k)) d->close_user(x.mapped);
        ipc_graveyard_.clear();
    }
    return status::ok;
}

void state::close_mappings(std::vector<gpu::ipc_cache::entry> &&v) {
    for (auto &x : v) ipc_graveyard_.push_back(x);
}

// Moves the pool's pipeline on as far as it goes without waiting: each stage is asynchronous
// (device copies on internal streams) or one blocking read of one chunk, so a rank's own
// device copies, the transport and the peer's copies of successive chunks overlap.
status state::pump_pool() {
    if (!pool_depth_) return status::ok;
    // Receiving: chunks copied into device memory give their receive chunk back.
    while (!in_copies_.empty()) {
        chunk_op &o = in_copies_.front();
        HGAS_TRY_ASSIGN(bool done, o.d->test(o.tk));
        if (!done) break;
        if (o.chunk >= 0)
            free_recv_.push_back(o.chunk);
        else
            queue(o.src, o.pfree);  // the sender's chunk is read: it may fill it again
        auto it = live_.find(o.id);
        if (it != live_.end()) {
            request *q = it->second;
            q->arrived += o.len;
            if (q->arrived >= q->expected) complete(q);
        }
        in_copies_.pop_front();
    }
    // Receiving: read announced chunks from the sender's pool, straight into a host buffer, or
    // into a receive chunk and from there (asynchronously) into device memory.
    while (!pulls_.empty()) {
        const pull p = pulls_.front();
        const size_t len = p.h.aux;
        auto it = live_.find(p.h.rreq);
        request *q = it == live_.end() ? nullptr : it->second;
        // The sender's pool mapped here (a rank of this node; hgas registered its heap with the
        // GPU): the device copies straight out of the sender's chunk, no CPU copy between.
        const core::peer_segment *ps = r_.segment(p.src, mem::seg_symmetric);
        const char *mapped = ps && ps->direct ? ps->direct + send_chunk(p.h.seg) : nullptr;
        if (q && q->kind != mem::kind::host && !mapped && free_recv_.empty()) break;  // wait for a chunk
        pulls_.pop_front();
        hdr f{};
        f.type = t_pfree;
        f.sreq = p.h.sreq;
        f.seg = p.h.seg;
        f.aux = p.h.aux;
        const hgas_gptr_t from = mem::make_gptr(p.src, mem::seg_symmetric, send_chunk(p.h.seg));
        if (!q) {  // the receive's handle died: just free the sender's chunk
            queue(p.src, f);
            continue;
        }
        char *dst = static_cast<char *>(q->rbuf) + p.h.offset;
        if (p.h.offset + len > q->expected) {
            queue(p.src, f);
            complete(q, fail(status::internal, "hgas messages: rank %d announced %zu bytes at %llu of a %zu-byte message",
                             p.src, len, (unsigned long long)p.h.offset, q->expected));
            continue;
        }
        if (q->kind == mem::kind::host) {
            status s = rma::get(r_, dst, from, len, false, rma::issuer::runtime);
            queue(p.src, f);
            if (s != status::ok) {
                complete(q, s);
                continue;
            }
            q->arrived += len;
            s = arrived(q);
            if (s != status::ok || q->arrived >= q->expected) complete(q, s);
            continue;
        }
        gpu::device *d = r_.device(q->kind);
        if (mapped) {
            chunk_op o{-1, q->id, p.h.offset, len, d, {}, p.src, f};
            auto tk = d->copy_async(dst, mapped, len, stream_in % d->streams());
            if (!tk.ok()) {
                queue(p.src, f);
                complete(q, tk.error());
                continue;
            }
            o.tk = *tk;
            in_copies_.push_back(o);
            ++stats_.pool_direct_pulls;
            continue;
        }
        const int c = free_recv_.back();
        free_recv_.pop_back();
        char *buf = own(recv_chunk(c));
        status s = rma::get(r_, buf, from, len, false, rma::issuer::runtime);
        queue(p.src, f);
        chunk_op o{c, q->id, p.h.offset, len, d, {}};
        if (s == status::ok) {
            auto tk = d->copy_async(dst, buf, len, stream_in % d->streams());
            if (tk.ok()) o.tk = *tk;
            else s = tk.error();
        }
        if (s != status::ok) {
            free_recv_.push_back(c);
            complete(q, s);
            continue;
        }
        in_copies_.push_back(o);
    }
    // Sending: chunks whose copy finished are announced to their receiver.
    while (!out_copies_.empty()) {
        chunk_op &o = out_copies_.front();
        if (o.d) {
            HGAS_TRY_ASSIGN(bool done, o.d->test(o.tk));
            if (!done) break;
        }
        auto it = live_.find(o.id);
        if (it == live_.end()) {  // the send's handle died
            free_send_.push_back(o.chunk);
            --stats_.pool_send_in_use;
        } else {
            request *q = it->second;
            hdr d{};
            d.type = t_pdata;
            d.sreq = q->id;
            d.rreq = q->rreq;
            d.bytes = q->bytes;
            d.offset = o.off;
            d.seg = static_cast<uint16_t>(o.chunk);
            d.aux = static_cast<uint32_t>(o.len);
            queue(q->peer, d);
        }
        out_copies_.pop_front();
    }
    // Sending: copy the next chunks of the sends in turn into free send chunks.
    while (!free_send_.empty() && !pool_sends_.empty()) {
        request *q = pool_sends_.front();
        pool_sends_.pop_front();
        const size_t len = std::min<size_t>(pool_piece(q->bytes), q->bytes - q->staged);
        const int c = free_send_.back();
        free_send_.pop_back();
        ++stats_.pool_chunks;
        stats_.pool_send_peak = std::max<uint64_t>(stats_.pool_send_peak, ++stats_.pool_send_in_use);
        chunk_op o{c, q->id, q->staged, len, nullptr, {}};
        if (status s = produce(q, q->staged + len); s != status::ok) {
            free_send_.push_back(c);
            --stats_.pool_send_in_use;
            complete(q, s);
            continue;
        }
        const char *from = static_cast<const char *>(q->sbuf) + q->staged;
        if (q->kind == mem::kind::host) {
            std::memcpy(own(send_chunk(c)), from, len);
        } else {
            o.d = r_.device(q->kind);
            HGAS_TRY_ASSIGN(o.tk, o.d->copy_async(own(send_chunk(c)), from, len, stream_out % o.d->streams()));
        }
        out_copies_.push_back(o);
        q->staged += len;
        if (q->staged < q->bytes) pool_sends_.push_back(q);  // round robin over the messages
    }
    return status::ok;
}

// --- messages by the transport's tag matching ----------------------------------------------

// Which peers' messages go by UCX tag matching (HGAS_MSG_UCX_TAG). Every rank decides the same
// for a pair (topology and routes are symmetric), and always the same for a peer, so the
// messages of one pair never take two paths and cannot overtake each other.
void state::setup_tags() {
    const std::string mode = r_.cfg().text(setting::msg_ucx_tag);
    if (mode == "off") return;
    const int n = r_.n();
    if (n - 1 > utag_rank_max) {
        HGASI_WARN("msg", "HGAS_MSG_UCX_TAG=%s: %d ranks do not fit the 20 bits of a UCX tag that name the source; "
                   "messages take the rings", mode.c_str(), n);
        return;
    }
    tag_peer_.assign(n, false);
    const auto &node = r_.topo().node_of;
    const size_t me = static_cast<size_t>(r_.me());
    // 'auto' takes a pair whose ranks have no device kind: whether a rank has one (a GPU, or
    // sim memory) is known for every rank (gpu_of, from the segment exchange), so both ends of
    // a pair decide alike.
    const bool host_only_here = r_.gpu_of(r_.me()) < 0;
    for (int t = 0; t < n; ++t) {
        transport::transport *tr = r_.route(t);
        transport::tag_channel *c = tr ? tr->tags() : nullptr;
        if (!c) continue;
        const bool other_node = node.size() <= std::max(me, static_cast<size_t>(t)) || node[t] != node[me];
        const bool host_pair = host_only_here && r_.gpu_of(t) < 0;
        if (mode == "on" || (other_node && (mode == "nodes" || host_pair))) {
            tag_peer_[t] = true;
            tags_ = c;
        }
    }
    if (!tags_) return;
    // A sender may have this much not yet taken out of UCX by the receiver: the receiver's
    // limit shared by the ranks, but at least two eager messages (credits go back at half).
    tag_window_ = std::max<uint64_t>(2 * (payload_max_ + sizeof(hdr)), unexpected_max_ / static_cast<uint64_t>(n));
    tag_sent_cost_.assign(n, 0);
    tag_taken_.assign(n, 0);
    tag_returned_.assign(n, 0);
    tag_queue_.resize(n);
}

// Takes the messages that arrived by tag matching (in arrival order) into matching, as the
// rings' are, while the unexpected store has room; when it is full, only messages that posted
// receives match (the senders wait for credit meanwhile). Then ends receives from a peer whose
// connection broke.
status state::poll_tags() {
    for (;;) {
        tag_msg &t = tag_stalled_;
        if (!t.m) {
            if (!tags_->tag_take(utag_marker, utag_marker, t.w, t.len, t.m)) break;
            ++stats_.tag_received;
        }
        HGAS_TRY_ASSIGN(bool taken, take_tag(t.w, t.len, t.m));
        if (!taken) {  // kept aside (UCX still holds its bytes) until the store has room
            ++stats_.flow_stalls;
            HGAS_TRY(take_posted_tags());
            break;
        }
        t.m = nullptr;
    }
    if (!tags_->tag_any_failed()) return status::ok;
    for (auto it = posted_.begin(); it != posted_.end();) {
        request *q = *it;
        if (q->peer >= 0 && tag_peer_[q->peer] && tags_->tag_peer_failed(q->peer)) {
            it = posted_.erase(it);
            complete(q, fail(status::peer_failed, "hgas_recv on rank %d from rank %d (tag %d): the connection to rank "
                             "%d broke; that rank probably died or aborted, see its output", r_.me(), q->peer, q->tag,
                             q->peer));
        } else {
            ++it;
        }
    }
    return status::ok;
}

hdr utag_hdr(uint64_t w, size_t len) {
    hdr h{};
    h.type = t_utag;
    h.tag = utag_tag(w);
    h.ctx = utag_ctx(w);
    h.bytes = len;
    h.seg = no_seg;
    return h;
}

// One message taken out of UCX's unexpected queue: to the first posted receive it matches;
// else, up to the eager size, received into the unexpected store (UCX's buffer is freed and
// the bytes count against HGAS_MSG_UNEXPECTED_MAX); larger ones (UCX holds only their
// rendezvous request; the data waits at the sender) kept as a handle.
result<bool> state::take_tag(uint64_t w, size_t len, void *m) {
    const hdr h = utag_hdr(w, len);
    const int src = utag_src(w);
    if (src >= r_.n())
        return fail(status::internal, "hgas messages: rank %d got a UCX tag message from rank %d of %d (another "
                    "program's tags on this worker?)", r_.me(), src, r_.n());
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        if (!matches(*it, src, h)) continue;
        request *q = *it;
        posted_.erase(it);
        HGAS_TRY(deliver_tag(q, src, h, m));
        HGAS_TRY(tag_taken(src, len));
        return true;
    }
    if (len > payload_max_) {
        ++stats_.unexpected;
        unexpected_.emplace_back(src, h, m);
        HGAS_TRY(tag_taken(src, len));
        return true;
    }
    if (len && !unexpected_.empty() && unexpected_bytes_ + len > unexpected_max_) return false;  // store full
    ++stats_.unexpected;
    tag_xfer &x = tag_ops_.emplace_back();
    const auto xit = std::prev(tag_ops_.end());
    x.peer = src;
    x.held = true;
    x.temp.resize(len);
    status s = tags_->tag_recv(m, x.temp.data(), len, true, src, &x.op);
    if (s != status::ok) {
        tag_ops_.erase(xit);
        return s;
    }
    hdr hh = h;
    hh.flags = f_held;
    unexpected_.emplace_back(src, hh, static_cast<void *>(&x));
    unexpected_.back().len = static_cast<uint32_t>(len);
    unexpected_bytes_ += len;
    stats_.unexpected_bytes_peak = std::max(stats_.unexpected_bytes_peak, unexpected_bytes_);
    HGAS_TRY(tag_taken(src, len));
    return true;
}

// The store is full: each posted receive (in posting order) takes the earliest message UCX
// holds that it matches, found by a probe on its scope, source and tag.
status state::take_posted_tags() {
    for (size_t i = 0; i < posted_.size();) {
        request *q = posted_[i];
        if (q->peer != HGAS_ANY_RANK && !tag_peer_[q->peer]) {
            ++i;
            continue;
        }
        uint64_t want = utag_marker | (uint64_t(q->ctx) & utag_ctx_max) << 51;
        uint64_t mask = utag_marker | uint64_t(utag_ctx_max) << 51;
        if (q->peer != HGAS_ANY_RANK) {
            want |= (uint64_t(q->peer) & utag_rank_max) << 31;
            mask |= uint64_t(utag_rank_max) << 31;
        }
        if (q->tag != HGAS_ANY_TAG) {
            want |= uint64_t(q->tag) & 0x7fffffffu;
            mask |= 0x7fffffffu;
        }
        uint64_t w = 0;
        size_t len = 0;
        void *m = nullptr;
        if (!tags_->tag_take(want, mask, w, len, m)) {
            ++i;
            continue;
        }
        ++stats_.tag_received;
        const int src = utag_src(w);
        posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(i));
        HGAS_TRY(deliver_tag(q, src, utag_hdr(w, len), m));
        HGAS_TRY(tag_taken(src, len));
    }
    return status::ok;
}

// A message of `src` left UCX's custody: its cost goes back to the sender as credit once half
// a window is owed (a sender that waits has more than half a window outstanding).
status state::tag_taken(int src, size_t bytes) {
    tag_taken_[src] += tag_cost(bytes);
    if (finalizing_ || tag_taken_[src] - tag_returned_[src] < tag_window_ / 2) return status::ok;
    HGAS_TRY(rma::signal_update(r_, mem::make_gptr(src, mem::seg_symmetric, credit_offset(r_.me()) + 8),
                                HGAS_SIGNAL_SET, tag_taken_[src], rma::issuer::runtime));
    tag_returned_[src] = tag_taken_[src];
    return status::ok;
}

// A message that arrived by tag matching, matched by receive q: UCX receives it straight into
// the posted buffer (host memory; cuda memory larger than an eager slot when this UCX handles
// cuda), else into a host copy that goes to the device once it arrived.
status state::deliver_tag(request *q, int src, const hdr &h, void *umsg) {
    if (h.flags & f_held) {  // in the store already (or arriving there)
        tag_xfer &x = *static_cast<tag_xfer *>(umsg);
        x.held = false;  // pump_tags drops it once UCX is done with it
        if (h.bytes > q->bytes) {
            complete(q, truncated(q, src, h));
            return status::ok;
        }
        set_info(q, src, h.tag, h.bytes);
        if (!x.op.done.load(std::memory_order_acquire)) {  // pump_tags copies it over on arrival
            x.q = q;
            x.dst = q->rbuf;
            x.dkind = q->kind;
            return status::ok;
        }
        status s = x.op.code == status::ok ? status::ok : tag_failure(x);
        if (s == status::ok) s = copy(q->rbuf, q->kind, x.temp.data(), mem::kind::host, h.bytes);
        complete(q, s);
        return status::ok;
    }
    tag_xfer &x = tag_ops_.emplace_back();
    const auto xit = std::prev(tag_ops_.end());
    x.peer = src;
    if (h.bytes > q->bytes) {
        // Consumed into a scratch copy that is dropped: the message is gone, the receive fails.
        x.temp.resize(h.bytes);
        if (tags_->tag_recv(umsg, x.temp.data(), h.bytes, true, src, &x.op) != status::ok) tag_ops_.erase(xit);
        complete(q, truncated(q, src, h));
        return status::ok;
    }
    set_info(q, src, h.tag, h.bytes);
    const bool direct = q->kind == mem::kind::host ||
                        (q->kind == mem::kind::cuda && tags_->cuda_memory() && h.bytes > payload_max_);
    void *to = q->rbuf;
    if (!direct) {
        x.temp.resize(h.bytes);
        to = x.temp.data();
        x.dst = q->rbuf;
        x.dkind = q->kind;
    }
    x.q = q;
    status s = tags_->tag_recv(umsg, to, h.bytes, !direct || q->kind == mem::kind::host, src, &x.op);
    if (s != status::ok) {
        tag_ops_.erase(xit);
        complete(q, s);
    }
    return status::ok;
}

status state::tag_failure(const tag_xfer &x) {
    const char *what = x.is_send ? "hgas_send" : "hgas_recv";
    if (x.op.code == status::peer_failed)
        return fail(status::peer_failed, "%s between rank %d and rank %d failed: the connection to rank %d broke (UCX: "
                    "%s); that rank probably died or aborted, see its output", what, r_.me(), x.peer, x.peer,
                    x.op.error.c_str());
    return fail(x.op.code, "%s between rank %d and rank %d failed in UCX: %s", what, r_.me(), x.peer,
                x.op.error.c_str());
}

// Transfers that finished: their requests complete (a receive through a host copy: once the
// copy is in device memory). Transfers whose request died are just dropped.
status state::pump_tags() {
    for (auto it = tag_ops_.begin(); it != tag_ops_.end();) {
        if (it->held || !it->op.done.load(std::memory_order_acquire)) {
            ++it;
            continue;
        }
        if (request *q = it->q) {
            status s = it->op.code == status::ok ? status::ok : tag_failure(*it);
            if (s == status::ok && it->dst) s = copy(it->dst, it->dkind, it->temp.data(), mem::kind::host, it->temp.size());
            complete(q, s);
        }
        it = tag_ops_.erase(it);
    }
    return status::ok;
}

// A send request for `a` from memory of kind `k`: what every path's send starts from.
std::unique_ptr<request> state::new_send(const send_args &a, mem::kind k) {
    auto q = std::make_unique<request>();
    q->st = this;
    q->is_send = true;
    q->ctx = a.ctx;
    q->peer = a.dest;
    q->tag = a.tag;
    q->sbuf = a.buf;
    q->bytes = a.bytes;
    q->kind = k;
    return q;
}

// Hands send x to UCX; its cost counts against the window to its peer.
status state::post_tag(tag_xfer &x) {
    HGAS_TRY(tags_->tag_send(x.peer, x.word, x.from, x.n, x.host, &x.op));
    tag_sent_cost_[x.peer] += tag_cost(x.n);
    ++stats_.tag_sent;
    return status::ok;
}

// Posts the sends that waited for credit, in order per peer, as far as credit allows.
status state::flush_tags() {
    for (int t = 0; t < r_.n() && tag_queued_; ++t) {
        auto &dq = tag_queue_[t];
        while (!dq.empty() && tag_room(t, dq.front()->n)) {
            tag_xfer &x = *dq.front();
            dq.pop_front();
            --tag_queued_;
            x.queued = false;
            status s = post_tag(x);
            if (s == status::ok) continue;
            x.op.done.store(true, std::memory_order_release);  // nothing in flight: pump_tags drops it
            if (!x.q) return s;  // a host copy whose send had completed already: the error goes up
            complete(x.q, s);
            x.q = nullptr;
        }
    }
    return status::ok;
}

status state::isend_tag(const send_args &a, mem::kind k, hgas_handle_t *h, bool blocking) {
    tag_xfer &x = tag_ops_.emplace_back();
    const auto xit = std::prev(tag_ops_.end());
    x.is_send = true;
    x.peer = a.dest;
    // Small device messages are copied to host memory first: UCX on device memory costs far
    // more than the copy for them (and sim memory is hgas's own).
    const bool direct = k == mem::kind::host || (k == mem::kind::cuda && tags_->cuda_memory() && a.bytes > payload_max_);
    const void *from = a.buf;
    if (!direct) {
        x.temp.resize(a.bytes);
        status s = copy(x.temp.data(), mem::kind::host, a.buf, k, a.bytes);
        if (s != status::ok) {
            tag_ops_.erase(xit);
            return s;
        }
        from = x.temp.data();
    }
    x.word = utag_word(a.ctx, r_.me(), a.tag);
    x.from = from;
    x.n = a.bytes;
    x.host = !direct || k == mem::kind::host;
    if (!tag_queue_[a.dest].empty() || !tag_room(a.dest, a.bytes)) {
        // Flow control: the receiver has not taken enough of this rank's messages out of UCX
        // yet. Queued behind the others to that peer (order), posted by progress on credit.
        x.queued = true;
        tag_queue_[a.dest].push_back(&x);
        ++tag_queued_;
        if (!direct) {  // the copy waits; the program's buffer is free
            if (h) *h = HGAS_HANDLE_DONE;
            return status::ok;
        }
        auto q = new_send(a, k);
        x.q = q.get();
        return finish("hgas_send", std::move(q), h, blocking);
    }
    status s = post_tag(x);
    if (s != status::ok) {
        tag_ops_.erase(xit);
        return s;
    }
    if (x.op.done.load(std::memory_order_acquire)) {
        const status c = x.op.code == status::ok ? status::ok : tag_failure(x);
        tag_ops_.erase(xit);
        HGAS_TRY(c);
        if (h) *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    if (!direct) {  // the program's buffer is free already; UCX sends the copy
        if (h) *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    auto q = new_send(a, k);
    x.q = q.get();
    return finish("hgas_send", std::move(q), h, blocking);
}

status state::progress() {
    if (busy_) return status::ok;
    busy_ = true;
    status s = flush_all();
    if (s == status::ok) s = poll_rings();
    if (s == status::ok && !ring_copies_.empty()) s = pump_ring_copies();
    if (s == status::ok && tags_) s = poll_tags();
    if (s == status::ok && tag_queued_) s = flush_tags();
    if (s == status::ok && !tag_ops_.empty()) s = pump_tags();
    if (s == status::ok) s = pump_pool();
    if (s == status::ok && (!ipc_ops_.empty() || !ipc_graveyard_.empty())) s = pump_ipc();
    if (s == status::ok) s = flush_all();  // answers (cts, fin) the poll queued
    busy_ = false;
    // Starting a stream's message calls isend/irecv, which run progress themselves: outside
    // the guarded part.
    if (s == status::ok && !stream_ops_.empty()) s = pump_streams();
    return s;
}

result<stream_slot> state::stream_add(const char *op, bool is_send, const send_args &sa, const recv_args &ra,
                                      const layout *l) {
    const uint64_t seq = next_stream_seq_;
    const uint64_t slots = core::internal_objects::msg_stream_slots;
    if (!stream_ops_.empty() && seq - stream_ops_.front().seq >= slots)
        return fail(status::no_memory, "%s: rank %d has %llu stream-ordered messages outstanding, the most there can be; "
                    "let the streams reach them first (hgas_stream_sync)", op, r_.me(), (unsigned long long)slots);
    ++next_stream_seq_;
    stream_op o{};
    o.seq = seq;
    o.is_send = is_send;
    o.s = sa;
    o.rv = ra;
    o.op = op;
    if (l) o.lay = std::make_shared<layout>(*l);
    stream_ops_.push_back(o);
    return stream_slot{seq, stream_word(seq, 0), stream_word(seq, 1)};
}

void state::stream_cancel(uint64_t seq) {
    for (auto it = stream_ops_.begin(); it != stream_ops_.end(); ++it)
        if (it->seq == seq && !it->started) {
            stream_ops_.erase(it);
            return;
        }
}

// Starts the operations whose streams reached them, and lets the streams of finished ones go
// on. A failure still lets the stream go on (a stream never waits past its message); the error
// is kept for hgas_stream_sync.
status state::pump_streams() {
    if (streaming_) return status::ok;
    streaming_ = true;
    auto keep = [&](status s) {
        if (s == status::ok) return;
        HGASI_WARN("api", "a stream-ordered message of rank %d failed: %s", r_.me(), last_error().c_str());
        if (stream_err_ == status::ok) {
            stream_err_ = s;
            stream_err_msg_ = last_error();
        }
    };
    for (auto it = stream_ops_.begin(); it != stream_ops_.end();) {
        const uint64_t go = __atomic_load_n(stream_word(it->seq, 0), __ATOMIC_ACQUIRE);
        if (go == ~it->seq && !it->expired) {  // the stream's wait gave up (HGAS_TIMEOUT)
            it->expired = true;
            keep(fail(status::timeout, "%s to/from rank %d, tag %d: not complete within HGAS_TIMEOUT; the stream went "
                      "on without it", it->is_send ? "hgas_send_on_stream" : "hgas_recv_on_stream",
                      it->is_send ? it->s.dest : it->rv.src, it->is_send ? it->s.tag : it->rv.tag));
        }
        if (!it->started) {
            if (go != it->seq && !it->expired) {
                ++it;
                continue;
            }
            if (it->expired) {  // never started: nothing to finish
                it = stream_ops_.erase(it);
                continue;
            }
            it->started = true;
            status s;
            if (it->lay && it->is_send)
                s = isend_layout(r_, it->op, *it->lay, it->s.buf, it->s.dest, it->s.tag, &it->h, it->s.ctx);
            else if (it->lay)
                s = irecv_layout(r_, it->op, *it->lay, it->rv.buf, it->rv.src, it->rv.tag, it->rv.info, &it->h,
                                 it->rv.ctx);
            else
                s = it->is_send ? isend(it->s, &it->h, false) : irecv(it->rv, &it->h, false);
            if (s != status::ok) it->h = HGAS_HANDLE_DONE;
            keep(s);
        }
        int d = 1;
        if (it->h != HGAS_HANDLE_DONE) {
            status s = rma::test(r_, it->h, &d);
            if (s != status::ok) d = 1;  // the failed test freed the handle
            keep(s);
        }
        if (!d) {
            ++it;
            continue;
        }
        __atomic_store_n(stream_word(it->seq, 1), it->seq, __ATOMIC_RELEASE);
        it = stream_ops_.erase(it);
    }
    streaming_ = false;
    return status::ok;
}

// --- the calls -----------------------------------------------------------------------------

status state::isend(const send_args &a, hgas_handle_t *h, bool blocking) {
    // Without device kinds every buffer is host memory: no lookup.
    const mem::kind k = a.bytes && r_.has_devices() ? r_.kind_of(a.buf, a.bytes) : mem::kind::host;
    HGAS_TRY(progress());
    const bool eager = a.bytes <= payload_max_;
    // Paths that read the whole buffer at once need it whole; ring and pool chunks ask for
    // their bytes as they go (a typed message packs the next piece while the last travels).
    if (a.prod && (eager || (tags_ && tag_peer_[a.dest]))) HGAS_TRY(a.prod->ensure(a.bytes));
    if (tags_ && tag_peer_[a.dest]) return isend_tag(a, k, h, blocking);
    peer_state &p = peers_[a.dest];
    hdr m{};
    m.tag = a.tag;
    m.ctx = a.ctx;
    m.bytes = a.bytes;
    m.seg = no_seg;
    if (eager && p.out.empty() && has_credit(a.dest)) {  // the common case: straight into the ring
        m.type = t_eager;
        busy_ = true;
        status s = post(a.dest, m, a.buf, k, a.bytes);
        busy_ = false;
        HGAS_TRY(s);
        ++stats_.eager_sent;
        if (h) *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    auto q = new_send(a, k);
    if (a.prod && !eager) q->prod = a.prod;
    if (eager) {
        m.type = t_eager;
        ++stats_.eager_sent;
    } else {
        m.type = t_rts;
        ++stats_.rndv_sent;
        q->id = next_id_++;
        m.sreq = q->id;
        const int seg = a.prod ? -1 : r_.own_segment_of(a.buf, a.bytes);  // not read before it is produced
        if (seg >= 0) {
            m.seg = static_cast<uint16_t>(seg);
            m.offset = static_cast<uint64_t>(static_cast<const char *>(a.buf) - r_.own_base(static_cast<uint16_t>(seg)));
        }
        live_[q->id] = q.get();
    }
    out_item it{m, eager ? q.get() : nullptr, 0, {}};
    if (!eager && m.seg == no_seg && !a.prod) export_user(a.dest, k, a.buf, a.bytes, it.h, it.payload);
    p.out.push_back(std::move(it));
    ++queued_;
    HGAS_TRY(progress());
    return finish("hgas_send", std::move(q), h, blocking);
}

status state::irecv(const recv_args &a, hgas_handle_t *h, bool blocking) {
    auto q = std::make_unique<request>();
    q->st = this;
    q->ctx = a.ctx;
    q->peer = a.src;
    q->tag = a.tag;
    q->rbuf = a.buf;
    q->bytes = a.bytes;
    q->kind = a.bytes && r_.has_devices() ? r_.kind_of(a.buf, a.bytes) : mem::kind::host;
    q->info = a.info;
    q->cons = a.cons;
    // Messages already taken from the rings are older than those still in them: match the
    // unexpected queue first, then post; the rings are read by the next progress pass, in
    // order (a blocking receive's wait makes one at once). A non-blocking receive makes none:
    // its pass would read the slot line the sender is writing, once per receive, and steal the
    // line from it (a window of 64 8-byte receives spent 12% of its time there).
    bool matched = false;
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        if (!matches(q.get(), it->src, it->h)) continue;
        unexpected_msg m = std::move(*it);
        if (it == unexpected_.begin()) unexpected_.pop_front();
        else unexpected_.erase(it);
        unexpected_bytes_ -= m.size();
        busy_ = true;
        status s;
        if (m.h.type == t_eager && m.big && m.h.bytes <= q->bytes && ring_copy_ok(q.get())) {
            // Into device memory: the copy takes the message's host copy along and runs on.
            set_info(q.get(), m.src, m.h.tag, m.h.bytes);
            const char *bytes = m.big.get();
            s = start_ring_copy(q.get(), m.src, 0, m.h, bytes, false, std::move(m.big));
        } else {
            s = deliver(q.get(), m.src, m.h, m.data(), m.umsg);
        }
        busy_ = false;
        HGAS_TRY(s);
        matched = true;
        break;
    }
    if (!matched) posted_.push_back(q.get());
    // A match may have queued a reply to the sender (ready to send, done, discard): send it now,
    // or a receive that completed here would leave the sender waiting for this rank's next
    // msg call. This reads no slot line the sender writes.
    if (matched && queued_ && !busy_) HGAS_TRY(flush_all());
    return finish("hgas_recv", std::move(q), h, blocking);
}

status state::iprobe(uint32_t ctx, int src, int tag, int *flag, hgas_msg_info_t *info) {
    // A probe loop is a wait of the program's: serve the transports too (UCX peers' requests
    // may need this rank's CPU), and notice a dead job.
    HGAS_TRY(r_.poll());
    HGAS_TRY(progress());
    request probe;
    probe.ctx = ctx;
    probe.peer = src;
    probe.tag = tag;
    probe.done = true;  // never in flight
    for (const auto &m : unexpected_) {
        if (!matches(&probe, m.src, m.h)) continue;
        if (info) *info = hgas_msg_info_t{m.src, m.h.tag, static_cast<size_t>(m.h.bytes)};
        *flag = 1;
        return status::ok;
    }
    *flag = 0;
    return status::ok;
}

void state::report_unreceived(const char *where, int64_t ctx, bool all) {
    std::string list;
    size_t count = 0;
    for (const auto &m : unexpected_) {
        if (!all && m.h.ctx != ctx) continue;
        if (++count <= 8) {
            char one[128];
            std::snprintf(one, sizeof one, "%sfrom rank %d tag %d (%llu bytes%s)", count > 1 ? ", " : "", m.src, m.h.tag,
                          (unsigned long long)m.h.bytes, m.h.ctx ? ", a library scope" : "");
            list += one;
        }
    }
    if (count)
        HGASI_WARN("api", "%s: rank %d: %zu message(s) sent to it were never received: %s%s", where, r_.me(), count,
                   list.c_str(), count > 8 ? ", ..." : "");
}

status state::finalize() {
    // After the final barrier every message sent to this rank is in its rings. Only read them:
    // peers may be unmapping their heaps already, so nothing is matched, fetched or credited.
    finalizing_ = true;
    for (int src = 0; src < r_.n(); ++src) {
        for (uint64_t seq = peers_[src].next_in;; ++seq) {
            const char *sl = own(ring_offset(src, seq));
            if (__atomic_load_n(reinterpret_cast<const uint64_t *>(sl), __ATOMIC_ACQUIRE) != seq) break;
            hdr h;
            std::memcpy(&h, sl, sizeof h);
            if (h.type == t_eager_short) h = short_hdr(h);
            if (h.type == t_eager || h.type == t_rts) unexpected_.emplace_back(src, h, nullptr, 0);
            if (seq - peers_[src].next_in >= slots_) break;
        }
    }
    if (tags_) {  // messages UCX holds that were never taken
        if (tag_stalled_.m) unexpected_.emplace_back(utag_src(tag_stalled_.w), utag_hdr(tag_stalled_.w, tag_stalled_.len),
                                                     tag_stalled_.m);
        uint64_t w = 0;
        size_t len = 0;
        void *m = nullptr;
        while (tags_->tag_take(utag_marker, utag_marker, w, len, m)) {
            hdr h{};
            h.type = t_utag;
            h.tag = utag_tag(w);
            h.ctx = utag_ctx(w);
            h.bytes = len;
            unexpected_.emplace_back(utag_src(w), h, m);
        }
    }
    report_unreceived("hgas_finalize", 0, true);
    // Copies still reading ring slots (receives whose handles died): the heap outlives them.
    // One deadline for them all: HGAS_TIMEOUT bounds the whole wait.
    const deadline copies_dl(r_.timeout());
    for (ring_copy &c : ring_copies_)
        while (!copies_dl.expired()) {
            auto done = c.d->test(c.tk);
            if (!done.ok() || *done) break;
        }
    ring_copies_.clear();
    // Peers' allocations mapped for messages: every receive is over, so no copy reads them
    // (one of a receive whose handle died may still: wait for it first).
    for (ipc_op &o : ipc_ops_)
        if (o.d) {
            const deadline dl(r_.timeout());
            while (!dl.expired()) {
                auto done = o.d->test(o.tk);
                if (!done.ok() || *done) break;
            }
        }
    ipc_ops_.clear();
    close_mappings(ipc_cache_.clear());
    for (auto &x : ipc_graveyard_)
        if (gpu::device *d = r_.device(x.k)) d->close_user(x.mapped);
    ipc_graveyard_.clear();
    size_t recvs = posted_.size(), sends = 0;
    for (const auto &p : peers_)
        for (const auto &it : p.out)
            if (it.req) ++sends;
    for (const auto &[id, q] : live_) (q->is_send ? sends : recvs) += 1;
    for (const auto &x : tag_ops_)
        if (x.q) (x.is_send ? sends : recvs) += 1;
    if (!stream_ops_.empty())
        HGASI_WARN("api", "hgas_finalize: rank %d: %zu stream-ordered message(s) never completed (synchronize the "
                   "streams with hgas_stream_sync before hgas_finalize)", r_.me(), stream_ops_.size());
    if (recvs) HGASI_WARN("api", "hgas_finalize: rank %d: %zu receive(s) never completed", r_.me(), recvs);
    if (sends) HGASI_WARN("api", "hgas_finalize: rank %d: %zu send(s) never completed", r_.me(), sends);
    return status::ok;
}

// --- argument checks -----------------------------------------------------------------------

status check_buf(core::rank &r, const char *op, const void *buf, size_t bytes) {
    if (bytes && !buf) return fail(status::invalid_arg, "%s: the buffer is NULL but %zu bytes were given", op, bytes);
    if (bytes > (1ull << 48))
        return fail(status::invalid_arg, "%s: %zu bytes is not a plausible message size (a negative value cast to "
                    "size_t?)", op, bytes);
    return status::ok;
}

}  // namespace

status attach(core::rank &r) {
    auto st = std::make_unique<state>(r);
    state *raw = st.get();
    core::rank *rp = &r;
    r.msg_extension() = std::move(st);
    // Peers' messages are taken from the rings also while this rank waits in other hgas calls
    // (barriers, signal waits): only at safe points, never inside an operation (README.md).
    return r.engine().add_poller([raw, rp](bool on_rank_thread) {
        if (!on_rank_thread || !rp->at_safe_point()) return status::ok;
        return raw->progress();
    });
}

namespace {
status check_send(core::rank &r, state *st, const char *op, const send_args &a) {
    HGAS_TRY(check_buf(r, op, a.buf, a.bytes));
    if (a.dest < 0 || a.dest >= r.n())
        return fail(status::invalid_arg, "%s: destination rank %d does not exist (the job has ranks 0..%d)", op, a.dest,
                    r.n() - 1);
    if (a.tag < 0)
        return fail(status::invalid_arg, "%s: tag %d is negative (tags are 0..HGAS_TAG_MAX; HGAS_ANY_TAG is for "
                    "receives only)", op, a.tag);
    return st->check_ctx(op, a.ctx);
}
}  // namespace

status isend(core::rank &r, const char *op, const send_args &a, hgas_handle_t *h) {
    state *st = state_of(r, op);
    if (!st) return status::internal;
    if (!h) return fail(status::invalid_arg, "%s: the handle pointer is NULL", op);
    HGAS_TRY(check_send(r, st, op, a));
    return st->isend(a, h, false);
}

status send(core::rank &r, const send_args &a) {
    const char *op = "hgas_send";
    state *st = state_of(r, op);
    if (!st) return status::internal;
    HGAS_TRY(check_send(r, st, op, a));
    return st->isend(a, nullptr, true);
}

namespace {
status check_recv(core::rank &r, state *st, const char *op, uint32_t ctx, int src, int tag) {
    if (src != HGAS_ANY_RANK && (src < 0 || src >= r.n()))
        return fail(status::invalid_arg, "%s: source rank %d does not exist (the job has ranks 0..%d; HGAS_ANY_RANK "
                    "is -1)", op, src, r.n() - 1);
    if (tag != HGAS_ANY_TAG && tag < 0)
        return fail(status::invalid_arg, "%s: tag %d is negative (tags are 0..HGAS_TAG_MAX, or HGAS_ANY_TAG)", op, tag);
    return st->check_ctx(op, ctx);
}
}  // namespace

status irecv(core::rank &r, const char *op, const recv_args &a, hgas_handle_t *h) {
    state *st = state_of(r, op);
    if (!st) return status::internal;
    if (!h) return fail(status::invalid_arg, "%s: the handle pointer is NULL", op);
    HGAS_TRY(check_buf(r, op, a.buf, a.bytes));
    HGAS_TRY(check_recv(r, st, op, a.ctx, a.src, a.tag));
    return st->irecv(a, h, false);
}

status recv(core::rank &r, const recv_args &a) {
    const char *op = "hgas_recv";
    state *st = state_of(r, op);
    if (!st) return status::internal;
    HGAS_TRY(check_buf(r, op, a.buf, a.bytes));
    HGAS_TRY(check_recv(r, st, op, a.ctx, a.src, a.tag));
    return st->irecv(a, nullptr, true);
}

status iprobe(core::rank &r, const char *op, uint32_t ctx, int src, int tag, int *flag, hgas_msg_info_t *info) {
    state *st = state_of(r, op);
    if (!st) return status::internal;
    if (!flag) return fail(status::invalid_arg, "%s: the flag pointer is NULL", op);
    HGAS_TRY(check_recv(r, st, op, ctx, src, tag));
    return st->iprobe(ctx, src, tag, flag, info);
}

status probe(core::rank &r, int src, int tag, hgas_msg_info_t *info) {
    const char *op = "hgas_probe";
    state *st = state_of(r, op);
    if (!st) return status::internal;
    HGAS_TRY(check_recv(r, st, op, 0, src, tag));
    int flag = 0;
    status err = status::ok;
    core::safe_point sp(r);
    HGAS_TRY(r.wait("hgas_probe", [&] {
        err = st->iprobe(0, src, tag, &flag, info);
        return err != status::ok || flag;
    }));
    return err;
}

result<uint32_t> ctx_create(core::rank &r) {
    state *st = state_of(r, "hgas_msg_ctx_create");
    if (!st) return status::internal;
    return st->ctx_create();
}

status ctx_destroy(core::rank &r, uint32_t ctx) {
    state *st = state_of(r, "hgas_msg_ctx_destroy");
    if (!st) return status::internal;
    return st->ctx_destroy(ctx);
}

result<stream_slot> stream_send(core::rank &r, const char *op, const send_args &a, const layout *l) {
    state *st = state_of(r, op);
    if (!st) return status::internal;
    send_args c = a;
    if (l) {
        if (!a.buf) return fail(status::invalid_arg, "%s: the buffer is NULL", op);
        c.bytes = l->packed;
    }
    HGAS_TRY(check_send(r, st, op, c));
    return st->stream_add(op, true, c, recv_args{}, l);
}

result<stream_slot> stream_recv(core::rank &r, const char *op, const recv_args &a, const layout *l) {
    state *st = state_of(r, op);
    if (!st) return status::internal;
    recv_args c = a;
    if (l) {
        if (!a.buf) return fail(status::invalid_arg, "%s: the buffer is NULL", op);
        c.bytes = l->packed;
    }
    HGAS_TRY(check_buf(r, op, c.buf, c.bytes));
    HGAS_TRY(check_recv(r, st, op, c.ctx, c.src, c.tag));
    return st->stream_add(op, false, send_args{}, c, l);
}

void stream_cancel(core::rank &r, uint64_t seq) {
    if (state *st = state_of(r, "stream_cancel")) st->stream_cancel(seq);
}

status stream_status(core::rank &r) {
    state *st = state_of(r, "hgas_stream_sync");
    if (!st) return status::internal;
    HGAS_TRY(st->progress());
    return st->stream_status();
}

result<stats> get_stats(core::rank &r) {
    state *st = state_of(r, "hgasi_msg_stats");
    if (!st) return status::internal;
    return st->counters();
}

void note_typed(core::rank &r, typed_path p) {
    auto *st = static_cast<state *>(r.msg_extension().get());
    if (!st) return;
    stats &c = st->counters();
    ++(p == typed_path::plain ? c.typed_plain : p == typed_path::packed ? c.typed_packed : c.typed_unpacked);
}

}  // namespace hgas::msg
