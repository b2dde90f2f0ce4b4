// The collective session (signal words, entry announcement), argument checks, and the data
// movement collectives: broadcast, fcollect, alltoall. Reductions are in reduce.cpp.
#include "coll/coll.hpp"

#include <algorithm>
#include <cstring>

#include "rma/rma.hpp"

namespace hgas::coll {

namespace detail {

namespace {
// Acquire: a rank that sees a signal's new value must see the data put before it.
inline uint64_t load_acquire(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
}  // namespace

session::session(core::rank &rk) : r(rk) {
    auto &in = r.internal();
    epoch = ++in.coll_epoch;
    for (int w = 1; w < 64; ++w) base[w] = load_acquire(word(w));
    // Release: the snapshot above is taken before any peer can write for this collective,
    // because peers write only after they have read this value (wait_entered).
    __atomic_store_n(word(w_entered), epoch, __ATOMIC_RELEASE);
}

uint64_t *session::word(int w) const {
    return reinterpret_cast<uint64_t *>(r.own_base(mem::seg_symmetric) + r.internal().coll_flags +
                                        64 * static_cast<uint64_t>(w));
}

uint64_t session::load(int w) const { return load_acquire(word(w)); }

hgas_gptr_t session::peer_word(int peer, int w) const {
    return mem::make_gptr(peer, mem::seg_symmetric, r.internal().coll_flags + 64 * static_cast<uint64_t>(w));
}

status session::wait_entered(int peer, const char *what) const {
    const hgas_gptr_t g = peer_word(peer, w_entered);
    status st = status::ok;
    uint64_t v = 0;
    HGAS_TRY(r.wait(what, [&] {
        st = rma::atomic(r, g, HGAS_AMO_FETCH, HGAS_UINT64, nullptr, nullptr, &v, rma::issuer::runtime);
        return st != status::ok || v >= epoch;
    }));
    return st;
}

status session::wait_count(int w, uint64_t count, const char *what) const {
    const uint64_t *p = word(w);
    const uint64_t target = base[w] + count;
    return r.wait(what, [&] { return load_acquire(p) >= target; });
}

status check_buf(const char *op, const void *p, size_t bytes, const char *what) {
    if (bytes && !p) return fail(status::invalid_arg, "%s: %s is NULL but %zu bytes were asked for", op, what, bytes);
    return status::ok;
}

status check_host_buf(core::rank &r, const char *op, const void *p, size_t bytes, const char *what) {
    HGAS_TRY(check_buf(op, p, bytes, what));
    if (bytes && r.kind_of(p, bytes) != mem::kind::host)
        return fail(status::invalid_arg, "%s: %s is %s memory, but collectives take host memory (move device data "
                    "with hgas_put/hgas_get first)", op, what, mem::kind_name(r.kind_of(p, bytes)));
    return status::ok;
}

status check_symmetric(core::rank &r, const char *op, const void *p, size_t bytes, const char *what, sym_ref *ref) {
    HGAS_TRY(check_host_buf(r, op, p, bytes, what));
    const int seg = r.own_segment_of(p, bytes);
    // The symmetric heap and the program's static data lie at the same offsets on every rank.
    if (seg != mem::seg_symmetric && seg != mem::seg_static)
        return fail(status::invalid_pointer, "%s: %s [%p, +%zu) is not inside the symmetric heap or the program's "
                    "static data; allocate it with hgas_malloc so that it lies at the same offset on every rank", op,
                    what, p, bytes);
    const uint16_t sg = static_cast<uint16_t>(seg);
    const uint64_t off = static_cast<uint64_t>(static_cast<const char *>(p) - r.own_base(sg));
    // The user's buffer: not hgas's own objects, and in checked mode inside one allocation.
    if (off < r.heap(sg).user_base())
        return fail(status::invalid_pointer, "%s: %s [%p, +%zu) lies in hgas's own objects at the start of the "
                    "symmetric heap, not in an allocation of the program", op, what, p, bytes);
    HGAS_TRY(rma::check_live(r, op, mem::make_gptr(r.me(), sg, off), bytes));
    if (ref) {
        ref->seg = sg;
        ref->off = off;
    }
    return status::ok;
}

status check_root(core::rank &r, const char *op, int root) {
    if (root < 0 || root >= r.n())
        return fail(status::invalid_arg, "%s: root %d is not a rank (the job has ranks 0..%d)", op, root, r.n() - 1);
    return status::ok;
}

status check_type_op(const char *op, hgas_dtype_t type, hgas_op_t rop) {
    if (dtype_size(type) == 0)
        return fail(status::invalid_arg, "%s: type %d is not an hgas_dtype_t (HGAS_INT32, HGAS_INT64, HGAS_UINT32, "
                    "HGAS_UINT64, HGAS_FLOAT, HGAS_DOUBLE)", op, static_cast<int>(type));
    if (rop < HGAS_OP_SUM || rop > HGAS_OP_PROD)
        return fail(status::invalid_arg, "%s: op %d is not an hgas_op_t (HGAS_OP_SUM, HGAS_OP_MIN, HGAS_OP_MAX, "
                    "HGAS_OP_PROD)", op, static_cast<int>(rop));
    return status::ok;
}

}  // namespace detail

using namespace detail;

namespace {
constexpr size_t bcast_chunk = 64 * 1024;

// n * bytes without overflow.
status total_bytes(const char *op, int n, size_t bytes, size_t &out) {
    if (bytes > SIZE_MAX / static_cast<size_t>(n))
        return fail(status::invalid_arg, "%s: %d ranks x %zu bytes overflows", op, n, bytes);
    out = bytes * static_cast<size_t>(n);
    return status::ok;
}
}  // namespace

status broadcast(core::rank &r, void *dst, const void *src, size_t bytes, int root) {
    const char *op = "hgas_broadcast";
    HGAS_TRY(check_root(r, op, root));
    if (bytes == 0) return status::ok;
    sym_ref dref;
    HGAS_TRY(check_symmetric(r, op, dst, bytes, "dst", &dref));
    const int n = r.n(), me = r.me();
    if (me == root) HGAS_TRY(check_host_buf(r, op, src, bytes, "src"));
    char *d = static_cast<char *>(dst);
    if (me == root && src != dst) std::memmove(d, src, bytes);
    if (n == 1) return status::ok;

    session s(r);
    const int v = (me - root + n) % n;  // rank relative to the root
    // Children in the binomial tree: v + mask for every mask below v's lowest set bit (below
    // n for the root), the largest subtree first so that it starts forwarding earliest.
    int lim = 1;
    if (v == 0) while (lim < n) lim <<= 1;
    else lim = v & -v;
    int children[32], nchildren = 0;
    for (int mask = lim >> 1; mask >= 1; mask >>= 1)
        if (v + mask < n) children[nchildren++] = (v + mask + root) % n;

    const uint64_t off = dref.off;
    const char *from = me == root ? static_cast<const char *>(src) : d;
    const size_t nchunks = (bytes + bcast_chunk - 1) / bcast_chunk;
    for (size_t c = 0; c < nchunks; ++c) {
        const size_t at = c * bcast_chunk, len = std::min(bcast_chunk, bytes - at);
        if (me != root) HGAS_TRY(s.wait_count(w_bcast, c + 1, op));
        for (int i = 0; i < nchildren; ++i) {
            const int ch = children[i];
            if (c == 0) HGAS_TRY(s.wait_entered(ch, op));  // its dst is free for this broadcast
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(ch, dref.seg, off + at), from + at, len,
                                     s.peer_word(ch, w_bcast), 1, HGAS_SIGNAL_ADD, false, rma::issuer::runtime));
        }
        // The child counts chunks: chunk c+1's signal must not overtake chunk c's data.
        if (nchildren && c + 1 < nchunks) HGAS_TRY(rma::fence(r));
    }
    return status::ok;
}

