// OpenSHMEM collectives: on teams, and the deprecated active-set forms.
//
// A call on a team runs on the hgas team behind it (hgas_team_*: broadcast, collect,
// fcollect, alltoall, and reductions of the types and ops hgas combines); active sets that are
// the whole job use hgas's world collectives. The rest — other active sets, strided
// alltoalls, reductions hgas does not combine (long double, complex, bitwise ops on floats) — is done
// here with puts/gets between two barriers of the set; on a subset of PEs the barrier runs
// over the caller's pSync words (active sets) or the team's slot words (teams, team.cpp). See
// docs/shmem.md.
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "internal.hpp"

namespace hgas::shmem {
namespace {

active_set world_set(const char *fn) {
    active_set s;
    s.size = hgas_rank_n();
    if (s.size < 0) fatal(fn, "called before shmem_init()");
    s.me = hgas_rank_me();
    return s;
}

// Validates the arguments of an active-set call (fatal, naming `fn`, when wrong).
active_set make_set(const char *fn, int PE_start, int logPE_stride, int PE_size, long *pSync) {
    const int n = hgas_rank_n(), me = hgas_rank_me();
    if (n < 0) fatal(fn, "called before shmem_init()");
    if (!pSync) fatal(fn, "pSync is NULL; pass a symmetric array of SHMEM_*_SYNC_SIZE longs set to SHMEM_SYNC_VALUE");
    if (PE_start < 0 || logPE_stride < 0 || logPE_stride > 30 || PE_size < 1)
        fatal(fn, "active set (PE_start=%d, logPE_stride=%d, PE_size=%d) is invalid: PE_start and logPE_stride must be "
              ">= 0 and PE_size >= 1", PE_start, logPE_stride, PE_size);
    active_set s;
    s.start = PE_start;
    s.stride = 1 << logPE_stride;
    s.size = PE_size;
    s.psync = pSync;
    const long long last = PE_start + static_cast<long long>(PE_size - 1) * s.stride;
    if (last >= n)
        fatal(fn, "active set (PE_start=%d, logPE_stride=%d, PE_size=%d) reaches PE %lld, but the job has %d PEs",
              PE_start, logPE_stride, PE_size, last, n);
    if (me < PE_start || (me - PE_start) % s.stride || (me - PE_start) / s.stride >= PE_size)
        fatal(fn, "PE %d is not in the active set (PE_start=%d, logPE_stride=%d, PE_size=%d); only its members may "
              "call", me, PE_start, logPE_stride, PE_size);
    s.me = (me - PE_start) / s.stride;
    s.world = PE_start == 0 && s.stride == 1 && PE_size == n;
    if (!s.world) {
        hgas_gptr_t g;
        if (hgas_ptr(pSync, me, &g) != HGAS_OK || hgas_ptr(pSync + SHMEM_SYNC_SIZE - 1, me, &g) != HGAS_OK)
            fatal(fn, "pSync (%p) is not a symmetric array of SHMEM_SYNC_SIZE longs; make it a global or static "
                  "array or allocate it with shmem_malloc (%s)", static_cast<void *>(pSync), hgas_last_error());
    }
    return s;
}

// pSync words used by this file.
enum : int { k_arrived = 0, k_release = 1, k_count = 2, k_bcast = 3, k_fcollect = 4 };
static_assert(k_bcast < SHMEM_BCAST_SYNC_SIZE, "the broadcast's word lies in a broadcast's pSync");
static_assert(k_fcollect < SHMEM_COLLECT_SYNC_SIZE, "the fcollect's word lies in a collect's pSync");

void atomic_set_word(const char *fn, long *word, int pe, int64_t v) {
    check(fn, hgas_atomic(gptr(fn, word, pe), HGAS_AMO_SET, HGAS_INT64, &v, nullptr, nullptr));
}

}  // namespace

// Quiet, then wait for every member. The world uses hgas_barrier; a subset counts arrivals in
// pSync[k_arrived] of its first member, which then sets pSync[k_release] of every other one.
// Every word is back at SHMEM_SYNC_VALUE when the call returns on its owner, so pSync can be
// reused by the next barrier at once (each member resets its own words before it can be
// involved in the next round: the first member before it releases anyone, the others before
// they arrive again).
void set_barrier(const char *fn, const active_set &s) {
    if (s.world) {
        check(fn, hgas_barrier());
        return;
    }
    check(fn, hgas_quiet());
    if (s.size == 1) return;
    const int me = hgas_rank_me();
    if (s.me == 0) {
        const long *arrived = &s.psync[k_arrived];
        spin_until(fn, [&] { return load(arrived) == s.size - 1; });
        atomic_set_word(fn, s.psync + k_arrived, me, SHMEM_SYNC_VALUE);
        for (int i = 1; i < s.size; ++i) atomic_set_word(fn, s.psync + k_release, s.pe(i), 1);
    } else {
        const int64_t one = 1;
        check(fn, hgas_atomic(gptr(fn, s.psync + k_arrived, s.pe(0)), HGAS_AMO_ADD, HGAS_INT64, &one, nullptr,
                              nullptr));
        const long *release = &s.psync[k_release];
        spin_until(fn, [&] { return load(release) != SHMEM_SYNC_VALUE; });
        atomic_set_word(fn, s.psync + k_release, me, SHMEM_SYNC_VALUE);
    }
}

namespace {

void put_to(const char *fn, void *dest, const void *src, size_t bytes, int pe) {
    if (bytes) check(fn, hgas_put(gptr(fn, dest, pe), src, bytes));
}

// Root's `bytes` of source to dest of every other member (the old broadcast: the root's dest
// is not written). OpenSHMEM makes the caller ensure that every member's dest is ready before
// the call, so there is no entry barrier: the root puts the data with a signal that adds 1 to
// pSync[k_bcast] of each member, and a member waits for its word to reach 1 and takes the 1
// back by an atomic add (SHMEM_SYNC_VALUE again on return). The caller must not reuse pSync
// while a member may still be in the previous call on it (the specification's rule; OSU
// alternates two arrays around a barrier). One round, where two barriers around the puts cost
// 10 us at 4 PEs on 2 cores (Open MPI 0.8).
void set_broadcast(const char *fn, const active_set &s, void *dest, const void *source, size_t bytes, int root) {
    if (root < 0 || root >= s.size)
        fatal(fn, "PE_root %d is not an index in the active set of %d PEs", root, s.size);
    if (bytes == 0 || s.size == 1) return;
    long *word = s.psync + k_bcast;
    if (s.me == root) {
        for (int i = 0; i < s.size; ++i)
            if (i != root)
                check(fn, hgas_put_signal(gptr(fn, dest, s.pe(i)), source, bytes, gptr(fn, word, s.pe(i)), 1,
                                          HGAS_SIGNAL_ADD));
        return;
    }
    gptr(fn, word, hgas_rank_me());  // pSync must be symmetric (fatal with a message if not)
    check(fn, hgas_signal_wait_until(reinterpret_cast<const uint64_t *>(word), HGAS_CMP_GE,
                                     static_cast<uint64_t>(SHMEM_SYNC_VALUE) + 1, nullptr));
    const int64_t minus_one = -1;
    check(fn, hgas_atomic(gptr(fn, word, hgas_rank_me()), HGAS_AMO_ADD, HGAS_INT64, &minus_one, nullptr, nullptr));
}

// Every member's block of `bytes` to dest + index * bytes of every member, in one round: as for
// the broadcast, the caller ensures that every member's dest is ready before any member calls
// (and that pSync is not still in use by a member in an earlier call on it), so each member
// puts its block to every other one at once, with a signal that adds 1 to the member's
// pSync[k_fcollect], copies its own, waits for the n - 1 others' and takes them back (the word
// is SHMEM_SYNC_VALUE again on return). Nobody waits for another's entry: the last member to
// call finds every other block there, the others wait only for its. Entry rounds (two barriers,
// or hgas's fcollect, which reads each member's entry before writing to it) cost a wake-up of
// every member per call where PEs outnumber cores: 9 us at 4-256 B on 4 PEs on 2 cores
// against Open MPI's 5.3-8.2. Active sets only (the caller's pSync): a team's slot words hold
// 4 per group (team.cpp), and the team calls run hgas_team_fcollect.
void set_fcollect(const char *fn, const active_set &s, void *dest, const void *source, size_t bytes) {
    if (bytes == 0) return;
    char *d = static_cast<char *>(dest) + static_cast<size_t>(s.me) * bytes;
    if (s.size > 1) {
        long *word = s.psync + k_fcollect;
        for (int k = 1; k < s.size; ++k) {  // from me + 1, so that the members do not all start at 0
            const int i = (s.me + k) % s.size;
            check(fn,
                  hgas_put_signal(gptr(fn, d, s.pe(i)), source, bytes, gptr(fn, word, s.pe(i)), 1, HGAS_SIGNAL_ADD));
        }
        if (d != source) std::memmove(d, source, bytes);
        const auto others = static_cast<int64_t>(s.size - 1);
        check(fn, hgas_signal_wait_until(reinterpret_cast<const uint64_t *>(word), HGAS_CMP_GE,
                                         static_cast<uint64_t>(SHMEM_SYNC_VALUE + others), nullptr));
        const int64_t back = -others;
        check(fn, hgas_atomic(gptr(fn, word, hgas_rank_me()), HGAS_AMO_ADD, HGAS_INT64, &back, nullptr, nullptr));
        return;
    }
    if (d != source) std::memmove(d, source, bytes);
}

// Blocks of different sizes, concatenated in member order, on a subset of PEs (the whole job
// runs hgas_team_collect). The sizes travel through pSync[k_count] of each member.
void set_collect(const char *fn, const active_set &s, void *dest, const void *source, size_t bytes) {
    long *word = s.psync + k_count;
    *word = static_cast<long>(bytes);  // nobody reads it before the barrier below
    set_barrier(fn, s);
    size_t offset = 0;
    for (int i = 0; i < s.me; ++i) {
        int64_t theirs = 0;
        check(fn, hgas_atomic(gptr(fn, word, s.pe(i)), HGAS_AMO_FETCH, HGAS_INT64, nullptr, nullptr, &theirs));
        offset += static_cast<size_t>(theirs);
    }
    for (int i = 0; i < s.size; ++i) put_to(fn, static_cast<char *>(dest) + offset, source, bytes, s.pe(i));
    set_barrier(fn, s);  // also: every member has read our word
    *word = SHMEM_SYNC_VALUE;
}

// Element k of block j of our source (elements at source[sst * (j * nelems + k)]) lands at
// dest[dst * (me * nelems + k)] of member j.
void set_alltoalls(const char *fn, const active_set &s, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                   size_t nelems, size_t size) {
    if (nelems == 0) return;
    set_barrier(fn, s);
    const auto es = static_cast<ptrdiff_t>(size), ne = static_cast<ptrdiff_t>(nelems);
    for (int j = 0; j < s.size; ++j) {
        const hgas_gptr_t g = gptr(fn, dest, s.pe(j));
        if (dst == 1 && sst == 1) {  // contiguous blocks (alltoall): one put per member
            check(fn, hgas_put(hgas_gptr_add(g, s.me * ne * es), static_cast<const char *>(source) + j * ne * es,
                               nelems * size));
            continue;
        }
        for (ptrdiff_t k = 0; k < ne; ++k)
            check(fn, hgas_put(hgas_gptr_add(g, dst * (s.me * ne + k) * es),
                               static_cast<const char *>(source) + sst * (j * ne + k) * es, size));
    }
    set_barrier(fn, s);
}

// --- reductions -------------------------------------------------------------------------------
enum class op { and_, or_, xor_, max, min, sum, prod };

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};

template <class T>
T combine(op o, T a, T b) {
    if constexpr (is_complex<T>::value) {
        return o == op::prod ? a * b : a + b;  // complex types have sum and prod only
    } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;  // sum/prod wrap around instead of overflowing
        switch (o) {
        case op::and_: return static_cast<T>(a & b);
        case op::or_: return static_cast<T>(a | b);
        case op::xor_: return static_cast<T>(a ^ b);
        case op::sum: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        case op::prod: return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
        default: break;
        }
    } else {
        if (o == op::sum) return a + b;
        if (o == op::prod) return a * b;
    }
    if constexpr (!is_complex<T>::value) return o == op::max ? (a < b ? b : a) : (b < a ? b : a);
    return a;  // not reached: complex returned above
}

