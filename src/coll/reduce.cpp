// Reductions: the local kernels, reduce (binomial tree) and allreduce (recursive doubling with
// a fold for ranks beyond the largest power of two), both chunked through the symmetric
// scratch. Data moves over "channels": a sender puts one chunk at a time into a slot of the
// receiver's scratch (signal w_data + slot), and the receiver returns a credit (w_credit +
// slot at the sender) once it has consumed it, so the next chunk may overwrite the slot.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "coll/coll.hpp"
#include "coll/devmem.hpp"
#include "coll/direct.hpp"
#include "coll/stats.hpp"
#include "gpu/reduce_cpu.hpp"
#include "rma/rma.hpp"

namespace hgas::coll {

using namespace detail;

// --- local kernels (gpu/reduce_cpu.hpp; device memory: devmem.hpp) ----------------------

size_t dtype_size(hgas_dtype_t t) { return gpu::reduce_dtype_size(t); }

status reduce_local(void *inout, const void *in, size_t count, hgas_dtype_t type, hgas_op_t op) {
    const char *name = "hgas::coll::reduce_local";
    HGAS_TRY(check_type_op(name, type, op));
    HGAS_TRY(check_buf(name, inout, count, "inout"));
    HGAS_TRY(check_buf(name, in, count, "in"));
    gpu::reduce_cpu(inout, in, count, type, op, false);
    return status::ok;
}

void detail::reduce_local_rev(void *inout, const void *in, size_t count, hgas_dtype_t type, hgas_op_t op) {
    gpu::reduce_cpu(inout, in, count, type, op, true);
}

// --- channels through the scratch ----------------------------------------------------------

namespace {

// The scratch cut into `nslots` equal slots, each two chunk buffers (64-byte multiples):
// chunk `seq` of a channel uses buffer seq % 2, so the sender may put chunk seq + 1 while the
// receiver still combines chunk seq. The scratch is the host one (HGAS_COLL_SCRATCH) or, for
// device vectors, the device scratch of their kind (HGAS_COLL_DEVICE_SCRATCH), so that they
// move device to device and the device combines them.
struct scratch_plan {
    uint16_t seg = mem::seg_symmetric;  // the symmetric segment the scratch lies in
    uint64_t off = 0;         // symmetric offset of the scratch
    char *local = nullptr;    // its local address
    size_t slot_bytes = 0;    // bytes of one slot (two chunk buffers)
    size_t chunk_bytes = 0;   // bytes of one full chunk
    size_t chunk_elems = 0;
    bool dev_vec = false;     // the vectors are device memory (counters only)

