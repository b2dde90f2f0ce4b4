// OpenSHMEM RMA, put-with-signal and atomics: hgas_ptr + hgas_put/get/put_signal/atomic.
#include <cstring>

#include "internal.hpp"

namespace hgas::shmem {
namespace {

void put_bytes(const char *fn, void *dest, const void *src, size_t bytes, int pe, bool nbi) {
    if (bytes == 0) return;
    const hgas_gptr_t g = gptr(fn, dest, pe);
    check(fn, nbi ? hgas_put_nbi(g, src, bytes) : hgas_put(g, src, bytes));
}

void get_bytes(const char *fn, void *dest, const void *src, size_t bytes, int pe, bool nbi) {
    if (bytes == 0) return;
    const hgas_gptr_t g = gptr(fn, src, pe);
    check(fn, nbi ? hgas_get_nbi(dest, g, bytes) : hgas_get(dest, g, bytes));
}

// Strided put: element i of src (stride sst) to element i * dst of dest, each `size` bytes.
void iput_bytes(const char *fn, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                size_t size, int pe) {
    if (nelems == 0) return;
    const hgas_gptr_t g = gptr(fn, dest, pe);
    const char *s = static_cast<const char *>(src);
    const auto step = static_cast<int64_t>(size);
    for (size_t i = 0; i < nelems; ++i) {
        const auto k = static_cast<int64_t>(i);
        check(fn, hgas_put(hgas_gptr_add(g, k * dst * step), s + k * sst * step, size));
    }
}

// Strided get: the gets are issued together and completed by one quiet (which may complete
// other outstanding operations of this PE early; OpenSHMEM allows that).
void iget_bytes(const char *fn, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                size_t size, int pe) {
    if (nelems == 0) return;
    const hgas_gptr_t g = gptr(fn, src, pe);
    char *d = static_cast<char *>(dest);
    const auto step = static_cast<int64_t>(size);
    for (size_t i = 0; i < nelems; ++i) {
        const auto k = static_cast<int64_t>(i);
        check(fn, hgas_get_nbi(d + k * dst * step, hgas_gptr_add(g, k * sst * step), size));
    }
    check(fn, hgas_quiet());
}

void put_signal_bytes(const char *fn, void *dest, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                      int sig_op, int pe, bool nbi) {
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
    const hgas_gptr_t g = gptr(fn, target, pe);
    T old{};
    // hgas reads operand/compare and writes old as amo_dtype<T>(): the same width as T, so
    // float and double travel as their bit patterns (fetch/set/swap only).
    check(fn, hgas_atomic(g, op, amo_dtype<T>(), &operand, &compare, &old));
    return old;
}

}  // namespace
}  // namespace hgas::shmem

using namespace hgas::shmem;

extern "C" {

// --- RMA --------------------------------------------------------------------------------------
#define HGASI_SHMEM_DEF_RMA(T, N, G)                                                               \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe) {                         \
        put_bytes("shmem_" #N "_put", dest, source, nelems * sizeof(T), pe, false);                 \
    }                                                                                               \
    void shmem_##N##_p(T *dest, T value, int pe) {                                                  \
        put_bytes("shmem_" #N "_p", dest, &value, sizeof(T), pe, false);                            \
    }                                                                                               \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,    \
                          int pe) {                                                                 \
        iput_bytes("shmem_" #N "_iput", dest, source, dst, sst, nelems, sizeof(T), pe);             \
    }                                                                                               \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe) {                         \
        get_bytes("shmem_" #N "_get", dest, source, nelems * sizeof(T), pe, false);                 \
    }                                                                                               \
    T shmem_##N##_g(const T *source, int pe) {                                                      \
        T v{};                                                                                      \
        get_bytes("shmem_" #N "_g", &v, source, sizeof(T), pe, false);                              \
        return v;                                                                                   \
    }                                                                                               \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,    \
                          int pe) {                                                                 \
        iget_bytes("shmem_" #N "_iget", dest, source, dst, sst, nelems, sizeof(T), pe);             \
    }                                                                                               \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe) {                     \
        put_bytes("shmem_" #N "_put_nbi", dest, source, nelems * sizeof(T), pe, true);              \
    }                                                                                               \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe) {                     \
        get_bytes("shmem_" #N "_get_nbi", dest, source, nelems * sizeof(T), pe, true);              \
    }                                                                                               \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,        \
                                uint64_t signal, int sig_op, int pe) {                              \
        put_signal_bytes("shmem_" #N "_put_signal", dest, source, nelems * sizeof(T), sig_addr,     \
                         signal, sig_op, pe, false);                                                \
    }                                                                                               \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
                                    uint64_t signal, int sig_op, int pe) {                          \
        put_signal_bytes("shmem_" #N "_put_signal_nbi", dest, source, nelems * sizeof(T), sig_addr, \
                         signal, sig_op, pe, true);                                                 \
    }
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_DEF_RMA)