constexpr int hgas_op(op o) {
    switch (o) {
    case op::sum: return HGAS_OP_SUM;
    case op::prod: return HGAS_OP_PROD;
    case op::max: return HGAS_OP_MAX;
    case op::min: return HGAS_OP_MIN;
    case op::and_: return HGAS_OP_AND;
    case op::or_: return HGAS_OP_OR;
    case op::xor_: return HGAS_OP_XOR;
    }
    return -1;
}

// acc[k] = acc[k] op in[k] for k < count, the switch outside the loop (vector code).
template <class T>
void combine_into(op o, T *acc, const T *in, size_t count) {
    switch (o) {
        case op::sum:
            for (size_t k = 0; k < count; ++k) acc[k] = combine(op::sum, acc[k], in[k]);
            return;
        case op::prod:
            for (size_t k = 0; k < count; ++k) acc[k] = combine(op::prod, acc[k], in[k]);
            return;
        case op::max:
            for (size_t k = 0; k < count; ++k) acc[k] = combine(op::max, acc[k], in[k]);
            return;
        case op::min:
            for (size_t k = 0; k < count; ++k) acc[k] = combine(op::min, acc[k], in[k]);
            return;
        default:
            for (size_t k = 0; k < count; ++k) acc[k] = combine(o, acc[k], in[k]);
            return;
    }
}

