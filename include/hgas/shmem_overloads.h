/* hgas/shmem_overloads.h — the type-generic interfaces of <shmem.h> for C++: overloads over
 * the same type lists as the C11 _Generic selections (the types with G = 1), with and
 * without a leading context where the typed routine has a context form, the deprecated
 * generic names, and std::complex forms of the complex reductions. Included by <shmem.h>
 * in C++; not meant to be included on its own. Every overload is one call of the typed
 * routine. */
#ifndef HGAS_SHMEM_OVERLOADS_H
#define HGAS_SHMEM_OVERLOADS_H
#ifndef HGAS_SHMEM_H
#error "include <shmem.h>, not <hgas/shmem_overloads.h>"
#endif

/* Each HGASI_SHMEM_XX_group(T, N, G) defines the overloads of one group of routines for one
 * type; F(N, OP) names the typed routine. */
#define HGASI_SHMEM_XX_F(N, OP) shmem_##N##_##OP
#define HGASI_SHMEM_XX_CF(N, OP) shmem_ctx_##N##_##OP
/* One routine with and without a context: R return type, OP name, PARAMS the parameter list
 * after the context, ARGS the argument names. */
#define HGASI_SHMEM_XX_BOTH(N, R, OP, PARAMS, ARGS)                                                \
    inline R shmem_##OP PARAMS { return HGASI_SHMEM_XX_F(N, OP) ARGS; }                            \
    inline R shmem_##OP(shmem_ctx_t ctx, HGASI_SHMEM_UNPAREN PARAMS) {                             \
        return HGASI_SHMEM_XX_CF(N, OP)(ctx, HGASI_SHMEM_UNPAREN ARGS);                           \
    }
#define HGASI_SHMEM_XX_ONE(N, R, OP, PARAMS, ARGS)                                                 \
    inline R shmem_##OP PARAMS { return HGASI_SHMEM_XX_F(N, OP) ARGS; }

#define HGASI_SHMEM_XX_RMA(T, N, G)                                                                \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_BOTH(N, void, put, (T *d, const T *s, size_t n, int pe), (d, s, n, pe))        \
    HGASI_SHMEM_XX_BOTH(N, void, p, (T *d, T v, int pe), (d, v, pe))                              \
    HGASI_SHMEM_XX_BOTH(N, void, iput, (T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe), \
                        (d, s, dst, sst, n, pe))                                                    \
    HGASI_SHMEM_XX_BOTH(N, void, get, (T *d, const T *s, size_t n, int pe), (d, s, n, pe))        \
    HGASI_SHMEM_XX_BOTH(N, T, g, (const T *s, int pe), (s, pe))                                   \
    HGASI_SHMEM_XX_BOTH(N, void, iget, (T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe), \
                        (d, s, dst, sst, n, pe))                                                    \
    HGASI_SHMEM_XX_BOTH(N, void, put_nbi, (T *d, const T *s, size_t n, int pe), (d, s, n, pe))    \
    HGASI_SHMEM_XX_BOTH(N, void, get_nbi, (T *d, const T *s, size_t n, int pe), (d, s, n, pe))    \
    HGASI_SHMEM_XX_BOTH(N, void, put_signal,                                                       \
                        (T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, int pe),   \
                        (d, s, n, sig, sv, op, pe))                                                 \
    HGASI_SHMEM_XX_BOTH(N, void, put_signal_nbi,                                                   \
                        (T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, int pe),   \
                        (d, s, n, sig, sv, op, pe))                                                 \
    HGASI_SHMEM_XX_ONE(N, int, broadcast, (shmem_team_t t, T *d, const T *s, size_t n, int root), \
                       (t, d, s, n, root))                                                          \
    HGASI_SHMEM_XX_ONE(N, int, collect, (shmem_team_t t, T *d, const T *s, size_t n), (t, d, s, n)) \
    HGASI_SHMEM_XX_ONE(N, int, fcollect, (shmem_team_t t, T *d, const T *s, size_t n), (t, d, s, n)) \
    HGASI_SHMEM_XX_ONE(N, int, alltoall, (shmem_team_t t, T *d, const T *s, size_t n), (t, d, s, n)) \
    HGASI_SHMEM_XX_ONE(N, int, alltoalls,                                                          \
                       (shmem_team_t t, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n),  \
                       (t, d, s, dst, sst, n)))
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_XX_RMA)

