// Reductions that read the members' vectors where they lie (allreduce and reduce_scatter,
// algorithm "direct"). On one node every member's symmetric heap is mapped in this process:
// host heaps by shared memory, GPU heaps by CUDA IPC (a kernel of this rank's GPU loads a peer
// GPU's memory over NVLink or within the GPU). A member then combines its own part of the
// result straight from the others' vectors -- no scratch, no chunks, one signal per member
// and phase -- instead of passing the vector through the scratch in chunks, where every chunk
// costs a put, a signal, a wait and a kernel (about 20 us a chunk on an H100, 8 GB/s).
// README.md, "Algorithms and costs", has the protocol's argument.
#include <algorithm>
#include <string>
#include <vector>

#include "coll/coll.hpp"
#include "coll/devmem.hpp"
#include "coll/direct.hpp"
#include "coll/stats.hpp"
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

// Combines elements [lo, hi) of every member's vector (member q's at its base + off[q]) into
// `acc`, which holds this member's own elements: acc = acc op v_q for q = me + 1, ..., me - 1
// (mod n), a fixed order for each part, so every result is the same on every rank and in
// every run. The ops are commutative (IEEE addition and multiplication too, bit for bit).
status combine_part(const team &t, batch &b, char *acc, uint16_t seg, const std::vector<uint64_t> &off, size_t lo,
                    size_t hi, size_t esize, hgas_dtype_t type, hgas_op_t op) {
    const int n = t.n();
    for (int j = 1; j < n; ++j) {
        const int q = (t.me + j) % n;
        HGAS_TRY(b.combine(acc, member_base(t, q, seg) + off[static_cast<size_t>(q)] + lo * esize, hi - lo, type, op,
                           false));
    }
    return status::ok;
}

// Publishes where this member's vector lies in its segment (w_vec_off, before the session's
// entry releases it): members may pass different symmetric buffers, as with any memory.
void publish_offset(const team &t, uint64_t off) {
    __atomic_store_n(reinterpret_cast<uint64_t *>(t.r->own_base(mem::seg_symmetric) + t.word_off(w_vec_off)), off,
                     __ATOMIC_RELAXED);
}

// Waits until every member has entered and reads where each one's vector lies.
status enter_all(const session &ss, const char *name, uint64_t mine, std::vector<uint64_t> &off) {
    const int n = ss.t.n();
    off.assign(static_cast<size_t>(n), mine);
    for (int q = 0; q < n; ++q) {
        if (q == ss.t.me) continue;
        HGAS_TRY(ss.wait_entered(q, name));
        HGAS_TRY(ss.fetch_word(q, w_vec_off, off[static_cast<size_t>(q)]));
    }
    return status::ok;
}
}  // namespace

bool direct_chosen(const team &t, mem::kind k, size_t bytes) {
    const std::string &choice = t.r->cfg().text(setting::coll_allreduce);
    return choice == "direct" || (choice == "auto" && (k != mem::kind::host || bytes >= direct_host_min_bytes(t.n())));
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

// Allreduce, every member's dst holding its own vector (the caller copied src there):
// 1. wait until every member has entered (its dst holds its vector);
// 2. combine my part of every member's dst into my dst, then add 1 to every member's
//    w_data word ("my part is final");
// 3. when every member's part is final, copy each member's part from its dst into mine, then
//    add 1 to every member's w_data + 1 ("I have read your dst");
// 4. return when every member has read mine (the user may then write it).
// No two members write one place: member q writes only part q of its own dst in step 2 and
// only the other parts of its own dst in step 3, after it has read nothing more from them --
// member p reads part p of q's dst in step 2, before p's step-2 signal, and part q in step 3,
// after q's.
status allreduce_direct(team &t, const char *name, char *d, mem::kind kd, const sym_ref &dref, size_t count,
                        hgas_dtype_t type, hgas_op_t op, uint32_t fp) {
    core::rank &r = *t.r;
    const int n = t.n(), me = t.me;
    const size_t esize = dtype_size(type);
    ++stats(r).allreduce_direct;
    publish_offset(t, dref.off);
    session ss(t, fp, "%llu elements of type %llu, op %llu", bit(w_data) | bit(w_data + 1),
               {count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
    std::vector<uint64_t> off;
    HGAS_TRY(enter_all(ss, name, dref.off, off));
    batch b(r, name, kd);
    size_t lo, hi;
    part_of(count, esize, n, me, lo, hi);
    HGAS_TRY(combine_part(t, b, d + lo * esize, dref.seg, off, lo, hi, esize, type, op));
    HGAS_TRY(b.wait());
    for (int q = 0; q < n; ++q)
        if (q != me)
            HGAS_TRY(rma::signal_update(r, ss.peer_word(q, w_data), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    HGAS_TRY(ss.wait_count(w_data, static_cast<uint64_t>(n - 1), name));
    for (int q = 0; q < n; ++q) {
        if (q == me) continue;
        size_t qlo, qhi;
        part_of(count, esize, n, q, qlo, qhi);
        HGAS_TRY(b.copy(d + qlo * esize, member_base(t, q, dref.seg) + off[static_cast<size_t>(q)] + qlo * esize,
                        (qhi - qlo) * esize));
    }
    HGAS_TRY(b.wait());
    for (int q = 0; q < n; ++q)
        if (q != me)
            HGAS_TRY(rma::signal_update(r, ss.peer_word(q, w_data + 1), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    return ss.wait_count(w_data + 1, static_cast<uint64_t>(n - 1), name);
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
    publish_offset(t, sref.off);
    session ss(t, fp, "%llu elements of type %llu, op %llu", bit(w_data),
               {count, static_cast<uint64_t>(type), static_cast<uint64_t>(op)});
    std::vector<uint64_t> off;
    HGAS_TRY(enter_all(ss, name, sref.off, off));
    for (uint64_t &o : off) o += block * static_cast<uint64_t>(me);  // block me of every member's src
    batch b(r, name, kd);
    HGAS_TRY(b.copy(d, s + block * static_cast<size_t>(me), block));
    HGAS_TRY(combine_part(t, b, d, sref.seg, off, 0, count, esize, type, op));
    HGAS_TRY(b.wait());
    for (int q = 0; q < n; ++q)
        if (q != me)
            HGAS_TRY(rma::signal_update(r, ss.peer_word(q, w_data), HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
    return ss.wait_count(w_data, static_cast<uint64_t>(n - 1), name);
}

}  // namespace hgas::coll::detail
