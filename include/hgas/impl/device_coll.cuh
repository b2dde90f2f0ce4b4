// impl/device_coll.cuh — collectives called from kernels: a team barrier, broadcast, fcollect
// and reductions (sum, prod, min, max) to every member, at thread, warp or block scope (declared
// and documented in hgas/hgas_device.cuh; the arithmetic is in impl/device_coll_plan.h). Built
// of the device API's put_signal, signal_op and waits, so each takes the direct path (stores
// into mapped peers) or the proxy as those do.
//
// Protocol. Every word of a workspace only grows. A collective starts with the team barrier
// (dissemination on the workspace's words, counted by this rank's barrier counter): once a rank
// has passed it, every member has finished its previous collective on the workspace, so its
// data slots and the members' broadcast destinations are free. Then each member counts what it
// receives (broadcast data, reduction chunks) in its own counters and waits for the signals to
// reach them. Reductions gather every member's chunk into every member's slot (one put_signal
// per peer) and combine the slots in member order, so every member computes bit-identical
// results, whatever the scope or the arrival order.
#pragma once

#include <hgas/impl/device_coll_plan.h>
#include <hgas/impl/device_sync.cuh>

namespace hgas {
namespace device {
namespace detail {

// This rank's counter `i` of the workspace (only the calling group's leader touches it).
__device__ __forceinline__ uint64_t *ws_counter(const coll_workspace &w, int i) {
    return reinterpret_cast<uint64_t *>(static_cast<char *>(w.base) + coll_plan::counters_off) + i;
}
__device__ __forceinline__ uint64_t *ws_word(const coll_workspace &w, size_t off) {
    return reinterpret_cast<uint64_t *>(static_cast<char *>(w.base) + off);
}

// Leader only: whether this rank may run a collective of `t` on `w`, recording the error if not
// (a rank outside the team, a team outside the job, a workspace outside the symmetric heaps or
// too small for the team). `need_slots`: the reduction's data slots are used.
__device__ __forceinline__ bool coll_check(const ctx &c, team t, const coll_workspace &w, bool need_slots) {
    if (!coll_plan::valid(t, c.n) || coll_plan::index_of(t, c.me) < 0) {
        record_error(c, HGAS_DEVICE_ERR_BAD_COLL, c.me, HGASI_COLL_BAD_TEAM);
        return false;
    }
    if (w.bytes < coll_plan::header_bytes || (need_slots && coll_plan::slot_bytes(w.bytes, t.size) == 0)) {
        record_error(c, HGAS_DEVICE_ERR_BAD_COLL, c.me, HGASI_COLL_BAD_WORKSPACE);
        return false;
    }
    const target tg = translate(c, w.base, w.bytes, c.me, true);
    if (!tg.ok) return false;  // translate recorded why
    if (!tg.ptr) {  // this rank's own workspace must be memory the GPU reaches
        record_error(c, HGAS_DEVICE_ERR_BAD_COLL, c.me, HGASI_COLL_BAD_WORKSPACE);
        return false;
    }
    return true;
}

// Leader only: the dissemination barrier over `t` on the workspace's words (after a quiet, so
// that every put issued before it is complete at its target).
__device__ __forceinline__ void team_barrier_leader(const ctx &c, team t, const coll_workspace &w) {
    (void)hgas::detail::proxy_quiet(c);
    fence_sys();
    const int me = coll_plan::index_of(t, c.me);
    volatile uint64_t *cnt = ws_counter(w, 0);
    const uint64_t epoch = *cnt + 1;
    *cnt = epoch;
    for (int k = 0; k < coll_plan::barrier_rounds(t.size); ++k) {
        uint64_t *word = ws_word(w, coll_plan::barrier_off + coll_plan::word_bytes * static_cast<size_t>(k));
        signal_op<scope::thread>(c, word, 1, HGAS_SIGNAL_ADD, coll_plan::rank_of(t, coll_plan::barrier_to(me, k, t.size)));
        if (const uint64_t *p = local_word(c, word))
            wait_word(c, p, HGAS_CMP_GE, epoch, HGAS_DEVICE_ERR_TIMEOUT_BARRIER,
                      coll_plan::rank_of(t, coll_plan::barrier_from(me, k, t.size)));
    }
}

// Leader only: adds `more` to this rank's counter `i` and waits until the word at `off` reaches
// it (the arrivals it counts).
__device__ __forceinline__ void wait_arrivals(const ctx &c, const coll_workspace &w, int i, size_t off, uint64_t more) {
    volatile uint64_t *cnt = ws_counter(w, i);
    const uint64_t want = *cnt + more;
    *cnt = want;
    if (const uint64_t *p = local_word(c, ws_word(w, off))) wait_word(c, p, HGAS_CMP_GE, want, HGAS_DEVICE_ERR_TIMEOUT_SIGNAL, c.me);
}

}  // namespace detail

template <scope S>
__device__ void team_barrier(const ctx &c, team t, coll_workspace w) {
    detail::fence_sys();
    detail::group_sync<S>();
    if (detail::leader<S>() && detail::coll_check(c, t, w, false)) detail::team_barrier_leader(c, t, w);
    detail::group_sync<S>();
}

template <scope S>
__device__ void barrier_all(const ctx &c) {
    barrier<S>(c);
}

template <scope S>
__device__ void broadcast(const ctx &c, team t, coll_workspace w, void *dst, const void *src, size_t bytes, int root) {
    detail::fence_sys();
    detail::group_sync<S>();
    bool ok = false;
    if (detail::leader<S>()) {
        ok = detail::coll_check(c, t, w, false);
        if (ok && (root < 0 || root >= t.size)) {
            detail::record_error(c, HGAS_DEVICE_ERR_BAD_COLL, c.me, HGASI_COLL_BAD_ROOT);
            ok = false;
        }
        if (ok) detail::team_barrier_leader(c, t, w);
    }
    if (!detail::broadcast<S>(ok)) return;
    const int me = coll_plan::index_of(t, c.me);
    if (me == root) {
        for (int i = 1; i < t.size; ++i) {  // root + 1 first, so that the roots of several teams spread out
            const int j = (root + i) % t.size;
            put_signal<S>(c, dst, src, bytes, detail::ws_word(w, coll_plan::bcast_off), 1, HGAS_SIGNAL_ADD,
                          coll_plan::rank_of(t, j));
        }
        if (dst != src && bytes) {
            detail::group_copy<S, false>(dst, src, bytes);
            detail::group_sync<S>();
        }
    } else {
        if (detail::leader<S>()) detail::wait_arrivals(c, w, 1, coll_plan::bcast_off, 1);
        detail::group_sync<S>();
    }
}

template <scope S>
__device__ void fcollect(const ctx &c, team t, coll_workspace w, void *dst, const void *src, size_t bytes) {
    detail::fence_sys();
    detail::group_sync<S>();
    bool ok = false;
    if (detail::leader<S>()) {
        ok = detail::coll_check(c, t, w, false);
        if (ok) detail::team_barrier_leader(c, t, w);
    }
    if (!detail::broadcast<S>(ok)) return;
    const int me = coll_plan::index_of(t, c.me);
    char *at = static_cast<char *>(dst) + bytes * static_cast<size_t>(me);
    for (int i = 1; i < t.size; ++i) {
        const int j = (me + i) % t.size;
        put_signal<S>(c, at, src, bytes, detail::ws_word(w, coll_plan::bcast_off), 1, HGAS_SIGNAL_ADD,
                      coll_plan::rank_of(t, j));
    }
    if (at != src && bytes) detail::group_copy<S, false>(at, src, bytes);
    if (detail::leader<S>()) detail::wait_arrivals(c, w, 1, coll_plan::bcast_off, static_cast<uint64_t>(t.size - 1));
    detail::group_sync<S>();
}

template <scope S, class T>
__device__ void reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count, reduce_op op) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "device reductions take 4- and 8-byte integers and floats");
    detail::fence_sys();
    detail::group_sync<S>();
    bool ok = false;
    if (detail::leader<S>()) ok = detail::coll_check(c, t, w, true);
    if (!detail::broadcast<S>(ok)) return;
    const int me = coll_plan::index_of(t, c.me);
    const size_t slot = coll_plan::slot_bytes(w.bytes, t.size);
    const size_t per = coll_plan::chunk_elems(slot, sizeof(T));
    char *slots = static_cast<char *>(w.base) + coll_plan::header_bytes;
    for (size_t at = 0; at < count; at += per) {
        const size_t n = count - at < per ? count - at : per;
        // Every member has finished the previous chunk (its slots are free) once past the barrier.
        if (detail::leader<S>()) detail::team_barrier_leader(c, t, w);
        detail::group_sync<S>();
        for (int i = 1; i < t.size; ++i) {
            const int j = (me + i) % t.size;
            put_signal<S>(c, slots + slot * static_cast<size_t>(me), src + at, n * sizeof(T),
                          detail::ws_word(w, coll_plan::gather_off), 1, HGAS_SIGNAL_ADD, coll_plan::rank_of(t, j));
        }
        if (detail::leader<S>()) detail::wait_arrivals(c, w, 2, coll_plan::gather_off, static_cast<uint64_t>(t.size - 1));
        detail::group_sync<S>();
        // Member order, this rank's own chunk from src: the same result on every member. Each
        // element is read before it is written, so dst may be src.
        for (size_t e = detail::group_rank<S>(); e < n; e += detail::group_size<S>()) {
            T acc = 0;
            for (int j = 0; j < t.size; ++j) {
                const T v = j == me ? src[at + e]
                                    : detail::load_word<T, true>(reinterpret_cast<const T *>(slots + slot * static_cast<size_t>(j)) + e);
                acc = j == 0 ? v : coll_plan::apply(op, acc, v);
            }
            dst[at + e] = acc;
        }
        detail::group_sync<S>();
    }
}

template <scope S, class T>
__device__ void sum_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count) {
    reduce<S>(c, t, w, dst, src, count, reduce_op::sum);
}
template <scope S, class T>
__device__ void min_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count) {
    reduce<S>(c, t, w, dst, src, count, reduce_op::min);
}
template <scope S, class T>
__device__ void max_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count) {
    reduce<S>(c, t, w, dst, src, count, reduce_op::max);
}
template <scope S, class T>
__device__ void prod_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count) {
    reduce<S>(c, t, w, dst, src, count, reduce_op::prod);
}

__device__ inline team world_team(const ctx &c) { return team{0, 1, c.n}; }

}  // namespace device
}  // namespace hgas