status fcollect(core::rank &r, void *dst, const void *src, size_t bytes) {
    const char *op = "hgas_fcollect";
    if (bytes == 0) return status::ok;
    const int n = r.n(), me = r.me();
    size_t total;
    HGAS_TRY(total_bytes(op, n, bytes, total));
    sym_ref dref;
    HGAS_TRY(check_symmetric(r, op, dst, total, "dst", &dref));
    HGAS_TRY(check_host_buf(r, op, src, bytes, "src"));
    char *d = static_cast<char *>(dst);
    const uint64_t off = dref.off + bytes * me;
    if (n > 1) {
        session s(r);
        // Start at me+1 so that the ranks do not all write to rank 0 first.
        for (int k = 1; k < n; ++k) {
            const int peer = (me + k) % n;
            HGAS_TRY(s.wait_entered(peer, op));
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(peer, dref.seg, off), src, bytes,
                                     s.peer_word(peer, w_fcollect), 1, HGAS_SIGNAL_ADD, false,
                                     rma::issuer::runtime));
        }
        if (d + bytes * me != src) std::memmove(d + bytes * me, src, bytes);
        return s.wait_count(w_fcollect, static_cast<uint64_t>(n - 1), op);
    }
    if (d != src) std::memmove(d, src, bytes);
    return status::ok;
}

status alltoall(core::rank &r, void *dst, const void *src, size_t bytes) {
    const char *op = "hgas_alltoall";
    if (bytes == 0) return status::ok;
    const int n = r.n(), me = r.me();
    size_t total;
    HGAS_TRY(total_bytes(op, n, bytes, total));
    sym_ref dref;
    HGAS_TRY(check_symmetric(r, op, dst, total, "dst", &dref));
    HGAS_TRY(check_host_buf(r, op, src, total, "src"));
    char *d = static_cast<char *>(dst);
    const char *sp = static_cast<const char *>(src);
    if (sp < d + total && d < sp + total)
        return fail(status::invalid_arg, "%s: src and dst overlap; alltoall cannot run in place", op);
    const uint64_t off = dref.off + bytes * me;
    if (n > 1) {
        session s(r);
        for (int k = 1; k < n; ++k) {
            const int peer = (me + k) % n;
            HGAS_TRY(s.wait_entered(peer, op));
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(peer, dref.seg, off), sp + bytes * peer, bytes,
                                     s.peer_word(peer, w_alltoall), 1, HGAS_SIGNAL_ADD, false,
                                     rma::issuer::runtime));
        }
        std::memcpy(d + bytes * me, sp + bytes * me, bytes);
        return s.wait_count(w_alltoall, static_cast<uint64_t>(n - 1), op);
    }
    std::memcpy(d, sp, bytes);
    return status::ok;
}

}  // namespace hgas::coll
