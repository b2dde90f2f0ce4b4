// Helpers shared by the OpenSHMEM front end: fatal errors that name the call, symmetric
// address → global pointer, the C type → hgas_dtype_t map, and the spin-wait used where the
// C API has no typed wait (wait_until on non-64-bit words, locks, pSync words).
#pragma once
#include <hgas/hgas.h>

#include <complex>
// The library defines the complex reductions of shmem.h with std::complex, which has the
// layout of C's T _Complex (they are only ever passed by pointer, and have C linkage).
#define HGASI_SHMEM_COMPLEX(T) std::complex<T>
#include <shmem.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace hgas::shmem {

/// Ends the job: prints "<fn>: <what>" through hgas_abort (with this PE's number), which
/// tells every other PE. The one place where a fatal SHMEM error is reported.
[[noreturn]] void fatal(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/// Ends the job with the message of the hgas call that just failed with `s`.
[[noreturn]] void fatal_status(const char *fn, hgas_status_t s);

/// Checks an hgas status; a failure ends the job naming the SHMEM call.
inline void check(const char *fn, hgas_status_t s) {
    if (s != HGAS_OK) fatal_status(fn, s);
}

/// Global pointer to the symmetric `sym` on `pe`; ends the job naming `fn` if `pe` does not
/// exist or `sym` is not symmetric (in OpenSHMEM words rather than hgas_ptr's).
hgas_gptr_t gptr(const char *fn, const void *sym, int pe);

/// The hgas_atomic type that carries T (integers by size and sign; float/double by their
/// bit pattern, for fetch/set/swap only).
template <class T>
constexpr hgas_dtype_t amo_dtype() {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "hgas atomics are 32 or 64 bits wide");
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return sizeof(T) == 4 ? HGAS_INT32 : HGAS_INT64;
    return sizeof(T) == 4 ? HGAS_UINT32 : HGAS_UINT64;
}

/// The hgas_dtype_t that hgas_allreduce combines for T, or -1 where it has none (long double,
/// the complex types: those reduce in the front end). Integers map by size and signedness, so
/// char, short and the 8/16-bit fixed types are hgas's 8/16-bit integers.
template <class T>
constexpr int reduce_dtype() {
    if constexpr (std::is_same_v<T, float>) return HGAS_FLOAT;
    else if constexpr (std::is_same_v<T, double>) return HGAS_DOUBLE;
    else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) return std::is_signed_v<T> ? HGAS_INT8 : HGAS_UINT8;
    else if constexpr (std::is_integral_v<T> && sizeof(T) == 2) return std::is_signed_v<T> ? HGAS_INT16 : HGAS_UINT16;
    else if constexpr (std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8))
        return std::is_signed_v<T> ? (sizeof(T) == 4 ? HGAS_INT32 : HGAS_INT64)
                                   : (sizeof(T) == 4 ? HGAS_UINT32 : HGAS_UINT64);
    else return -1;
}
/// Whether hgas combines `op` (an hgas_op_t) on `dt` (reduce_dtype's answer): every op on the
/// integers, the arithmetic ones (sum, min, max, prod) on float and double.
constexpr bool hgas_combines(int dt, int op) {
    if (dt < 0 || op < 0) return false;
    return op < HGAS_OP_AND || (dt != HGAS_FLOAT && dt != HGAS_DOUBLE);
}

/// Spins until pred() holds, calling hgas_progress() between checks and backing off (yield,
/// then short sleeps) so that ranks outnumbering cores still advance. Ends the job naming
/// `fn` after HGAS_TIMEOUT seconds, as every hgas wait does.
class spinner {
public:
    explicit spinner(const char *fn);
    /// One idle round: progress, back-off, deadline check.
    void idle();

private:
    const char *fn_;
    double deadline_;
    double timeout_;
    uint32_t idle_ = 0;
};

template <class Pred>
void spin_until(const char *fn, Pred pred) {
    if (pred()) return;
    spinner s(fn);
    while (!pred()) s.idle();
}

/// Acquire load of a symmetric variable that other PEs update (a PE that sees a value put
/// with a signal or after a fence must also see what came before it).
template <class T>
inline T load(const T *p) {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/// `v cmp value` with the comparison of T (signed for signed types); fatal for a bad cmp.
template <class T>
inline bool compare(const char *fn, T v, int cmp, T value) {
    switch (cmp) {
    case SHMEM_CMP_EQ: return v == value;
    case SHMEM_CMP_NE: return v != value;
    case SHMEM_CMP_GT: return v > value;
    case SHMEM_CMP_GE: return v >= value;
    case SHMEM_CMP_LT: return v < value;
    case SHMEM_CMP_LE: return v <= value;
    }
    fatal(fn, "comparison %d is not one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE", cmp);
}

// --- active sets and teams (coll.cpp, team.cpp) -------------------------------------------

/// A set of PEs as the collectives see it: member i is world PE pe(i); `me` is this PE's
/// index. `psync` are the set's synchronization words (SHMEM_SYNC_SIZE longs, symmetric,
/// SHMEM_SYNC_VALUE at rest): the caller's pSync for active sets, a team slot for teams.
/// `world`: the set is every PE in order, and the runtime's world collectives serve it.
struct active_set {
    int start = 0, stride = 1, size = 0;
    const int *list = nullptr;  // world PE of each member (teams); else start + i * stride
    long *psync = nullptr;
    bool world = true;
    int me = 0;
    int pe(int i) const { return list ? list[i] : start + i * stride; }
};

/// Quiets, then waits for every member of `s` (hgas_barrier for the world; else a counter in
/// the first member's psync[0] and a release word in each member's psync[1]). Every psync word
/// is back at SHMEM_SYNC_VALUE when it returns.
void set_barrier(const char *fn, const active_set &s);

}  // namespace hgas::shmem