#define HGASI_SHMEM_DEF_SIZED(B)                                                                    \
    void shmem_put##B(void *dest, const void *source, size_t nelems, int pe) {                      \
        put_bytes("shmem_put" #B, dest, source, nelems * (B / 8), pe, false);                       \
    }                                                                                               \
    void shmem_get##B(void *dest, const void *source, size_t nelems, int pe) {                      \
        get_bytes("shmem_get" #B, dest, source, nelems * (B / 8), pe, false);                       \
    }                                                                                               \
    void shmem_iput##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                       int pe) {                                                                    \
        iput_bytes("shmem_iput" #B, dest, source, dst, sst, nelems, B / 8, pe);                     \
    }                                                                                               \
    void shmem_iget##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                       int pe) {                                                                    \
        iget_bytes("shmem_iget" #B, dest, source, dst, sst, nelems, B / 8, pe);                     \
    }                                                                                               \
    void shmem_put##B##_nbi(void *dest, const void *source, size_t nelems, int pe) {                \
        put_bytes("shmem_put" #B "_nbi", dest, source, nelems * (B / 8), pe, true);                 \
    }                                                                                               \
    void shmem_get##B##_nbi(void *dest, const void *source, size_t nelems, int pe) {                \
        get_bytes("shmem_get" #B "_nbi", dest, source, nelems * (B / 8), pe, true);                 \
    }                                                                                               \
    void shmem_put##B##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,   \
                               uint64_t signal, int sig_op, int pe) {                               \
        put_signal_bytes("shmem_put" #B "_signal", dest, source, nelems * (B / 8), sig_addr,        \
                         signal, sig_op, pe, false);                                                \
    }                                                                                               \
    void shmem_put##B##_signal_nbi(void *dest, const void *source, size_t nelems,                   \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {       \
        put_signal_bytes("shmem_put" #B "_signal_nbi", dest, source, nelems * (B / 8), sig_addr,    \
                         signal, sig_op, pe, true);                                                 \
    }
HGAS_SHMEM_SIZES(HGASI_SHMEM_DEF_SIZED)

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe) {
    put_bytes("shmem_putmem", dest, source, nelems, pe, false);
}
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe) {
    get_bytes("shmem_getmem", dest, source, nelems, pe, false);
}
void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe) {
    put_bytes("shmem_putmem_nbi", dest, source, nelems, pe, true);
}
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe) {
    get_bytes("shmem_getmem_nbi", dest, source, nelems, pe, true);
}
void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                         int sig_op, int pe) {
    put_signal_bytes("shmem_putmem_signal", dest, source, nelems, sig_addr, signal, sig_op, pe, false);
}
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                             int sig_op, int pe) {
    put_signal_bytes("shmem_putmem_signal_nbi", dest, source, nelems, sig_addr, signal, sig_op, pe, true);
}

