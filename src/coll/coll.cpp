// The collective session (signal words, entry announcement), argument checks, and the data
// movement collectives: broadcast, fcollect, alltoall. Reductions are in reduce.cpp.
#include "coll/coll.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "coll/devmem.hpp"
#include "coll/stats.hpp"
#include "gpu/reduce_cpu.hpp"
#include "rma/rma.hpp"

namespace hgas::coll {

namespace detail {

namespace {
// Acquire: a rank that sees a signal's new value must see the data put before it.
inline uint64_t load_acquire(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
}  // namespace

session::session(team &tm, uint32_t fp, const char *args_fmt, uint64_t words,
                 std::initializer_list<uint64_t> values)
    : t(tm), r(*tm.r), desc(fp & desc_mask), args(args_fmt) {
    int i = 0;
    for (uint64_t v : values)
        if (i < 4) av[i++] = v;
    epoch = ++*t.epoch;
    for (uint64_t m = words & ~uint64_t{1}; m; m &= m - 1) {
        const int w = __builtin_ctzll(m);
        base[w] = load_acquire(word(w));
    }
    // Release: the snapshot above is taken before any peer can write for this collective,
    // because peers write only after they have read this value (wait_entered).
    // The history first: a reader that finds w_entered past its epoch looks there.
    __atomic_store_n(word(w_history + static_cast<int>(epoch % history_len)), epoch << desc_bits | desc,
                     __ATOMIC_RELEASE);
    __atomic_store_n(word(w_entered), epoch << desc_bits | desc, __ATOMIC_RELEASE);
}

std::string session::describe_args() const {
    char b[128];
    std::snprintf(b, sizeof b, args, av[0], av[1], av[2], av[3]);
    return b;
}

uint64_t *session::word(int w) const {
    return reinterpret_cast<uint64_t *>(r.own_base(mem::seg_symmetric) + t.word_off(w));
}

uint64_t session::load(int w) const { return load_acquire(word(w)); }

hgas_gptr_t session::peer_word(int peer, int w) const {
    return mem::make_gptr(t.rank_of(peer), mem::seg_symmetric, t.word_off(w));
}

status session::fetch_word(int peer, int w, uint64_t &out) const {
    // A peer whose heap this process maps (self, shm): a plain acquire load, the small-message
    // fast path; others through an atomic fetch.
    const core::peer_segment *ps = r.segment(static_cast<uint32_t>(t.rank_of(peer)), mem::seg_symmetric);
    if (ps && ps->direct) {
        out = load_acquire(reinterpret_cast<const uint64_t *>(ps->direct + t.word_off(w)));
        return status::ok;
    }
    return rma::atomic(r, peer_word(peer, w), HGAS_AMO_FETCH, HGAS_UINT64, nullptr, nullptr, &out,
                       rma::issuer::runtime);
}

status session::wait_entered(int peer, const char *what, bool *agrees) const {
    auto fetch = [&](int w, uint64_t &out) { return fetch_word(peer, w, out); };
    status st = status::ok;
    uint64_t v = 0;
    if (fetch(w_entered, v) != status::ok || v >> desc_bits < epoch)
        HGAS_TRY(r.wait(what, [&] {
            st = fetch(w_entered, v);
            return st != status::ok || v >> desc_bits >= epoch;
        }));
    HGAS_TRY(st);
    if (v >> desc_bits > epoch) {
        // Already past this collective (a rank that failed its own checks leaves at once): its
        // entry for this one is in its history, unless it has run history_len collectives ahead.
        HGAS_TRY(fetch(w_history + static_cast<int>(epoch % history_len), v));
    }
    const uint32_t theirs = static_cast<uint32_t>(v & desc_mask);
    if (agrees) *agrees = v >> desc_bits == epoch && theirs == desc;
    if (v >> desc_bits != epoch || theirs == desc) return status::ok;
    peer = t.rank_of(peer);  // messages name job ranks
    if (theirs == desc_failed)
        return fail(status::invalid_arg, "%s: rank %d failed this collective with a bad argument of its own (its "
                    "hgas_last_error() says which); rank %d stops here instead of waiting for it", what, peer, r.me());
    if (desc == desc_failed)
        return fail(status::invalid_arg, "%s: this rank failed its own argument checks", what);
    return fail(status::invalid_arg, "%s: rank %d called this collective with other arguments than rank %d (%s): a "
                "different root, size, type or op, or another collective, or (allreduce, reduce_scatter) vectors in "
                "different kinds of memory, or one in a symmetric heap and one not; every rank must call the same "
                "collectives in the same order with the same arguments%s", what, peer, r.me(), describe_args().c_str(),
                t.world ? "" : (" (on " + t.describe() + ")").c_str());
}

status session::wait_count(int w, uint64_t count, const char *what) const {
    const uint64_t *p = word(w);
    const uint64_t target = base[w] + count;
    return r.wait(what, [&] { return load_acquire(p) >= target; });
}

uint32_t fingerprint(uint64_t call, uint64_t a, uint64_t b, uint64_t c) {
    // splitmix64 over the arguments: any difference changes the 24 bits but for 1 in 2^24.
    uint64_t h = 0x9e3779b97f4a7c15ull * (call + 1);
    for (uint64_t x : {a, b, c}) {
        h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
    }
    const uint32_t fp = static_cast<uint32_t>(h) & desc_mask;
    return fp == desc_failed ? fp - 1 : fp;  // desc_failed is reserved
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
    HGAS_TRY(check_buf(op, p, bytes, what));
    const int seg = r.own_segment_of(p, bytes);
    // The symmetric heaps (host, cuda, sim) and the program's static data lie at the same
    // offsets on every rank.
    if (seg != mem::seg_symmetric && seg != mem::seg_static && seg != mem::seg_cuda_symmetric &&
        seg != mem::seg_sim_symmetric)
        return fail(status::invalid_pointer, "%s: %s [%p, +%zu) is not inside a symmetric heap or the program's "
                    "static data; allocate it with hgas_malloc (or hgas_malloc_kind for device memory) so that it "
                    "lies at the same offset on every rank", op, what, p, bytes);
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

status check_root(const team &t, const char *op, int root) {
    if (root < 0 || root >= t.n())
        return fail(status::invalid_arg, "%s: root %d is not a rank of %s (ranks 0..%d)", op, root,
                    t.describe().c_str(), t.n() - 1);
    return status::ok;
}

status fail_entered(team &t, status err) {
    if (t.n() > 1) {
        const std::string why = last_error();
        { session s(t, desc_failed, "", 0); }
        return fail(err, "%s", why.c_str());
    }
    return err;
}

status check_type_op(const char *op, hgas_dtype_t type, hgas_op_t rop) {
    if (dtype_size(type) == 0)
        return fail(status::invalid_arg, "%s: type %d is not an hgas_dtype_t (HGAS_INT8/16/32/64, HGAS_UINT8/16/32/64, "
                    "HGAS_FLOAT16, HGAS_BFLOAT16, HGAS_FLOAT, HGAS_DOUBLE)", op, static_cast<int>(type));
    if (rop < HGAS_OP_SUM || rop > HGAS_OP_XOR)
        return fail(status::invalid_arg, "%s: op %d is not an hgas_op_t (HGAS_OP_SUM, HGAS_OP_MIN, HGAS_OP_MAX, "
                    "HGAS_OP_PROD, HGAS_OP_AND, HGAS_OP_OR, HGAS_OP_XOR)", op, static_cast<int>(rop));
    if (rop >= HGAS_OP_AND && gpu::reduce_dtype_is_float(type))
        return fail(status::invalid_arg, "%s: op %s is bitwise and takes integer types only, not %s", op,
                    rop == HGAS_OP_AND ? "HGAS_OP_AND" : rop == HGAS_OP_OR ? "HGAS_OP_OR" : "HGAS_OP_XOR",
                    type == HGAS_FLOAT ? "HGAS_FLOAT" : type == HGAS_DOUBLE ? "HGAS_DOUBLE"
                    : type == HGAS_FLOAT16 ? "HGAS_FLOAT16" : "HGAS_BFLOAT16");
    return status::ok;
}

}  // namespace detail

using namespace detail;

namespace {
// Bytes per chunk of a pipelined broadcast of `bytes` into `dst` memory of kind `k`, down a
// tree `depth` levels deep. Host memory: 64 KiB (copies by the CPU; the cut-overs in
// docs/collectives.md were measured with it). Device memory: every chunk costs a device copy
// and a fence, about 8 us on an H100 whatever its size (64 KiB chunks moved 64 MiB between two
// GPUs at 8 GB/s, NCCL 320), so fewer and larger ones: a single chunk where nobody forwards
// (depth 1), else about four per level below the root and at least 1 MiB. Every member
// computes the same value from the same arguments (dst is symmetric: one kind everywhere).
constexpr size_t bcast_chunk_host = 64 * 1024;
constexpr size_t bcast_chunk_device_min = size_t{1} << 20;
size_t bcast_chunk_bytes(mem::kind k, size_t bytes, int depth) {
    if (k == mem::kind::host) return bcast_chunk_host;
    if (depth <= 1) return bytes;
    const size_t per = bytes / (4 * static_cast<size_t>(depth - 1));
    return std::max(bcast_chunk_device_min, (per + 4095) & ~size_t{4095});
}
}  // namespace

// n * bytes without overflow.
status detail::total_bytes(const char *op, int n, size_t bytes, size_t &out) {
    if (bytes > SIZE_MAX / static_cast<size_t>(n))
        return fail(status::invalid_arg, "%s: %d ranks x %zu bytes overflows", op, n, bytes);
    out = bytes * static_cast<size_t>(n);
    return status::ok;
}

namespace {
// A large add into a broadcast child's chunk counter: "your parent failed, stop waiting".
// It satisfies any wait for a chunk, and the child tells it from chunks by its size.
constexpr uint64_t bcast_poison = uint64_t{1} << 40;


// Checked mode (HGAS_CHECK=1): the arguments of a collective must be the same on every rank,
// verified by an allreduce of (x, ~x) with MIN before any byte moves, so that a mismatch, or a
// bad argument on any rank, fails the call on every rank with the same message.
status agree_args(team &t, const char *op, status local, const uint64_t *vals, const char *const *names,
                  int k) {
    uint64_t v[2 * 4 + 2], out[2 * 4 + 2];
    const std::string why = local == status::ok ? std::string() : last_error();
    v[0] = local == status::ok ? 0 : 1;
    v[1] = ~v[0];
    for (int i = 0; i < k; ++i) {
        v[2 + 2 * i] = vals[i];
        v[3 + 2 * i] = ~vals[i];
    }
    HGAS_TRY(allreduce(t, out, v, static_cast<size_t>(2 + 2 * k), HGAS_UINT64, HGAS_OP_MIN));
    if (local != status::ok) return fail(local, "%s", why.c_str());
    if (~out[1] != 0)
        return fail(status::invalid_arg, "%s: another rank passed a bad argument (its hgas_last_error() says which); "
                    "nothing was moved on any rank (HGAS_CHECK=1)", op);
    for (int i = 0; i < k; ++i)
        if (out[2 + 2 * i] != ~out[3 + 2 * i])
            return fail(status::invalid_arg, "%s: the ranks passed different %s (from %llu to %llu); every rank must "
                        "pass the same; nothing was moved on any rank (HGAS_CHECK=1)", op, names[i],
                        (unsigned long long)out[2 + 2 * i], (unsigned long long)~out[3 + 2 * i]);
    return status::ok;
}

status broadcast_local_checks(team &t, const char *op, void *dst, const void *src, size_t bytes, int root,
                              sym_ref &dref) {
    core::rank &r = *t.r;
    HGAS_TRY(check_root(t, op, root));
    HGAS_TRY(check_symmetric(r, op, dst, bytes, "dst", &dref));
    mem::kind k;
    if (t.me == root) HGAS_TRY(check_any_buf(r, op, src, bytes, "src", &k));
    return status::ok;
}

// Ends a broadcast that failed after entry. If our parent is in it with our arguments, it
// sends every chunk (or the poison), and none may arrive after we return (a later collective
// would count it): wait for them first (`drain`: the number of chunks). Then the children that
// agree with us wait for our chunks: each gets the poison (after the chunks already sent:
// fence) and fails too.
status end_failed_broadcast(const session &s, uint64_t drain, const int *children, int nchildren, status err) {
    const std::string why = last_error();
    if (drain) (void)s.wait_count(w_bcast, drain, "hgas_broadcast");
    (void)rma::fence(s.r);
    for (int i = 0; i < nchildren; ++i) {
        bool agrees = false;  // only a child in this broadcast with our arguments waits for us
        if (s.wait_entered(children[i], "hgas_broadcast", &agrees) != status::ok || !agrees) continue;
        (void)rma::signal_update(s.r, s.peer_word(children[i], w_bcast), HGAS_SIGNAL_ADD, bcast_poison,
                                 rma::issuer::runtime);
    }
    return fail(err, "%s", why.c_str());
}
}  // namespace

namespace {
// Whether broadcast of `bytes` on `t` scatters and allgathers (HGAS_COLL_BCAST). The auto
// cut-over is measured (docs/collectives.md, "Algorithm cut-overs"): on host memory the tree
// won at 2 and 4 ranks at every size up to 32 MiB, and at 8 ranks up to 8 MiB; scatter won
// from 16 MiB at 8 ranks.
constexpr int k_bcast_scatter_min_ranks = 8;
constexpr size_t k_bcast_scatter_min_bytes = size_t{16} << 20;
bool bcast_scatter(team &t, size_t bytes) {
    const std::string &choice = t.r->cfg().text(setting::coll_bcast);
    if (choice == "scatter") return t.n() > 1;
    if (choice == "tree" || choice == "flat") return false;
    return t.n() >= k_bcast_scatter_min_ranks && bytes >= k_bcast_scatter_min_bytes;
}

// Whether the (non-scatter) broadcast tree is flat: the root puts to every member itself, one
// step deep. Auto: small messages on teams of up to 8 members whose heaps this rank maps (one
// node), where a put is a store and the root's n - 1 of them cost less than the binomial
// tree's log2 n hops, each a wait for the signal before the forward. Every member sees the
// same: a team within one node maps every member on every member (or, with peer mapping off,
// none), a team across nodes has an unmapped member everywhere.
constexpr int k_bcast_flat_max_ranks = 8;
constexpr size_t k_bcast_flat_max_bytes = 1024;
bool bcast_flat(team &t, size_t bytes) {
    core::rank &r = *t.r;
    const std::string &choice = r.cfg().text(setting::coll_bcast);
    if (choice == "flat") return true;
    if (choice != "auto" || t.n() > k_bcast_flat_max_ranks || bytes > k_bcast_flat_max_bytes) return false;
    for (int i = 0; i < t.n(); ++i) {
        const core::peer_segment *ps = r.segment(static_cast<uint32_t>(t.rank_of(i)), mem::seg_symmetric);
        if (!ps || !ps->direct) return false;
    }
    return true;
}

// Broadcast for large messages (van de Geijn): the root scatters block i (ceil(bytes / n)
// bytes, the last ones shorter or empty) into member i's dst at its place, by an alltoallv in
// which only the root sends; then every member's block goes to every member by a collect (the
// blocks land back to back, i.e. in place). Each member sends and receives about 2 x bytes,
// whatever n: the tree's root sends log2(n) x bytes. Both steps are collectives with their own
// argument checks, so a mismatch fails as theirs do.
status broadcast_scatter(team &t, char *d, const void *src, size_t bytes, int root) {
    const int n = t.n(), me = t.me;
    const size_t blk = (bytes + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
    auto at = [&](int i) { return std::min(bytes, blk * static_cast<size_t>(i)); };
    auto len = [&](int i) { return std::min(bytes, blk * static_cast<size_t>(i + 1)) - at(i); };
    std::vector<size_t> soff(static_cast<size_t>(n), 0), sb(soff), roff(soff), rb(soff);
    // The root's own block is a local copy (src may be dst: a broadcast in place), not a
    // block of the alltoallv, which refuses overlapping src and dst.
    if (me == root)
        for (int j = 0; j < n; ++j)
            if (j != root) {
                soff[static_cast<size_t>(j)] = at(j);
                sb[static_cast<size_t>(j)] = len(j);
            }
    if (me != root) {
        roff[static_cast<size_t>(root)] = at(me);
        rb[static_cast<size_t>(root)] = len(me);
    }
    HGAS_TRY(alltoallv(t, d, roff.data(), rb.data(), src, soff.data(), sb.data()));
    if (me == root) HGAS_TRY(local_copy(*t.r, "hgas_broadcast", d + at(me), static_cast<const char *>(src) + at(me), len(me)));
    size_t total = 0;
    HGAS_TRY(collect(t, d, d + at(me), len(me), &total));
    return status::ok;
}
}  // namespace

status broadcast(core::rank &r, void *dst, const void *src, size_t bytes, int root) {
    return broadcast(world(r), dst, src, bytes, root);
}

status broadcast(team &t, void *dst, const void *src, size_t bytes, int root) {
    const char *op = t.world ? "hgas_broadcast" : "hgas_team_broadcast";
    if (bytes == 0) return check_root(t, op, root);
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    sym_ref dref;
    const status local = broadcast_local_checks(t, op, dst, src, bytes, root, dref);
    if (n > 1 && r.cfg().flag(setting::check)) {
        const uint64_t vals[2] = {static_cast<uint64_t>(static_cast<int64_t>(root)), bytes};
        const char *const names[2] = {"roots", "sizes"};
        HGAS_TRY(agree_args(t, op, local, vals, names, 2));
    }
    if (local != status::ok) return fail_entered(t, local);
    char *d = static_cast<char *>(dst);
    if (n == 1) return local_copy(r, op, d, src, bytes);
    if (bcast_scatter(t, bytes)) {
        ++stats(r).bcast_scatter;
        return broadcast_scatter(t, d, src, bytes, root);
    }
    const bool flat = bcast_flat(t, bytes);
    ++(flat ? stats(r).bcast_flat : stats(r).bcast_tree);

    // The shape is in the fingerprint: members that disagree on it fail instead of waiting.
    session s(t, fingerprint(c_broadcast, static_cast<uint64_t>(root), bytes, flat), "root %llu, %llu bytes",
              bit(w_bcast), {static_cast<uint64_t>(root), bytes});
    const int v = (me - root + n) % n;  // rank relative to the root
    // Children in the binomial tree: v + mask for every mask below v's lowest set bit (below
    // n for the root), the largest subtree first so that it starts forwarding earliest. Flat:
    // the root's children are all the others, in order, and nobody else has any.
    int lim = 1;
    if (v == 0) while (lim < n) lim <<= 1;
    else lim = v & -v;
    int children[32], nchildren = 0;
    std::vector<int> flat_children;
    int *kids = children;
    if (flat) {
        if (v == 0) {
            if (n - 1 > 32) {  // forced flat on a large team (auto takes it up to 8 members)
                flat_children.resize(static_cast<size_t>(n - 1));
                kids = flat_children.data();
            }
            for (int u = 1; u < n; ++u) kids[nchildren++] = (u + root) % n;
        }
    } else {
        for (int mask = lim >> 1; mask >= 1; mask >>= 1)
            if (v + mask < n) children[nchildren++] = (v + mask + root) % n;
    }
    // The parent must be in this broadcast with our arguments, or nobody sends us anything.
    const int parent = v == 0 ? -1 : flat ? root : (v - (v & -v) + root) % n;
    int depth = 0;  // levels of the tree below the root
    if (flat) depth = 1;
    else
        while ((1 << depth) < n) ++depth;
    const size_t chunk = bcast_chunk_bytes(mem::segment_kind(dref.seg), bytes, depth);
    const size_t nchunks = (bytes + chunk - 1) / chunk;
    if (parent >= 0)
        if (status e = s.wait_entered(parent, op); e != status::ok)
            return end_failed_broadcast(s, 0, kids, nchildren, e);  // it sends us nothing
    const uint64_t drain = parent >= 0 ? nchunks : 0;

    const uint64_t off = dref.off;
    const char *from = me == root ? static_cast<const char *>(src) : d;
    for (size_t c = 0; c < nchunks; ++c) {
        const size_t at = c * chunk, len = std::min(chunk, bytes - at);
        if (me != root) {
            HGAS_TRY(s.wait_count(w_bcast, c + 1, op));
            if (s.load(w_bcast) - s.base[w_bcast] >= bcast_poison)
                return end_failed_broadcast(s, 0, kids, nchildren,
                                       fail(status::invalid_arg, "%s: rank %d, this rank's parent in the broadcast tree "
                                            "(%s), failed it: some rank passed a bad argument or other arguments "
                                            "(hgas_last_error() on the ranks says which)", op, t.rank_of(parent),
                                            s.describe_args().c_str()));
        }
        for (int i = 0; i < nchildren; ++i) {
            const int ch = kids[i];
            if (c == 0)  // its dst is free for this broadcast, and it expects our chunks
                if (status e = s.wait_entered(ch, op); e != status::ok)
                    return end_failed_broadcast(s, drain, kids, nchildren, e);
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(ch), dref.seg, off + at), from + at, len,
                                     s.peer_word(ch, w_bcast), 1, HGAS_SIGNAL_ADD, false, rma::issuer::runtime));
        }
        // The child counts chunks: chunk c+1's signal must not overtake chunk c's data.
        if (nchildren && c + 1 < nchunks) HGAS_TRY(rma::fence(r));
    }
    // The root's own copy last: a broadcast that fails (other arguments elsewhere) writes nothing.
    if (me == root) return local_copy(r, op, d, src, bytes);
    return status::ok;
}

status fcollect(core::rank &r, void *dst, const void *src, size_t bytes) {
    return fcollect(world(r), dst, src, bytes);
}

namespace {
// Whether fcollect of `bytes` per rank on `t` runs as a ring (HGAS_COLL_FCOLLECT).
bool fcollect_ring(team &t, size_t bytes) {
    core::rank &r = *t.r;
    const std::string &choice = r.cfg().text(setting::coll_fcollect);
    if (choice == "ring") return true;
    if (choice == "direct" || bytes < 32 * 1024) return false;
    for (int i = 0; i < t.n(); ++i) {
        const core::peer_segment *ps = r.segment(static_cast<uint32_t>(t.rank_of(i)), mem::seg_symmetric);
        if (!ps || !ps->direct) return true;  // a peer over the network
    }
    return false;
}
}  // namespace

status fcollect(team &t, void *dst, const void *src, size_t bytes) {
    const char *op = t.world ? "hgas_fcollect" : "hgas_team_fcollect";
    if (bytes == 0) return status::ok;
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    size_t total = 0;
    sym_ref dref;
    status local = total_bytes(op, n, bytes, total);
    if (local == status::ok) local = check_symmetric(r, op, dst, total, "dst", &dref);
    mem::kind ks;
    if (local == status::ok) local = check_any_buf(r, op, src, bytes, "src", &ks);
    if (local != status::ok) return fail_entered(t, local);
    char *d = static_cast<char *>(dst);
    const uint64_t off = dref.off + bytes * me;
    if (n > 1) {
        session s(t, fingerprint(c_fcollect, bytes), "%llu bytes", bit(w_fcollect), {bytes});
        // Every peer first: if any passed other arguments, every rank finds a mismatch (it
        // differs from one of the two) before it writes anywhere.
        for (int k = 1; k < n; ++k) HGAS_TRY(s.wait_entered((me + k) % n, op));
        const bool ring = fcollect_ring(t, bytes);
        ++(ring ? stats(r).fcollect_ring : stats(r).fcollect_direct);
        if (ring) {
            // Step k (1 .. n-1): pass block (me - k + 1) mod n, our own first, to the right
            // neighbour at its offset, then wait for block (me - k) from the left one, which
            // the next step forwards. Only the left neighbour adds to our w_fcollect, one per
            // step, in order (each put_signal lands its data before its signal).
            const int right = (me + 1) % n;
            HGAS_TRY(local_copy(r, op, d + bytes * me, src, bytes));
            for (int k = 1; k < n; ++k) {
                const int blk = ((me - k + 1) % n + n) % n;
                HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(right), dref.seg, dref.off + bytes * blk),
                                         d + bytes * blk, bytes, s.peer_word(right, w_fcollect), 1, HGAS_SIGNAL_ADD,
                                         false, rma::issuer::runtime));
                HGAS_TRY(s.wait_count(w_fcollect, static_cast<uint64_t>(k), op));
            }
            return status::ok;
        }
        // Start at me+1 so that the ranks do not all write to rank 0 first.
        for (int k = 1; k < n; ++k) {
            const int peer = (me + k) % n;
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(peer), dref.seg, off), src, bytes,
                                     s.peer_word(peer, w_fcollect), 1, HGAS_SIGNAL_ADD, false,
                                     rma::issuer::runtime));
        }
        HGAS_TRY(local_copy(r, op, d + bytes * me, src, bytes));
        return s.wait_count(w_fcollect, static_cast<uint64_t>(n - 1), op);
    }
    return local_copy(r, op, d, src, bytes);
}

