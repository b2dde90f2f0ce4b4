// Helpers shared by the OpenSHMEM front end: fatal errors that name the call, symmetric
// address → global pointer, the C type → hgas_dtype_t map, and the spin-wait used where the
// C API has no typed wait (wait_until on non-64-bit words, locks, pSync words).
#pragma once
#include <hgas/hgas.h>

#include <complex>
// The complex reductions of shmem.h are declared with std::complex, which has the layout of
// C's T _Complex (they are only ever passed by pointer).
#define HGASI_SHMEM_COMPLEX(T) std::complex<T>
#define HGASI_SHMEM_COMPLEX_CXX 1
#include <shmem.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

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

/// The hgas_dtype_t that hgas_allreduce combines for T, or -1 where it has none (char, short,
/// long double: those reduce in the front end).
template <class T>
constexpr int reduce_dtype() {
    if constexpr (std::is_same_v<T, float>) return HGAS_FLOAT;
    else if constexpr (std::is_same_v<T, double>) return HGAS_DOUBLE;
    else if constexpr (std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8))
        return std::is_signed_v<T> ? (sizeof(T) == 4 ? HGAS_INT32 : HGAS_INT64)
                                   : (sizeof(T) == 4 ? HGAS_UINT32 : HGAS_UINT64);
    else return -1;
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

/// True for the teams this version has: SHMEM_TEAM_WORLD, and SHMEM_TEAM_SHARED when the job
/// runs on one node (then the same PEs).
bool team_available(shmem_team_t t);
/// Prints why `t` cannot be used by `fn` and returns 1 (the status of team routines).
int team_unavailable(const char *fn, shmem_team_t t);

/// Ends the job naming `fn` unless `ctx` is SHMEM_CTX_DEFAULT or a live context of
/// shmem_ctx_create / shmem_team_create_ctx.
void check_ctx(const char *fn, shmem_ctx_t ctx);

/// Ends the job naming `fn` if `cmp` is not a SHMEM_CMP_* value (checked before any wait).
void check_cmp(const char *fn, int cmp);

}  // namespace hgas::shmem