// --- atomics ----------------------------------------------------------------------------------
#define HGASI_SHMEM_DEF_AMO_EXT(T, N, G)                                                           \
    T shmem_##N##_atomic_fetch(const T *source, int pe) {                                           \
        return amo<T>("shmem_" #N "_atomic_fetch", HGAS_AMO_FETCH, source, pe);                     \
    }                                                                                               \
    void shmem_##N##_atomic_set(T *dest, T value, int pe) {                                         \
        amo<T>("shmem_" #N "_atomic_set", HGAS_AMO_SET, dest, pe, value);                           \
    }                                                                                               \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe) {                                           \
        return amo<T>("shmem_" #N "_atomic_swap", HGAS_AMO_SWAP, dest, pe, value);                  \
    }                                                                                               \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe) {                          \
        *fetch = amo<T>("shmem_" #N "_atomic_fetch_nbi", HGAS_AMO_FETCH, source, pe);               \
    }                                                                                               \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe) {                          \
        *fetch = amo<T>("shmem_" #N "_atomic_swap_nbi", HGAS_AMO_SWAP, dest, pe, value);            \
    }
#define HGASI_SHMEM_DEF_AMO(T, N, G)                                                               \
    HGASI_SHMEM_DEF_AMO_EXT(T, N, G)                                                                \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe) {                           \
        return amo<T>("shmem_" #N "_atomic_compare_swap", HGAS_AMO_COMPARE_SWAP, dest, pe, value,   \
                      cond);                                                                        \
    }                                                                                               \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe) {                                               \
        return amo<T>("shmem_" #N "_atomic_fetch_inc", HGAS_AMO_FETCH_INC, dest, pe);               \
    }                                                                                               \
    void shmem_##N##_atomic_inc(T *dest, int pe) {                                                  \
        amo<T>("shmem_" #N "_atomic_inc", HGAS_AMO_INC, dest, pe);                                  \
    }                                                                                               \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe) {                                      \
        return amo<T>("shmem_" #N "_atomic_fetch_add", HGAS_AMO_FETCH_ADD, dest, pe, value);        \
    }                                                                                               \
    void shmem_##N##_atomic_add(T *dest, T value, int pe) {                                         \
        amo<T>("shmem_" #N "_atomic_add", HGAS_AMO_ADD, dest, pe, value);                           \
    }                                                                                               \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe) {          \
        *fetch = amo<T>("shmem_" #N "_atomic_compare_swap_nbi", HGAS_AMO_COMPARE_SWAP, dest, pe,    \
                        value, cond);                                                               \
    }                                                                                               \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe) {                              \
        *fetch = amo<T>("shmem_" #N "_atomic_fetch_inc_nbi", HGAS_AMO_FETCH_INC, dest, pe);         \
    }                                                                                               \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe) {                     \
        *fetch = amo<T>("shmem_" #N "_atomic_fetch_add_nbi", HGAS_AMO_FETCH_ADD, dest, pe, value);  \
    }
#define HGASI_SHMEM_DEF_AMO_BIT_OP(T, N, OP, AMO)                                                  \
    T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe) {                                     \
        return amo<T>("shmem_" #N "_atomic_fetch_" #OP, HGAS_AMO_FETCH_##AMO, dest, pe, value);     \
    }                                                                                               \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe) {                                        \
        amo<T>("shmem_" #N "_atomic_" #OP, HGAS_AMO_##AMO, dest, pe, value);                        \
    }                                                                                               \
    void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe) {                  \
        *fetch = amo<T>("shmem_" #N "_atomic_fetch_" #OP "_nbi", HGAS_AMO_FETCH_##AMO, dest, pe,    \
                        value);                                                                     \
    }
#define HGASI_SHMEM_DEF_AMO_BIT(T, N, G)                                                           \
    HGASI_SHMEM_DEF_AMO_BIT_OP(T, N, and, AND)                                                      \
    HGASI_SHMEM_DEF_AMO_BIT_OP(T, N, or, OR) HGASI_SHMEM_DEF_AMO_BIT_OP(T, N, xor, XOR)
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
