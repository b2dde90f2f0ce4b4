#include "device/proxy.hpp"

#include <cstring>

#include <hgas/impl/proxy_producer.h>

#include "base/log.hpp"
#include "rma/rma.hpp"

namespace hgas::device {

hgasi_proxy_slot_t *proxy::slot(uint64_t t) const {
    return reinterpret_cast<hgasi_proxy_slot_t *>(reinterpret_cast<char *>(ring_) + HGASI_PROXY_HEADER) +
           (t & (slots_ - 1));
}

bool proxy::pending() const {
    if (!slots_) return false;
    const uint64_t t = next_.load(std::memory_order_relaxed);
    return __atomic_load_n(&slot(t)->seq, __ATOMIC_ACQUIRE) == t + 1;
}

// The device barrier's words (internal_objects::device_sync in the cuda heap, at the same
// offset on every rank) are hgas's own objects: a kernel's barrier signals them through the
// proxy when it cannot store to the peer. Every other request is the user's and reaches only
// the user part of a heap.
rma::issuer proxy::issuer_of(const hgas_gptr_t &g) const {
    const uint64_t lo = r_.internal().device_sync;
    const bool sync_word = g.segment == mem::seg_cuda_symmetric && g.offset >= lo &&
                           g.offset < lo + core::internal_objects::device_sync_bytes;
    return sync_word ? rma::issuer::runtime : rma::issuer::user;
}

status proxy::execute(const hgasi_proxy_slot_t &q, uint64_t &result, bool &needs_quiet) {
    const hgas_gptr_t g = mem::make_gptr(static_cast<int>(q.rank), q.seg, q.off);
    const auto sop = static_cast<hgas_signal_op_t>(q.sig_op);
    void *local = reinterpret_cast<void *>(q.local);
    switch (q.op) {
    case HGASI_PX_PUT:
        needs_quiet = true;
        return rma::put(r_, g, local, q.bytes, false);
    case HGASI_PX_PUT_SIGNAL:
        needs_quiet = true;
        return rma::put_signal(r_, g, local, q.bytes, mem::make_gptr(static_cast<int>(q.rank), q.aux_seg, q.aux),
                               q.value, sop, false);
    case HGASI_PX_SIGNAL:
        needs_quiet = true;
        return rma::signal_update(r_, g, sop, q.value, issuer_of(g));
    case HGASI_PX_GET:
        return rma::get(r_, local, g, q.bytes, false);
    case HGASI_PX_P: {
        if (q.width != 1 && q.width != 2 && q.width != 4 && q.width != 8)
            return fail(status::invalid_arg, "device p: width %u is not 1, 2, 4 or 8", q.width);
        needs_quiet = true;
        const uint64_t v = q.value;  // the value's bytes, lowest first (little-endian on both sides)
        return rma::put(r_, g, &v, q.width, false);
    }
    case HGASI_PX_G: {
        if (q.width != 1 && q.width != 2 && q.width != 4 && q.width != 8)
            return fail(status::invalid_arg, "device g: width %u is not 1, 2, 4 or 8", q.width);
        uint64_t v = 0;
        HGAS_TRY(rma::get(r_, &v, g, q.width, false));
        result = v;
        return status::ok;
    }
    case HGASI_PX_AMO: {
        if (q.width != 4 && q.width != 8) return fail(status::invalid_arg, "device atomic: width %u is not 4 or 8", q.width);
        const hgas_dtype_t type = q.width == 4 ? (q.is_signed ? HGAS_INT32 : HGAS_UINT32)
                                               : (q.is_signed ? HGAS_INT64 : HGAS_UINT64);
        const uint64_t operand = q.value, compare = q.aux;
        uint64_t old = 0;
        HGAS_TRY(rma::atomic(r_, g, static_cast<hgas_amo_t>(q.amo), type, &operand, &compare, &old));
        result = q.width == 4 ? (old & 0xffffffffull) : old;
        return status::ok;
    }
    case HGASI_PX_FENCE:
        return rma::fence(r_);
    default:
        return fail(status::invalid_arg, "device proxy: request op %u is unknown (a corrupt request?)", q.op);
    }
}

void proxy::record(uint64_t t, const hgasi_proxy_slot_t &q) {
    const std::string &why = last_error();
    HGASI_WARN("device", "proxied device operation (op %u to rank %u, ticket %llu) failed: %s", q.op, q.rank,
               (unsigned long long)t, why.c_str());
    if (failure_.empty()) failure_ = why;
    if (__atomic_load_n(&ring_->error, __ATOMIC_ACQUIRE) == 0) {
        __atomic_store_n(&ring_->err_rank, q.rank, __ATOMIC_RELAXED);
        __atomic_store_n(&ring_->err_arg, t, __ATOMIC_RELAXED);
        __atomic_store_n(&ring_->error, HGAS_DEVICE_ERR_PROXY_FAILED, __ATOMIC_RELEASE);
    }
}

size_t proxy::drain(size_t max) {
    if (!slots_) return 0;
    uint64_t t = next_.load(std::memory_order_relaxed);
    size_t n = 0;
    bool needs_quiet = false;
    while (n < max) {
        hgasi_proxy_slot_t *s = slot(t);
        // Acquire pairs with the producer's release of seq: the request's fields, and the data
        // its source holds (fenced by the producer), are visible from here on.
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != t + 1) break;
        hgasi_proxy_slot_t q;
        std::memcpy(&q, s, offsetof(hgasi_proxy_slot_t, reply));
        uint64_t result = 0;
        if (execute(q, result, needs_quiet) != status::ok) record(t, q);
        if (hgas::detail::proxy_replies(q.op, q.amo)) {
            s->result = result;
            __atomic_store_n(&s->reply, t + 1, __ATOMIC_RELEASE);  // the producer frees the slot
        } else {
            __atomic_store_n(&s->seq, t + slots_, __ATOMIC_RELEASE);  // free for ticket t + slots
        }
        ++t;
        ++n;
        // The heartbeat producers' deadlines count from (a batch may take long in all).
        __atomic_store_n(&ring_->taken, t, __ATOMIC_RELAXED);
    }
    if (!n) return 0;
    // Remote completion of what this batch put before anyone is told it is done.
    if (needs_quiet) {
        hgasi_proxy_slot_t none{};
        none.rank = static_cast<uint32_t>(r_.me());
        if (rma::quiet(r_) != status::ok) record(t - 1, none);
    }
    next_.store(t, std::memory_order_relaxed);
    __atomic_store_n(&ring_->done, t, __ATOMIC_RELEASE);
    return n;
}

}  // namespace hgas::device
