// The active-message protocol: every operation of the `am` data mode (HGAS_UCX_MODE=am), and
// atomics and put_signal in both modes, travel as an active message that
// the target executes on its own memory, inside its ucp_worker_progress (so from the helper
// thread when HGAS_PROGRESS_THREAD=1), after checking it against its own segment table. The
// target answers every request: get data, an atomic's old value, a put's acknowledgement, or
// an error code. This is what RMA cannot do: bounds checks at the target, atomics that are
// CPU atomics there (coherent with shm peers' atomics), data and signal in one message.
//
// Initiator side: each operation is an am_op in ops_ (keyed by id, echoed in the reply). It is
// finished once its send completed (sent) and its reply arrived (replied). A blocking get or
// atomic waits for both; a blocking put waits for `sent` (local completion) and then detaches
// the op, as nbi operations do at once: a detached op is counted in `outstanding`, and the
// callback that finishes it uncounts it, so quiet() waits for every acknowledgement.
#include <cinttypes>
#include <cstring>

#include "base/log.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace hgas::transport::ucx {
namespace {

const char *kind_name(am_kind k) {
    switch (k) {
    case am_kind::put: return "put";
    case am_kind::get: return "get";
    case am_kind::amo: return "atomic";
    case am_kind::put_signal: return "put_signal";
    }
    return "operation";
}

// Orders the payload stores (memcpy may use non-temporal stores, which a release store does
// not order on x86) before the signal store that publishes them.
inline void store_fence() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// Executes one atomic on this rank's memory; returns the old value (zero-extended).
template <class T>
uint64_t apply_amo(void *addr, amo_op op, uint64_t operand, uint64_t compare) {
    T *p = static_cast<T *>(addr);
    T v = static_cast<T>(operand);
    // seq_cst: the same lock-prefixed instruction as acq_rel on x86, and the simplest promise
    // next to the shm peers' CPU atomics on the same word (which the direct path also issues).
    constexpr int mo = __ATOMIC_SEQ_CST;
    switch (op) {
    case amo_op::fetch: return __atomic_load_n(p, mo);
    case amo_op::set: __atomic_store_n(p, v, mo); return 0;
    case amo_op::add:
    case amo_op::fetch_add: return __atomic_fetch_add(p, v, mo);
    case amo_op::swap: return __atomic_exchange_n(p, v, mo);
    case amo_op::compare_swap: {
        T expected = static_cast<T>(compare);
        __atomic_compare_exchange_n(p, &expected, v, false, mo, mo);
        return expected;  // the old value whether or not it matched
    }
    case amo_op::and_:
    case amo_op::fetch_and: return __atomic_fetch_and(p, v, mo);
    case amo_op::or_:
    case amo_op::fetch_or: return __atomic_fetch_or(p, v, mo);
    case amo_op::xor_:
    case amo_op::fetch_xor: return __atomic_fetch_xor(p, v, mo);
    }
    return 0;
}

bool valid_amo(uint8_t op) { return op <= static_cast<uint8_t>(amo_op::fetch_xor); }

// Bounds check that cannot overflow.
bool in_bounds(uint64_t size, uint64_t offset, uint64_t n) { return offset <= size && n <= size - offset; }

// --- UCX callbacks -------------------------------------------------------------------------

ucs_status_t request_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                        const ucp_am_recv_param_t *param) {
    am_request_hdr h;
    if (header_length != sizeof h) {
        HGASI_DEBUG("ucx", "dropped an active message with a %zu-byte header", header_length);
        return UCS_OK;  // a rendezvous payload is dropped with it
    }
    std::memcpy(&h, header, sizeof h);  // the header may sit unaligned in a receive buffer
    if (h.magic != k_am_magic) {
        HGASI_DEBUG("ucx", "dropped an active message with a foreign header");
        return UCS_OK;
    }
    return static_cast<ucx_transport *>(arg)->am_on_request(h, data, length, param);
}

ucs_status_t reply_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                      const ucp_am_recv_param_t *param) {
    am_reply_hdr h;
    if (header_length != sizeof h) return UCS_OK;
    std::memcpy(&h, header, sizeof h);
    if (h.magic != k_am_magic) return UCS_OK;
    return static_cast<ucx_transport *>(arg)->am_on_reply(h, data, length, param);
}