#define HGASI_SHMEM_XX_AMO_EXT(T, N, G)                                                            \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_fetch, (const T *s, int pe), (s, pe))                        \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_set, (T *d, T v, int pe), (d, v, pe))                     \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_swap, (T *d, T v, int pe), (d, v, pe))                       \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_fetch_nbi, (T *f, const T *s, int pe), (f, s, pe))        \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_swap_nbi, (T *f, T *d, T v, int pe), (f, d, v, pe)))
#define HGASI_SHMEM_XX_AMO(T, N, G)                                                                \
    HGASI_SHMEM_XX_AMO_EXT(T, N, G)                                                                 \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_compare_swap, (T *d, T c, T v, int pe), (d, c, v, pe))       \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_fetch_inc, (T *d, int pe), (d, pe))                          \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_inc, (T *d, int pe), (d, pe))                             \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_fetch_add, (T *d, T v, int pe), (d, v, pe))                  \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_add, (T *d, T v, int pe), (d, v, pe))                     \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_compare_swap_nbi, (T *f, T *d, T c, T v, int pe),         \
                        (f, d, c, v, pe))                                                           \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_fetch_inc_nbi, (T *f, T *d, int pe), (f, d, pe))          \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_fetch_add_nbi, (T *f, T *d, T v, int pe), (f, d, v, pe)))
#define HGASI_SHMEM_XX_AMO_BIT(T, N, G)                                                            \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_fetch_and, (T *d, T v, int pe), (d, v, pe))                  \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_and, (T *d, T v, int pe), (d, v, pe))                     \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_fetch_or, (T *d, T v, int pe), (d, v, pe))                   \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_or, (T *d, T v, int pe), (d, v, pe))                      \
    HGASI_SHMEM_XX_BOTH(N, T, atomic_fetch_xor, (T *d, T v, int pe), (d, v, pe))                  \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_xor, (T *d, T v, int pe), (d, v, pe))                     \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_fetch_and_nbi, (T *f, T *d, T v, int pe), (f, d, v, pe))  \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_fetch_or_nbi, (T *f, T *d, T v, int pe), (f, d, v, pe))   \
    HGASI_SHMEM_XX_BOTH(N, void, atomic_fetch_xor_nbi, (T *f, T *d, T v, int pe), (f, d, v, pe)))
HGAS_SHMEM_TYPES_AMO(HGASI_SHMEM_XX_AMO)
HGAS_SHMEM_TYPES_AMO_EXT(HGASI_SHMEM_XX_AMO_EXT)
HGAS_SHMEM_TYPES_AMO_BIT(HGASI_SHMEM_XX_AMO_BIT)

