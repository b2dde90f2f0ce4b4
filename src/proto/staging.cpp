// Device paths: local copies, bounces through the pinned pool, and the staged ring protocol.
// The protocol is described in staging.hpp; the memory layout of the staging area (in every
// rank's symmetric host heap, at the same offset everywhere) is:
//
//   rings    n rings (one per source rank) of `slots` slots; slot = 64-byte header + chunk
//   credits  n words, one cache line apart: credits[t] = messages target t has applied
//   replies  `slots` reply slots (64-byte header whose first word is the token, + chunk)
#include "proto/staging.hpp"

#include <algorithm>
#include <cstring>

#include "base/log.hpp"
#include "mem/gptr.hpp"

namespace hgas::proto {

namespace {
enum : uint8_t { op_put = 1, op_put_signal = 2, op_signal = 3, op_get = 4, op_amo = 5 };
constexpr int stream_out = 1;    // device-to-host copies of outgoing payloads
constexpr int stream_in = 2;     // the agent's host-to-device copies
constexpr int stream_reply = 3;  // the agent's device-to-host copies for gets

inline uint64_t load_acquire(const void *p) { return __atomic_load_n(static_cast<const uint64_t *>(p), __ATOMIC_ACQUIRE); }
inline void store_release(void *p, uint64_t v) { __atomic_store_n(static_cast<uint64_t *>(p), v, __ATOMIC_RELEASE); }
}  // namespace

struct staging::header {
    uint64_t seq;         // written last: the message is complete when it reads its number
    uint8_t op;
    uint8_t sig_op;
    uint8_t amo;
    uint8_t width;
    uint16_t seg;
    uint16_t sig_seg;
    uint64_t offset;
    uint64_t len;
    uint64_t sig_offset;  // put_signal/signal: the signal word; amo: the reply token
    uint64_t value;       // signal value; amo operand; get: the reply token
    uint64_t compare;     // amo compare
    uint32_t reply;       // get/amo: the initiator's reply slot
    uint32_t pad;
};
// (a slot header is one cache line: checked in area_bytes, where the type is accessible)

struct staging::outgoing {
    int t;
    uint64_t seq;
    header h;
    gpu::device *d;       // copying the payload, or nullptr
    gpu::ticket tk;
    char *staged;         // pinned assembly buffer (transport), or nullptr (written in place)
    size_t len;
};

struct staging::incoming {
    header h;
    char *slot;
    gpu::device *d = nullptr;
    gpu::ticket tk;
    bool in_place = false;  // get: the data went straight into the initiator's reply slot
    bool amo_done = false;
    uint64_t amo_old = 0;
};

uint64_t staging::area_bytes(int n, uint64_t chunk, int slots) {
    static_assert(sizeof(header) == 64, "a slot header is one cache line");
    const uint64_t slot = 64 + chunk;
    return static_cast<uint64_t>(n) * slots * slot + static_cast<uint64_t>(n) * 64 + slots * slot;
}

staging_plan staging::plan(int n, uint64_t chunk, int slots, uint64_t budget, bool chunk_fixed, bool slots_fixed) {
    staging_plan p{chunk, slots, area_bytes(n, chunk, slots), false};
    auto fits = [&] { return (p.bytes = area_bytes(n, p.chunk, p.slots)) <= budget; };
    auto halve = [&](uint64_t floor) {
        while (!chunk_fixed && p.chunk > floor && !fits()) p.chunk = std::max<uint64_t>(floor, p.chunk / 2 / 64 * 64);
    };
    auto fewer = [&](int floor) {
        while (!slots_fixed && p.slots > floor && !fits()) --p.slots;
    };
    halve(64 << 10);
    fewer(4);
    halve(4 << 10);
    fewer(2);
    fits();
    p.shrunk = p.chunk != chunk || p.slots != slots;
    return p;
}

staging::staging(staging_config c) : c_(std::move(c)) {
    slot_bytes_ = 64 + c_.chunk;
    ring_bytes_ = slot_bytes_ * c_.slots;
    rings_ = c_.area;
    credits_ = rings_ + ring_bytes_ * c_.n;
    replies_ = credits_ + 64ull * c_.n;
    sent_.assign(c_.n, 0);
    in_.resize(c_.n);
    // The pinned pool: page-locked where a GPU can copy into it directly.
    pinned_owner_ = c_.dev[static_cast<int>(mem::kind::cuda)] ? c_.dev[static_cast<int>(mem::kind::cuda)]
                                                               : c_.dev[static_cast<int>(mem::kind::sim)];
    if (pinned_owner_) {
        auto p = pinned_owner_->alloc_pinned(ring_bytes_);
        if (p.ok()) pinned_ = static_cast<char *>(*p);
        else HGASI_WARN("proto", "no pinned staging pool: %s", last_error().c_str());
    }
}

staging::~staging() {
    if (pinned_) pinned_owner_->free_pinned(pinned_);
}

// --- layout ---------------------------------------------------------------------------------

uint64_t staging::slot_offset(int src, uint64_t seq) const {
    return rings_ + ring_bytes_ * static_cast<uint64_t>(src) + slot_bytes_ * ((seq - 1) % c_.slots);
}
char *staging::slot_in(int src, uint64_t seq) const { return c_.own_base[mem::seg_symmetric] + slot_offset(src, seq); }
uint64_t staging::reply_offset(int j) const { return replies_ + slot_bytes_ * static_cast<uint64_t>(j); }
char *staging::reply_slot(int j) const { return c_.own_base[mem::seg_symmetric] + reply_offset(j); }
const uint64_t *staging::credit_word(int target) const {
    return reinterpret_cast<const uint64_t *>(c_.own_base[mem::seg_symmetric] + credits_ + 64ull * target);
}

gpu::device *staging::engine_for(mem::kind a, mem::kind b) const {
    const mem::kind k = a != mem::kind::host ? a : b;
    return c_.dev[static_cast<int>(k)];
}

status staging::wait_ticket(gpu::device *d, gpu::ticket tk, const char *what) {
    status err = status::ok;
    status s = c_.wait(what, [&] {
        auto r = d->test(tk);
        if (!r.ok()) {
            err = r.error();
            return true;
        }
        return *r;
    });
    if (err != status::ok) return err;
    if (s == status::timeout) {
        // Say what the device was doing: a local copy that never completes is not a peer's fault.
        const std::string state = d->ticket_state(tk);
        if (!state.empty()) return fail(s, "%s; %s", last_error().c_str(), state.c_str());
    }
    return s;
}

// --- local copies and bounces ---------------------------------------------------------------

status staging::copy(void *dst, mem::kind dk, const void *src, mem::kind sk, size_t n) {
    if (n == 0) return status::ok;
    if (dk == mem::kind::host && sk == mem::kind::host) {
        std::memcpy(dst, src, n);
        return status::ok;
    }
    if (dk != mem::kind::host && sk != mem::kind::host && dk != sk) {
        // Two device kinds (cuda and sim): no engine reaches both; bounce through the pool.
        if (!pinned_) return fail(status::no_memory, "no pinned staging pool to copy between %s and %s memory",
                                  mem::kind_name(sk), mem::kind_name(dk));
        HGAS_TRY(flush_outgoing(true));
        for (size_t pos = 0; pos < n; pos += c_.chunk) {
            const size_t len = std::min<size_t>(c_.chunk, n - pos);
            HGAS_TRY(copy(pinned_, mem::kind::host, static_cast<const char *>(src) + pos, sk, len));
            HGAS_TRY(copy(static_cast<char *>(dst) + pos, dk, pinned_, mem::kind::host, len));
        }
        return status::ok;
    }
    gpu::device *d = engine_for(dk, sk);
    if (!d) return fail(status::internal, "no device for a copy between %s and %s memory", mem::kind_name(sk),
                        mem::kind_name(dk));
    HGAS_TRY_ASSIGN(gpu::ticket tk, d->copy_waited(dst, src, n, 0));
    return wait_ticket(d, tk, "device copy");
}

status staging::copy_nbi(void *dst, mem::kind dk, const void *src, mem::kind sk, size_t n) {
    if (n == 0) return status::ok;
    gpu::device *d = engine_for(dk, sk);
    if ((dk != mem::kind::host && sk != mem::kind::host && dk != sk) || !d) return copy(dst, dk, src, sk, n);
    // One stream, no event per copy (as a user would write it with cudaMemcpyAsync): quiet
    // marks the stream once and waits for that.
    HGAS_TRY_ASSIGN(gpu::ticket tk, d->copy_async(dst, src, n, 0, false));
    if (tk.seq) nbi_.emplace_back(d, tk);  // a copy the device tracks itself (its agent)
    if (std::find(nbi_devices_.begin(), nbi_devices_.end(), d) == nbi_devices_.end()) nbi_devices_.push_back(d);
    if (nbi_.size() >= 64) {  // keep the list short: drop what has completed already
        std::vector<std::pair<gpu::device *, gpu::ticket>> left;
        for (auto &e : nbi_) {
            HGAS_TRY_ASSIGN(bool done, e.first->test(e.second));
            if (!done) left.push_back(e);
        }
        nbi_.swap(left);
    }
    return status::ok;
}

status staging::bounce_put(transport::transport *t, transport::remote dst, const void *src, mem::kind sk, size_t n) {
    gpu::device *d = c_.dev[static_cast<int>(sk)];
    if (!pinned_ || !d) return fail(status::internal, "bounce put without a pinned pool or a %s device", mem::kind_name(sk));
    HGAS_TRY(flush_outgoing(true));  // the pool is ours from here
    struct chunk {
        gpu::ticket tk;
        size_t pos, len;
        char *buf;
    };
    std::deque<chunk> q;
    size_t pos = 0, k = 0;
    while (pos < n || !q.empty()) {
        // Keep the device copies of the next chunks going while the transport sends this one.
        while (pos < n && q.size() < static_cast<size_t>(c_.slots)) {
            const size_t len = std::min<size_t>(c_.chunk, n - pos);
            char *buf = pinned_ + slot_bytes_ * (k++ % c_.slots);
            HGAS_TRY_ASSIGN(gpu::ticket tk, d->copy_async(buf, static_cast<const char *>(src) + pos, len, stream_out));
            q.push_back({tk, pos, len, buf});
            pos += len;
        }
        chunk c = q.front();
        q.pop_front();
        HGAS_TRY(wait_ticket(d, c.tk, "device-to-host copy of a bounce put"));
        transport::remote r = dst;
        r.offset += c.pos;
        HGAS_TRY(t->put(r, c.buf, c.len, false));
    }
    return status::ok;
}

status staging::bounce_get(void *dst, mem::kind dk, transport::transport *t, transport::remote src, size_t n) {
    gpu::device *d = c_.dev[static_cast<int>(dk)];
    if (!pinned_ || !d) return fail(status::internal, "bounce get without a pinned pool or a %s device", mem::kind_name(dk));
    HGAS_TRY(flush_outgoing(true));
    std::deque<std::pair<gpu::ticket, size_t>> q;  // host-to-device copies in flight, by buffer
    size_t k = 0;
    for (size_t pos = 0; pos < n; pos += c_.chunk, ++k) {
        const size_t len = std::min<size_t>(c_.chunk, n - pos);
        if (q.size() == static_cast<size_t>(c_.slots)) {  // reuse the oldest buffer once copied out
            HGAS_TRY(wait_ticket(d, q.front().first, "host-to-device copy of a bounce get"));
            q.pop_front();
        }
        char *buf = pinned_ + slot_bytes_ * (k % c_.slots);
        transport::remote r = src;
        r.offset += pos;
        HGAS_TRY(t->get(buf, r, len, false));
        HGAS_TRY_ASSIGN(gpu::ticket tk, d->copy_async(static_cast<char *>(dst) + pos, buf, len, stream_out));
        q.push_back({tk, k});
    }
    for (auto &e : q) HGAS_TRY(wait_ticket(d, e.first, "host-to-device copy of a bounce get"));
    return status::ok;
}

// --- initiator side of the staged protocol ------------------------------------------------

result<uint64_t> staging::claim(int t) {
    const uint64_t seq = sent_[t] + 1;
    const uint64_t *cw = credit_word(t);
    if (seq - load_acquire(cw) > static_cast<uint64_t>(c_.slots)) {
        // The target applies in order: publish what we hold before waiting for its credits.
        HGAS_TRY(flush_outgoing(true));
        HGAS_TRY(c_.wait("a credit from the target's staging ring (is the target rank progressing? see "
                         "HGAS_PROGRESS_THREAD)",
                         [&] { return seq - load_acquire(cw) <= static_cast<uint64_t>(c_.slots); }));
    }
    sent_[t] = seq;
    ++total_sent_;
    return seq;
}

status staging::send(int t, uint64_t seq, header &h, const void *payload, mem::kind pk, size_t len) {
    outgoing o{t, seq, h, nullptr, {}, nullptr, len};
    char *dst;
    if (char *heap = c_.peer_sym(t)) {
        dst = heap + slot_offset(c_.me, seq) + 64;  // straight into the target's slot
    } else {
        if (!pinned_) return fail(status::internal, "staged send without a pinned pool");
        // Round robin over the pool is safe: at most `slots` messages are ever outstanding.
        o.staged = pinned_ + slot_bytes_ * (total_sent_ % c_.slots);
        dst = o.staged + 64;
    }
    if (len) {
        if (pk == mem::kind::host) {
            std::memcpy(dst, payload, len);
        } else {
            o.d = c_.dev[static_cast<int>(pk)];
            HGAS_TRY_ASSIGN(o.tk, o.d->copy_async(dst, payload, len, stream_out));
        }
    }
    {
        std::lock_guard<std::mutex> g(out_mu_);
        out_.push_back(o);
    }
    return flush_outgoing(false);
}

namespace {
// Marks out_ as being worked on for a scope: progress, which waits below may run, keeps off it.
struct busy_scope {
    bool &f;
    const bool was;  // restored, not cleared: scopes may nest
    explicit busy_scope(bool &b) : f(b), was(b) { f = true; }
    ~busy_scope() { f = was; }
};
}  // namespace

status staging::flush_outgoing(bool all) {
    // The rank's thread owns the queue until it returns; the helper's publish_ready skips.
    std::lock_guard<std::mutex> g(out_mu_);
    busy_scope busy(flushing_);
    while (!out_.empty()) {
        outgoing &o = out_.front();
        if (o.d) {
            HGAS_TRY_ASSIGN(bool done, o.d->test(o.tk));
            if (!done) {
                if (!all && out_.size() < static_cast<size_t>(c_.slots)) return status::ok;
                HGAS_TRY(wait_ticket(o.d, o.tk, "device-to-host copy of a staged put"));
            }
        }
        HGAS_TRY(publish(o.t, o.seq, o.h, o.staged, o.len));
        out_.pop_front();
    }
    return status::ok;
}

// Either thread: the rank's thread publishes everything finished; the helper, which makes no
// transport calls, only messages written straight into a mapped target's slot (a header
// store), and stops at the first that needs the transport, so the order stays that of claim.
status staging::publish_ready(bool on_rank_thread) {
    if (on_rank_thread && flushing_) return status::ok;  // flush_outgoing, or this, runs further up
    std::unique_lock<std::mutex> lk(out_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return status::ok;  // the other thread has the queue
    // A transport publish (rank's thread only) may run progress: it must find out_ busy.
    bool unused = false;
    busy_scope busy(on_rank_thread ? flushing_ : unused);
    while (!out_.empty()) {
        outgoing &o = out_.front();
        if (!on_rank_thread && o.staged) return status::ok;
        if (o.d) {
            HGAS_TRY_ASSIGN(bool done, o.d->test(o.tk));
            if (!done) return status::ok;
        }
        HGAS_TRY(publish(o.t, o.seq, o.h, o.staged, o.len));  // then pop: a failed publish stays queued
        out_.pop_front();
    }
    return status::ok;
}

status staging::publish(int t, uint64_t seq, const header &hh, char *staged, size_t len) {
    header h = hh;
    h.seq = seq;
    const uint64_t off = slot_offset(c_.me, seq);
    if (!staged) {
        char *slot = c_.peer_sym(t) + off;
        std::memcpy(slot + 8, reinterpret_cast<const char *>(&h) + 8, 56);
        transport::direct::store_fence();
        store_release(slot, seq);
        return status::ok;
    }
    std::memcpy(staged, &h, 64);
    return c_.route(t)->put_signal(transport::remote{t, mem::seg_symmetric, off + 8}, staged + 8, 56 + len,
                                   transport::remote{t, mem::seg_symmetric, off}, signal_op::set, seq, false);
}

status staging::put(int t, uint16_t seg, uint64_t offset, const void *src, mem::kind sk, size_t n,
                    const signal_req *sig, bool nbi) {
    // Small first chunks only when the pipeline to `t` is empty (nothing else hides its
    // fill); small last chunks only for a blocking put (an nbi put is followed by more).
    bool cold;
    {
        std::lock_guard<std::mutex> g(out_mu_);
        cold = out_.empty() && load_acquire(credit_word(t)) == sent_[t];
    }
    size_t pos = 0;
    size_t k = 0;
    do {
        const size_t len = chunk_len(k++, n - pos, cold, !nbi);
        const bool last = pos + len >= n;
        HGAS_TRY_ASSIGN(uint64_t seq, claim(t));
        header h{};
        h.op = n == 0 ? op_signal : last && sig ? op_put_signal : op_put;
        h.seg = seg;
        h.offset = offset + pos;
        h.len = len;
        if (last && sig) {
            h.sig_seg = sig->seg;
            h.sig_offset = sig->offset;
            h.sig_op = static_cast<uint8_t>(sig->op);
            h.value = sig->value;
        }
        HGAS_TRY(send(t, seq, h, static_cast<const char *>(src) + pos, sk, len));
        pos += len;
    } while (pos < n);
    return nbi ? status::ok : flush_outgoing(true);  // blocking: the source may be reused now
}

// Chunk k of a transfer with `left` bytes to go. A pipeline that starts empty fills and
// drains with one chunk on its own (the first device-to-host copy before any host-to-device
// one, and the reverse at the end), so chunks may grow from 64 KiB to a slot at the start
// (`ramp_up`) and shrink towards the end (`ramp_down`): fill and drain then cost microseconds.
// Where other transfers keep the pipeline busy, full slots keep the per-chunk costs low.
size_t staging::chunk_len(size_t k, size_t left, bool ramp_up, bool ramp_down) const {
    const size_t min_chunk = std::min<size_t>(64 << 10, c_.chunk);
    size_t len = c_.chunk;
    if (ramp_up) len = std::min(len, min_chunk << std::min<size_t>(k, 20));
    if (ramp_down) len = std::min(len, std::max(min_chunk, left / 2));
    return std::min(len, left);
}

status staging::get(void *dst, mem::kind dk, int t, uint16_t seg, uint64_t offset, size_t n) {
    struct pend {
        uint64_t token;
        int j;
        size_t pos, len;
    };
    std::deque<pend> q;
    size_t pos = 0;
    while (pos < n || !q.empty()) {
        while (pos < n && q.size() < static_cast<size_t>(c_.slots)) {
            const size_t len = std::min<size_t>(c_.chunk, n - pos);
            pend p{++token_, static_cast<int>(next_reply_++ % c_.slots), pos, len};
            HGAS_TRY_ASSIGN(uint64_t seq, claim(t));
            header h{};
            h.op = op_get;
            h.seg = seg;
            h.offset = offset + pos;
            h.len = len;
            h.value = p.token;
            h.reply = static_cast<uint32_t>(p.j);
            HGAS_TRY(send(t, seq, h, nullptr, mem::kind::host, 0));
            q.push_back(p);
            pos += len;
        }
        HGAS_TRY(flush_outgoing(true));
        const pend p = q.front();
        q.pop_front();
        char *rs = reply_slot(p.j);
        HGAS_TRY(c_.wait("the reply to a staged get", [&] { return load_acquire(rs) == p.token; }));
        HGAS_TRY(copy(static_cast<char *>(dst) + p.pos, dk, rs + 64, mem::kind::host, p.len));
    }
    return status::ok;
}

result<uint64_t> staging::amo(int t, uint16_t seg, uint64_t offset, amo_op op, unsigned width, uint64_t operand,
                              uint64_t compare) {
    const uint64_t token = ++token_;
    const int j = static_cast<int>(next_reply_++ % c_.slots);
    HGAS_TRY_ASSIGN(uint64_t seq, claim(t));
    header h{};
    h.op = op_amo;
    h.seg = seg;
    h.offset = offset;
    h.len = width;
    h.amo = static_cast<uint8_t>(op);
    h.width = static_cast<uint8_t>(width);
    h.value = operand;
    h.compare = compare;
    h.sig_offset = token;
    h.reply = static_cast<uint32_t>(j);
    HGAS_TRY(send(t, seq, h, nullptr, mem::kind::host, 0));
    HGAS_TRY(flush_outgoing(true));
    char *rs = reply_slot(j);
    HGAS_TRY(c_.wait("the reply to a staged atomic", [&] { return load_acquire(rs) == token; }));
    uint64_t old;
    std::memcpy(&old, rs + 64, 8);
    return old;
}

status staging::quiet() {
    for (gpu::device *d : nbi_devices_) {
        HGAS_TRY_ASSIGN(gpu::ticket tk, d->mark(0));
        HGAS_TRY(wait_ticket(d, tk, "non-blocking device copies"));
    }
    nbi_devices_.clear();
    for (auto &e : nbi_) HGAS_TRY(wait_ticket(e.first, e.second, "a non-blocking device copy"));
    nbi_.clear();
    HGAS_TRY(flush_outgoing(true));
    for (int t = 0; t < c_.n; ++t) {
        if (!sent_[t]) continue;
        const uint64_t *cw = credit_word(t);
        const uint64_t want = sent_[t];
        HGAS_TRY(c_.wait("quiet: a target applying staged transfers", [&] { return load_acquire(cw) >= want; }));
    }
    return status::ok;
}

// --- the agent ------------------------------------------------------------------------------

status staging::start(int src, ring_in &r, incoming &in) {
    const header &h = in.h;
    auto bad = [&](const char *why) {
        return fail(status::internal, "staging: message %llu from rank %d is malformed (%s)",
                    (unsigned long long)h.seq, src, why);
    };
    auto check = [&](uint16_t seg, uint64_t off, uint64_t len) {
        return seg < mem::seg_count && c_.own_size[seg] > 0 && mem::in_bounds(off, len, c_.own_size[seg]);
    };
    if (h.len > c_.chunk) return bad("longer than a slot");
    switch (h.op) {
    case op_put_signal:
    case op_signal:
        if (!check(h.sig_seg, h.sig_offset, 8) || h.sig_offset % 8) return bad("signal out of bounds");
        if (h.op == op_signal) return status::ok;
        [[fallthrough]];
    case op_put: {
        if (!check(h.seg, h.offset, h.len)) return bad("target out of bounds");
        char *dst = c_.own_base[h.seg] + h.offset;
        const mem::kind k = mem::segment_kind(h.seg);
        if (k == mem::kind::host) {
            std::memcpy(dst, in.slot + 64, h.len);
        } else if (h.len) {
            in.d = c_.dev[static_cast<int>(k)];
            if (!in.d) return bad("no device of the target's kind");
            HGAS_TRY_ASSIGN(in.tk, in.d->copy_async(dst, in.slot + 64, h.len, stream_in));
        }
        return status::ok;
    }
    case op_get: {
        if (!check(h.seg, h.offset, h.len)) return bad("source out of bounds");
        const char *from = c_.own_base[h.seg] + h.offset;
        char *to = in.slot + 64;
        if (char *heap = c_.peer_sym(src)) {  // answer straight into the initiator's reply slot
            to = heap + reply_offset(static_cast<int>(h.reply)) + 64;
            in.in_place = true;
        }
        const mem::kind k = mem::segment_kind(h.seg);
        if (k == mem::kind::host) {
            std::memcpy(to, from, h.len);
        } else if (h.len) {
            in.d = c_.dev[static_cast<int>(k)];
            if (!in.d) return bad("no device of the source's kind");
            HGAS_TRY_ASSIGN(in.tk, in.d->copy_async(to, from, h.len, stream_reply));
        }
        return status::ok;
    }
    case op_amo:
        if ((h.width != 4 && h.width != 8) || !check(h.seg, h.offset, h.width) || h.offset % h.width)
            return bad("atomic target out of bounds or misaligned");
        return status::ok;
    default: return bad("unknown operation");
    }
    (void)r;
}

result<bool> staging::finish(int src, incoming &in, bool on_rank_thread) {
    const header &h = in.h;
    if (in.d) {
        HGAS_TRY_ASSIGN(bool done, in.d->test(in.tk));
        if (!done) return false;
    }
    switch (h.op) {
    case op_put: return true;
    case op_put_signal:
    case op_signal: {
        char *s = c_.own_base[h.sig_seg] + h.sig_offset;
        const mem::kind k = mem::segment_kind(h.sig_seg);
        const auto sop = static_cast<signal_op>(h.sig_op);
        if (k == mem::kind::host) {
            transport::direct::signal_update(s, sop, h.value);
        } else {
            gpu::device *d = c_.dev[static_cast<int>(k)];
            HGAS_TRY(d->amo(s, sop == signal_op::set ? amo_op::set : amo_op::add, 8, h.value, 0).error());
        }
        return true;
    }
    case op_get: {
        if (in.in_place) {
            transport::direct::store_fence();
            store_release(c_.peer_sym(src) + reply_offset(static_cast<int>(h.reply)), h.value);
            return true;
        }
        if (!on_rank_thread) return false;
        const uint64_t roff = reply_offset(static_cast<int>(h.reply));
        HGAS_TRY(c_.route(src)->put_signal(transport::remote{src, mem::seg_symmetric, roff + 64}, in.slot + 64, h.len,
                                           transport::remote{src, mem::seg_symmetric, roff}, signal_op::set, h.value,
                                           false));
        return true;
    }
    case op_amo: {
        if (!in.amo_done) {  // executed once, even if the answer has to wait for the rank's thread
            char *p = c_.own_base[h.seg] + h.offset;
            const mem::kind k = mem::segment_kind(h.seg);
            const auto op = static_cast<amo_op>(h.amo);
            if (k == mem::kind::host) {
                in.amo_old = transport::direct::amo(p, op, h.width, h.value, h.compare);
            } else {
                HGAS_TRY_ASSIGN(in.amo_old, c_.dev[static_cast<int>(k)]->amo(p, op, h.width, h.value, h.compare));
            }
            in.amo_done = true;
        }
        const uint64_t roff = reply_offset(static_cast<int>(h.reply));
        if (char *heap = c_.peer_sym(src)) {
            char *rs = heap + roff;
            std::memcpy(rs + 64, &in.amo_old, 8);
            store_release(rs, h.sig_offset);
            return true;
        }
        if (!on_rank_thread) return false;
        HGAS_TRY(c_.route(src)->put_signal(transport::remote{src, mem::seg_symmetric, roff + 64}, &in.amo_old, 8,
                                           transport::remote{src, mem::seg_symmetric, roff}, signal_op::set,
                                           h.sig_offset, false));
        return true;
    }
    }
    return true;
}

status staging::return_credits(int src, ring_in &r, bool on_rank_thread, bool force) {
    const uint64_t off = credits_ + 64ull * c_.me;
    if (char *heap = c_.peer_sym(src)) {
        store_release(heap + off, r.applied);
    } else {
        if (!on_rank_thread) return status::ok;  // later, from the rank's thread
        uint64_t unused = 0;
        HGAS_TRY(c_.route(src)->amo(transport::remote{src, mem::seg_symmetric, off}, amo_op::set, 8, r.applied, 0,
                                    &unused));
    }
    r.returned = r.applied;
    (void)force;
    return status::ok;
}

status staging::poll(bool on_rank_thread) {
    // The initiator's side first: nbi puts whose copies have finished go out. Its error is
    // returned after the agent has served the rings, so that peers are never left waiting.
    for (gpu::device *d : c_.dev)
        if (d) d->advance();
    const status out = publish_ready(on_rank_thread);
    status served = serve(on_rank_thread);
    return served != status::ok ? served : out;
}

status staging::serve(bool on_rank_thread) {
    std::unique_lock<std::mutex> lk(agent_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return status::ok;  // the other thread is serving the rings
    const uint64_t half = std::max(1, c_.slots / 2);
    for (int src = 0; src < c_.n; ++src) {
        ring_in &r = in_[src];
        for (;;) {
            char *slot = slot_in(src, r.next);
            if (load_acquire(slot) != r.next) break;
            incoming in;
            std::memcpy(&in.h, slot, 64);
            // A get reads what earlier puts of the ring wrote: it starts once they are done (a
            // put's host-to-device copy and a get's device-to-host copy run on other streams).
            if (in.h.op == op_get && !r.q.empty()) break;
            in.slot = slot;
            HGAS_TRY(start(src, r, in));
            r.q.push_back(in);
            ++r.next;
        }
        while (!r.q.empty()) {
            HGAS_TRY_ASSIGN(bool done, finish(src, r.q.front(), on_rank_thread));
            if (!done) break;
            r.q.pop_front();
            ++r.applied;
            total_applied_.fetch_add(1, std::memory_order_relaxed);
            if (r.applied - r.returned >= half) HGAS_TRY(return_credits(src, r, on_rank_thread, false));
        }
        // An empty ring returns what it holds, so that a sender waiting for credits (or in
        // quiet) never waits on the half-way mark.
        if (r.q.empty() && r.applied != r.returned) HGAS_TRY(return_credits(src, r, on_rank_thread, true));
    }
    return status::ok;
}

}  // namespace hgas::proto