void request_sent_cb(void *request, ucs_status_t st, void *user_data) {
    auto *op = static_cast<am_op *>(user_data);
    op->owner->am_mark_sent(op, st);  // may free op
    ucp_request_free(request);
}

void reply_sent_cb(void *request, ucs_status_t st, void *user_data) {
    if (st != UCS_OK)
        HGASI_DEBUG("ucx", "a reply to rank %d failed: %s", static_cast<peer_state *>(user_data)->rank,
                    ucs_status_string(st));
    ucp_request_free(request);
}

// A reply with data that UCX sends later (rendezvous): the transport counts it as serving
// until it is done (the transport outlives its worker, whose teardown completes requests).
void data_reply_sent_cb(void *request, ucs_status_t st, void *user_data) {
    auto *t = static_cast<ucx_transport *>(user_data);
    if (st != UCS_OK) HGASI_DEBUG("ucx", "a data reply failed: %s", ucs_status_string(st));
    t->serving_add(-1);
    ucp_request_free(request);
}

// A rendezvous put payload has landed in the segment: finish it (signal) and acknowledge.
struct rndv_put {
    ucx_transport *owner;
    am_request_hdr h;
};
void rndv_put_done_cb(void *request, ucs_status_t st, size_t, void *user_data) {
    auto *ctx = static_cast<rndv_put *>(user_data);
    ctx->owner->note_served();
    ctx->owner->serving_add(-1);
    if (st == UCS_OK) {
        ctx->owner->am_finish_put_at_target(ctx->h);
    } else {
        am_reply_hdr r{ctx->h.id, 0, static_cast<int32_t>(status::transport), k_am_magic, ctx->h.kind, 0};
        ctx->owner->am_send_reply(static_cast<int>(ctx->h.src), r, nullptr, 0);
    }
    delete ctx;
    ucp_request_free(request);
}

// A rendezvous get reply has landed in the initiator's buffer.
void rndv_reply_done_cb(void *request, ucs_status_t st, size_t, void *user_data) {
    auto *op = static_cast<am_op *>(user_data);
    ucx_transport *t = op->owner;
    if (st == UCS_OK)
        t->am_mark_replied(op, status::ok, {}, 0);
    else
        t->am_mark_replied(op, status::transport,
                           format("UCX get from rank %d: receiving the data failed: %s", op->peer, ucs_status_string(st)), 0);
    ucp_request_free(request);
}

}  // namespace

status ucx_transport::register_am_handlers() {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.arg = this;
    hp.id = k_am_request;
    hp.cb = request_cb;
    ucs_status_t st = ucp_worker_set_am_recv_handler(worker_, &hp);
    if (st == UCS_OK) {
        hp.id = k_am_reply;
        hp.cb = reply_cb;
        st = ucp_worker_set_am_recv_handler(worker_, &hp);
    }
    if (st != UCS_OK)
        return fail(status::transport, "UCX: cannot register the active-message handlers: %s", ucs_status_string(st));
    return status::ok;
}

// --- target side ---------------------------------------------------------------------------