status alltoall(core::rank &r, void *dst, const void *src, size_t bytes) {
    return alltoall(world(r), dst, src, bytes);
}

status alltoall(team &t, void *dst, const void *src, size_t bytes) {
    const char *op = t.world ? "hgas_alltoall" : "hgas_team_alltoall";
    if (bytes == 0) return status::ok;
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    size_t total = 0;
    sym_ref dref;
    status local = total_bytes(op, n, bytes, total);
    if (local == status::ok) local = check_symmetric(r, op, dst, total, "dst", &dref);
    mem::kind ks;
    if (local == status::ok) local = check_any_buf(r, op, src, total, "src", &ks);
    char *d = static_cast<char *>(dst);
    const char *sp = static_cast<const char *>(src);
    if (local == status::ok && sp < d + total && d < sp + total)
        local = fail(status::invalid_arg, "%s: src and dst overlap; alltoall cannot run in place", op);
    if (local != status::ok) return fail_entered(t, local);
    const uint64_t off = dref.off + bytes * me;
    if (n > 1) {
        session s(t, fingerprint(c_alltoall, bytes), "%llu bytes", bit(w_alltoall), {bytes});
        for (int k = 1; k < n; ++k) HGAS_TRY(s.wait_entered((me + k) % n, op));  // as in fcollect
        for (int k = 1; k < n; ++k) {
            const int peer = (me + k) % n;
            HGAS_TRY(rma::put_signal(r, mem::make_gptr(t.rank_of(peer), dref.seg, off), sp + bytes * peer, bytes,
                                     s.peer_word(peer, w_alltoall), 1, HGAS_SIGNAL_ADD, false,
                                     rma::issuer::runtime));
        }
        HGAS_TRY(local_copy(r, op, d + bytes * me, sp + bytes * me, bytes));
        return s.wait_count(w_alltoall, static_cast<uint64_t>(n - 1), op);
    }
    return local_copy(r, op, d, sp, bytes);
}

}  // namespace hgas::coll
