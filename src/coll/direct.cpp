// Reductions that read the members' vectors where they lie (allreduce and reduce_scatter,
// algorithm "direct"). On one node every member's symmetric heap is mapped in this process:
// host heaps by shared memory, GPU heaps by CUDA IPC (a kernel of this rank's GPU loads a peer
// GPU's memory over NVLink or within the GPU). A member then combines its own part of the
// result straight from the others' vectors -- no scratch, no chunks, one signal per member
// and phase -- instead of passing the vector through the scratch in chunks, where every chunk
// costs a put, a signal, a wait and a kernel (about 20 us a chunk on an H100, 8 GB/s).
// README.md, "Algorithms and costs", has the protocol's argument.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "coll/coll.hpp"
#include "coll/devmem.hpp"
#include "coll/direct.hpp"
#include "coll/stats.hpp"
#include "gpu/gpu.hpp"
#include "rma/rma.hpp"

namespace hgas::coll::detail {

namespace {
// Where member i's segment `seg` begins as this process addresses it: host segments by the
// CPU, device segments by this rank's device. nullptr where it is not mapped here.
char *member_base(const team &t, int i, uint16_t seg) {
    const core::peer_segment *ps = t.r->segment(static_cast<uint32_t>(t.rank_of(i)), seg);
    if (!ps || !ps->size) return nullptr;
    return mem::is_device_segment(seg) ? ps->dev : ps->direct;
}

// Element range [lo, hi) of member i's part of a vector of `count` elements: n parts of whole
// 256-byte lines (the last ones shorter or empty), so that no two members write one line.
void part_of(size_t count, size_t esize, int n, int i, size_t &lo, size_t &hi) {
    const size_t line = 256 / esize;  // esize is 1, 2, 4 or 8
    const size_t lines = (count + line - 1) / line;
    const size_t per = (lines + static_cast<size_t>(n) - 1) / static_cast<size_t>(n) * line;
    lo = std::min(count, per * static_cast<size_t>(i));
    hi = std::min(count, lo + per);
}

// Bytes of a host part combined at a time: the accumulator's block and the inputs' stay in the
// core's caches while every member's block is combined into it, so the part crosses memory
// once (read each input, write the result) instead of once per member.
constexpr size_t host_block = 32 * 1024;

// acc[lo, hi) = own[lo, hi) op v_q[lo, hi) for q = me + 1, ..., me - 1 (mod n), member q's
// vector at its base + off[q]; `own` may be `acc` (nothing to copy). A fixed order for each
// part, so every result is the same on every rank and in every run. The ops are commutative
// (IEEE addition and multiplication too, bit for bit).
status combine_part(const team &t, batch &b, mem::kind k, char *acc, const char *own, uint16_t seg,
                    const std::vector<uint64_t> &off, size_t lo, size_t hi, size_t esize, hgas_dtype_t type,
                    hgas_op_t op) {
    const int n = t.n();
    auto input = [&](int j, size_t at) {
        const int q = (t.me + j) % n;
        return member_base(t, q, seg) + off[static_cast<size_t>(q)] + at * esize;
    };
    if (k == mem::kind::host) {
        const size_t step = host_block / esize;
        for (size_t at = lo; at < hi; at += step) {
            const size_t m = std::min(step, hi - at);
            if (own != acc) std::memcpy(acc + (at - lo) * esize, own + (at - lo) * esize, m * esize);
            for (int j = 1; j < n; ++j) HGAS_TRY(b.combine(acc + (at - lo) * esize, input(j, at), m, type, op, false));
        }
        return status::ok;
    }
    HGAS_TRY(b.copy(acc, own, (hi - lo) * esize));
    for (int j = 1; j < n; ++j) HGAS_TRY(b.combine(acc, input(j, lo), hi - lo, type, op, false));
    return status::ok;
}

// Publishes word `w` of this member (before the session's entry releases it).
void publish(const team &t, int w, uint64_t v) {
    __atomic_store_n(reinterpret_cast<uint64_t *>(t.r->own_base(mem::seg_symmetric) + t.word_off(w)), v,
                     __ATOMIC_RELAXED);
}

// Waits until every member has entered and reads its words `w` (with `mine` for this rank).
status enter_all(const session &ss, const char *name, int w, uint64_t mine, std::vector<uint64_t> &out) {
    const int n = ss.t.n();
    out.assign(static_cast<size_t>(n), mine);
    for (int q = 0; q < n; ++q) {
        if (q == ss.t.me) continue;
        HGAS_TRY(ss.wait_entered(q, name));
        HGAS_TRY(ss.fetch_word(q, w, out[static_cast<size_t>(q)]));
    }
    return status::ok;
}

// Reads word `w` of every member that has entered already (enter_all first).
status read_all(const session &ss, int w, uint64_t mine, std::vector<uint64_t> &out) {
    const int n = ss.t.n();
    out.assign(static_cast<size_t>(n), mine);
    for (int q = 0; q < n; ++q)
        if (q != ss.t.me) HGAS_TRY(ss.fetch_word(q, w, out[static_cast<size_t>(q)]));
    return status::ok;
}
}  // namespace

bool direct_chosen(const team &t, mem::kind k, size_t bytes) {
    const std::string &choice = t.r->cfg().text(setting::coll_allreduce);
    return choice == "direct" || (choice == "auto" && (k != mem::kind::host || bytes >= direct_host_min_bytes(t.n())));
}

bool kernel_chosen(const team &t, mem::kind k, size_t bytes) {
    if (k != mem::kind::cuda || t.n() < 2 || t.n() > gpu::device::team_kernel_members) return false;
    const size_t max = std::min<size_t>(t.r->cfg().bytes(setting::coll_kernel_max), gpu::device::team_kernel_max_bytes);
    if (bytes > max) return false;
    gpu::device *d = t.r->device(k);
    if (!d || !d->team_kernels()) return false;
    // Past 64 KiB a kernel has more blocks than members sharing one GPU (MPS) could keep on it
    // at once while they wait for each other: there only a GPU per member takes them.
    if (bytes > gpu::device::team_kernel_shared_gpu_max_bytes) {
        const core::rank &r = *t.r;
        for (int i = 0; i < t.n(); ++i)
            for (int j = 0; j < i; ++j) {
                const int p = t.ranks[static_cast<size_t>(i)], q = t.ranks[static_cast<size_t>(j)];
                if (r.topo().node_of[static_cast<size_t>(p)] == r.topo().node_of[static_cast<size_t>(q)] &&
                    r.gpu_of(p) == r.gpu_of(q))
                    return false;
            }
    }
    return true;
}

bool symmetric_at(core::rank &r, const void *p, size_t bytes, sym_ref &ref) {
    const int seg = p ? r.own_segment_of(p, bytes) : -1;
    if (seg != mem::seg_symmetric && seg != mem::seg_cuda_symmetric && seg != mem::seg_sim_symmetric) return false;
    const uint16_t sg = static_cast<uint16_t>(seg);
    const uint64_t off = static_cast<uint64_t>(static_cast<const char *>(p) - r.own_base(sg));
    if (off < r.heap(sg).user_base()) return false;
    ref.seg = sg;
    ref.off = off;
    return true;
}

bool direct_possible(const team &t, uint16_t seg) {
    for (int i = 0; i < t.n(); ++i)
        if (!member_base(t, i, seg)) return false;
    return true;
}

// Allreduce. Each member publishes where its vector is (w_src_off: its src where that is
// symmetric in dst's segment and apart from dst; else its dst, into which it has copied src)
// and where its dst is (w_vec_off). Then:
// 1. wait until every member has entered (its vector is where it says);
// 2. combine my part of every member's vector into my dst, then add 1 to every member's
//    w_data word ("my part is final");
// 3. when every member's part is final, copy each member's part from its dst into mine, then
//    add 1 to every member's w_data + 1 ("I have read your dst");
// 4. return when every member has read mine (the user may then write it).
// No two members write one place: member q writes only part q of its own dst in step 2 and
// only the other parts of its own dst in step 3, after it has read nothing more from them --
// member p reads part p of q's vector in step 2, before p's step-2 signal, and part q of q's
// dst in step 3, after q's. A vector that is a src nobody writes during the collective.
status allreduce_direct(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &dref,
                        const sym_ref *sref, size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp) {
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    const size_t esize = dtype_size(type);
    ++stats(r).allreduce_direct;
    const char *own = sref ? s : d;
    publish(t, w_vec_off, dref.off);
    publish(t, w_src_off, sref ? sref->off : dref.off);
    session ss(t, fp, "%llu elements of type %llu, op %llu", bit(w_data) | bit(w_data + 1),
               {count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
    std::vector<uint64_t> doff, voff;
    HGAS_TRY(enter_all(ss, name, w_vec_off, dref.off, doff));
    HGAS_TRY(read_all(ss, w_src_off, sref ? sref->off : dref.off, voff));
    batch b(r, name, kd);
    size_t lo, hi;
    part_of(count, esize, n, me, lo, hi);
    HGAS_TRY(combine_part(t, b, kd, d + lo * esize, own + lo * esize, dref.seg, voff, lo, hi, esize, type, op));
    HGAS_TRY(b.wait());
    for (int q = 0; q < n; ++q)
        if (q != me)
            HGAS_TRY(rma::signal_update(r, ss.peer_word(q, w_data), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    HGAS_TRY(ss.wait_count(w_data, static_cast<uint64_t>(n - 1), name));
    for (int q = 0; q < n; ++q) {
        if (q == me) continue;
        size_t qlo, qhi;
        part_of(count, esize, n, q, qlo, qhi);
        HGAS_TRY(b.copy(d + qlo * esize, member_base(t, q, dref.seg) + doff[static_cast<size_t>(q)] + qlo * esize,
                        (qhi - qlo) * esize));
    }
    HGAS_TRY(b.wait());
    for (int q = 0; q < n; ++q)
        if (q != me)
            HGAS_TRY(rma::signal_update(r, ss.peer_word(q, w_data + 1), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    return ss.wait_count(w_data + 1, static_cast<uint64_t>(n - 1), name);
}

namespace {
// Whether every member of `t` is a rank thread of this process (ranks of one process are
// consecutive): then they can meet on the host (gpu::device::team_group_call).
bool in_process(const team &t) {
    core::rank &r = *t.r;
    const int per = r.ranks_per_process();
    if (per < 2 || t.n() < 2) return false;
    for (int q = 0; q < t.n(); ++q)
        if (t.rank_of(q) / per != r.me() / per) return false;
    return true;
}
// Which call of which team a meeting is: member 0's job rank and the slot name the team (a
// rank holds a slot in one live team at a time, but slots repeat across teams: the rows of a
// 2-D split), then blocking or not and the call's number among those.
uint64_t group_key(const team &t, bool blocking, uint64_t epoch) {
    return static_cast<uint64_t>(t.rank_of(0) & 0xfffff) << 44 | static_cast<uint64_t>(t.slot & 0xff) << 36 |
           static_cast<uint64_t>(blocking) << 35 | (epoch & ((uint64_t{1} << 35) - 1));
}

// What a rank thread does while it waits at a meeting of its team (team_meet.hpp), as
// rank::wait does between polls: the engine's progress and a look at whether the job is still
// alive. A stream-ordered call meets before it has done anything (`between_operations`): that
// wait is a safe point, where the engine also runs the device proxy's requests (another
// member's stream may need one before it reaches the call) and, at HGAS_THREAD_MULTIPLE, the
// rank's other threads get the API lock. A blocking collective meets in the middle of its
// operation (its session has begun), where the data collectives' waits keep the lock
// (docs/threads.md): there, progress only.
std::function<status()> meeting_progress(core::rank &r, bool between_operations) {
    if (!between_operations) return [&r]() -> status { return r.poll(); };
    return [&r]() -> status {
        core::safe_point sp(r);
        HGAS_TRY(r.poll());
        if (r.thread_level() == HGAS_THREAD_MULTIPLE) r.yield_api_lock();
        return status::ok;
    };
}

// The arguments of the team kernel for this member: its vector at `in_off` of `seg` (its src
// where that is symmetric in dst's segment and apart from dst, else dst), every member's
// segment and flag block (internal().coll_kernel_flags, one block of team_kernel_flag_words per
// team slot, cleared when the team is destroyed) as this GPU addresses them, and the team's
// next epoch of blocking or stream-ordered kernels.
gpu::device::team_reduce kernel_args(team &t, bool blocking, char *d, uint16_t seg, uint64_t in_off, size_t count,
                                     hgas_dtype_t type, hgas_op_t op, uint32_t fp) {
    static_assert(core::internal_objects::coll_kernel_team_words == gpu::device::team_kernel_flag_words);
    static_assert(core::internal_objects::coll_team_slots == gpu::device::team_kernel_slots);
    core::rank &r = *t.r;
    gpu::device::team_reduce a;
    a.dst = d;
    a.in_off = in_off;
    a.fp = fp & desc_mask;
    a.n = t.n();
    a.me = t.me;
    a.slot = t.slot;
    a.count = count;
    a.type = static_cast<int>(type);
    a.op = static_cast<int>(op);
    a.blocking = blocking;
    a.epoch = blocking ? ++t.blocking_epoch : ++t.kernel_epoch;
    a.timeout_ns = static_cast<uint64_t>(r.timeout() * 1e9);
    // Blocking calls of rank threads meet on the host first (stream-ordered ones met before
    // they came here: group_on_stream).
    a.in_process = blocking && in_process(t);
    a.group_key = group_key(t, true, a.epoch);
    if (a.in_process) a.progress = meeting_progress(r, false);
    const uint64_t flags = r.internal().coll_kernel_flags +
                           static_cast<uint64_t>(t.slot) * gpu::device::team_kernel_flag_words * 8;
    for (int q = 0; q < a.n; ++q) {
        a.base[q] = q == a.me ? r.own_base(seg) : member_base(t, q, seg);
        char *fb = q == a.me ? r.own_base(mem::seg_cuda_symmetric) : member_base(t, q, mem::seg_cuda_symmetric);
        a.flags[q] = reinterpret_cast<uint64_t *>(fb + flags);
    }
    return a;
}

// What a kernel reported (gpu::device::team_report's fields), as a message; `who` names the call.
status kernel_failed(core::rank &r, const std::string &who, int w) {
    const int q = (w & 0xff) - 1;
    const int slot = w >> gpu::device::team_report_slot_shift;
    switch (w & gpu::device::team_why_mask) {
    case gpu::device::team_mismatch:
        return fail(status::invalid_arg, "%s: rank %d's kernel found that member %d of its team (slot %d) called the "
                    "collective with other arguments (another collective, count, type, op or root): every member must "
                    "pass the same", who.c_str(), r.me(), q, slot);
    case gpu::device::team_out_of_step:
        return fail(status::internal, "%s: rank %d's kernel found member %d of its team (slot %d) at a later call: the "
                    "members are out of step after a collective kernel of the team failed or timed out",
                    who.c_str(), r.me(), q, slot);
    }
    return fail(status::timeout, "%s: rank %d's kernel waited %.0f s (HGAS_TIMEOUT) for member %d of its team (slot "
                "%d): is that rank stuck, or not calling the matching collective?", who.c_str(), r.me(), r.timeout(), q,
                slot);
}
// The fingerprint of an allreduce by the kernel (the same as allreduce() computes for it).
uint32_t kernel_fingerprint(size_t count, uint16_t seg, hgas_dtype_t type, hgas_op_t op) {
    return fingerprint(c_allreduce, count, uint64_t{seg} << 24 | uint64_t{3} << 16 | static_cast<uint64_t>(type) << 8 | op);
}
}  // namespace

// Allreduce by one kernel per member (gpu::device::team_allreduce, whose comment has the
// protocol between the members' kernels). The host enters as allreduce_direct does: it waits
// until every member has entered (a member that chose another algorithm or other arguments
// fails with a message: the fingerprint names this one) and reads where each member's vector
// lies, so the kernel skips its own entry step (measured on two H100s: 13.7-14.5 us against
// 17.5-18.5 with the kernels' entry, a release store and a round trip more). Then one launch
// and one wait.
status allreduce_kernel(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &dref,
                        const sym_ref *sref, size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp) {
    core::rank &r = *t.r;
    ++stats(r).allreduce_direct;
    ++stats(r).allreduce_kernel;
    publish(t, w_src_off, sref ? sref->off : dref.off);
    session ss(t, fp, "%llu elements of type %llu, op %llu", 0,
               {count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
    std::vector<uint64_t> voff;
    HGAS_TRY(enter_all(ss, name, w_src_off, sref ? sref->off : dref.off, voff));
    gpu::device::team_reduce a = kernel_args(t, true, d, dref.seg, sref ? sref->off : dref.off, count, type, op, fp);
    for (int q = 0; q < a.n; ++q) a.in[q] = q == t.me ? (sref ? s : d) : a.base[q] + voff[static_cast<size_t>(q)];
    gpu::device *dev = r.device(kd);
    HGAS_TRY_ASSIGN(gpu::ticket tk, dev->team_allreduce(a, 0, false, nullptr));
    HGAS_TRY(wait_ticket(r, name, dev, tk));
    if (const int w = dev->team_kernel_timed_out(gpu::device::report_blocking))
        return kernel_failed(r, std::string(name) + " (" + t.describe() + ")", w);
    return status::ok;
}

namespace {
// The offset of the team's staging block in the cuda heap (rank.hpp: internal_objects), where
// an alltoall or reduce_scatter member's private src goes; 0 where the team's slot has none. Slots are alike
// on every member (the flag words are found by them too).
uint64_t staging_of(const team &t) {
    const uint64_t base = t.r->internal().coll_kernel_staging;
    if (!base || t.slot < 0 || t.slot >= core::internal_objects::coll_kernel_staging_slots) return 0;
    return base + static_cast<uint64_t>(t.slot) * core::internal_objects::coll_kernel_staging_bytes;
}

// The stream-ordered collective `what` as the team kernel on `stream` where it runs (see
// direct.hpp): `out` bytes of dst (symmetric, mapped for every member), this member's vector
// of `vbytes` (alltoall, reduce_scatter: n blocks of them) at `src`, which goes to dst +
// `own_at` first unless it is symmetric in dst's segment and apart from dst (or already there).
// Alltoall and reduce_scatter put it in the team's staging block instead, which the kernel never
// writes: a block of the kernel waits only for the peers' same block, and those read this
// member's vector at other offsets than that block writes (block `me` of it), so a vector in dst
// could be overwritten before a peer's other block has read it. The choice depends only on what
// every member has alike (dst's kind and heap, the sizes, the team), never on src.
result<bool> kernel_on_stream(team &t, int what, void *dst, const void *src, size_t count, hgas_dtype_t type,
                              hgas_op_t op, int root, size_t own_at, uint32_t fp, void *stream) {
    core::rank &r = *t.r;
    const size_t esize = dtype_size(type);
    // A broadcast's src matters on its root only (NULL elsewhere is fine).
    const bool has_src = what != gpu::device::team_broadcast_op || t.me == root;
    if (!esize || !count || t.n() < 2 || !dst || (has_src && !src) || !r.has_devices() ||
        count > (SIZE_MAX >> 8) / esize)
        return false;  // the queued path says what is wrong
    const size_t vbytes = count * esize;
    const bool a2a = what == gpu::device::team_alltoall_op, rs = what == gpu::device::team_reduce_scatter_op;
    const size_t n = static_cast<size_t>(t.n());
    const size_t out = what == gpu::device::team_fcollect_op || a2a ? vbytes * n : vbytes;
    const size_t in = a2a || rs ? vbytes * n : vbytes;  // this member's vector
    const mem::kind kd = r.kind_of(dst, out);
    sym_ref dref;
    if (kd == mem::kind::host || !kernel_chosen(t, kd, std::max(in, out)) || !symmetric_at(r, dst, out, dref) ||
        !direct_possible(t, dref.seg))
        return false;
    // HGAS_COLL_ALLREDUCE also picks reduce_scatter's algorithm (docs/collectives.md)
    if ((what == gpu::device::team_allreduce_op || rs) && !direct_chosen(t, kd, in)) return false;
    const uint64_t staging = rs || a2a ? staging_of(t) : 0;
    if ((rs || a2a) &&
        (!staging || dref.seg != mem::seg_cuda_symmetric || in > core::internal_objects::coll_kernel_staging_bytes))
        return false;
    char *d = static_cast<char *>(dst);
    const char *s = static_cast<const char *>(src);
    sym_ref sref;
    const bool apart = s + in <= d || d + out <= s;
    const bool from_src =
        has_src && apart && r.kind_of(src, in) == kd && symmetric_at(r, src, in, sref) && sref.seg == dref.seg;
    const uint64_t in_off = from_src ? sref.off : rs || a2a ? staging : dref.off + own_at;
    gpu::device::team_reduce a = kernel_args(t, false, d, dref.seg, in_off, count, type, op, fp);
    a.what = what;
    a.root = root;
    a.copy_src = from_src || !has_src ? nullptr : src;
    a.copy_to = r.own_base(dref.seg) + in_off;
    a.copy_bytes = in;
    HGAS_TRY(r.device(kd)->team_allreduce(a, 0, true, stream).error());
    return true;
}
}  // namespace

result<bool> allreduce_kernel_on_stream(team &t, const char *name, void *dst, const void *src, size_t count,
                                        hgas_dtype_t type, hgas_op_t op, void *stream) {
    (void)name;
    sym_ref dref;
    const size_t esize = dtype_size(type);
    uint16_t seg = 0;
    if (esize && dst && symmetric_at(*t.r, dst, count * esize, dref)) seg = dref.seg;
    HGAS_TRY_ASSIGN(bool run, kernel_on_stream(t, gpu::device::team_allreduce_op, dst, src, count, type, op, 0, 0,
                                               kernel_fingerprint(count, seg, type, op), stream));
    if (run) ++stats(*t.r).allreduce_kernel;
    return run;
}

result<bool> broadcast_kernel_on_stream(team &t, void *dst, const void *src, size_t bytes, int root, void *stream) {
    if (root < 0 || root >= t.n()) return false;
    HGAS_TRY_ASSIGN(bool run, kernel_on_stream(t, gpu::device::team_broadcast_op, dst, src, bytes, HGAS_UINT8,
                                               HGAS_OP_SUM, root, 0,
                                               fingerprint(c_broadcast, bytes, static_cast<uint64_t>(root), 3), stream));
    if (run) ++stats(*t.r).bcast_kernel;
    return run;
}

result<bool> fcollect_kernel_on_stream(team &t, void *dst, const void *src, size_t bytes, void *stream) {
    HGAS_TRY_ASSIGN(bool run, kernel_on_stream(t, gpu::device::team_fcollect_op, dst, src, bytes, HGAS_UINT8,
                                               HGAS_OP_SUM, 0, bytes * static_cast<size_t>(t.me),
                                               fingerprint(c_fcollect, bytes, 3), stream));
    if (run) ++stats(*t.r).fcollect_kernel;
    return run;
}

status alltoall_overlap(const team &t, const char *name, const void *dst, const void *src, size_t bytes) {
    const size_t total = bytes * static_cast<size_t>(t.n());
    const char *d = static_cast<const char *>(dst), *s = static_cast<const char *>(src);
    if (bytes && total / bytes == static_cast<size_t>(t.n()) && d && s && s < d + total && d < s + total)
        return fail(status::invalid_arg, "%s: src and dst overlap; alltoall cannot run in place", name);
    return status::ok;
}

// Reduce-scatter: a src that is not symmetric in dst's heap and apart from dst goes into the
// team's staging block first (dst, one block, could not hold it anyway). The next call's copy
// comes after this kernel on the stream, which ends after every peer's done.
result<bool> reduce_scatter_kernel_on_stream(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type,
                                             hgas_op_t op, void *stream) {
    // dst overlapping src other than as this member's block: the queued path says so (vcoll.cpp)
    const size_t esize = dtype_size(type), n = static_cast<size_t>(t.n());
    if (esize && count && count <= (SIZE_MAX >> 8) / esize / n && dst && src) {
        const size_t block = count * esize;
        const char *d = static_cast<const char *>(dst), *s = static_cast<const char *>(src);
        if (d != s + block * static_cast<size_t>(t.me) && d < s + block * n && s < d + block) return false;
    }
    const uint64_t extra = uint64_t{4} << 16 | static_cast<uint64_t>(type) << 8 | static_cast<uint64_t>(op);
    HGAS_TRY_ASSIGN(bool run, kernel_on_stream(t, gpu::device::team_reduce_scatter_op, dst, src, count, type, op, 0,
                                               0, fingerprint(c_reduce_scatter, count, extra), stream));
    if (run) ++stats(*t.r).reduce_scatter_kernel;
    return run;
}

// Alltoall: a private src goes into the team's staging block first (as reduce_scatter's; see
// kernel_on_stream for why not into dst). The next call's copy comes after this kernel on the
// stream, and this kernel ends only after every peer's done.
result<bool> alltoall_kernel_on_stream(team &t, void *dst, const void *src, size_t bytes, void *stream) {
    HGAS_TRY_ASSIGN(bool run, kernel_on_stream(t, gpu::device::team_alltoall_op, dst, src, bytes, HGAS_UINT8,
                                               HGAS_OP_SUM, 0, 0, fingerprint(c_alltoall, bytes, 3), stream));
    if (run) ++stats(*t.r).alltoall_kernel;
    return run;
}

bool in_process_group(const team &t) { return in_process(t) && t.n() <= gpu::device::team_group_members; }

result<bool> group_on_stream(team &t, const char *name, int what, void *dst, const void *src, size_t count,
                             hgas_dtype_t type, hgas_op_t op, int root, void *stream, status prior,
                             const std::string &prior_msg) {
    core::rank &r = *t.r;
    if (!in_process_group(t)) return false;
    gpu::device *dev = r.device(mem::kind::cuda);
    if (!dev) return false;
    // This member's own argument errors: it meets all the same (so that the team's next call
    // is the same meeting on every member) and then returns its error; the members that
    // passed other arguments learn it from the meeting.
    status own = prior;
    std::string own_msg = prior_msg;
    const bool reduction = what == gpu::device::team_allreduce_op || what == gpu::device::team_reduce_op ||
                           what == gpu::device::team_reduce_scatter_op;
    if (own == status::ok) {
        if (reduction) own = check_type_op(name, type, op);
        if (own == status::ok && (root < 0 || root >= t.n()))
            own = fail(status::invalid_arg, "%s: root %d is not a member of the team (members 0 to %d)", name, root,
                       t.n() - 1);
        if (own != status::ok) own_msg = last_error();
    }
    const size_t n = static_cast<size_t>(t.n()), esize = own == status::ok ? dtype_size(type) : 0;
    // Bytes of this member's vector and output (0: the member has none).
    const bool scatter = what == gpu::device::team_reduce_scatter_op, a2a = what == gpu::device::team_alltoall_op;
    const bool has_in = what != gpu::device::team_barrier_op && (what != gpu::device::team_broadcast_op || t.me == root);
    const bool has_out = what != gpu::device::team_barrier_op && (what != gpu::device::team_reduce_op || t.me == root);
    const size_t v = esize && count <= (SIZE_MAX >> 8) / esize ? count * esize : 0;
    const size_t in_bytes = scatter || a2a ? v * n : v;
    const size_t out_bytes = what == gpu::device::team_fcollect_op || a2a ? v * n : v;
    gpu::device::team_group_call c;
    c.what = what;
    c.root = root;
    c.n = t.n();
    c.me = t.me;
    c.slot = t.slot;
    c.count = count;
    c.type = static_cast<int>(type);
    c.op = static_cast<int>(op);
    c.in = has_in ? src : nullptr;
    c.out = has_out ? dst : nullptr;
    c.valid = own == status::ok;
    // The one kernel reads and writes device memory only; anything else (and any argument
    // error the other paths report) takes the other paths, on every member alike.
    // Broadcast, fcollect and alltoall want a symmetric dst on every path (hgas.h), so that a
    // program runs alike with rank processes: the queue says so where it is not.
    const bool copy = what == gpu::device::team_broadcast_op || what == gpu::device::team_fcollect_op || a2a;
    sym_ref ref;
    c.usable = c.valid && (what == gpu::device::team_barrier_op ||
                           (v > 0 && (!has_in || (src && r.kind_of(src, in_bytes) == mem::kind::cuda)) &&
                            (!has_out || (dst && r.kind_of(dst, out_bytes) == mem::kind::cuda)) &&
                            (!copy || symmetric_at(r, dst, out_bytes, ref))));
    c.key = group_key(t, false, ++t.group_epoch);
    c.timeout_s = r.timeout();
    c.name = name;
    c.progress = meeting_progress(r, true);
    auto ran = dev->team_group(c, 0, true, stream);
    if (own != status::ok) return fail(own, "%s", own_msg.c_str());  // its own error before the meeting's
    if (!ran.ok()) return ran.error();
    if (*ran == gpu::device::group_ran::other_paths) return false;
    if (*ran == gpu::device::group_ran::mismatch) return true;  // the stream's sync reports it
    auto &st = stats(r);
    ++st.group_kernel;
    if (what == gpu::device::team_allreduce_op) ++st.allreduce_kernel;
    if (what == gpu::device::team_broadcast_op) ++st.bcast_kernel;
    if (what == gpu::device::team_fcollect_op) ++st.fcollect_kernel;
    if (what == gpu::device::team_alltoall_op) ++st.alltoall_kernel;
    if (what == gpu::device::team_reduce_scatter_op) ++st.reduce_scatter_kernel;
    return true;
}

status kernel_stream_status(core::rank &r) {
    gpu::device *dev = r.device(mem::kind::cuda);
    if (!dev) return status::ok;
    const int w = dev->team_kernel_timed_out(gpu::device::report_stream);
    return w ? kernel_failed(r, "a stream-ordered collective kernel (allreduce, broadcast, fcollect, alltoall or "
                                "reduce_scatter)", w)
             : status::ok;
}

// Reduce-scatter: block `me` of every member's src (symmetric, at `sref`) combined into dst.
// Members only read each other's src, which nobody writes but where dst is a member's own
// block of it (dst == src + me * count): that block is read by nobody else. So: wait until
// every member has entered, combine, tell every member "I have read your src", and return
// when every member has read mine.
status reduce_scatter_direct(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &sref,
                             size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp) {
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    const size_t esize = dtype_size(type), block = count * esize;
    ++stats(r).reduce_scatter_direct;
    publish(t, w_src_off, sref.off);
    session ss(t, fp, "%llu elements of type %llu, op %llu", bit(w_data),
               {count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
    std::vector<uint64_t> off;
    HGAS_TRY(enter_all(ss, name, w_src_off, sref.off, off));
    for (uint64_t &o : off) o += block * static_cast<uint64_t>(me);  // block me of every member's src
    batch b(r, name, kd);
    HGAS_TRY(combine_part(t, b, kd, d, s + block * static_cast<size_t>(me), sref.seg, off, 0, count, esize, type, op));
    HGAS_TRY(b.wait());
    for (int q = 0; q < n; ++q)
        if (q != me)
            HGAS_TRY(rma::signal_update(r, ss.peer_word(q, w_data), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    return ss.wait_count(w_data, static_cast<uint64_t>(n - 1), name);
}

}  // namespace hgas::coll::detail