ucs_status_t ucx_transport::am_on_request(const am_request_hdr &h, void *data, size_t length,
                                          const ucp_am_recv_param_t *param) {
    note_served();
    const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    const int src = static_cast<int>(h.src);
    if (src < 0 || src >= static_cast<int>(peers_.size()) || !peers_[src]->ep) {
        HGASI_DEBUG("ucx", "dropped a request from unknown rank %d", src);
        return UCS_OK;
    }
    am_reply_hdr r{h.id, 0, static_cast<int32_t>(status::ok), k_am_magic, h.kind, 0};
    // Rejections are the initiator's to report (with the segment size in `value`); the target
    // stays quiet. Returning UCS_OK drops a rendezvous payload that was not received.
    auto reject = [&](status code, uint64_t seg_size) {
        r.code = static_cast<int32_t>(code);
        r.value = seg_size;
        am_send_reply(src, r, nullptr, 0);
        return UCS_OK;
    };
    // acquire: pairs with register_segment's release, so base/size are the registered ones.
    auto segment = [&](uint16_t id) -> const local_seg * {
        if (id >= k_max_segments || !local_[id].ready.load(std::memory_order_acquire)) return nullptr;
        return &local_[id];
    };
    const local_seg *seg = segment(h.seg);
    if (!seg) return reject(status::invalid_arg, 0);
    char *base = static_cast<char *>(seg->base);

    switch (static_cast<am_kind>(h.kind)) {
    case am_kind::put:
    case am_kind::put_signal: {
        if (!in_bounds(seg->size, h.offset, h.length)) return reject(status::out_of_bounds, seg->size);
        if (static_cast<am_kind>(h.kind) == am_kind::put_signal) {
            const local_seg *sseg = segment(h.sig_seg);
            if (!sseg) return reject(status::invalid_arg, 0);
            if (!in_bounds(sseg->size, h.sig_offset, sizeof(uint64_t))) return reject(status::out_of_bounds, sseg->size);
            if (h.sig_offset % sizeof(uint64_t) != 0) return reject(status::misaligned, sseg->size);
        }
        if (length != h.length) return reject(status::internal, seg->size);
        if (!rndv) {
            if (length) std::memcpy(base + h.offset, data, length);
            am_finish_put_at_target(h);
            return UCS_OK;
        }
        // Rendezvous: UCX moves the payload straight into the segment; the acknowledgement
        // (and the signal) follow once it has landed.
        auto *ctx = new rndv_put{this, h};
        ucp_request_param_t prm{};
        prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        prm.cb.recv_am = rndv_put_done_cb;
        prm.user_data = ctx;
        serving_add(1);  // until rndv_put_done_cb
        ucs_status_ptr_t req = ucp_am_recv_data_nbx(worker_, data, base + h.offset, length, &prm);
        if (req == nullptr) {
            serving_add(-1);
            delete ctx;
            am_finish_put_at_target(h);
        } else if (UCS_PTR_IS_ERR(req)) {
            serving_add(-1);
            delete ctx;
            return reject(status::transport, seg->size);
        }
        return UCS_OK;
    }
    case am_kind::get:
        if (!in_bounds(seg->size, h.offset, h.length)) return reject(status::out_of_bounds, seg->size);
        // Sent straight from the segment: it stays mapped until shutdown, after the last barrier.
        am_send_reply(src, r, base + h.offset, h.length);
        return UCS_OK;
    case am_kind::amo:
        if ((h.width != 4 && h.width != 8) || !valid_amo(h.op)) return reject(status::internal, seg->size);
        if (!in_bounds(seg->size, h.offset, h.width)) return reject(status::out_of_bounds, seg->size);
        if (h.offset % h.width != 0) return reject(status::misaligned, seg->size);
        r.value = h.width == 4 ? apply_amo<uint32_t>(base + h.offset, static_cast<amo_op>(h.op), h.operand, h.compare)
                               : apply_amo<uint64_t>(base + h.offset, static_cast<amo_op>(h.op), h.operand, h.compare);
        am_send_reply(src, r, nullptr, 0);
        return UCS_OK;
    }
    return reject(status::internal, 0);
}

void ucx_transport::am_finish_put_at_target(const am_request_hdr &h) {
    if (static_cast<am_kind>(h.kind) == am_kind::put_signal) {
        store_fence();
        auto *sig = reinterpret_cast<uint64_t *>(static_cast<char *>(local_[h.sig_seg].base) + h.sig_offset);
        // release: a rank that acquires the new signal value sees the payload written above.
        if (static_cast<signal_op>(h.op) == signal_op::set)
            __atomic_store_n(sig, h.operand, __ATOMIC_RELEASE);
        else
            __atomic_fetch_add(sig, h.operand, __ATOMIC_RELEASE);
    }
    am_reply_hdr r{h.id, 0, static_cast<int32_t>(status::ok), k_am_magic, h.kind, 0};
    am_send_reply(static_cast<int>(h.src), r, nullptr, 0);
}

