// OpenSHMEM RMA, put-with-signal and atomics: hgas_put_sym/get_sym/atomic_sym (hgas_ptr and the
// operation in one call), hgas_ptr + hgas_put_signal.
#include <cstring>
#include <vector>

#include "internal.hpp"

namespace hgas::shmem {
namespace {

// A failed _sym call on the symmetric `sym` of `pe`: a PE or address error is reported in
// OpenSHMEM's words (gptr's; the lookup is repeated, nothing moved), any other with hgas's message.
[[noreturn]] void sym_failed(const char *fn, const void *sym, int pe, hgas_status_t s) {
    (void)gptr(fn, sym, pe);
    fatal_status(fn, s);
}

// One hgas call per operation (hgas_put_sym = hgas_ptr + hgas_put): the 8-byte put rate is
// bounded by the calls' fixed cost.
// On a context of its own (ctx.cpp) an _nbi put or get is a handle operation that the context
// tracks, and a blocking put (locally complete at return) marks it for the rank's quiet.
void put_bytes(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, int pe, bool nbi) {
    if (bytes == 0) return;
    if (ctx != SHMEM_CTX_DEFAULT) {
        if (nbi) {
            hgas_handle_t h;
            check(fn, hgas_put_nb(gptr(fn, dest, pe), src, bytes, &h));
            return ctx_track(fn, ctx, h);
        }
        ctx_needs_rank_quiet(ctx);
    }
    const hgas_status_t s = nbi ? hgas_put_sym_nbi(dest, src, bytes, pe) : hgas_put_sym(dest, src, bytes, pe);
    if (s != HGAS_OK) sym_failed(fn, dest, pe, s);
}

void get_bytes(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, int pe, bool nbi) {
    if (bytes == 0) return;
    if (ctx != SHMEM_CTX_DEFAULT && nbi) {
        hgas_handle_t h;
        check(fn, hgas_get_nb(dest, gptr(fn, src, pe), bytes, &h));
        return ctx_track(fn, ctx, h);
    }
    const hgas_status_t s = nbi ? hgas_get_sym_nbi(dest, src, bytes, pe) : hgas_get_sym(dest, src, bytes, pe);
    if (s != HGAS_OK) sym_failed(fn, src, pe, s);
}

// Strided put: element i of src (stride sst) to element i * dst of dest, each `size` bytes.
void iput_bytes(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                size_t nelems, size_t size, int pe) {
    if (nelems == 0) return;
    ctx_needs_rank_quiet(ctx);
    const hgas_gptr_t g = gptr(fn, dest, pe);
    const char *s = static_cast<const char *>(src);
    const auto step = static_cast<int64_t>(size);
    for (size_t i = 0; i < nelems; ++i) {
        const auto k = static_cast<int64_t>(i);
        check(fn, hgas_put(hgas_gptr_add(g, k * dst * step), s + k * sst * step, size));
    }
}

// Strided get: the gets are issued together, then completed: on the default context by one
// quiet (which may complete other outstanding operations of this PE early; OpenSHMEM allows
// that), on another context as handles, so that only these gets are waited for.
void iget_bytes(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                size_t nelems, size_t size, int pe) {
    if (nelems == 0) return;
    const hgas_gptr_t g = gptr(fn, src, pe);
    char *d = static_cast<char *>(dest);
    const auto step = static_cast<int64_t>(size);
    std::vector<hgas_handle_t> hs;
    for (size_t i = 0; i < nelems; ++i) {
        const auto k = static_cast<int64_t>(i);
        const hgas_gptr_t from = hgas_gptr_add(g, k * sst * step);
        if (ctx == SHMEM_CTX_DEFAULT) {
            check(fn, hgas_get_nbi(d + k * dst * step, from, size));
            continue;
        }
        hgas_handle_t h;
        check(fn, hgas_get_nb(d + k * dst * step, from, size, &h));
        if (h != HGAS_HANDLE_DONE) hs.push_back(h);
    }
    if (ctx == SHMEM_CTX_DEFAULT) return check(fn, hgas_quiet());
    if (!hs.empty()) check(fn, hgas_wait_all(hs.data(), hs.size()));
}

void put_signal_bytes(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, uint64_t *sig,
                      uint64_t value, int sig_op, int pe, bool nbi) {
    ctx_needs_rank_quiet(ctx);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        fatal(fn, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
    const hgas_gptr_t s = gptr(fn, sig, pe);
    // With no data the destination need not be symmetric; the signal alone is updated.
    const hgas_gptr_t g = bytes ? gptr(fn, dest, pe) : s;
    const auto op = static_cast<hgas_signal_op_t>(sig_op);
    check(fn, nbi ? hgas_put_signal_nbi(g, src, bytes, s, value, op) : hgas_put_signal(g, src, bytes, s, value, op));
}

// One atomic on the symmetric `target` of `pe`; returns the old value (for fetching ops).
template <class T>
T amo(const char *fn, hgas_amo_t op, const T *target, int pe, T operand = T(), T compare = T()) {
    T old{};
    // hgas reads operand/compare and writes old as amo_dtype<T>(): the same width as T, so
    // float and double travel as their bit patterns (fetch/set/swap only).
    const hgas_status_t s = hgas_atomic_sym(const_cast<T *>(target), pe, op, amo_dtype<T>(), &operand, &compare, &old);
    if (s != HGAS_OK) sym_failed(fn, target, pe, s);
    return old;
}

}  // namespace
}  // namespace hgas::shmem

using namespace hgas::shmem;

// Each routine is defined twice from one body: with prefix P = shmem_TYPENAME and no context
// (K = 0), and as P = shmem_ctx_TYPENAME with the leading `shmem_ctx_t ctx` (K = 1), whose
// handle is checked first and whose `pe` (a PE number in the context's team) becomes a world
// PE number; without one, `ctx` is SHMEM_CTX_DEFAULT. Each context is a completion domain
// (ctx.cpp).
#define HGASI_SHMEM_CTX_CHECK_0(fn) const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT; (void)ctx;
#define HGASI_SHMEM_CTX_CHECK_1(fn) pe = ctx_pe(fn, ctx, pe);
#define HGASI_SHMEM_DEF_WITH_CTX(DEF, N, ...)                                                      \
    DEF(shmem_##N, (), 0, __VA_ARGS__) DEF(shmem_ctx_##N, (shmem_ctx_t ctx, ), 1, __VA_ARGS__)
#define HGASI_SHMEM_DEF_WITH_CTX0(DEF, ...)                                                        \
    DEF(shmem, (), 0, __VA_ARGS__) DEF(shmem_ctx, (shmem_ctx_t ctx, ), 1, __VA_ARGS__)
// One routine: return type R, name P##OP, parameters (after the context) PARAMS, body BODY
// (which sees `fn`, the routine's name).
#define HGASI_SHMEM_DEF(R, P, C, K, OP, PARAMS, BODY)                                              \
    R P##OP(HGASI_SHMEM_UNPAREN C HGASI_SHMEM_UNPAREN PARAMS) {                                     \
        const char *fn = #P #OP;                                                                    \
        HGASI_SHMEM_CTX_CHECK_##K(fn) HGASI_SHMEM_UNPAREN BODY                                      \
    }

extern "C" {

// --- RMA --------------------------------------------------------------------------------------
#define HGASI_SHMEM_DEF_RMA_P(P, C, K, T)                                                          \
    HGASI_SHMEM_DEF(void, P, C, K, _put, (T * dest, const T *source, size_t nelems, int pe),        \
                    (put_bytes(fn, ctx, dest, source, nelems * sizeof(T), pe, false);))                  \
    HGASI_SHMEM_DEF(void, P, C, K, _p, (T * dest, T value, int pe),                                 \
                    (put_bytes(fn, ctx, dest, &value, sizeof(T), pe, false);))                           \
    HGASI_SHMEM_DEF(void, P, C, K, _iput,                                                           \
                    (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
                    (iput_bytes(fn, ctx, dest, source, dst, sst, nelems, sizeof(T), pe);))               \
    HGASI_SHMEM_DEF(void, P, C, K, _get, (T * dest, const T *source, size_t nelems, int pe),        \
                    (get_bytes(fn, ctx, dest, source, nelems * sizeof(T), pe, false);))                  \
    HGASI_SHMEM_DEF(T, P, C, K, _g, (const T *source, int pe),                                      \
                    (T v{}; get_bytes(fn, ctx, &v, source, sizeof(T), pe, false); return v;))            \
    HGASI_SHMEM_DEF(void, P, C, K, _iget,                                                           \
                    (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
                    (iget_bytes(fn, ctx, dest, source, dst, sst, nelems, sizeof(T), pe);))               \
    HGASI_SHMEM_DEF(void, P, C, K, _put_nbi, (T * dest, const T *source, size_t nelems, int pe),    \
                    (put_bytes(fn, ctx, dest, source, nelems * sizeof(T), pe, true);))                   \
    HGASI_SHMEM_DEF(void, P, C, K, _get_nbi, (T * dest, const T *source, size_t nelems, int pe),    \
                    (get_bytes(fn, ctx, dest, source, nelems * sizeof(T), pe, true);))                   \
    HGASI_SHMEM_DEF(void, P, C, K, _put_signal,                                                     \
                    (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                     int sig_op, int pe),                                                           \
                    (put_signal_bytes(fn, ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, \
                                      false);))                                                     \
    HGASI_SHMEM_DEF(void, P, C, K, _put_signal_nbi,                                                 \
                    (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                     int sig_op, int pe),                                                           \
                    (put_signal_bytes(fn, ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, \
                                      true);))
#define HGASI_SHMEM_DEF_RMA(T, N, G) HGASI_SHMEM_DEF_WITH_CTX(HGASI_SHMEM_DEF_RMA_P, N, T)
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_DEF_RMA)

// Sized (B bits per element, E bytes) and mem (E = 1) forms.
#define HGASI_SHMEM_DEF_SIZED_P(P, C, K, B, E)                                                     \
    HGASI_SHMEM_DEF(void, P, C, K, _put##B, (void *dest, const void *source, size_t nelems, int pe), \
                    (put_bytes(fn, ctx, dest, source, nelems * (E), pe, false);))                        \
    HGASI_SHMEM_DEF(void, P, C, K, _get##B, (void *dest, const void *source, size_t nelems, int pe), \
                    (get_bytes(fn, ctx, dest, source, nelems * (E), pe, false);))                        \
    HGASI_SHMEM_DEF(void, P, C, K, _put##B##_nbi,                                                   \
                    (void *dest, const void *source, size_t nelems, int pe),                        \
                    (put_bytes(fn, ctx, dest, source, nelems * (E), pe, true);))                         \
    HGASI_SHMEM_DEF(void, P, C, K, _get##B##_nbi,                                                   \
                    (void *dest, const void *source, size_t nelems, int pe),                        \
                    (get_bytes(fn, ctx, dest, source, nelems * (E), pe, true);))                         \
    HGASI_SHMEM_DEF(void, P, C, K, _put##B##_signal,                                                \
                    (void *dest, const void *source, size_t nelems, uint64_t *sig_addr,             \
                     uint64_t signal, int sig_op, int pe),                                          \
                    (put_signal_bytes(fn, ctx, dest, source, nelems * (E), sig_addr, signal, sig_op, pe, false);)) \
    HGASI_SHMEM_DEF(void, P, C, K, _put##B##_signal_nbi,                                            \
                    (void *dest, const void *source, size_t nelems, uint64_t *sig_addr,             \
                     uint64_t signal, int sig_op, int pe),                                          \
                    (put_signal_bytes(fn, ctx, dest, source, nelems * (E), sig_addr, signal, sig_op, pe, true);))
#define HGASI_SHMEM_DEF_STRIDED_P(P, C, K, B)                                                      \
    HGASI_SHMEM_DEF(void, P, C, K, _iput##B,                                                        \
                    (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
                    (iput_bytes(fn, ctx, dest, source, dst, sst, nelems, (B) / 8, pe);))                 \
    HGASI_SHMEM_DEF(void, P, C, K, _iget##B,                                                        \
                    (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
                    (iget_bytes(fn, ctx, dest, source, dst, sst, nelems, (B) / 8, pe);))
#define HGASI_SHMEM_DEF_SIZED(B)                                                                    \
    HGASI_SHMEM_DEF_WITH_CTX0(HGASI_SHMEM_DEF_SIZED_P, B, (B) / 8)                                  \
    HGASI_SHMEM_DEF_WITH_CTX0(HGASI_SHMEM_DEF_STRIDED_P, B)
HGAS_SHMEM_SIZES(HGASI_SHMEM_DEF_SIZED)
HGASI_SHMEM_DEF_WITH_CTX0(HGASI_SHMEM_DEF_SIZED_P, mem, 1)

// --- atomics ----------------------------------------------------------------------------------
#define HGASI_SHMEM_DEF_AMO_EXT_P(P, C, K, T)                                                      \
    HGASI_SHMEM_DEF(T, P, C, K, _atomic_fetch, (const T *source, int pe),                           \
                    (return amo<T>(fn, HGAS_AMO_FETCH, source, pe);))                               \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_set, (T * dest, T value, int pe),                        \
                    (amo<T>(fn, HGAS_AMO_SET, dest, pe, value);))                                   \
    HGASI_SHMEM_DEF(T, P, C, K, _atomic_swap, (T * dest, T value, int pe),                          \
                    (return amo<T>(fn, HGAS_AMO_SWAP, dest, pe, value);))                           \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_fetch_nbi, (T * fetch, const T *source, int pe),         \
                    (*fetch = amo<T>(fn, HGAS_AMO_FETCH, source, pe);))                             \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_swap_nbi, (T * fetch, T * dest, T value, int pe),        \
                    (*fetch = amo<T>(fn, HGAS_AMO_SWAP, dest, pe, value);))
#define HGASI_SHMEM_DEF_AMO_P(P, C, K, T)                                                          \
    HGASI_SHMEM_DEF_AMO_EXT_P(P, C, K, T)                                                           \
    HGASI_SHMEM_DEF(T, P, C, K, _atomic_compare_swap, (T * dest, T cond, T value, int pe),          \
                    (return amo<T>(fn, HGAS_AMO_COMPARE_SWAP, dest, pe, value, cond);))             \
    HGASI_SHMEM_DEF(T, P, C, K, _atomic_fetch_inc, (T * dest, int pe),                              \
                    (return amo<T>(fn, HGAS_AMO_FETCH_INC, dest, pe);))                             \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_inc, (T * dest, int pe), (amo<T>(fn, HGAS_AMO_INC, dest, pe);)) \
    HGASI_SHMEM_DEF(T, P, C, K, _atomic_fetch_add, (T * dest, T value, int pe),                     \
                    (return amo<T>(fn, HGAS_AMO_FETCH_ADD, dest, pe, value);))                      \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_add, (T * dest, T value, int pe),                        \
                    (amo<T>(fn, HGAS_AMO_ADD, dest, pe, value);))                                   \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_compare_swap_nbi,                                        \
                    (T * fetch, T * dest, T cond, T value, int pe),                                 \
                    (*fetch = amo<T>(fn, HGAS_AMO_COMPARE_SWAP, dest, pe, value, cond);))           \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_fetch_inc_nbi, (T * fetch, T * dest, int pe),            \
                    (*fetch = amo<T>(fn, HGAS_AMO_FETCH_INC, dest, pe);))                           \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_fetch_add_nbi, (T * fetch, T * dest, T value, int pe),   \
                    (*fetch = amo<T>(fn, HGAS_AMO_FETCH_ADD, dest, pe, value);))