#define HGASI_SHMEM_XX_SYNC(T, N, G)                                                               \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_ONE(N, void, wait_until, (T *v, int cmp, T c), (v, cmp, c))                    \
    HGASI_SHMEM_XX_ONE(N, void, wait_until_all, (T *v, size_t n, const int *st, int cmp, T c),    \
                       (v, n, st, cmp, c))                                                          \
    HGASI_SHMEM_XX_ONE(N, size_t, wait_until_any, (T *v, size_t n, const int *st, int cmp, T c),  \
                       (v, n, st, cmp, c))                                                          \
    HGASI_SHMEM_XX_ONE(N, size_t, wait_until_some,                                                 \
                       (T *v, size_t n, size_t *idx, const int *st, int cmp, T c), (v, n, idx, st, cmp, c)) \
    HGASI_SHMEM_XX_ONE(N, void, wait_until_all_vector, (T *v, size_t n, const int *st, int cmp, T *c), \
                       (v, n, st, cmp, c))                                                          \
    HGASI_SHMEM_XX_ONE(N, size_t, wait_until_any_vector,                                           \
                       (T *v, size_t n, const int *st, int cmp, T *c), (v, n, st, cmp, c))          \
    HGASI_SHMEM_XX_ONE(N, size_t, wait_until_some_vector,                                          \
                       (T *v, size_t n, size_t *idx, const int *st, int cmp, T *c), (v, n, idx, st, cmp, c)) \
    HGASI_SHMEM_XX_ONE(N, int, test, (T *v, int cmp, T c), (v, cmp, c))                           \
    HGASI_SHMEM_XX_ONE(N, int, test_all, (T *v, size_t n, const int *st, int cmp, T c), (v, n, st, cmp, c)) \
    HGASI_SHMEM_XX_ONE(N, size_t, test_any, (T *v, size_t n, const int *st, int cmp, T c),        \
                       (v, n, st, cmp, c))                                                          \
    HGASI_SHMEM_XX_ONE(N, size_t, test_some, (T *v, size_t n, size_t *idx, const int *st, int cmp, T c), \
                       (v, n, idx, st, cmp, c))                                                     \
    HGASI_SHMEM_XX_ONE(N, int, test_all_vector, (T *v, size_t n, const int *st, int cmp, T *c),   \
                       (v, n, st, cmp, c))                                                          \
    HGASI_SHMEM_XX_ONE(N, size_t, test_any_vector, (T *v, size_t n, const int *st, int cmp, T *c), \
                       (v, n, st, cmp, c))                                                          \
    HGASI_SHMEM_XX_ONE(N, size_t, test_some_vector,                                                \
                       (T *v, size_t n, size_t *idx, const int *st, int cmp, T *c), (v, n, idx, st, cmp, c)))
HGAS_SHMEM_TYPES_SYNC(HGASI_SHMEM_XX_SYNC)

#define HGASI_SHMEM_XX_REDUCE(T, N, OP)                                                            \
    HGASI_SHMEM_XX_ONE(N, int, OP##_reduce, (shmem_team_t t, T *d, const T *s, size_t n), (t, d, s, n))
#define HGASI_SHMEM_XX_REDUCE_BIT(T, N, G)                                                         \
    HGASI_SHMEM_IF_##G(HGASI_SHMEM_XX_REDUCE(T, N, and) HGASI_SHMEM_XX_REDUCE(T, N, or)                   \
                       HGASI_SHMEM_XX_REDUCE(T, N, xor))
#define HGASI_SHMEM_XX_REDUCE_ARITH(T, N, G)                                                       \
    HGASI_SHMEM_IF_##G(HGASI_SHMEM_XX_REDUCE(T, N, max) HGASI_SHMEM_XX_REDUCE(T, N, min)                  \
                       HGASI_SHMEM_XX_REDUCE(T, N, sum) HGASI_SHMEM_XX_REDUCE(T, N, prod))
HGAS_SHMEM_TYPES_REDUCE_BIT(HGASI_SHMEM_XX_REDUCE_BIT)
HGAS_SHMEM_TYPES_REDUCE_ARITH(HGASI_SHMEM_XX_REDUCE_ARITH)

/* Deprecated generic names. */
#define HGASI_SHMEM_XX_OLD_AMO_EXT(T, N, G)                                                        \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_ONE(N, T, swap, (T *d, T v, int pe), (d, v, pe))                               \
    HGASI_SHMEM_XX_ONE(N, T, fetch, (const T *s, int pe), (s, pe))                                \
    HGASI_SHMEM_XX_ONE(N, void, set, (T *d, T v, int pe), (d, v, pe)))