void ucx_transport::am_send_reply(int src, const am_reply_hdr &h, const void *data, size_t len) {
    // A request that arrives before this rank has its endpoints (its connect failed or has not
    // finished) cannot be answered; its initiator's wait times out naming this rank.
    if (src < 0 || static_cast<size_t>(src) >= peers_.size() || !peers_[src]->ep) {
        HGASI_DEBUG("ucx", "no endpoint to rank %d yet: a request of it stays unanswered", src);
        return;
    }
    // Counted when the reply leaves, not in its completion callback: UCX may complete a
    // request while the transport shuts down, after the peer state its user data names is gone.
    note_served();
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.flags = UCP_AM_SEND_FLAG_COPY_HEADER;  // `h` lives on our stack
    prm.cb.send = reply_sent_cb;
    prm.user_data = peers_[src].get();
    if (len) {  // a get's data: serving until it has gone
        prm.cb.send = data_reply_sent_cb;
        prm.user_data = this;
        serving_add(1);
    }
    ucs_status_ptr_t req = ucp_am_send_nbx(peers_[src]->ep, k_am_reply, &h, sizeof h, data, len, &prm);
    if (len && !UCS_PTR_IS_PTR(req)) serving_add(-1);  // done at once (or failed): no callback
    if (UCS_PTR_IS_ERR(req))  // the initiator sees its peer fail or its wait time out
        HGASI_DEBUG("ucx", "a reply to rank %d failed: %s", src, ucs_status_string(UCS_PTR_STATUS(req)));
}

// --- initiator side ------------------------------------------------------------------------

ucs_status_t ucx_transport::am_on_reply(const am_reply_hdr &h, void *data, size_t length,
                                        const ucp_am_recv_param_t *param) {
    const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    am_op *op = nullptr;
    void *dst = nullptr;
    {
        std::lock_guard<std::mutex> lk(ops_mu_);
        auto it = ops_.find(h.id);
        if (it == ops_.end() || it->second->replied.load(std::memory_order_relaxed)) {
            HGASI_DEBUG("ucx", "dropped a reply for unknown operation %" PRIu64, h.id);
            return UCS_OK;
        }
        op = it->second.get();
        if (op->kind == am_kind::get && !op->abandoned) {
            dst = op->dst;
        }
    }
    // The op stays in ops_ until `replied` is set below (only then can it be finished), so
    // `op` is safe to use without the lock; the lock is not held across UCX calls.
    status code = static_cast<status>(h.code);
    if (code != status::ok) {
        const char *what = kind_name(op->kind);
        std::string msg;
        switch (code) {
        case status::out_of_bounds:
            msg = format("UCX am %s of %" PRIu64 " bytes at offset %" PRIu64
                         " was rejected by rank %d: it leaves that rank's segment %u (%" PRIu64 " bytes)",
                         what, op->length, op->offset, op->peer, op->seg, h.value);
            break;
        case status::misaligned:
            msg = format("UCX am %s was rejected by rank %d: the target word is not aligned to its width", what, op->peer);
            break;
        case status::invalid_arg:
            msg = format("UCX am %s was rejected by rank %d: segment %u is not registered there", what, op->peer, op->seg);
            break;
        default:
            msg = format("UCX am %s could not be executed by rank %d (%s): malformed request or transfer failure", what,
                         op->peer, status_name(code));
        }
        am_mark_replied(op, code, std::move(msg), h.value);
        return UCS_OK;
    }
    if (op->kind == am_kind::get && length != op->length) {
        am_mark_replied(op, status::internal,
                        format("UCX am get from rank %d: %zu bytes came back for %" PRIu64 " asked", op->peer, length,
                               op->length),
                        0);
        return UCS_OK;
    }
    if (dst == nullptr || length == 0) {
        am_mark_replied(op, status::ok, {}, h.value);
        return UCS_OK;
    }
    if (!rndv) {
        std::memcpy(dst, data, length);
        am_mark_replied(op, status::ok, {}, h.value);
        return UCS_OK;
    }
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.recv_am = rndv_reply_done_cb;
    prm.user_data = op;
    ucs_status_ptr_t req = ucp_am_recv_data_nbx(worker_, data, dst, length, &prm);
    if (req == nullptr)
        am_mark_replied(op, status::ok, {}, 0);
    else if (UCS_PTR_IS_ERR(req))
        am_mark_replied(op, status::transport,
                        format("UCX am get from rank %d: receiving the data failed: %s", op->peer,
                               ucs_status_string(UCS_PTR_STATUS(req))),
                        0);
    return UCS_OK;
}

