#include "rma/rma.hpp"

#include <cstring>

namespace hgas::rma {

using transport::remote;

namespace {

remote to_remote(hgas_gptr_t p) { return remote{static_cast<int>(p.rank), p.segment, p.offset}; }

status check_local(core::rank &r, const char *op, const void *buf, size_t n, const char *what,
                   issuer by = issuer::user) {
    if (n && !buf) return fail(status::invalid_arg, "%s: %s buffer is NULL but %zu bytes were asked for", op, what, n);
    // Checked mode: a local buffer in this rank's heaps must lie inside one allocation too.
    if (n && by == issuer::user && r.cfg().flag(setting::check)) {
        const int seg = r.own_segment_of(buf, 1);
        if (seg >= 0 && seg != mem::seg_static) {
            const uint16_t sg = static_cast<uint16_t>(seg);
            const auto off = static_cast<uint64_t>(static_cast<const char *>(buf) - r.own_base(sg));
            if (off < r.heap(sg).user_base())
                return fail(status::invalid_arg, "%s: the %s buffer %p lies in hgas's own objects", op, what, buf);
            return check_live(r, op, mem::make_gptr(r.me(), sg, off), n);
        }
    }
    return status::ok;
}

// A 4- or 8-byte integer from user memory (which may be unaligned).
uint64_t read_word(const void *p, unsigned width) {
    if (width == 4) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// The fast path of a put, get or atomic (the 8-byte put rate is bounded by its fixed cost): the
// address of [p, p+n) when it lies in the user part of a host segment mapped into this process
// (this rank's own, or a same-node peer already attached), no device kind is on (so the local
// buffer is host memory) and checked mode is off. nullptr when anything is otherwise, also for
// bad input: the full path then checks everything again and says what is wrong, so this one
// never fails on its own and needs no message. One peer-table lookup, nothing out of line.
inline char *mapped_host(core::rank &r, hgas_gptr_t p, size_t n) {
    if (p.flags || p.rank >= static_cast<uint32_t>(r.n()) || p.segment >= mem::seg_count || r.has_devices() ||
        r.cfg().flag(setting::check) || !r.peer_attached(static_cast<int>(p.rank)))
        return nullptr;
    const core::peer_segment *ps = r.segment(p.rank, p.segment);  // attached: a table read
    if (!ps->direct || ps->kind != mem::kind::host || !mem::in_bounds(p.offset, n, ps->size) ||
        p.offset < r.heap(p.segment).user_base())
        return nullptr;
    return ps->direct + p.offset;
}

// The copy to or from mapped host memory: the common small sizes as one load and one store
// rather than a call; large ones streamed (transport::direct::copy, HGAS_SHM_NT_MIN).
inline void copy_bytes(void *d, const void *s, size_t n) {
    switch (n) {
    case 8: { uint64_t v; std::memcpy(&v, s, 8); std::memcpy(d, &v, 8); return; }
    case 4: { uint32_t v; std::memcpy(&v, s, 4); std::memcpy(d, &v, 4); return; }
    default: transport::direct::copy(d, s, n);
    }
}

}  // namespace


status check_live(core::rank &r, const char *op, hgas_gptr_t p, uint64_t n) {
    if (!r.cfg().flag(setting::check) || n == 0 || p.segment >= mem::seg_count) return status::ok;
    const mem::kind k = mem::segment_kind(p.segment);
    const bool symmetric = mem::symmetric_segment(k) == p.segment;
    // Another rank's local heap: its allocations are its own (checked against its bounds only).
    if (!symmetric && (p.segment != mem::local_segment(k) || p.rank != static_cast<uint32_t>(r.me())))
        return status::ok;
    return mem::check_allocation(op, p, n, r.heap(p.segment), r.own_base(p.segment));
}

result<const core::peer_segment *> target(core::rank &r, const char *op, hgas_gptr_t p, uint64_t n, issuer by) {
    const core::peer_segment *ps = r.segment(p.rank, p.segment);
    // A real rank and segment with no table entry: the peer could not be mapped at its first
    // use (it has exited); last_error() names it.
    if (!ps && p.rank < static_cast<uint32_t>(r.n()) && p.segment < mem::seg_count) return status::peer_failed;
    if (by == issuer::runtime) {
        HGAS_TRY(mem::check_range(op, p, n, r.n(), ps ? ps->size : 0));
        return ps;
    }
    // hgas's own objects sit below the user base at the same offsets on every rank, so this
    // rank's heap of the segment tells where the target's user part starts.
    HGAS_TRY(mem::check_range(op, p, n, r.n(), ps ? ps->size : 0, ps ? r.heap(p.segment).user_base() : 0));
    HGAS_TRY(check_live(r, op, p, n));
    return ps;
}

// --- device paths (proto/staging.hpp): any transfer with device memory on either side ------
// Blocking forms complete before returning. Non-blocking ones complete at quiet: local copies
// on one stream, and staged puts, whose chunks are published as their copies finish.

proto::staging *staging_of(core::rank &r, const char *op) {
    proto::staging *st = r.staging();
    if (!st) (void)fail(status::internal, "%s: device memory without the staging area", op);
    return st;
}

status not_mapped(core::rank &r, const char *op, hgas_gptr_t p) {
    return fail(status::unsupported, "%s: rank %u's %s memory is not mapped here (another node or no peer access) "
                "and HGAS_PATH=direct forbids staging", op, p.rank, mem::kind_name(mem::segment_kind(p.segment)));
}

bool staging_forbidden(core::rank &r) { return r.cfg().text(setting::path) == "direct"; }

status device_put(core::rank &r, const char *op, hgas_gptr_t dst, const core::peer_segment &ps, const void *src,
                  mem::kind sk, size_t n, const proto::signal_req *sig, bool nbi = false) {
    proto::staging *st = staging_of(r, op);
    if (!st) return status::internal;
    if (ps.kind == mem::kind::host) {
        if (ps.direct) return nbi ? st->copy_nbi(ps.direct + dst.offset, mem::kind::host, src, sk, n)
                                  : st->copy(ps.direct + dst.offset, mem::kind::host, src, sk, n);
        return st->bounce_put(r.route(dst.rank), to_remote(dst), src, sk, n);
    }
    if (ps.dev) {
        // The one path where the GPU's copy engine reads the user's host buffer itself.
        if (sk == mem::kind::host) HGAS_TRY(r.cache_user_range(src, n));
        return nbi ? st->copy_nbi(ps.dev + dst.offset, ps.kind, src, sk, n)
                   : st->copy(ps.dev + dst.offset, ps.kind, src, sk, n);
    }
    if (staging_forbidden(r)) return not_mapped(r, op, dst);
    return st->put(static_cast<int>(dst.rank), dst.segment, dst.offset, src, sk, n, sig, nbi);
}

status device_get(core::rank &r, const char *op, void *dst, mem::kind dk, hgas_gptr_t src,
                  const core::peer_segment &ps, size_t n, bool nbi = false) {
    proto::staging *st = staging_of(r, op);
    if (!st) return status::internal;
    if (ps.kind == mem::kind::host) {
        if (ps.direct) return nbi ? st->copy_nbi(dst, dk, ps.direct + src.offset, mem::kind::host, n)
                                  : st->copy(dst, dk, ps.direct + src.offset, mem::kind::host, n);
        return st->bounce_get(dst, dk, r.route(src.rank), to_remote(src), n);
    }
    if (ps.dev) {
        if (dk == mem::kind::host) HGAS_TRY(r.cache_user_range(dst, n));  // as in device_put
        return nbi ? st->copy_nbi(dst, dk, ps.dev + src.offset, ps.kind, n)
                   : st->copy(dst, dk, ps.dev + src.offset, ps.kind, n);
    }
    if (staging_forbidden(r)) return not_mapped(r, op, src);
    return st->get(dst, dk, static_cast<int>(src.rank), src.segment, src.offset, n);
}

status device_put_signal(core::rank &r, const char *name, hgas_gptr_t dst, const core::peer_segment &ps,
                         const void *src, mem::kind sk, size_t n, hgas_gptr_t sig, const core::peer_segment &ss,
                         transport::signal_op sop, uint64_t value);

status put(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, bool nbi) {
    if (src) {
        if (char *d = mapped_host(r, dst, n)) {  // a store to mapped memory: complete once done
            copy_bytes(d, src, n);
            return status::ok;
        }
    }
    const char *op = nbi ? "hgas_put_nbi" : "hgas_put";
    HGAS_TRY(check_local(r, op, src, n, "source"));
    HGAS_TRY_ASSIGN(const core::peer_segment *ps, target(r, op, dst, n));
    if (n == 0) return status::ok;  // checked; nothing to move (the buffer may be NULL)
    const mem::kind sk = n && r.has_devices() ? r.kind_of(src, n) : mem::kind::host;
    if (sk != mem::kind::host || ps->kind != mem::kind::host) return device_put(r, op, dst, *ps, src, sk, n, nullptr, nbi);
    if (ps->direct) {
        copy_bytes(ps->direct + dst.offset, src, n);
        return status::ok;
    }
    return r.route(dst.rank)->put(to_remote(dst), src, n, nbi);
}

status get(core::rank &r, void *dst, hgas_gptr_t src, size_t n, bool nbi, issuer by) {
    if (dst) {
        if (const char *s = mapped_host(r, src, n)) {
            copy_bytes(dst, s, n);
            return status::ok;
        }
    }
    const char *op = nbi ? "hgas_get_nbi" : "hgas_get";
    HGAS_TRY(check_local(r, op, dst, n, "destination"));
    HGAS_TRY_ASSIGN(const core::peer_segment *ps, target(r, op, src, n, by));
    if (n == 0) return status::ok;  // checked; nothing to move (the buffer may be NULL)
    const mem::kind dk = n && r.has_devices() ? r.kind_of(dst, n) : mem::kind::host;
    if (dk != mem::kind::host || ps->kind != mem::kind::host) return device_get(r, op, dst, dk, src, *ps, n, nbi);
    if (ps->direct) {
        copy_bytes(dst, ps->direct + src.offset, n);
        return status::ok;
    }
    return r.route(src.rank)->get(dst, to_remote(src), n, nbi);
}

status put_nb(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, hgas_handle_t *h) {
    if (!h) return fail(status::invalid_arg, "hgas_put_nb: the handle pointer is NULL");
    if (src) {
        if (char *d = mapped_host(r, dst, n)) {
            copy_bytes(d, src, n);
            *h = HGAS_HANDLE_DONE;
            return status::ok;
        }
    }
    HGAS_TRY(check_local(r, "hgas_put_nb", src, n, "source"));
    HGAS_TRY_ASSIGN(const core::peer_segment *ps, target(r, "hgas_put_nb", dst, n));
    if (n == 0) {
        *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    const mem::kind sk = n && r.has_devices() ? r.kind_of(src, n) : mem::kind::host;
    if (sk != mem::kind::host || ps->kind != mem::kind::host) {
        *h = HGAS_HANDLE_DONE;
        return device_put(r, "hgas_put_nb", dst, *ps, src, sk, n, nullptr);
    }
    if (ps->direct) {
        copy_bytes(ps->direct + dst.offset, src, n);
        *h = HGAS_HANDLE_DONE;  // a store to mapped memory is remotely complete once done
        return status::ok;
    }
    core::handle_table::op *o;
    const hgas_handle_t nh = r.handles().issue(&o);
    o->t = r.route(dst.rank);
    if (status s = o->t->put_nb(to_remote(dst), src, n, o->p); s != status::ok) {
        r.handles().release(nh);
        return s;
    }
    *h = nh;
    return status::ok;
}

status get_nb(core::rank &r, void *dst, hgas_gptr_t src, size_t n, hgas_handle_t *h) {
    if (!h) return fail(status::invalid_arg, "hgas_get_nb: the handle pointer is NULL");
    if (dst) {
        if (const char *s = mapped_host(r, src, n)) {
            copy_bytes(dst, s, n);
            *h = HGAS_HANDLE_DONE;
            return status::ok;
        }
    }
    HGAS_TRY(check_local(r, "hgas_get_nb", dst, n, "destination"));
    HGAS_TRY_ASSIGN(const core::peer_segment *ps, target(r, "hgas_get_nb", src, n));
    if (n == 0) {
        *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    const mem::kind dk = n && r.has_devices() ? r.kind_of(dst, n) : mem::kind::host;
    if (dk != mem::kind::host || ps->kind != mem::kind::host) {
        *h = HGAS_HANDLE_DONE;
        return device_get(r, "hgas_get_nb", dst, dk, src, *ps, n);
    }
    if (ps->direct) {
        copy_bytes(dst, ps->direct + src.offset, n);
        *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    core::handle_table::op *o;
    const hgas_handle_t nh = r.handles().issue(&o);
    o->t = r.route(src.rank);
    if (status s = o->t->get_nb(dst, to_remote(src), n, o->p); s != status::ok) {
        r.handles().release(nh);
        return s;
    }
    *h = nh;
    return status::ok;
}

namespace {
// The live operation behind `h`; nullptr for HGAS_HANDLE_DONE and for a handle already waited
// or tested to completion (done: both return at once, like MPI_Wait on MPI_REQUEST_NULL);
// invalid_arg for a value this rank never issued.
result<core::handle_table::op *> find_handle(core::rank &r, const char *op, hgas_handle_t h) {
    core::handle_table::op *o = nullptr;
    if (h == HGAS_HANDLE_DONE) return o;
    switch (r.handles().find(h, &o)) {
    case core::handle_table::lookup::live: return o;
    case core::handle_table::lookup::consumed: return static_cast<core::handle_table::op *>(nullptr);
    case core::handle_table::lookup::foreign: break;
    }
    return fail(status::invalid_arg, "%s: %p is not a handle of rank %d (not from hgas_put_nb/hgas_get_nb of this "
                "rank, or corrupt)", op, static_cast<void *>(h), r.me());
}
}  // namespace

hgas_handle_t make_handle(core::rank &r, std::unique_ptr<completion> c) {
    core::handle_table::op *o = nullptr;
    hgas_handle_t h = r.handles().issue(&o);
    o->c = std::move(c);
    return h;
}

status test(core::rank &r, hgas_handle_t h, int *done) {
    if (!done) return fail(status::invalid_arg, "hgas_test: the done pointer is NULL");
    HGAS_TRY_ASSIGN(core::handle_table::op *o, find_handle(r, "hgas_test", h));
    if (!o) {
        *done = 1;
        return status::ok;
    }
    bool d = false;
    status s = o->c ? o->c->test(r, d) : o->t->test(o->p, d);
    if (s != status::ok) {
        r.handles().release(h);  // a failed operation is finished too; its error is reported once, here
        return s;
    }
    if (!d) HGAS_TRY(r.poll());
    if (d) r.handles().release(h);
    *done = d ? 1 : 0;
    return status::ok;
}

status wait(core::rank &r, hgas_handle_t h) {
    HGAS_TRY_ASSIGN(core::handle_table::op *o, find_handle(r, "hgas_wait", h));
    if (!o) return status::ok;
    bool d = false, gone = false;
    status err = status::ok;
    // A safe point: the operation is issued whole. At HGAS_THREAD_MULTIPLE other threads may
    // run while this one waits, so the handle is looked up again each time (a program that
    // waits on one handle from two threads gets it completed once).
    core::safe_point sp(r);
    status s = r.wait("hgas_wait", [&] {
        if (r.handles().find(h, &o) != core::handle_table::lookup::live) return gone = true;
        err = o->c ? o->c->test(r, d) : o->t->test(o->p, d);
        return d || err != status::ok;
    });
    if (gone) return status::ok;
    if (s == status::timeout && !d && err == status::ok) return s;  // still in flight: the handle stays live
    r.handles().release(h);
    return err != status::ok ? err : s;
}

status put_signal(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, hgas_gptr_t sig, uint64_t value,
                  hgas_signal_op_t op, bool nbi, issuer by) {
    const char *name = nbi ? "hgas_put_signal_nbi" : "hgas_put_signal";
    if (op != HGAS_SIGNAL_SET && op != HGAS_SIGNAL_ADD)
        return fail(status::invalid_arg, "%s: signal op %d is neither HGAS_SIGNAL_SET nor HGAS_SIGNAL_ADD", name, op);
    HGAS_TRY(check_local(r, name, src, n, "source", by));
    if (sig.rank != dst.rank)
        return fail(status::invalid_arg, "%s: the signal (rank %u) must be on the same rank as the data (rank %u)",
                    name, sig.rank, dst.rank);
    HGAS_TRY_ASSIGN(const core::peer_segment *ps, target(r, name, dst, n, by));
    HGAS_TRY_ASSIGN(const core::peer_segment *ss, target(r, name, sig, 8, by));
    HGAS_TRY(mem::check_aligned(name, sig, 8));
    const auto sop = op == HGAS_SIGNAL_SET ? transport::signal_op::set : transport::signal_op::add;
    const mem::kind sk = n && r.has_devices() ? r.kind_of(src, n) : mem::kind::host;
    if (sk != mem::kind::host || ps->kind != mem::kind::host || ss->kind != mem::kind::host)
        return device_put_signal(r, name, dst, *ps, src, sk, n, sig, *ss, sop, value);
    if (ps->direct && ss->direct) {
        if (n) copy_bytes(ps->direct + dst.offset, src, n);  // src may be NULL for a signal alone
        transport::direct::store_fence();
        transport::direct::signal_update(ss->direct + sig.offset, sop, value);
        return status::ok;
    }
    return r.route(dst.rank)->put_signal(to_remote(dst), src, n, to_remote(sig), sop, value, nbi);
}

status device_put_signal(core::rank &r, const char *name, hgas_gptr_t dst, const core::peer_segment &ps,
                         const void *src, mem::kind sk, size_t n, hgas_gptr_t sig, const core::peer_segment &ss,
                         transport::signal_op sop, uint64_t value) {
    const proto::signal_req sreq{sig.segment, sig.offset, sop, value};
    const bool data_staged = ps.kind != mem::kind::host && !ps.dev && n;
    const bool sig_staged = ss.kind != mem::kind::host && !ss.dev;
    if (data_staged || (sig_staged && n == 0)) {
        // The target's agent applies the signal after the data (its ring is FIFO).
        if (staging_forbidden(r)) return not_mapped(r, name, data_staged ? dst : sig);
        proto::staging *st = staging_of(r, name);
        if (!st) return status::internal;
        return st->put(static_cast<int>(dst.rank), dst.segment, dst.offset, src, sk, n, &sreq);
    }
    // The data is complete at the target when this returns (local copies wait for the engine;
    // bounces end with a transport put that the signal's transport call orders after it).
    if (n) {
        if (ps.kind == mem::kind::host && sk == mem::kind::host) {
            if (ps.direct) copy_bytes(ps.direct + dst.offset, src, n);
            else HGAS_TRY(r.route(dst.rank)->put(to_remote(dst), src, n, false));
        } else {
            HGAS_TRY(device_put(r, name, dst, ps, src, sk, n, nullptr));
        }
    }
    if (ss.kind != mem::kind::host) {
        if (ss.dev) {
            auto res = r.device(ss.kind)->amo(ss.dev + sig.offset,
                                              sop == transport::signal_op::set ? amo_op::set : amo_op::add, 8, value, 0);
            return res.error();
        }
        proto::staging *st = staging_of(r, name);
        if (!st) return status::internal;
        return st->put(static_cast<int>(sig.rank), sig.segment, sig.offset, nullptr, mem::kind::host, 0, &sreq);
    }
    if (ss.direct) {
        transport::direct::store_fence();
        transport::direct::signal_update(ss.direct + sig.offset, sop, value);
        return status::ok;
    }
    return r.route(sig.rank)->put_signal(to_remote(sig), nullptr, 0, to_remote(sig), sop, value, false);
}

status signal_update(core::rank &r, hgas_gptr_t sig, hgas_signal_op_t op, uint64_t value, issuer by) {
    return put_signal(r, sig, nullptr, 0, sig, value, op, false, by);
}

status atomic_slow(core::rank &r, const char *name, hgas_gptr_t t, transport::amo_op aop, unsigned width,
                   uint64_t opnd, uint64_t cmp, uint64_t *oldp, issuer by);

status atomic(core::rank &r, hgas_gptr_t t, hgas_amo_t op, hgas_dtype_t type, const void *operand,
              const void *compare, void *result, issuer by) {
    const char *name = "hgas_atomic";
    unsigned width;
    switch (type) {
    case HGAS_INT32:
    case HGAS_UINT32: width = 4; break;
    case HGAS_INT64:
    case HGAS_UINT64: width = 8; break;
    default:
        return fail(status::invalid_arg, "%s: type %d is not an integer type (HGAS_INT32, HGAS_INT64, HGAS_UINT32, "
                    "HGAS_UINT64)", name, type);
    }
    transport::amo_op aop;
    uint64_t opnd = 0, cmp = 0;
    bool needs_operand = true;
    switch (op) {
    case HGAS_AMO_FETCH: aop = transport::amo_op::fetch; needs_operand = false; break;
    case HGAS_AMO_SET: aop = transport::amo_op::set; break;
    case HGAS_AMO_ADD: aop = transport::amo_op::add; break;
    case HGAS_AMO_FETCH_ADD: aop = transport::amo_op::fetch_add; break;
    case HGAS_AMO_INC: aop = transport::amo_op::add; opnd = 1; needs_operand = false; break;
    case HGAS_AMO_FETCH_INC: aop = transport::amo_op::fetch_add; opnd = 1; needs_operand = false; break;
    case HGAS_AMO_SWAP: aop = transport::amo_op::swap; break;
    case HGAS_AMO_COMPARE_SWAP: aop = transport::amo_op::compare_swap; break;
    case HGAS_AMO_AND: aop = transport::amo_op::and_; break;
    case HGAS_AMO_OR: aop = transport::amo_op::or_; break;
    case HGAS_AMO_XOR: aop = transport::amo_op::xor_; break;
    case HGAS_AMO_FETCH_AND: aop = transport::amo_op::fetch_and; break;
    case HGAS_AMO_FETCH_OR: aop = transport::amo_op::fetch_or; break;
    case HGAS_AMO_FETCH_XOR: aop = transport::amo_op::fetch_xor; break;
    default: return fail(status::invalid_arg, "%s: op %d is not an hgas_amo_t", name, op);
    }
    if (needs_operand) {
        if (!operand) return fail(status::invalid_arg, "%s: this op needs an operand but operand is NULL", name);
        opnd = read_word(operand, width);
    }
    if (aop == transport::amo_op::compare_swap) {
        if (!compare) return fail(status::invalid_arg, "%s: compare_swap needs a compare value but it is NULL", name);
        cmp = read_word(compare, width);
    }
    const bool fetches = transport::amo_fetches(aop);
    if (fetches && !result) return fail(status::invalid_arg, "%s: this op returns the old value but result is NULL", name);
    uint64_t old = 0;
    char *d = t.offset % width == 0 ? mapped_host(r, t, width) : nullptr;
    if (d) {
        old = transport::direct::amo(d, aop, width, opnd, cmp);
    } else {
        HGAS_TRY(atomic_slow(r, name, t, aop, width, opnd, cmp, &old, by));
    }
    if (fetches) {
        if (width == 4) {
            uint32_t v = static_cast<uint32_t>(old);
            std::memcpy(result, &v, 4);
        } else {
            std::memcpy(result, &old, 8);
        }
    }
    return status::ok;
}

// atomic() past its argument checks, where the fast path did not apply.
status atomic_slow(core::rank &r, const char *name, hgas_gptr_t t, transport::amo_op aop, unsigned width,
                   uint64_t opnd, uint64_t cmp, uint64_t *oldp, issuer by) {
    HGAS_TRY_ASSIGN(const core::peer_segment *ps, target(r, name, t, width, by));
    HGAS_TRY(mem::check_aligned(name, t, width));
    uint64_t &old = *oldp;
    if (ps->direct) {
        old = transport::direct::amo(ps->direct + t.offset, aop, width, opnd, cmp);
    } else if (ps->kind == mem::kind::host) {
        HGAS_TRY(r.route(t.rank)->amo(to_remote(t), aop, width, opnd, cmp, &old));
    } else if (ps->dev) {  // device memory this process names: a device atomic
        HGAS_TRY_ASSIGN(old, r.device(ps->kind)->amo(ps->dev + t.offset, aop, width, opnd, cmp));
    } else {
        if (staging_forbidden(r)) return not_mapped(r, name, t);
        proto::staging *st = staging_of(r, name);
        if (!st) return status::internal;
        HGAS_TRY_ASSIGN(old, st->amo(static_cast<int>(t.rank), t.segment, t.offset, aop, width, opnd, cmp));
    }
    return status::ok;
}

status fence(core::rank &r) {
    // Staged transfers are applied in order per target, but a later direct store must not
    // overtake them: complete them first.
    if (r.staging()) HGAS_TRY(r.staging()->quiet());
    for (auto &t : r.transports()) HGAS_TRY(t->fence());
    return status::ok;
}

status quiet(core::rank &r) {
    if (r.staging()) HGAS_TRY(r.staging()->quiet());
    for (auto &t : r.transports()) HGAS_TRY(t->quiet());
    return status::ok;
}

}  // namespace hgas::rma
