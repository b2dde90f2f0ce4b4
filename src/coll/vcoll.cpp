// The collectives with per-rank sizes or blocks: reduce_scatter, collect (varying sizes) and
// alltoallv. They follow the protocol of coll.cpp (session, wait_entered before writing).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "coll/coll.hpp"
#include "coll/devmem.hpp"
#include "coll/direct.hpp"
#include "coll/stats.hpp"
#include "rma/rma.hpp"

namespace hgas::coll {

using namespace detail;

status reduce_scatter(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op) {
    const char *name = "hgas_team_reduce_scatter";
    core::rank &r = *t.r;
    HGAS_TRY(check_type_op(name, type, op));
    if (count == 0) return status::ok;
    const size_t esize = dtype_size(type);
    size_t block = 0, total = 0;
    if (count > SIZE_MAX / esize) return fail(status::invalid_arg, "%s: count %zu overflows", name, count);
    block = count * esize;
    HGAS_TRY(total_bytes(name, t.n(), block, total));
    mem::kind ks, kd;
    HGAS_TRY(check_any_buf(r, name, src, total, "src", &ks));
    HGAS_TRY(check_any_buf(r, name, dst, block, "dst", &kd));
    const char *s = static_cast<const char *>(src);
    char *d = static_cast<char *>(dst);
    const size_t mine = block * static_cast<size_t>(t.me);
    if (d != s + mine && d < s + total && s < d + block)
        return fail(status::invalid_arg, "%s: dst overlaps src other than as this rank's block (dst == src + %d * "
                    "count elements)", name, t.me);
    // Where every member's src is mapped here (one node; symmetric src of dst's kind), each
    // member combines its block straight from the others' src (direct.cpp): auto for device
    // vectors and for host vectors from direct_host_min_bytes, or HGAS_COLL_ALLREDUCE=direct,
    // as allreduce.
    sym_ref sref;
    if (t.n() > 1 && ks == kd && direct_chosen(t, kd, total) && symmetric_at(r, src, total, sref) &&
        direct_possible(t, sref.seg))
        return reduce_scatter_direct(t, name, d, s, kd, sref, count, type, op,
                                     fingerprint(c_reduce_scatter, count, uint64_t{sref.seg} << 24 |
                                                                              static_cast<uint64_t>(type) << 8 | op));
    // Otherwise the whole vector is reduced on every rank (the allreduce), then each keeps its
    // block: a ring would move (n-1)/n of the bytes instead of log2(n) times them (not done).
    // The private vector lives with dst (device memory for a device dst: reduced on the GPU).
    scratch_buf all;
    HGAS_TRY(all.allocate(r, name, kd, total));
    HGAS_TRY(allreduce(t, all.data(), src, count * static_cast<size_t>(t.n()), type, op));
    return local_copy(r, name, d, all.data() + mine, block);
}

namespace {
// collect for teams too large for scratch slots of k_collect_slot_min bytes: everyone's size
// by an allreduce of a vector that is zero but for each member's own entry, then each member
// puts its block into every peer's dst at its prefix offset.
status collect_by_allreduce(team &t, const char *name, char *d, const void *src, size_t bytes, size_t *total_out) {
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    std::vector<uint64_t> sizes(static_cast<size_t>(n), 0), all(static_cast<size_t>(n));
    sizes[static_cast<size_t>(me)] = bytes;
    HGAS_TRY(allreduce(t, all.data(), sizes.data(), static_cast<size_t>(n), HGAS_UINT64, HGAS_OP_SUM));
    uint64_t total = 0, at = 0;
    for (int i = 0; i < n; ++i) {
        if (i == me) at = total;
        if (all[static_cast<size_t>(i)] > UINT64_MAX - total)
            return fail(status::invalid_arg, "%s: the sizes overflow", name);
        total += all[static_cast<size_t>(i)];
    }
    if (total_out) *total_out = static_cast<size_t>(total);
    if (total == 0) return status::ok;
    sym_ref dref;
    status local = check_symmetric(r, name, d, static_cast<size_t>(total), "dst", &dref);
    mem::kind ks;
    if (local == status::ok) local = check_any_buf(r, name, src, bytes, "src", &ks);
    if (local != status::ok) return fail_entered(t, local);
    session s(t, fingerprint(c_collect, total, static_cast<uint64_t>(n)), "%llu bytes in all", bit(w_collect), {total});
    for (int k = 1; k < n; ++k) HGAS_TRY(s.wait_entered((me + k) % n, name));  // as in fcollect
    for (int k = 1; k < n; ++k) {
        const int peer = (me + k) % n;
        if (bytes)
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(peer), dref.seg, dref.off + at), src, bytes,
                                     s.peer_word(peer, w_collect), 1, HGAS_SIGNAL_ADD, false,
                                     rma::issuer::runtime));
        else
            HGAS_TRY(rma::signal_update(r, s.peer_word(peer, w_collect), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    }
    HGAS_TRY(local_copy(r, name, d + at, src, bytes));
    return s.wait_count(w_collect, static_cast<uint64_t>(n - 1), name);
}

// collect's first round: every member puts a header with its block's size, and the block itself
// when it fits, into slot `me` of every peer's scratch (slots of collect_slot() bytes). Small
// blocks then need no second round and no allreduce of the sizes: each member copies the
// others' blocks out of its own scratch.
struct collect_header {
    uint64_t bytes;
    uint64_t pad;
};
constexpr size_t k_collect_slot_max = 4096;
constexpr size_t k_collect_slot_min = 128;
// Bytes per member's slot: up to 4 KiB, as the scratch allows for n members; the same on every
// member (n and HGAS_COLL_SCRATCH are; the fingerprint carries it, so a job whose ranks were
// given different HGAS_COLL_SCRATCH fails instead of misreading slots). 0: too many members for
// the scratch (or HGAS_COLL_COLLECT=allreduce): the sizes go through an allreduce.
size_t collect_slot(const team &t) {
    if (t.r->cfg().text(setting::coll_collect) == "allreduce") return 0;
    const size_t per = std::min(k_collect_slot_max, t.r->internal().coll_scratch_size / static_cast<size_t>(t.n()));
    const size_t slot = per & ~size_t{63};
    return slot >= k_collect_slot_min ? slot : 0;
}

// The block of every member whose block was too large for its slot goes straight into the
// others' dst (a second session, as fcollect's); the blocks that came in the slots are copied
// from the scratch. `big` is the number of members other than this one that send a block.
status collect_large(team &t, const char *name, char *d, const sym_ref &dref, const void *src, size_t bytes,
                     bool mine_big, const std::vector<uint64_t> &at, uint64_t total, status local, int big,
                     size_t slot) {
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    if (local != status::ok) return fail_entered(t, local);  // the big ones must not write to our dst
    session s(t, fingerprint(c_collect, total, static_cast<uint64_t>(n)), "%llu bytes in all", bit(w_collect),
              {total});
    for (int k = 1; k < n; ++k) HGAS_TRY(s.wait_entered((me + k) % n, name));  // as in fcollect
    if (mine_big)
        for (int k = 1; k < n; ++k) {
            const int peer = (me + k) % n;
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(peer), dref.seg, dref.off + at[me]), src, bytes,
                                     s.peer_word(peer, w_collect), 1, HGAS_SIGNAL_ADD, false, rma::issuer::runtime));
        }
    const char *scratch = r.own_base(mem::seg_symmetric) + r.internal().coll_scratch;
    HGAS_TRY(local_copy(r, name, d + at[me], src, bytes));
    for (int i = 0; i < n; ++i) {
        const size_t len = at[i + 1] - at[i];
        if (i != me && len + sizeof(collect_header) <= slot)
            HGAS_TRY(local_copy(r, name, d + at[i], scratch + slot * i + sizeof(collect_header), len));
    }
    return s.wait_count(w_collect, static_cast<uint64_t>(big), name);
}
}  // namespace