am_op *ucx_transport::am_new_op(am_kind kind, remote r, uint64_t length, void *dst) {
    auto op = std::make_unique<am_op>();
    op->owner = this;
    op->peer = r.rank;
    op->kind = kind;
    op->seg = r.seg;
    op->offset = r.offset;
    op->length = length;
    op->dst = dst;
    am_op *raw = op.get();
    std::lock_guard<std::mutex> lk(ops_mu_);
    op->id = next_op_id_++;
    ops_.emplace(raw->id, std::move(op));
    return raw;
}

status ucx_transport::am_send(am_op *op, const am_request_hdr &h, const void *data, size_t n) {
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.flags = UCP_AM_SEND_FLAG_COPY_HEADER;
    prm.cb.send = request_sent_cb;
    prm.user_data = op;
    ucs_status_ptr_t req = ucp_am_send_nbx(peers_[op->peer]->ep, k_am_request, &h, sizeof h, data, n, &prm);
    if (req == nullptr)
        am_mark_sent(op, UCS_OK);
    else if (UCS_PTR_IS_ERR(req))
        am_mark_sent(op, UCS_PTR_STATUS(req));
    return status::ok;  // a failure travels in the op, so every path reports it the same way
}

void ucx_transport::am_mark_sent(am_op *op, ucs_status_t st) {
    std::lock_guard<std::mutex> lk(ops_mu_);
    if (st != UCS_OK) {
        bool dead = peer_dead(op->peer) || st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
                    st == UCS_ERR_UNREACHABLE;
        if (op->code == status::ok) {
            op->code = dead ? status::peer_failed : status::transport;
            op->error = format("UCX am %s from rank %d to rank %d failed: %s%s", kind_name(op->kind), me_, op->peer,
                               ucs_status_string(st), dead ? " (that rank probably died; see its output)" : "");
        }
        // No reply will come for a request that did not leave.
        op->replied.store(true, std::memory_order_release);
    }
    // release: the waiter's acquire load of `sent` then sees code/error.
    op->sent.store(true, std::memory_order_release);
    am_maybe_finish_locked(op);
}

void ucx_transport::am_mark_replied(am_op *op, status code, std::string error, uint64_t value) {
    std::lock_guard<std::mutex> lk(ops_mu_);
    if (op->code == status::ok && code != status::ok) {
        op->code = code;
        op->error = std::move(error);
    }
    op->value = value;
    // release: the waiter's acquire load of `replied` then sees value/code and the get data.
    op->replied.store(true, std::memory_order_release);
    am_maybe_finish_locked(op);
}

void ucx_transport::am_maybe_finish_locked(am_op *op) {
    if (!op->detached || !op->sent.load(std::memory_order_relaxed) || !op->replied.load(std::memory_order_relaxed))
        return;
    if (!op->abandoned) {
        if (op->code != status::ok) record_async_error(op->code, std::move(op->error));
        // release: quiet's acquire of zero then sees the error recorded above.
        peers_[op->peer]->outstanding.fetch_sub(1, std::memory_order_release);
        outstanding_.fetch_sub(1, std::memory_order_release);
    }
    ops_.erase(op->id);
}

void ucx_transport::am_detach(am_op *op) {
    std::lock_guard<std::mutex> lk(ops_mu_);
    op->detached = true;
    peers_[op->peer]->outstanding.fetch_add(1, std::memory_order_relaxed);
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    am_maybe_finish_locked(op);  // it may have finished already
}

status ucx_transport::am_wait(am_op *op, const char *what, uint64_t *value) {
    status s = wait_until(
        [&] { return op->sent.load(std::memory_order_acquire) && op->replied.load(std::memory_order_acquire); }, what,
        op->peer);
    std::unique_lock<std::mutex> lk(ops_mu_);
    if (s != status::ok) {
        // Nobody waits any more: late completions erase it without reporting anything.
        op->abandoned = true;
        op->detached = true;
        am_maybe_finish_locked(op);
        return s;
    }
    status code = op->code;
    std::string error = std::move(op->error);
    uint64_t v = op->value;
    ops_.erase(op->id);
    lk.unlock();
    if (code != status::ok) return fail(code, "%s", error.c_str());
    if (value) *value = v;
    return status::ok;
}

static am_request_hdr make_request(const am_op *op, int me) {
    am_request_hdr h{};
    h.id = op->id;
    h.offset = op->offset;
    h.length = op->length;
    h.src = static_cast<uint32_t>(me);
    h.seg = op->seg;
    h.magic = k_am_magic;
    h.kind = static_cast<uint8_t>(op->kind);
    return h;
}