// The whole job's reduction of up to reduce_area::slot_bytes per PE on 2 to 8 PEs, in one round
// (false where it does not apply: the caller runs hgas's allreduce). Each PE puts its vector into
// slot `me` of half c % 2 of every other PE's area (internal.hpp) with a signal on the half's
// word, waits for the n - 1 others' and combines all n in PE order (so every PE computes
// bit-identical results), then writes dest. Nobody waits for another's entry: hgas's allreduce
// (recursive doubling) reads each partner's entry before each round, which costs a wake-up of
// the partner per round where PEs outnumber cores (OSU's sum_to_all at 4 PEs on 2 cores: 8 us at
// 4-256 B against Open MPI's 5.5-7.6). Only the runtime's area is written, never the program's
// memory, so this needs nothing of the program beyond calling the world's reductions in the
// same order everywhere. Two halves suffice: a PE that makes call c + 2 has every PE's vector of
// call c + 1, which each PE sends only after it has finished call c (and read its half).
template <class T>
bool world_small_reduce(const char *fn, op o, T *dest, const T *source, size_t count) {
    reduce_area *a = world_reduce_area();
    const size_t bytes = count * sizeof(T);
    if (!a || bytes > reduce_area::slot_bytes) return false;
    const int n = hgas_rank_n(), me = hgas_rank_me();
    const uint64_t c = ++a->calls;
    const int half = static_cast<int>(c % 2);
    for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        check(fn, hgas_put_signal(gptr(fn, a->slot(half, me, n), p), source, bytes, gptr(fn, a->word(half), p), 1,
                                  HGAS_SIGNAL_ADD));
    }
    // The half's word grows by n - 1 in each of its calls: this is its ((c + 1) / 2)-th.
    check(fn,
          hgas_signal_wait_until(a->word(half), HGAS_CMP_GE, static_cast<uint64_t>(n - 1) * ((c + 1) / 2), nullptr));
    T acc[reduce_area::slot_bytes / sizeof(T)];
    std::memcpy(acc, me == 0 ? static_cast<const void *>(source) : a->slot(half, 0, n), bytes);
    for (int p = 1; p < n; ++p) {
        const T *in = p == me ? source : reinterpret_cast<const T *>(a->slot(half, p, n));
        combine_into(o, acc, in, count);
    }
    std::memcpy(dest, acc, bytes);
    return true;
}