#define HGASI_SHMEM_DEF_AMO_BIT_OP(P, C, K, T, OP, AMO)                                            \
    HGASI_SHMEM_DEF(T, P, C, K, _atomic_fetch_##OP, (T * dest, T value, int pe),                    \
                    (return amo<T>(fn, HGAS_AMO_FETCH_##AMO, dest, pe, value);))                    \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_##OP, (T * dest, T value, int pe),                       \
                    (amo<T>(fn, HGAS_AMO_##AMO, dest, pe, value);))                                 \
    HGASI_SHMEM_DEF(void, P, C, K, _atomic_fetch_##OP##_nbi, (T * fetch, T * dest, T value, int pe), \
                    (*fetch = amo<T>(fn, HGAS_AMO_FETCH_##AMO, dest, pe, value);))
#define HGASI_SHMEM_DEF_AMO_BIT_P(P, C, K, T)                                                      \
    HGASI_SHMEM_DEF_AMO_BIT_OP(P, C, K, T, and, AND)                                                \
    HGASI_SHMEM_DEF_AMO_BIT_OP(P, C, K, T, or, OR) HGASI_SHMEM_DEF_AMO_BIT_OP(P, C, K, T, xor, XOR)
#define HGASI_SHMEM_DEF_AMO(T, N, G) HGASI_SHMEM_DEF_WITH_CTX(HGASI_SHMEM_DEF_AMO_P, N, T)
#define HGASI_SHMEM_DEF_AMO_EXT(T, N, G) HGASI_SHMEM_DEF_WITH_CTX(HGASI_SHMEM_DEF_AMO_EXT_P, N, T)
#define HGASI_SHMEM_DEF_AMO_BIT(T, N, G) HGASI_SHMEM_DEF_WITH_CTX(HGASI_SHMEM_DEF_AMO_BIT_P, N, T)
HGAS_SHMEM_TYPES_AMO(HGASI_SHMEM_DEF_AMO)
HGAS_SHMEM_TYPES_AMO_EXT(HGASI_SHMEM_DEF_AMO_EXT)
HGAS_SHMEM_TYPES_AMO_BIT(HGASI_SHMEM_DEF_AMO_BIT)

// Deprecated names: the same operations under their 1.3/1.4 spellings.
#define HGASI_SHMEM_DEF_OLD_AMO_EXT(T, N, G)                                                       \
    T shmem_##N##_swap(T *dest, T value, int pe) {                                                  \
        return amo<T>("shmem_" #N "_swap", HGAS_AMO_SWAP, dest, pe, value);                         \
    }                                                                                               \
    T shmem_##N##_fetch(const T *source, int pe) {                                                  \
        return amo<T>("shmem_" #N "_fetch", HGAS_AMO_FETCH, source, pe);                            \
    }                                                                                               \
    void shmem_##N##_set(T *dest, T value, int pe) {                                                \
        amo<T>("shmem_" #N "_set", HGAS_AMO_SET, dest, pe, value);                                  \
    }
#define HGASI_SHMEM_DEF_OLD_AMO(T, N, G)                                                           \
    HGASI_SHMEM_DEF_OLD_AMO_EXT(T, N, G)                                                            \
    T shmem_##N##_fadd(T *dest, T value, int pe) {                                                  \
        return amo<T>("shmem_" #N "_fadd", HGAS_AMO_FETCH_ADD, dest, pe, value);                    \
    }                                                                                               \
    T shmem_##N##_finc(T *dest, int pe) { return amo<T>("shmem_" #N "_finc", HGAS_AMO_FETCH_INC, dest, pe); } \
    void shmem_##N##_add(T *dest, T value, int pe) {                                                \
        amo<T>("shmem_" #N "_add", HGAS_AMO_ADD, dest, pe, value);                                  \
    }                                                                                               \
    void shmem_##N##_inc(T *dest, int pe) { amo<T>("shmem_" #N "_inc", HGAS_AMO_INC, dest, pe); }   \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe) {                                         \
        return amo<T>("shmem_" #N "_cswap", HGAS_AMO_COMPARE_SWAP, dest, pe, value, cond);          \
    }
HGAS_SHMEM_TYPES_OLD_AMO(HGASI_SHMEM_DEF_OLD_AMO)
HGAS_SHMEM_TYPES_OLD_AMO_EXT(HGASI_SHMEM_DEF_OLD_AMO_EXT)

}  // extern "C"