#define HGASI_SHMEM_XX_OLD_AMO(T, N, G)                                                            \
    HGASI_SHMEM_XX_OLD_AMO_EXT(T, N, G)                                                             \
    HGASI_SHMEM_IF_##G(                                                                             \
    HGASI_SHMEM_XX_ONE(N, void, add, (T *d, T v, int pe), (d, v, pe))                             \
    HGASI_SHMEM_XX_ONE(N, T, cswap, (T *d, T c, T v, int pe), (d, c, v, pe))                      \
    HGASI_SHMEM_XX_ONE(N, T, fadd, (T *d, T v, int pe), (d, v, pe))                               \
    HGASI_SHMEM_XX_ONE(N, T, finc, (T *d, int pe), (d, pe))                                       \
    HGASI_SHMEM_XX_ONE(N, void, inc, (T *d, int pe), (d, pe)))
HGAS_SHMEM_TYPES_OLD_AMO(HGASI_SHMEM_XX_OLD_AMO)
HGAS_SHMEM_TYPES_OLD_AMO_EXT(HGASI_SHMEM_XX_OLD_AMO_EXT)

/* shmem_sync(team) = shmem_team_sync(team); shmem_sync with four arguments is the C function. */
inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }

/* Complex reductions: the generic sum/prod, and every complex routine also with
 * std::complex<T> (the same layout as C's T _Complex). */
#define HGASI_SHMEM_XX_COMPLEX(T, N, G)                                                            \
    HGASI_SHMEM_EXT HGASI_SHMEM_XX_REDUCE(T, N, sum) HGASI_SHMEM_EXT HGASI_SHMEM_XX_REDUCE(T, N, prod)
HGAS_SHMEM_TYPES_REDUCE_COMPLEX(HGASI_SHMEM_XX_COMPLEX)
#ifdef HGASI_SHMEM_COMPLEX_GNU
#define HGASI_SHMEM_XX_STD_COMPLEX(T, N)                                                           \
    __extension__ inline int shmem_##N##_sum_reduce(shmem_team_t t, std::complex<T> *d, const std::complex<T> *s, size_t n) { \
        return shmem_##N##_sum_reduce(t, reinterpret_cast<T _Complex *>(d),                         \
                                      reinterpret_cast<const T _Complex *>(s), n);                  \
    }                                                                                               \
    __extension__ inline int shmem_##N##_prod_reduce(shmem_team_t t, std::complex<T> *d, const std::complex<T> *s, size_t n) { \
        return shmem_##N##_prod_reduce(t, reinterpret_cast<T _Complex *>(d),                        \
                                       reinterpret_cast<const T _Complex *>(s), n);                 \
    }                                                                                               \
    __extension__ inline int shmem_sum_reduce(shmem_team_t t, std::complex<T> *d, const std::complex<T> *s, size_t n) { \
        return shmem_##N##_sum_reduce(t, d, s, n);                                                  \
    }                                                                                               \
    __extension__ inline int shmem_prod_reduce(shmem_team_t t, std::complex<T> *d, const std::complex<T> *s, size_t n) { \
        return shmem_##N##_prod_reduce(t, d, s, n);                                                 \
    }                                                                                               \
    __extension__ inline void shmem_##N##_sum_to_all(std::complex<T> *d, const std::complex<T> *s, int n, int start, \
                                       int log_stride, int size, std::complex<T> *w, long *sync) {   \
        shmem_##N##_sum_to_all(reinterpret_cast<T _Complex *>(d), reinterpret_cast<const T _Complex *>(s), \
                               n, start, log_stride, size, reinterpret_cast<T _Complex *>(w), sync); \
    }                                                                                               \
    __extension__ inline void shmem_##N##_prod_to_all(std::complex<T> *d, const std::complex<T> *s, int n, int start, \
                                        int log_stride, int size, std::complex<T> *w, long *sync) {  \
        shmem_##N##_prod_to_all(reinterpret_cast<T _Complex *>(d), reinterpret_cast<const T _Complex *>(s), \
                                n, start, log_stride, size, reinterpret_cast<T _Complex *>(w), sync); \
    }
HGASI_SHMEM_XX_STD_COMPLEX(double, complexd)
HGASI_SHMEM_XX_STD_COMPLEX(float, complexf)
#endif

#endif /* HGAS_SHMEM_OVERLOADS_H */