// dest[i] = op over the set of source[i]. The world and a type/op hgas combines: allreduce
// (small vectors on up to 8 PEs: world_small_reduce).
// Otherwise: after a barrier every member gets every member's source, combines in member
// order (so every member computes bit-identical results), and writes dest after a second
// barrier (dest may be source, which the others may still be reading before it).
template <class T>
void set_reduce(const char *fn, const active_set &s, op o, T *dest, const T *source, size_t count) {
    if (count == 0) return;
    if (!dest || !source) fatal(fn, "dest or source is NULL");
    constexpr int dt = reduce_dtype<T>();
    if (s.world && hgas_combines(dt, hgas_op(o))) {
        if (world_small_reduce(fn, o, dest, source, count)) return;
        check(fn, hgas_allreduce(dest, source, count, static_cast<hgas_dtype_t>(dt),
                                 static_cast<hgas_op_t>(hgas_op(o))));
        return;
    }
    std::vector<T> acc(count), in(count);
    set_barrier(fn, s);
    for (int i = 0; i < s.size; ++i) {
        T *into = i == 0 ? acc.data() : in.data();
        if (i == s.me) std::memcpy(into, source, count * sizeof(T));
        else check(fn, hgas_get(into, gptr(fn, source, s.pe(i)), count * sizeof(T)));
        if (i > 0)
            for (size_t k = 0; k < count; ++k) acc[k] = combine(o, acc[k], in[k]);
    }
    set_barrier(fn, s);
    std::memcpy(dest, acc.data(), count * sizeof(T));
}