status collect(team &t, void *dst, const void *src, size_t bytes, size_t *total_out) {
    const char *name = "hgas_team_collect";
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    mem::kind ks;
    char *d = static_cast<char *>(dst);
    sym_ref dref;
    if (n == 1) {
        if (total_out) *total_out = bytes;
        if (bytes == 0) return status::ok;
        HGAS_TRY(check_symmetric(r, name, dst, bytes, "dst", &dref));
        HGAS_TRY(check_any_buf(r, name, src, bytes, "src", &ks));
        return local_copy(r, name, d, src, bytes);
    }
    const size_t slot = collect_slot(t);
    if (slot == 0) {
        ++stats(r).collect_allreduce;
        return collect_by_allreduce(t, name, d, src, bytes, total_out);
    }
    if (status e = check_any_buf(r, name, src, bytes, "src", &ks); e != status::ok) return fail_entered(t, e);

    // Round 1: our header (and block, if it fits) into slot `me` of every peer's scratch.
    session s(t, fingerprint(c_collect, static_cast<uint64_t>(n), slot), "%llu-byte slots", bit(w_collect), {slot});
    for (int k = 1; k < n; ++k) HGAS_TRY(s.wait_entered((me + k) % n, name));  // as in fcollect
    const bool mine_big = bytes + sizeof(collect_header) > slot;
    alignas(16) char stage[k_collect_slot_max];
    const collect_header h{bytes, 0};
    std::memcpy(stage, &h, sizeof h);
    if (!mine_big) HGAS_TRY(local_copy(r, name, stage + sizeof h, src, bytes));
    const size_t put = sizeof h + (mine_big ? 0 : bytes);
    const uint64_t scratch_off = r.internal().coll_scratch;
    for (int k = 1; k < n; ++k) {
        const int peer = (me + k) % n;
        HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(peer), mem::seg_symmetric, scratch_off + slot * me),
                                 stage, put, s.peer_word(peer, w_collect), 1, HGAS_SIGNAL_ADD, false,
                                 rma::issuer::runtime));
    }
    HGAS_TRY(s.wait_count(w_collect, static_cast<uint64_t>(n - 1), name));

    // Every member now knows every size, the same on all: the offsets, the total, and which
    // blocks still have to move.
    const char *scratch = r.own_base(mem::seg_symmetric) + scratch_off;
    std::vector<uint64_t> at(static_cast<size_t>(n) + 1, 0);
    int big = 0;
    bool overflow = false;
    for (int i = 0; i < n; ++i) {
        collect_header hi = h;
        if (i != me) std::memcpy(&hi, scratch + slot * i, sizeof hi);
        if (i != me && hi.bytes + sizeof(collect_header) > slot) ++big;
        overflow |= hi.bytes > UINT64_MAX - at[i];
        at[i + 1] = at[i] + hi.bytes;
    }
    if (overflow) return fail(status::invalid_arg, "%s: the sizes overflow", name);
    ++(big || mine_big ? stats(r).collect_slots_large : stats(r).collect_slots);
    const uint64_t total = at[n];
    if (total_out) *total_out = static_cast<size_t>(total);
    if (total == 0) return status::ok;
    const status local = check_symmetric(r, name, dst, static_cast<size_t>(total), "dst", &dref);
    if (big || mine_big) return collect_large(t, name, d, dref, src, bytes, mine_big, at, total, local, big, slot);
    // Every block came in the slots. Nobody writes to our dst, so a bad dst fails this member
    // alone. Our own block first: src may lie in dst (in place).
    HGAS_TRY(local);
    HGAS_TRY(local_copy(r, name, d + at[me], src, bytes));
    for (int i = 0; i < n; ++i)
        if (i != me) HGAS_TRY(local_copy(r, name, d + at[i], scratch + slot * i + sizeof(collect_header), at[i + 1] - at[i]));
    return status::ok;
}