    uint64_t buf_off(int s, uint64_t seq) const { return slot_bytes * s + chunk_bytes * (seq & 1); }
    char *slot(int s, uint64_t seq) const { return local + buf_off(s, seq); }
    // `peer` is a job rank.
    hgas_gptr_t peer_slot(int peer, int s, uint64_t seq) const {
        return mem::make_gptr(peer, seg, off + buf_off(s, seq));
    }
    bool on_device() const { return seg != mem::seg_symmetric; }
};

// This rank's device scratch blocks, by kind (offset in the kind's symmetric heap; size 0:
// none yet).
struct device_scratch {
    uint64_t off[3] = {}, size[3] = {};
};
const char k_devscratch_key = 0;
device_scratch &dev_scratch(core::rank &r) {
    auto &att = r.attachments();
    auto it = att.find(&k_devscratch_key);
    if (it != att.end()) return *static_cast<device_scratch *>(it->second.value);
    auto *d = new device_scratch;
    att[&k_devscratch_key] = {d, [](void *p) { delete static_cast<device_scratch *>(p); }};
    return *d;
}

// The kind of scratch a reduction of vectors of kind `k` on `t` passes through: `k` where the
// device scratch of kind `k` exists or can be taken now, host otherwise. The block is taken
// lazily, at the first reduction on the world team of a vector of kind `k`: every rank makes
// it at the same point of its sequence of world collectives, so the symmetric heaps of the
// kind stay identical (the same offset everywhere, like hgas_malloc_kind); a heap too full
// fails on every rank alike and the reduction uses the host scratch. On other teams the block
// is used once it exists. Every member computes the same answer from the same history; the
// answer is part of the reduction's fingerprint, so a member that differs is reported.
mem::kind scratch_kind(team &t, mem::kind k) {
    core::rank &r = *t.r;
    if (k == mem::kind::host) return k;
    device_scratch &ds = dev_scratch(r);
    const int ki = static_cast<int>(k);
    if (ds.size[ki]) return k;
    const uint64_t want = r.cfg().bytes(setting::coll_device_scratch);
    if (!want || !t.world || !r.device(k)) return mem::kind::host;
    const uint64_t bytes = want < 4096 ? 4096 : want;
    auto off = r.heap(mem::symmetric_segment(k)).allocate(bytes, 256);
    if (!off.ok()) return mem::kind::host;
    ds.off[ki] = *off;
    ds.size[ki] = bytes;
    ++stats(r).device_scratch_allocs;
    return k;
}

status plan_scratch(const team &t, const char *op, int nslots, size_t esize, mem::kind sk, scratch_plan &p) {
    core::rank &r = *t.r;
    auto &in = r.internal();
    if (nslots > max_slots)
        return fail(status::unsupported, "%s: %d ranks need %d scratch slots, more than the %d this build has", op,
                    t.n(), nslots, static_cast<int>(max_slots));
    uint64_t size = in.coll_scratch_size;
    p.seg = mem::symmetric_segment(sk);
    p.off = in.coll_scratch;
    if (sk != mem::kind::host) {
        const device_scratch &ds = dev_scratch(r);
        p.off = ds.off[static_cast<int>(sk)];
        size = ds.size[static_cast<int>(sk)];
    }
    p.local = r.own_base(p.seg) + p.off;
    p.slot_bytes = (size / nslots) & ~size_t{127};
    p.chunk_bytes = p.slot_bytes / 2;
    p.chunk_elems = p.chunk_bytes / esize;
    if (p.chunk_elems == 0)
        return fail(status::internal, "%s: %s=%llu is too small for %d slots", op,
                    sk == mem::kind::host ? "HGAS_COLL_SCRATCH" : "HGAS_COLL_DEVICE_SCRATCH",
                    static_cast<unsigned long long>(size), nslots);
    return status::ok;
}

// Chunk `seq` of the channel into `peer`'s slot `s`. Chunk 0 waits for the peer to enter this
// collective (its scratch is free); chunk seq >= 2 for the credit of chunk seq - 2, whose
// buffer it reuses. Chunk 1 goes to the other buffer, free since the peer entered.
status send_chunk(const session &ss, const scratch_plan &p, const char *op, int peer, int s, const void *data,
                  size_t len, uint64_t seq) {
    if (seq == 0) HGAS_TRY(ss.wait_entered(peer, op));
    else if (seq >= 2) HGAS_TRY(ss.wait_count(w_credit + s, seq - 1, op));
    // Chunks seq and seq + 1 may be in flight together: the receiver counts them, so chunk
    // seq + 1's signal must not overtake chunk seq's data.
    if (seq >= 1) HGAS_TRY(rma::fence(ss.r));
    hgasi_coll_stats_t &st = stats(ss.r);
    (!p.dev_vec ? st.host_bytes_host_scratch : p.on_device() ? st.dev_bytes_device_scratch : st.dev_bytes_host_scratch) +=
        len;
    return rma::put_signal(ss.r, p.peer_slot(ss.t.rank_of(peer), s, seq), data, len, ss.peer_word(peer, w_data + s), 1,
                           HGAS_SIGNAL_ADD, false, rma::issuer::runtime);
}

// Waits for chunk `seq` in my slot `s`.
status recv_chunk(const session &ss, const char *op, int s, uint64_t seq) {
    return ss.wait_count(w_data + s, seq + 1, op);
}

// Tells `peer` that the buffer of chunk `seq` in my slot `s` is free again. No credit for the
// last two chunks: the sender does not wait for them, and they must not arrive during a later
// collective.
status release_chunk(const session &ss, int peer, int s, uint64_t seq, uint64_t nchunks) {
    if (seq + 2 >= nchunks) return status::ok;
    return rma::signal_update(ss.r, ss.peer_word(peer, w_credit + s), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime);
}

int log2_floor(int x) {
    int k = 0;
    while ((2 << k) <= x) ++k;
    return k;
}

// The algorithm of reduce of `bytes` on `t` (HGAS_COLL_REDUCE). The auto cut-overs are
// measured (docs/collectives.md, "Algorithm cut-overs"): at 4 and 8 ranks the chain won from
// 512 KiB (1.2-1.8x), the tree below 128 KiB; below 16 KiB on 4 ranks or more the allreduce's
// recursive doubling (only the root keeps the result) took 1.2 us at 8 B where the tree took
// 6.8 us (a 16-core machine, 4 ranks). At 2 and 3 ranks the tree has no inner node and is
// as fast as doubling; at 2 ranks tree and chain are the same schedule (one slot, rank 1 ->
// rank 0), so the tree's name stays.
enum class reduce_algo { tree, chain, doubling };
constexpr int k_reduce_chain_min_ranks = 4;
constexpr size_t k_reduce_chain_min_bytes = size_t{512} << 10;
constexpr int k_reduce_doubling_min_ranks = 4;
constexpr size_t k_reduce_doubling_max_bytes = size_t{16} << 10;  // exclusive
reduce_algo reduce_choice(team &t, size_t bytes) {
    const std::string &choice = t.r->cfg().text(setting::coll_reduce);
    if (choice == "chain") return reduce_algo::chain;
    if (choice == "tree") return reduce_algo::tree;
    if (choice == "doubling") return reduce_algo::doubling;
    if (t.n() >= k_reduce_chain_min_ranks && bytes >= k_reduce_chain_min_bytes) return reduce_algo::chain;
    if (t.n() >= k_reduce_doubling_min_ranks && bytes < k_reduce_doubling_max_bytes) return reduce_algo::doubling;
    return reduce_algo::tree;
}

// The algorithm of allreduce of `bytes` on `t` (HGAS_COLL_ALLREDUCE). The auto cut-over between
// doubling and rsag is measured (docs/collectives.md, "Algorithm cut-overs"): from 16 KiB
// recursive halving + doubling beat recursive doubling on 4 ranks; below it the extra rounds
// cost more than the bytes they save. Direct (direct_chosen) runs where `dst` is symmetric and
// every member's heap of its segment is mapped here; auto takes it for device vectors, where
// every chunk through the scratch costs a put, a signal and a kernel (2 H100s: 8 GB/s at
// 64 MiB by rsag/doubling), and for host vectors from direct_host_min_bytes (below, its two
// signal rounds cost more than one round of doubling).
enum class allreduce_algo : uint64_t { doubling = 0, rsag = 1, direct = 2 };  // 3: direct's one kernel
constexpr size_t k_allreduce_rsag_min_bytes = size_t{16} << 10;
allreduce_algo allreduce_choice(team &t, void *dst, size_t bytes, mem::kind kd, sym_ref &dref) {
    if (direct_chosen(t, kd, bytes) && symmetric_at(*t.r, dst, bytes, dref) && direct_possible(t, dref.seg))
        return allreduce_algo::direct;
    const std::string &choice = t.r->cfg().text(setting::coll_allreduce);
    if (choice == "rsag") return allreduce_algo::rsag;
    if (choice == "doubling") return allreduce_algo::doubling;
    return t.n() >= 4 && bytes >= k_allreduce_rsag_min_bytes ? allreduce_algo::rsag : allreduce_algo::doubling;
}

// The host buffer of reduce's inner tree nodes and of the doubling reduce's non-roots, kept by
// the rank between calls and grown as needed. Taken per call, it was a chunk (128-256 KiB with
// the default scratch: at malloc's mmap threshold, so depending on the C library's state an
// mmap, page faults and an munmap) at every small reduce. Collectives of a rank run one at a
// time (stream-ordered ones too, from hgas_stream_sync), so one buffer serves them all.
struct host_acc {
    char *p = nullptr;
    size_t size = 0;
};
const char k_host_acc_key = 0;
status host_accumulator(core::rank &r, const char *op, size_t bytes, char *&out) {
    auto &att = r.attachments();
    auto it = att.find(&k_host_acc_key);
    host_acc *a;
    if (it != att.end()) {
        a = static_cast<host_acc *>(it->second.value);
    } else {
        a = new host_acc;
        att[&k_host_acc_key] = {a, [](void *v) {
                                    std::free(static_cast<host_acc *>(v)->p);
                                    delete static_cast<host_acc *>(v);
                                }};
    }
    if (a->size < bytes) {
        char *np = static_cast<char *>(std::malloc(bytes));
        if (!np) return fail(status::no_memory, "%s: no memory for %zu bytes of host scratch", op, bytes);
        std::free(a->p);
        a->p = np;
        a->size = bytes;
        ++stats(r).host_acc_allocs;
    }
    out = a->p;
    return status::ok;
}

status check_count(const char *op, size_t count, size_t esize, size_t &bytes) {
    if (count > SIZE_MAX / esize) return fail(status::invalid_arg, "%s: count %zu overflows", op, count);
    bytes = count * esize;
    return status::ok;
}

}  // namespace

// --- the rounds of allreduce (recursive doubling, or reduce-scatter + allgather) ----------

namespace {
// The rounds of allreduce over `d` (`count` elements of kind `kd`, this rank's vector on entry,
// the result on return): recursive doubling, or reduce-scatter + allgather (`rsag`). `sk` is
// the scratch kind (the same on every member), `fp` the collective's fingerprint and `args` its
// arguments for messages. Reduce runs it too for small vectors, the root's dst as `d`.
status reduce_rounds(team &t, const char *name, char *d, mem::kind kd, mem::kind sk, size_t count, hgas_dtype_t type,
                     hgas_op_t op, bool rsag, uint32_t fp, const char *args_fmt,
                     std::initializer_list<uint64_t> args) {
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    const size_t esize = dtype_size(type);
    // p2 = largest power of two <= n. Rank p2 + i (an "extra") first folds its vector into
    // rank i (slot fold_in) and at the end receives the result from it (slot fold_out);
    // ranks 0..p2-1 run the rounds, round k with partner me ^ 2^k in slot k. The lower rank's
    // operand is always the left one, so all ranks compute bit-identical results.
    // Doubling: each round exchanges the whole chunk and both partners combine it.
    // Reduce-scatter + allgather (rsag): round k of the reduce-scatter halves the part of the
    // chunk a rank holds -- it sends the half its partner keeps (the lower rank keeps the lower
    // half) and combines the half it keeps -- so after log2 p rounds each rank holds 1/p of the
    // chunk reduced; the allgather runs the rounds backwards, each rank sending all it holds and
    // copying in its partner's part. Each element is combined in the same tree as by doubling
    // (the same bits), in 2 log2 p rounds moving 2 (p - 1) / p of the chunk instead of log2 p
    // chunks. Channel k carries two messages per chunk (seq 2c: reduce-scatter, 2c + 1:
    // allgather), each at most half a vector chunk, so a vector chunk is two scratch chunks.
    const int rounds = log2_floor(n), p2 = 1 << rounds;
    const int fold_in = rounds, fold_out = rounds + 1;
    scratch_plan p;
    HGAS_TRY(plan_scratch(t, name, rounds + 2, esize, sk, p));
    p.dev_vec = kd != mem::kind::host;
    if (p.dev_vec) ++(p.on_device() ? stats(r).dev_reductions_device_scratch : stats(r).dev_reductions_host_scratch);
    const bool extra = me >= p2;
    const int partner_extra = me < n - p2 ? me + p2 : -1;

    session ss(t, fp, args_fmt, slot_words(rounds + 2), args);
    // Elements per vector chunk: a fold message carries a whole one, so rsag's larger chunks
    // (2 scratch chunks) apply only where no rank folds.
    const size_t vchunk = rsag && n == p2 ? 2 * p.chunk_elems : p.chunk_elems;
    const uint64_t nchunks = (count + vchunk - 1) / vchunk;
    const uint64_t round_msgs = rsag ? 2 * nchunks : nchunks;  // messages per channel k
    for (uint64_t c = 0; c < nchunks; ++c) {
        char *acc = d + c * vchunk * esize;
        const size_t elems = std::min<size_t>(vchunk, count - c * vchunk), len = elems * esize;
        if (extra) {
            const int low = me - p2;
            HGAS_TRY(send_chunk(ss, p, name, low, fold_in, acc, len, c));
            HGAS_TRY(recv_chunk(ss, name, fold_out, c));
            HGAS_TRY(local_copy(r, name, acc, p.slot(fold_out, c), len));
            HGAS_TRY(release_chunk(ss, low, fold_out, c, nchunks));
            continue;
        }
        if (partner_extra >= 0) {
            HGAS_TRY(recv_chunk(ss, name, fold_in, c));
            HGAS_TRY(combine(r, name, kd, acc, p.slot(fold_in, c), elems, type, op, false));
            HGAS_TRY(release_chunk(ss, partner_extra, fold_in, c, nchunks));
        }
        if (!rsag) {
            for (int k = 0; k < rounds; ++k) {
                const int partner = me ^ (1 << k);
                HGAS_TRY(send_chunk(ss, p, name, partner, k, acc, len, c));
                HGAS_TRY(recv_chunk(ss, name, k, c));
                HGAS_TRY(combine(r, name, kd, acc, p.slot(k, c), elems, type, op, me > partner));
                HGAS_TRY(release_chunk(ss, partner, k, c, nchunks));
            }
        } else {
            // [lo, hi): the elements of the chunk this rank holds; seg_*[k]: before round k.
            size_t lo = 0, hi = elems, seg_lo[32], seg_hi[32];
            for (int k = 0; k < rounds; ++k) {
                const int partner = me ^ (1 << k);
                const size_t mid = lo + (hi - lo) / 2;
                const bool lower = !(me & (1 << k));
                const size_t klo = lower ? lo : mid, khi = lower ? mid : hi;
                const size_t slo = lower ? mid : lo, shi = lower ? hi : mid;
                seg_lo[k] = lo, seg_hi[k] = hi;
                HGAS_TRY(send_chunk(ss, p, name, partner, k, acc + slo * esize, (shi - slo) * esize, 2 * c));
                HGAS_TRY(recv_chunk(ss, name, k, 2 * c));
                HGAS_TRY(combine(r, name, kd, acc + klo * esize, p.slot(k, 2 * c), khi - klo, type, op, me > partner));
                HGAS_TRY(release_chunk(ss, partner, k, 2 * c, round_msgs));
                lo = klo, hi = khi;
            }
            for (int k = rounds - 1; k >= 0; --k) {
                const int partner = me ^ (1 << k);
                // The partner holds the other part of what both held before round k.
                const size_t plo = lo == seg_lo[k] ? hi : seg_lo[k], phi = lo == seg_lo[k] ? seg_hi[k] : lo;
                HGAS_TRY(send_chunk(ss, p, name, partner, k, acc + lo * esize, (hi - lo) * esize, 2 * c + 1));
                HGAS_TRY(recv_chunk(ss, name, k, 2 * c + 1));
                HGAS_TRY(local_copy(r, name, acc + plo * esize, p.slot(k, 2 * c + 1), (phi - plo) * esize));
                HGAS_TRY(release_chunk(ss, partner, k, 2 * c + 1, round_msgs));
                lo = seg_lo[k], hi = seg_hi[k];
            }
        }
        if (partner_extra >= 0) HGAS_TRY(send_chunk(ss, p, name, partner_extra, fold_out, acc, len, c));
    }
    return status::ok;
}
}  // namespace

// --- reduce: binomial tree -----------------------------------------------------------------

status reduce(core::rank &r, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op, int root) {
    return reduce(world(r), dst, src, count, type, op, root);
}

status reduce(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op, int root) {
    const char *name = t.world ? "hgas_reduce" : "hgas_team_reduce";
    core::rank &r = *t.r;
    HGAS_TRY(check_root(t, name, root));
    HGAS_TRY(check_type_op(name, type, op));
    if (count == 0) return status::ok;
    const size_t esize = dtype_size(type);
    size_t bytes = 0;
    HGAS_TRY(check_count(name, count, esize, bytes));
    mem::kind ks, kd = mem::kind::host;
    HGAS_TRY(check_any_buf(r, name, src, bytes, "src", &ks));
    const int n = t.n(), me = t.me;
    if (me == root) HGAS_TRY(check_any_buf(r, name, dst, bytes, "dst", &kd));
    if (n == 1) return local_copy(r, name, dst, src, bytes);

    // Relative rank v. Tree: parent v - lowbit(v) (slot log2(lowbit(v)) of the parent),
    // children v + 2^k for 2^k < lowbit(v), each into my slot k; combined in ascending k.
    // Chain: parent v - 1, child v + 1, slot 0. Either way the order of combination is fixed by
    // (n, root, algorithm), and every rank picks the same algorithm (same n, size, setting).
    const int v = (me - root + n) % n;
    const reduce_algo algo = reduce_choice(t, bytes);
    const bool chain = algo == reduce_algo::chain;
    ++(algo == reduce_algo::chain ? stats(r).reduce_chain
       : algo == reduce_algo::tree ? stats(r).reduce_tree : stats(r).reduce_doubling);
    // Device vectors (by src, the vector every rank sends) go through the device scratch.
    const mem::kind sk = scratch_kind(t, ks);
    const uint32_t fp = fingerprint(c_reduce, static_cast<uint64_t>(root), count,
                                    static_cast<uint64_t>(sk) << 24 | static_cast<uint64_t>(algo) << 16 |
                                        static_cast<uint64_t>(type) << 8 | op);
    if (algo == reduce_algo::doubling) {
        // The allreduce's rounds over a vector of src's kind: the root's dst where it is of
        // that kind (else a buffer, copied out at the end), the kept host accumulator or a
        // local-heap buffer elsewhere. No inner node waits for its children before it can
        // send, and no member runs a collective ahead of the others.
        scratch_buf buf;
        char *w = nullptr;
        if (me == root && kd == ks) {
            w = static_cast<char *>(dst);
        } else if (ks == mem::kind::host) {
            HGAS_TRY(host_accumulator(r, name, bytes, w));
        } else {
            HGAS_TRY(buf.allocate(r, name, ks, bytes));
            w = buf.data();
        }
        HGAS_TRY(local_copy(r, name, w, src, bytes));
        HGAS_TRY(reduce_rounds(t, name, w, ks, sk, count, type, op, false, fp,
                               "root %llu, %llu elements of type %llu, op %llu",
                               {static_cast<uint64_t>(root), count, static_cast<uint64_t>(type),
                                static_cast<uint64_t>(op)}));
        return me == root && w != dst ? local_copy(r, name, dst, w, bytes) : status::ok;
    }
    const int nslots = chain ? 1 : log2_floor(n - 1) + 1;
    scratch_plan p;
    HGAS_TRY(plan_scratch(t, name, nslots, esize, sk, p));
    p.dev_vec = ks != mem::kind::host;
    if (p.dev_vec) ++(p.on_device() ? stats(r).dev_reductions_device_scratch : stats(r).dev_reductions_host_scratch);
    int parent = -1, myslot = -1, nchildren = 0;
    int child_rank[32], child_slot[32];
    if (chain) {
        if (v > 0) parent = (v - 1 + root) % n, myslot = 0;
        if (v + 1 < n) child_rank[nchildren] = (v + 1 + root) % n, child_slot[nchildren++] = 0;
    } else {
        for (int k = 0, mask = 1; mask < n; ++k, mask <<= 1) {
            if (v & mask) {
                parent = (v - mask + root) % n;
                myslot = k;
                break;
            }
            if (v + mask < n) {
                child_rank[nchildren] = (v + mask + root) % n;
                child_slot[nchildren++] = k;
            }
        }
    }

    session ss(t, fp, "root %llu, %llu elements of type %llu, op %llu", slot_words(nslots),
               {static_cast<uint64_t>(root), count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
    const char *s = static_cast<const char *>(src);
    char *d = static_cast<char *>(dst);
    // The accumulator: the root's dst; an inner node's private buffer of its src's kind, so
    // that device vectors are combined where they live. A root whose dst is of another kind
    // than the device scratch combines in a buffer of the scratch's kind and copies each
    // chunk out (the combine reads the scratch where it lives).
    // A host accumulator is the rank's kept buffer (host_accumulator); one of device memory
    // comes from the kind's local heap (no system call). Either holds one chunk, or the whole
    // vector where that is smaller.
    const bool root_tmp = me == root && nchildren && p.on_device() && kd != sk;
    scratch_buf acc_buf;
    char *acc_mem = nullptr;
    if ((me != root || root_tmp) && nchildren) {
        const mem::kind ka = root_tmp ? sk : ks;
        const size_t acc_bytes = std::min(p.chunk_bytes, bytes);
        if (ka == mem::kind::host) {
            HGAS_TRY(host_accumulator(r, name, acc_bytes, acc_mem));
        } else {
            HGAS_TRY(acc_buf.allocate(r, name, ka, acc_bytes));
            acc_mem = acc_buf.data();
        }
    }
    const mem::kind kacc = me == root && !root_tmp ? kd : root_tmp ? sk : ks;
    const uint64_t nchunks = (count + p.chunk_elems - 1) / p.chunk_elems;
    for (uint64_t c = 0; c < nchunks; ++c) {
        const size_t at = c * p.chunk_bytes;
        const size_t elems = std::min<size_t>(p.chunk_elems, count - c * p.chunk_elems), len = elems * esize;
        const char *out;
        char *acc = nullptr;
        if (me == root && !root_tmp) {
            acc = d + at;
            HGAS_TRY(local_copy(r, name, acc, s + at, len));
        } else if (nchildren) {
            acc = acc_mem;
            HGAS_TRY(local_copy(r, name, acc, s + at, len));
        }
        for (int i = 0; i < nchildren; ++i) {
            HGAS_TRY(recv_chunk(ss, name, child_slot[i], c));
            HGAS_TRY(combine(r, name, kacc, acc, p.slot(child_slot[i], c), elems, type, op, false));
            HGAS_TRY(release_chunk(ss, child_rank[i], child_slot[i], c, nchunks));
        }
        if (root_tmp) HGAS_TRY(local_copy(r, name, d + at, acc, len));
        out = acc ? acc : s + at;  // a leaf sends its src as it is
        if (parent >= 0) HGAS_TRY(send_chunk(ss, p, name, parent, myslot, out, len, c));
    }
    return status::ok;
}

// --- allreduce: recursive doubling, or recursive halving + doubling -------------------------

status allreduce(core::rank &r, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op) {
    return allreduce(world(r), dst, src, count, type, op);
}

status allreduce(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op) {
    const char *name = t.world ? "hgas_allreduce" : "hgas_team_allreduce";
    core::rank &r = *t.r;
    HGAS_TRY(check_type_op(name, type, op));
    if (count == 0) return status::ok;
    const size_t esize = dtype_size(type);
    size_t bytes = 0;
    HGAS_TRY(check_count(name, count, esize, bytes));
    mem::kind ks, kd;  // the vector is combined in dst, where dst lives
    HGAS_TRY(check_any_buf(r, name, src, bytes, "src", &ks));
    HGAS_TRY(check_any_buf(r, name, dst, bytes, "dst", &kd));
    const int n = t.n();
    if (n == 1) return local_copy(r, name, dst, src, bytes);
    sym_ref dref;
    const allreduce_algo algo = allreduce_choice(t, dst, bytes, kd, dref);
    if (algo == allreduce_algo::direct) {
        // The members read a symmetric src of dst's kind where it lies (no copy into dst first)
        // unless it overlaps dst; else the vector is copied into dst and read there.
        char *d = static_cast<char *>(dst);
        const char *s = static_cast<const char *>(src);
        sym_ref sref;
        const bool apart = s + bytes <= d || d + bytes <= s;
        const bool from_src = apart && ks == kd && symmetric_at(r, src, bytes, sref) && sref.seg == dref.seg;
        if (!from_src) HGAS_TRY(local_copy(r, name, dst, src, bytes));
        // Small device vectors in one kernel per member; the fingerprint names the algorithm, so
        // members that chose differently fail with a message instead of waiting for each other.
        const bool one_kernel = kernel_chosen(t, kd, bytes);
        // (allreduce_kernel_on_stream computes the kernel's the same way: one protocol.)
        const uint32_t fp = fingerprint(c_allreduce, count, uint64_t{dref.seg} << 24 |
                                                                (static_cast<uint64_t>(algo) + one_kernel) << 16 |
                                                                static_cast<uint64_t>(type) << 8 | op);
        if (one_kernel)
            return allreduce_kernel(t, name, d, s, kd, dref, from_src ? &sref : nullptr, count, type, op, fp);
        return allreduce_direct(t, name, d, s, kd, dref, from_src ? &sref : nullptr, count, type, op, fp);
    }
    HGAS_TRY(local_copy(r, name, dst, src, bytes));
    const bool rsag = algo == allreduce_algo::rsag;
    ++(rsag ? stats(r).allreduce_rsag : stats(r).allreduce_doubling);

    // Device vectors (by dst, where the vector is combined) go through the device scratch.
    const mem::kind sk = scratch_kind(t, kd);
    return reduce_rounds(t, name, static_cast<char *>(dst), kd, sk, count, type, op, rsag,
                         fingerprint(c_allreduce, count, static_cast<uint64_t>(sk) << 24 |
                                                             static_cast<uint64_t>(algo) << 16 |
                                                             static_cast<uint64_t>(type) << 8 | op),
                         "%llu elements of type %llu, op %llu",
                         {count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
}

}  // namespace hgas::coll