status ucx_transport::am_check(remote r, const char *what) {
    if (!connected_) return fail(status::not_initialized, "UCX %s: the transport is not connected", what);
    if (!can_reach(r.rank)) return fail(status::invalid_arg, "UCX %s: rank %d is not in this job of %d ranks", what, r.rank, size_);
    return status::ok;
}

status ucx_transport::am_put(remote dst, const void *src, size_t n, bool wait_local, am_op **out) {
    HGAS_TRY(am_check(dst, "put"));
    am_op *op = am_new_op(am_kind::put, dst, n, nullptr);
    am_request_hdr h = make_request(op, me_);
    HGAS_TRY(am_send(op, h, src, n));
    if (out) {  // put_nb: test() collects the acknowledgement
        *out = op;
        return status::ok;
    }
    status s = status::ok;
    if (wait_local) s = wait_until([&] { return op->sent.load(std::memory_order_acquire); }, "put", dst.rank);
    am_detach(op);  // quiet() waits for the acknowledgement
    return s;
}

status ucx_transport::am_get(void *dst, remote src, size_t n, bool nbi, am_op **out) {
    HGAS_TRY(am_check(src, "get"));
    am_op *op = am_new_op(am_kind::get, src, n, dst);
    am_request_hdr h = make_request(op, me_);
    HGAS_TRY(am_send(op, h, nullptr, 0));
    if (out) {
        *out = op;
        return status::ok;
    }
    if (nbi) {
        am_detach(op);
        return status::ok;
    }
    return am_wait(op, "get", nullptr);
}

status ucx_transport::am_amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare,
                             uint64_t *result) {
    HGAS_TRY(am_check(t, "atomic"));
    am_op *o = am_new_op(am_kind::amo, t, width, nullptr);
    am_request_hdr h = make_request(o, me_);
    h.length = 0;
    h.width = static_cast<uint8_t>(width);
    h.op = static_cast<uint8_t>(op);
    h.operand = operand;
    h.compare = compare;
    HGAS_TRY(am_send(o, h, nullptr, 0));
    uint64_t old = 0;
    HGAS_TRY(am_wait(o, "atomic", &old));
    if (result && amo_fetches(op)) *result = old;
    return status::ok;
}

status ucx_transport::am_put_signal(remote dst, const void *src, size_t n, remote sig, signal_op op, uint64_t value,
                                    bool nbi) {
    HGAS_TRY(am_check(dst, "put_signal"));
    am_op *o = am_new_op(am_kind::put_signal, dst, n, nullptr);
    am_request_hdr h = make_request(o, me_);
    h.sig_seg = sig.seg;
    h.sig_offset = sig.offset;
    h.op = static_cast<uint8_t>(op);
    h.operand = value;
    HGAS_TRY(am_send(o, h, src, n));
    status s = status::ok;
    if (!nbi) s = wait_until([&] { return o->sent.load(std::memory_order_acquire); }, "put_signal", dst.rank);
    am_detach(o);
    return s;
}

status ucx_transport::am_test(pending &p, bool &done) {
    auto *op = static_cast<am_op *>(p.req);
    auto finished = [&] {
        return op->sent.load(std::memory_order_acquire) && op->replied.load(std::memory_order_acquire);
    };
    if (!finished()) {
        ucp_worker_progress(worker_);
        if (!finished()) {
            if (peer_dead(op->peer)) {
                std::lock_guard<std::mutex> lk(ops_mu_);
                op->abandoned = op->detached = true;
                am_maybe_finish_locked(op);
                p.req = nullptr;
                p.stage = 2;
                done = true;
                return peer_failure(p.peer, p.is_put ? "put_nb" : "get_nb");
            }
            return status::ok;
        }
    }
    status code;
    std::string error;
    {
        std::lock_guard<std::mutex> lk(ops_mu_);
        code = op->code;
        error = std::move(op->error);
        ops_.erase(op->id);
    }
    p.req = nullptr;
    p.stage = 2;
    done = true;
    return code == status::ok ? status::ok : fail(code, "%s", error.c_str());
}

}  // namespace hgas::transport::ucx