namespace {
// What each rank tells each peer in the first phase of alltoallv (in the peer's scratch).
struct vdesc {
    uint64_t recv_off, recv_bytes, send_bytes, pad;
};

status alltoallv_checks(team &t, const char *name, void *dst, const size_t *recv_off, const size_t *recv_bytes,
                        const void *src, const size_t *send_off, const size_t *send_bytes, sym_ref &dref) {
    core::rank &r = *t.r;
    const int n = t.n();
    if (!recv_off || !recv_bytes || !send_off || !send_bytes)
        return fail(status::invalid_arg, "%s: recv_off, recv_bytes, send_off and send_bytes must not be NULL", name);
    if (static_cast<uint64_t>(n) * sizeof(vdesc) > r.internal().coll_scratch_size)
        return fail(status::unsupported, "%s: %d ranks need %zu bytes of collective scratch; raise "
                    "HGAS_COLL_SCRATCH", name, n, static_cast<size_t>(n) * sizeof(vdesc));
    size_t dend = 0, send = 0, sbeg = SIZE_MAX, dbeg = SIZE_MAX;
    for (int j = 0; j < n; ++j) {
        if (recv_off[j] > SIZE_MAX - recv_bytes[j] || send_off[j] > SIZE_MAX - send_bytes[j])
            return fail(status::invalid_arg, "%s: the block of rank %d overflows", name, j);
        if (recv_bytes[j]) dbeg = std::min(dbeg, recv_off[j]), dend = std::max(dend, recv_off[j] + recv_bytes[j]);
        if (send_bytes[j]) sbeg = std::min(sbeg, send_off[j]), send = std::max(send, send_off[j] + send_bytes[j]);
    }
    // dst's symmetric offset is needed to send too (the peers' dst lie at the same offset).
    if (dend || send) HGAS_TRY(check_symmetric(r, name, dst, dend, "dst", &dref));
    mem::kind ks;
    if (send) HGAS_TRY(check_any_buf(r, name, static_cast<const char *>(src) + sbeg, send - sbeg, "src", &ks));
    const char *s = static_cast<const char *>(src), *d = static_cast<const char *>(dst);
    if (dend && send && s + sbeg < d + dend && d + dbeg < s + send)
        return fail(status::invalid_arg, "%s: the blocks of src and dst overlap; alltoallv cannot run in place",
                    name);
    return status::ok;
}
}  // namespace