// --- teams ------------------------------------------------------------------------------------
// Every team has an hgas team with the same members (team.cpp); the collectives hgas has run
// on it, the rest (strided alltoalls, reductions of types hgas does not combine) as sets over
// the team's slot words.
int team_broadcast(const char *fn, shmem_team_t team, void *dest, const void *source, size_t bytes, int root) {
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    if (root < 0 || root >= static_cast<int>(t->pes.size()))
        fatal(fn, "PE_root %d is not a PE of the team (0..%zu)", root, t->pes.size() - 1);
    if (bytes) check(fn, hgas_team_broadcast(t->core, dest, source, bytes, root));  // the root's dest too
    return 0;
}
int team_collect(const char *fn, shmem_team_t team, void *dest, const void *source, size_t bytes) {
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    check(fn, hgas_team_collect(t->core, dest, source, bytes, nullptr));
    return 0;
}
int team_fcollect(const char *fn, shmem_team_t team, void *dest, const void *source, size_t bytes) {
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    if (bytes) check(fn, hgas_team_fcollect(t->core, dest, source, bytes));
    return 0;
}
int team_alltoall(const char *fn, shmem_team_t team, void *dest, const void *source, size_t nelems, size_t size) {
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    if (nelems) check(fn, hgas_team_alltoall(t->core, dest, source, nelems * size));
    return 0;
}
int team_alltoalls(const char *fn, shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                   size_t nelems, size_t size) {
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    set_alltoalls(fn, t->world ? world_set(fn) : team_set(*t), dest, source, dst, sst, nelems, size);
    return 0;
}
template <class T>
int team_reduce(const char *fn, shmem_team_t team, op o, T *dest, const T *source, size_t count) {
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    constexpr int dt = reduce_dtype<T>();
    if (hgas_combines(dt, hgas_op(o))) {
        if (count == 0) return 0;
        if (!dest || !source) fatal(fn, "dest or source is NULL");
        // The world team only: another team of the same PEs (SHMEM_TEAM_SHARED on one node) may
        // run its collectives at the same time from another thread, and the area's calls are
        // counted in the world's order.
        if (team == SHMEM_TEAM_WORLD && world_small_reduce(fn, o, dest, source, count)) return 0;
        check(fn, hgas_team_allreduce(t->core, dest, source, count, static_cast<hgas_dtype_t>(dt),
                                      static_cast<hgas_op_t>(hgas_op(o))));
        return 0;
    }
    set_reduce(fn, t->world ? world_set(fn) : team_set(*t), o, dest, source, count);
    return 0;
}

// Active-set forms that hgas can do for the world (fcollect, collect, alltoall). The whole job's
// fcollect of up to 16 KiB per PE runs set_fcollect's one round too; larger blocks go to
// hgas_fcollect, which chooses a ring across nodes.
constexpr size_t k_fcollect_signal_max = size_t{16} << 10;
void active_fcollect(const char *fn, void *dest, const void *source, size_t bytes, int PE_start, int logPE_stride,
                     int PE_size, long *pSync) {
    const active_set s = make_set(fn, PE_start, logPE_stride, PE_size, pSync);
    if (s.world && bytes > k_fcollect_signal_max) {
        check(fn, hgas_fcollect(dest, source, bytes));
    } else {
        set_fcollect(fn, s, dest, source, bytes);
    }
}
void active_collect(const char *fn, void *dest, const void *source, size_t bytes, int PE_start, int logPE_stride,
                    int PE_size, long *pSync) {
    const active_set s = make_set(fn, PE_start, logPE_stride, PE_size, pSync);
    if (s.world) {
        check(fn, hgas_team_collect(HGAS_TEAM_WORLD, dest, source, bytes, nullptr));
    } else {
        set_collect(fn, s, dest, source, bytes);
    }
}
void active_alltoall(const char *fn, void *dest, const void *source, size_t nelems, size_t size, int PE_start,
                     int logPE_stride, int PE_size, long *pSync) {
    const active_set s = make_set(fn, PE_start, logPE_stride, PE_size, pSync);
    if (s.world) {
        if (nelems) check(fn, hgas_alltoall(dest, source, nelems * size));
    } else {
        set_alltoalls(fn, s, dest, source, 1, 1, nelems, size);
    }
}

}  // namespace

}  // namespace hgas::shmem

