/* impl/device_coll_plan.h — the arithmetic of the kernel-initiated collectives (device_coll.cuh):
 * which ranks a device team holds, where each word lies in a collective workspace, the
 * dissemination barrier's partners, the chunking and the reduction operators. Plain C++ that
 * compiles for the host as well as the GPU, so that it is unit-tested without a GPU
 * (tests/unit/test_device_coll_plan.cpp). */
#ifndef HGAS_IMPL_DEVICE_COLL_PLAN_H
#define HGAS_IMPL_DEVICE_COLL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define HGASI_CP __host__ __device__ __forceinline__
#else
#define HGASI_CP inline
#endif

namespace hgas {
namespace device {

/// A team as kernels name it (NVSHMEM's and OpenSHMEM's strided teams): job ranks start,
/// start + stride, ..., `size` of them. The world team is {0, 1, n}.
struct team {
    int start, stride, size;
};

/// Operators of the device reductions.
enum class reduce_op { sum, prod, min, max };

/// A collective workspace: `bytes` of symmetric memory, the same pointer on every member
/// (hgas_malloc_kind, then zeroed before any member's first use), at least
/// coll_plan::workspace_bytes(team size, 256). One per team that runs device collectives at the
/// same time; host collectives never touch it. Its size sets the reduction's chunk.
struct coll_workspace {
    void *base;
    size_t bytes;
};

namespace coll_plan {

// Layout of a workspace: 64-byte words, then one data slot per member (the reduction's
// all-gather area).
//   word 0: this rank's counters ([0] barriers passed, [1] broadcasts received, [2] reduction
//           chunks received from peers), touched by this rank's calling group only
//   word 1 + k (k < 32): barrier round k arrivals
//   word 33: broadcast data arrivals
//   word 34: reduction chunk arrivals
static const size_t word_bytes = 64;
static const int max_rounds = 32;
static const size_t counters_off = 0;
static const size_t barrier_off = word_bytes;
static const size_t bcast_off = word_bytes * (1 + max_rounds);
static const size_t gather_off = word_bytes * (2 + max_rounds);
static const size_t header_bytes = 4096;
static const size_t min_slot_bytes = 256;

/// Bytes of a workspace for a team of `members` whose reductions move up to `chunk_bytes` per
/// member at a time (larger vectors run in chunks of that size).
HGASI_CP size_t workspace_bytes(int members, size_t chunk_bytes) {
    const size_t slot = (chunk_bytes + 255) / 256 * 256;
    return header_bytes + (members > 0 ? static_cast<size_t>(members) : 0) * (slot < min_slot_bytes ? min_slot_bytes : slot);
}
/// Bytes of one member's data slot in a workspace of `bytes` for `members` (a multiple of 256;
/// 0 if the workspace is too small).
HGASI_CP size_t slot_bytes(size_t bytes, int members) {
    if (members <= 0 || bytes < header_bytes + min_slot_bytes * static_cast<size_t>(members)) return 0;
    return (bytes - header_bytes) / static_cast<size_t>(members) / 256 * 256;
}
/// Whether `t` is a team of ranks 0 .. nranks - 1.
HGASI_CP bool valid(team t, int nranks) {
    if (t.size < 1 || t.start < 0 || t.start >= nranks || (t.size > 1 && t.stride < 1)) return false;
    return static_cast<int64_t>(t.start) + static_cast<int64_t>(t.size - 1) * (t.size > 1 ? t.stride : 0) < nranks;
}
/// Job rank of member `i`.
HGASI_CP int rank_of(team t, int i) { return t.start + i * t.stride; }
/// Member index of job rank `rank`, or -1 if it is not a member.
HGASI_CP int index_of(team t, int rank) {
    if (rank < t.start) return -1;
    if (t.size == 1) return rank == t.start ? 0 : -1;
    const int d = rank - t.start;
    if (d % t.stride) return -1;
    const int i = d / t.stride;
    return i < t.size ? i : -1;
}
/// Rounds of the dissemination barrier on `members`.
HGASI_CP int barrier_rounds(int members) {
    int k = 0;
    for (int dist = 1; dist < members; dist <<= 1) ++k;
    return k;
}
/// Member that member `me` signals in round k, and the one it hears from.
HGASI_CP int barrier_to(int me, int k, int members) { return (me + (1 << k)) % members; }
HGASI_CP int barrier_from(int me, int k, int members) { return ((me - (1 << k)) % members + members) % members; }
/// Elements of one reduction chunk (0: the slot cannot hold one element).
HGASI_CP size_t chunk_elems(size_t slot, size_t esize) { return esize ? slot / esize : 0; }

/// a op b. Integer sums and products wrap (as the host reductions); min and max of floats are
/// `a < b ? a : b` style, like the host's.
template <class T>
HGASI_CP T apply(reduce_op op, T a, T b) {
    switch (op) {
    case reduce_op::sum: return static_cast<T>(a + b);
    case reduce_op::prod: return static_cast<T>(a * b);
    case reduce_op::min: return b < a ? b : a;
    case reduce_op::max: return a < b ? b : a;
    }
    return a;
}

}  // namespace coll_plan
}  // namespace device
}  // namespace hgas

#endif /* HGAS_IMPL_DEVICE_COLL_PLAN_H */