status alltoallv(team &t, void *dst, const size_t *recv_off, const size_t *recv_bytes, const void *src,
                 const size_t *send_off, const size_t *send_bytes) {
    const char *name = "hgas_team_alltoallv";
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    sym_ref dref;
    const status local = alltoallv_checks(t, name, dst, recv_off, recv_bytes, src, send_off, send_bytes, dref);
    if (local != status::ok) return fail_entered(t, local);
    char *d = static_cast<char *>(dst);
    const char *sp = static_cast<const char *>(src);
    if (send_bytes[me] != recv_bytes[me])
        return fail_entered(t, fail(status::invalid_arg, "%s: this rank (%d) sends itself %zu bytes but receives %zu "
                                    "from itself", name, r.me(), send_bytes[me], recv_bytes[me]));
    if (n == 1) {
        HGAS_TRY(local_copy(r, name, d + recv_off[0], sp + send_off[0], send_bytes[0]));
        return status::ok;
    }
    session s(t, fingerprint(c_alltoallv, static_cast<uint64_t>(n)), "varying blocks",
              bit(w_alltoallv) | bit(w_vdata));
    for (int k = 1; k < n; ++k) HGAS_TRY(s.wait_entered((me + k) % n, name));
    // Phase 1: tell every peer where its block goes in our dst and how large the blocks are
    // both ways, into its scratch at our index.
    const uint64_t scratch = r.internal().coll_scratch;
    for (int k = 1; k < n; ++k) {
        const int peer = (me + k) % n;
        const vdesc v{recv_off[peer], recv_bytes[peer], send_bytes[peer], 0};
        HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(peer), mem::seg_symmetric, scratch + sizeof(vdesc) * me),
                                 &v, sizeof v, s.peer_word(peer, w_alltoallv), 1, HGAS_SIGNAL_ADD, false,
                                 rma::issuer::runtime));
    }
    HGAS_TRY(s.wait_count(w_alltoallv, static_cast<uint64_t>(n - 1), name));
    std::vector<vdesc> theirs(static_cast<size_t>(n));
    std::memcpy(theirs.data(), r.own_base(mem::seg_symmetric) + scratch, sizeof(vdesc) * static_cast<size_t>(n));
    // Phase 2: a pair exchanges blocks only if both agree on both sizes; both ends see the
    // same numbers, so a pair that disagrees sends nothing either way and both fail.
    int expected = 0, bad = -1;
    for (int k = 1; k < n; ++k) {
        const int peer = (me + k) % n;
        const vdesc &v = theirs[static_cast<size_t>(peer)];
        if (v.recv_bytes != send_bytes[peer] || v.send_bytes != recv_bytes[peer]) {
            if (bad < 0) bad = peer;
            continue;
        }
        ++expected;
        const hgas_gptr_t to = mem::make_gptr(t.rank_of(peer), dref.seg, dref.off + v.recv_off);
        if (send_bytes[peer])
            HGAS_TRY(rma::put_signal(r, to, sp + send_off[peer], send_bytes[peer], s.peer_word(peer, w_vdata), 1,
                                     HGAS_SIGNAL_ADD, false, rma::issuer::runtime));
        else
            HGAS_TRY(rma::signal_update(r, s.peer_word(peer, w_vdata), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    }
    HGAS_TRY(local_copy(r, name, d + recv_off[me], sp + send_off[me], send_bytes[me]));
    HGAS_TRY(s.wait_count(w_vdata, static_cast<uint64_t>(expected), name));
    if (bad >= 0) {
        const vdesc &v = theirs[static_cast<size_t>(bad)];
        return fail(status::invalid_arg, "%s: rank %d and rank %d disagree on the sizes of their blocks: rank %d sends "
                    "%zu bytes and rank %d expects %llu; rank %d expects %zu bytes and rank %d sends %llu (nothing "
                    "moved between these two)", name, r.me(), t.rank_of(bad), r.me(), send_bytes[bad],
                    t.rank_of(bad), (unsigned long long)v.recv_bytes, r.me(), recv_bytes[bad], t.rank_of(bad),
                    (unsigned long long)v.send_bytes);
    }
    return status::ok;
}

}  // namespace hgas::coll