using namespace hgas::shmem;

extern "C" {

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root) {
    return team_broadcast("shmem_broadcastmem", team, dest, source, nelems, PE_root);
}
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
    return team_collect("shmem_collectmem", team, dest, source, nelems);
}
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
    return team_fcollect("shmem_fcollectmem", team, dest, source, nelems);
}
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
    return team_alltoall("shmem_alltoallmem", team, dest, source, nelems, 1);
}
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems) {
    return team_alltoalls("shmem_alltoallsmem", team, dest, source, dst, sst, nelems, 1);
}

#define HGASI_SHMEM_DEF_COLL(T, N, G)                                                              \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,           \
                              int PE_root) {                                                        \
        return team_broadcast("shmem_" #N "_broadcast", team, dest, source, nelems * sizeof(T),     \
                              PE_root);                                                             \
    }                                                                                               \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems) {           \
        return team_collect("shmem_" #N "_collect", team, dest, source, nelems * sizeof(T));        \
    }                                                                                               \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems) {          \
        return team_fcollect("shmem_" #N "_fcollect", team, dest, source, nelems * sizeof(T));      \
    }                                                                                               \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems) {          \
        return team_alltoall("shmem_" #N "_alltoall", team, dest, source, nelems, sizeof(T));       \
    }                                                                                               \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,           \
                              ptrdiff_t sst, size_t nelems) {                                       \
        return team_alltoalls("shmem_" #N "_alltoalls", team, dest, source, dst, sst, nelems,       \
                              sizeof(T));                                                           \
    }
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_DEF_COLL)

#define HGASI_SHMEM_DEF_REDUCE(T, N, OP, O)                                                        \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce) {    \
        return team_reduce<T>("shmem_" #N "_" #OP "_reduce", team, O, dest, source, nreduce);       \
    }                                                                                               \
    static_assert(true)
#define HGASI_SHMEM_DEF_REDUCE_BIT(T, N, G)                                                        \
    HGASI_SHMEM_DEF_REDUCE(T, N, and, op::and_);                                                    \
    HGASI_SHMEM_DEF_REDUCE(T, N, or, op::or_);                                                      \
    HGASI_SHMEM_DEF_REDUCE(T, N, xor, op::xor_);
#define HGASI_SHMEM_DEF_REDUCE_ARITH(T, N, G)                                                      \
    HGASI_SHMEM_DEF_REDUCE(T, N, max, op::max);                                                     \
    HGASI_SHMEM_DEF_REDUCE(T, N, min, op::min);                                                     \
    HGASI_SHMEM_DEF_REDUCE(T, N, sum, op::sum);                                                     \
    HGASI_SHMEM_DEF_REDUCE(T, N, prod, op::prod);
HGAS_SHMEM_TYPES_REDUCE_BIT(HGASI_SHMEM_DEF_REDUCE_BIT)
HGAS_SHMEM_TYPES_REDUCE_ARITH(HGASI_SHMEM_DEF_REDUCE_ARITH)
#define HGASI_SHMEM_DEF_REDUCE_COMPLEX(T, N, G)                                                    \
    HGASI_SHMEM_DEF_REDUCE(T, N, sum, op::sum);                                                     \
    HGASI_SHMEM_DEF_REDUCE(T, N, prod, op::prod);
HGAS_SHMEM_TYPES_REDUCE_COMPLEX(HGASI_SHMEM_DEF_REDUCE_COMPLEX)

// --- deprecated active-set collectives ----------------------------------------------------------
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync) {
    set_barrier("shmem_barrier", make_set("shmem_barrier", PE_start, logPE_stride, PE_size, pSync));
}
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync) {
    set_barrier("shmem_sync", make_set("shmem_sync", PE_start, logPE_stride, PE_size, pSync));
}