/// A team (what a shmem_team_t other than the predefined constants points to; the constants
/// name the PE's predefined teams). Lives until shmem_team_destroy or shmem_finalize.
struct hgasi_shmem_team {
    std::vector<int> pes;  // world PE of each member, in team order
    int me = -1;           // this PE's number in the team
    int slot = -1;         // its slot in the PE's team pool (team.cpp)
    long *words = nullptr; // the slot's words: [0, 4) for the team's collectives, [4, 8) for
                           // the subsets of it that split from it
    bool world = false;    // pes is 0 .. n-1: the runtime's world collectives serve it
    hgas_team_t core = HGAS_TEAM_INVALID;  // the same ranks as an hgas team: its collectives run
                                           // on it (split and destroyed with this one)
    bool predefined = false;
    shmem_team_config_t config{};
    long config_mask = 0;
    std::vector<hgasi_shmem_ctx *> contexts;  // contexts created on it and not destroyed
};

namespace hgas::shmem {

/// The whole job's small reductions in one round (coll.cpp, `world_small_reduce`): a symmetric
/// area, allocated by setup_teams where the job has 2 to reduce_area_max_pes PEs, of two signal
/// words (one cache line each) and then two halves of n slots of reduce_area_slot bytes. Call c
/// (counted in `calls`, alike on every PE: the world's reductions are made in the same order
/// everywhere) uses half c % 2: each PE puts its vector into slot `me` of that half of every
/// other PE with a signal that adds 1 to the half's word there.
struct reduce_area {
    char *base = nullptr;
    uint64_t calls = 0;
    uint64_t *word(int half) const { return reinterpret_cast<uint64_t *>(base + 64 * half); }
    char *slot(int half, int pe, int n) const {
        return base + 128 + (static_cast<size_t>(half) * static_cast<size_t>(n) + static_cast<size_t>(pe)) * slot_bytes;
    }
    static constexpr size_t slot_bytes = 2048;
    static constexpr int max_pes = 8;
    static size_t bytes(int n) { return 128 + 2 * static_cast<size_t>(n) * slot_bytes; }
};
/// This PE's area (nullptr before shmem_init, or where the job has no area).
reduce_area *world_reduce_area();

/// Collective (from shmem_init): allocates the PE's team pool and sets up the predefined
/// teams, once per hgas rank.
bool setup_teams(const char *fn);  // true if it set up now, false if done already
/// The live team behind `t` on this PE, or nullptr (SHMEM_TEAM_INVALID, destroyed or foreign
/// handles). Ends the job naming `fn` before shmem_init.
hgasi_shmem_team *team_of(const char *fn, shmem_team_t t);
/// Prints why `t` cannot be used by `fn` and returns 1 (the status of team routines).
int team_unavailable(const char *fn, shmem_team_t t);
/// The set the team's collectives and syncs run over (its slot's words).
active_set team_set(const hgasi_shmem_team &t);

/// Ends the job naming `fn` unless `ctx` is SHMEM_CTX_DEFAULT or a live context of
/// shmem_ctx_create / shmem_team_create_ctx.
void check_ctx(const char *fn, shmem_ctx_t ctx);
/// The world PE that `pe` names on `ctx` (team contexts number PEs in their team); checks
/// the context first and ends the job naming `fn` if `pe` is not in the team.
int ctx_pe(const char *fn, shmem_ctx_t ctx, int pe);
/// Completes and destroys a context (shmem_ctx_destroy, and team destruction).
void destroy_ctx(const char *fn, shmem_ctx_t ctx);
/// A context other than the default one: `h` (from hgas_put_nb / hgas_get_nb) joins its
/// pending operations, which its quiet completes (HGAS_HANDLE_DONE: nothing to track).
void ctx_track(const char *fn, shmem_ctx_t ctx, hgas_handle_t h);
/// `ctx` issued an operation that only the rank's quiet completes: its next quiet adds one
/// (nothing for the default context, whose quiet is the rank's).
void ctx_needs_rank_quiet(shmem_ctx_t ctx);
/// shmem_finalize: completes and destroys every context still open on this PE's teams.
void destroy_all_contexts(const char *fn);

/// Ends the job naming `fn` if `cmp` is not a SHMEM_CMP_* value (checked before any wait).
void check_cmp(const char *fn, int cmp);

/// env.cpp: maps SHMEM_SYMMETRIC_SIZE / SHMEM_DEBUG onto HGAS_* variables before hgas_init
/// (false, with the reason on stderr, for a bad value); report_environment prints what
/// SHMEM_INFO / SHMEM_VERSION ask for on PE 0 after it.
bool apply_environment(const char *fn);
void report_environment();

}  // namespace hgas::shmem