#define HGASI_SHMEM_DEF_ACTIVE(B)                                                                   \
    void shmem_broadcast##B(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                            int logPE_stride, int PE_size, long *pSync) {                           \
        const char *fn = "shmem_broadcast" #B;                                                      \
        set_broadcast(fn, make_set(fn, PE_start, logPE_stride, PE_size, pSync), dest, source,       \
                      nelems * (B / 8), PE_root);                                                   \
    }                                                                                               \
    void shmem_collect##B(void *dest, const void *source, size_t nelems, int PE_start,              \
                          int logPE_stride, int PE_size, long *pSync) {                             \
        active_collect("shmem_collect" #B, dest, source, nelems * (B / 8), PE_start, logPE_stride,  \
                       PE_size, pSync);                                                             \
    }                                                                                               \
    void shmem_fcollect##B(void *dest, const void *source, size_t nelems, int PE_start,             \
                           int logPE_stride, int PE_size, long *pSync) {                            \
        active_fcollect("shmem_fcollect" #B, dest, source, nelems * (B / 8), PE_start, logPE_stride, \
                        PE_size, pSync);                                                            \
    }                                                                                               \
    void shmem_alltoall##B(void *dest, const void *source, size_t nelems, int PE_start,             \
                           int logPE_stride, int PE_size, long *pSync) {                            \
        active_alltoall("shmem_alltoall" #B, dest, source, nelems, B / 8, PE_start, logPE_stride,   \
                        PE_size, pSync);                                                            \
    }                                                                                               \
    void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,           \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) { \
        const char *fn = "shmem_alltoalls" #B;                                                      \
        set_alltoalls(fn, make_set(fn, PE_start, logPE_stride, PE_size, pSync), dest, source, dst,  \
                      sst, nelems, B / 8);                                                          \
    }
HGASI_SHMEM_DEF_ACTIVE(32)
HGASI_SHMEM_DEF_ACTIVE(64)

#define HGASI_SHMEM_DEF_TO_ALL(T, N, OP, O)                                                        \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,             \
                                   int logPE_stride, int PE_size, T *, long *pSync) {               \
        const char *fn = "shmem_" #N "_" #OP "_to_all";                                             \
        if (nreduce < 0) fatal(fn, "nreduce %d is negative", nreduce);                              \
        set_reduce<T>(fn, make_set(fn, PE_start, logPE_stride, PE_size, pSync), O, dest, source,    \
                      static_cast<size_t>(nreduce));                                                \
    }                                                                                               \
    static_assert(true)
#define HGASI_SHMEM_DEF_TO_ALL_BIT(T, N, G)                                                        \
    HGASI_SHMEM_DEF_TO_ALL(T, N, and, op::and_);                                                    \
    HGASI_SHMEM_DEF_TO_ALL(T, N, or, op::or_);                                                      \
    HGASI_SHMEM_DEF_TO_ALL(T, N, xor, op::xor_);
#define HGASI_SHMEM_DEF_TO_ALL_ARITH(T, N, G)                                                      \
    HGASI_SHMEM_DEF_TO_ALL(T, N, max, op::max);                                                     \
    HGASI_SHMEM_DEF_TO_ALL(T, N, min, op::min);                                                     \
    HGASI_SHMEM_DEF_TO_ALL(T, N, sum, op::sum);                                                     \
    HGASI_SHMEM_DEF_TO_ALL(T, N, prod, op::prod);
HGAS_SHMEM_TYPES_OLD_INT(HGASI_SHMEM_DEF_TO_ALL_BIT)
HGAS_SHMEM_TYPES_OLD_ARITH(HGASI_SHMEM_DEF_TO_ALL_ARITH)
#define HGASI_SHMEM_DEF_TO_ALL_COMPLEX(T, N, G)                                                    \
    HGASI_SHMEM_DEF_TO_ALL(T, N, sum, op::sum);                                                     \
    HGASI_SHMEM_DEF_TO_ALL(T, N, prod, op::prod);
HGAS_SHMEM_TYPES_REDUCE_COMPLEX(HGASI_SHMEM_DEF_TO_ALL_COMPLEX)

}  // extern "C"
