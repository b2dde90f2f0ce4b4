/* shmem.h — OpenSHMEM 1.5 over hgas (library: libhgas_shmem, which links libhgas).
 *
 * A thin front end: every call is a few lines over the C API in <hgas/hgas.h>. A PE is an
 * hgas rank; symmetric objects live in the hgas symmetric heap; `shmem_long_put(dest, src,
 * n, pe)` is hgas_ptr(dest, pe) + hgas_put. docs/shmem.md lists what of OpenSHMEM 1.5 is
 * covered and what is left out (the profiling interface, among others).
 *
 * Rules that hold for every routine below unless its group says otherwise:
 *  - Symmetric addresses (`dest` of a put, `source` of a get, atomic targets, wait/test
 *    variables, collective buffers, pSync, locks) come from shmem_malloc/calloc/align/
 *    realloc or are global or static variables of the program (its data and bss; every PE
 *    must run the same executable; docs/model.md).
 *  - Completion and ordering are OpenSHMEM's (docs/model.md): a blocking put returns when
 *    the source may be reused; a blocking get when the data has arrived; `_nbi` calls
 *    complete at shmem_quiet (or a barrier); fence orders puts to one PE; atomics are atomic
 *    with respect to every other shmem atomic on the same word.
 *  - Fatal misuse (not initialized, a PE that does not exist, a non-symmetric address, a NULL
 *    pSync, an active set outside the job, a wait past HGAS_TIMEOUT) prints one line naming
 *    the call and the reason to stderr and ends the whole job (hgas_abort), as OpenSHMEM
 *    implementations do. Routines that return a status (team collectives, init_thread) return
 *    nonzero instead where the specification lets them.
 *  - Thread safety: shmem_init gives SHMEM_THREAD_SERIALIZED (calls from any thread, not at
 *    once); shmem_init_thread grants the level requested, SHMEM_THREAD_MULTIPLE included.
 *
 * Type lists. Each OpenSHMEM type table is one X-macro below; X(TYPE, TYPENAME, G) where G is
 * 1 for a type that takes part in the type-generic interfaces (C11 _Generic, C++ overloads):
 * the distinct C types of the table. A <stdint.h> name that is the same C type as another
 * entry of the same table (int32_t is int, uint64_t is unsigned long) has G = 0, since it
 * would collide in _Generic and as an overload; where the table has no such twin (the signed
 * fixed-width types of the bitwise tables) it has G = 1. Every declaration and the library's
 * definitions expand these lists, so a type is added in one place. */
#ifndef HGAS_SHMEM_H
#define HGAS_SHMEM_H

#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
#include <complex>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Type tables of OpenSHMEM 1.5 (Tables 5, 6, 7, 8, 10 of the specification)
 * ---------------------------------------------------------------------------------------- */

/** Standard RMA types: put/get/p/g/iput/iget(_nbi), put_signal, broadcast, collect, fcollect,
 *  alltoall(s). */
#define HGAS_SHMEM_TYPES_RMA(X)                                                                     \
    X(float, float, 1) X(double, double, 1) X(long double, longdouble, 1) X(char, char, 1)          \
    X(signed char, schar, 1) X(short, short, 1) X(int, int, 1) X(long, long, 1)                     \
    X(long long, longlong, 1) X(unsigned char, uchar, 1) X(unsigned short, ushort, 1)               \
    X(unsigned int, uint, 1) X(unsigned long, ulong, 1) X(unsigned long long, ulonglong, 1)         \
    X(int8_t, int8, 0) X(int16_t, int16, 0) X(int32_t, int32, 0) X(int64_t, int64, 0)               \
    X(uint8_t, uint8, 0) X(uint16_t, uint16, 0) X(uint32_t, uint32, 0) X(uint64_t, uint64, 0)       \
    X(size_t, size, 0) X(ptrdiff_t, ptrdiff, 0)

/** Standard AMO types: every atomic (inc, add, compare_swap and the extended ones). */
#define HGAS_SHMEM_TYPES_AMO(X)                                                                     \
    X(int, int, 1) X(long, long, 1) X(long long, longlong, 1) X(unsigned int, uint, 1)              \
    X(unsigned long, ulong, 1) X(unsigned long long, ulonglong, 1) X(int32_t, int32, 0)             \
    X(int64_t, int64, 0) X(uint32_t, uint32, 0) X(uint64_t, uint64, 0) X(size_t, size, 0)          \
    X(ptrdiff_t, ptrdiff, 0)

/** Extended AMO types beyond the standard ones: fetch, set, swap only. */
#define HGAS_SHMEM_TYPES_AMO_EXT(X) X(float, float, 1) X(double, double, 1)

/** Bitwise AMO types: fetch_and/and/fetch_or/or/fetch_xor/xor. */
#define HGAS_SHMEM_TYPES_AMO_BIT(X)                                                                 \
    X(unsigned int, uint, 1) X(unsigned long, ulong, 1) X(unsigned long long, ulonglong, 1)         \
    X(int32_t, int32, 1) X(int64_t, int64, 1) X(uint32_t, uint32, 0) X(uint64_t, uint64, 0)

/** Point-to-point synchronization types: wait_until and test (and their variants). */
#define HGAS_SHMEM_TYPES_SYNC(X)                                                                    \
    X(short, short, 1) X(int, int, 1) X(long, long, 1) X(long long, longlong, 1)                    \
    X(unsigned short, ushort, 1) X(unsigned int, uint, 1) X(unsigned long, ulong, 1)                \
    X(unsigned long long, ulonglong, 1) X(int32_t, int32, 0) X(int64_t, int64, 0)                   \
    X(uint32_t, uint32, 0) X(uint64_t, uint64, 0) X(size_t, size, 0) X(ptrdiff_t, ptrdiff, 0)

/** Reduction types for and/or/xor. */
#define HGAS_SHMEM_TYPES_REDUCE_BIT(X)                                                              \
    X(unsigned char, uchar, 1) X(unsigned short, ushort, 1) X(unsigned int, uint, 1)                \
    X(unsigned long, ulong, 1) X(unsigned long long, ulonglong, 1) X(int8_t, int8, 1)               \
    X(int16_t, int16, 1) X(int32_t, int32, 1) X(int64_t, int64, 1) X(uint8_t, uint8, 0)             \
    X(uint16_t, uint16, 0) X(uint32_t, uint32, 0) X(uint64_t, uint64, 0) X(size_t, size, 0)

/** Reduction types for max/min/sum/prod. */
#define HGAS_SHMEM_TYPES_REDUCE_ARITH(X)                                                            \
    X(char, char, 1) X(signed char, schar, 1) X(short, short, 1) X(int, int, 1) X(long, long, 1)    \
    X(long long, longlong, 1) X(ptrdiff_t, ptrdiff, 0) X(unsigned char, uchar, 1)                   \
    X(unsigned short, ushort, 1) X(unsigned int, uint, 1) X(unsigned long, ulong, 1)                \
    X(unsigned long long, ulonglong, 1) X(int8_t, int8, 0) X(int16_t, int16, 0)                     \
    X(int32_t, int32, 0) X(int64_t, int64, 0) X(uint8_t, uint8, 0) X(uint16_t, uint16, 0)           \
    X(uint32_t, uint32, 0) X(uint64_t, uint64, 0) X(size_t, size, 0) X(float, float, 1)             \
    X(double, double, 1) X(long double, longdouble, 1)

/** Complex reduction types: sum/prod only. HGASI_SHMEM_COMPLEX(T) is `T _Complex` in C and in
 *  C++ where the compiler has C's complex types as an extension (g++, clang++: declared with
 *  __extension__; std::complex<T> overloads follow, same layout); the library (C++) defines it
 *  as std::complex<T>, as does a C++ compiler without the extension. */
#ifndef HGASI_SHMEM_COMPLEX
#if !defined(__cplusplus) || defined(__GNUC__)
#define HGASI_SHMEM_COMPLEX(T) T _Complex
#if defined(__cplusplus)
#define HGASI_SHMEM_COMPLEX_GNU 1
#endif
#else
#define HGASI_SHMEM_COMPLEX(T) std::complex<T>
#define HGASI_SHMEM_COMPLEX_STD 1
#endif
#endif
#if defined(__cplusplus) && defined(__GNUC__)
#define HGASI_SHMEM_EXT __extension__
#else
#define HGASI_SHMEM_EXT
#endif
#define HGAS_SHMEM_TYPES_REDUCE_COMPLEX(X) X(HGASI_SHMEM_COMPLEX(double), complexd, 1) X(HGASI_SHMEM_COMPLEX(float), complexf, 1)

/** Sized RMA: X(BITS) for shmem_put8 ... shmem_put128 and the matching get/iput/iget. */
#define HGAS_SHMEM_SIZES(X) X(8) X(16) X(32) X(64) X(128)

/** Deprecated (1.4) atomic names: shmem_TYPENAME_fadd, _finc, _add, _inc, _cswap, and the
 *  generic shmem_fadd ... (OpenSHMEM 1.3 had them for int, long, long long; like Sandia
 *  OpenSHMEM, every standard AMO type has them here, so code written against it builds). */
#define HGAS_SHMEM_TYPES_OLD_AMO(X) HGAS_SHMEM_TYPES_AMO(X)
/** Deprecated atomic names on these too: shmem_float_swap, _fetch, _set. */
#define HGAS_SHMEM_TYPES_OLD_AMO_EXT(X) X(float, float, 1) X(double, double, 1)
/** Types of the deprecated shmem_TYPENAME_wait and of the and/or/xor *_to_all reductions. */
#define HGAS_SHMEM_TYPES_OLD_INT(X) X(short, short, 1) X(int, int, 1) X(long, long, 1) X(long long, longlong, 1)
/** Types of the max/min/sum/prod *_to_all reductions (complex sum/prod:
 *  HGAS_SHMEM_TYPES_REDUCE_COMPLEX). */
#define HGAS_SHMEM_TYPES_OLD_ARITH(X)                                                               \
    HGAS_SHMEM_TYPES_OLD_INT(X) X(float, float, 1) X(double, double, 1) X(long double, longdouble, 1)

/* ------------------------------------------------------------------------------------------
 * Constants
 * ---------------------------------------------------------------------------------------- */

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "hgas OpenSHMEM front end"

/* Thread levels (shmem_init_thread): the same values as HGAS_THREAD_*; all are provided. */
#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

/* Comparisons of wait_until/test/signal_wait_until; equal to hgas_cmp_t. */
#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5

/* Signal operations of put_signal; equal to hgas_signal_op_t. */
#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* Hints of shmem_malloc_with_hints (accepted, no effect: every allocation suits both). */
#define SHMEM_MALLOC_ATOMICS_REMOTE 1L
#define SHMEM_MALLOC_SIGNAL_REMOTE 2L

/* pSync/pWrk sizes of the active-set collectives. Every pSync element must hold
 * SHMEM_SYNC_VALUE before its first use; hgas restores that value before returning. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 8
#define SHMEM_BARRIER_SYNC_SIZE 8
#define SHMEM_BCAST_SYNC_SIZE 8
#define SHMEM_COLLECT_SYNC_SIZE 8
#define SHMEM_REDUCE_SYNC_SIZE 8
#define SHMEM_ALLTOALL_SYNC_SIZE 8
#define SHMEM_ALLTOALLS_SYNC_SIZE 8
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1

/* The deprecated spellings of the same constants. */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ------------------------------------------------------------------------------------------
 * Library setup, exit and query
 * ---------------------------------------------------------------------------------------- */

/** shmem_init: joins the job (hgas_init); collective. A failure (bootstrap, a setting) ends
 *  the program with the reason. A second call while initialized does nothing.
 *  shmem_init_thread: as shmem_init; *provided (may be NULL) is the level requested (under
 *  SHMEM_THREAD_MULTIPLE a thread waiting in a routine lets the PE's other threads' calls run;
 *  each thread's context is a completion domain of its own). Returns
 *  0, or nonzero with the reason on stderr if joining failed. shmem_query_thread: the level
 *  provided.
 *  shmem_finalize: completes outstanding operations, barriers, releases the heap; collective.
 *  shmem_global_exit: ends every PE of the job with exit status `status` (& 0xff), which is
 *  also the status of oshrun/hgasrun; the other PEs exit at their next OpenSHMEM call or wait
 *  (or are ended by the launcher 2 s later). stdio is flushed first. Never returns.
 *  shmem_my_pe / shmem_n_pes: this PE's number and the number of PEs (-1 before init).
 *  shmem_pe_accessible: 1 if `pe` is a PE of the job. shmem_addr_accessible: 1 if `addr` is
 *  symmetric (could be the target of RMA on `pe`). shmem_ptr: a load/store address of the
 *  symmetric `dest` on `pe` (same node, or this PE), else NULL.
 *  shmem_info_get_version / _get_name: 1.5 and SHMEM_VENDOR_STRING (name receives at most
 *  SHMEM_MAX_NAME_LEN bytes with the terminating NUL).
 *  shmem_pcontrol: accepted and ignored (hgas has no profiling levels).
 *  Old names: start_pes(npes) = shmem_init (npes ignored), _my_pe, _num_pes, shmem_num_pes.
 *  Deprecated cache routines (shmem_set/clear_cache_inv, _cache_line_inv, shmem_udcflush,
 *  _line): do nothing, as the specification allows where caches are coherent (every hgas
 *  transport delivers into coherent memory). */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
int shmem_num_pes(void);
void shmem_pcontrol(const int level, ...);
void shmem_set_cache_inv(void);
void shmem_set_cache_line_inv(void *dest);
void shmem_clear_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

/* ------------------------------------------------------------------------------------------
 * Teams: ordered sets of PEs. SHMEM_TEAM_WORLD holds every PE, SHMEM_TEAM_SHARED the PEs of
 * this PE's node (those whose memory shmem_ptr reaches), numbered in world order. New teams
 * are split from a parent; a PE's number in a team is its index there. Handles are local to
 * the PE that got them. At most 62 teams besides the two predefined ones may exist at once
 * on a PE (a split that would exceed it returns nonzero and SHMEM_TEAM_INVALID).
 * ---------------------------------------------------------------------------------------- */

typedef struct hgasi_shmem_team *shmem_team_t;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)
#define SHMEM_TEAM_SHARED ((shmem_team_t)2)

/** Team configuration: num_contexts is the number of contexts the program means to create
 *  on the team (a hint; any number may be created). Used where the mask has
 *  SHMEM_TEAM_NUM_CONTEXTS, else 0. */
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS 1L

/** shmem_team_my_pe / shmem_team_n_pes: this PE's number in `team` and its size; -1 for
 *  SHMEM_TEAM_INVALID or a handle that is not a live team of this PE.
 *  shmem_team_sync(team): waits for every PE of the team (after completing this PE's
 *    outstanding operations); 0, or nonzero (reason on stderr) for an invalid team.
 *  shmem_team_translate_pe(src_team, src_pe, dest_team): the number in dest_team of the PE
 *    numbered src_pe in src_team, or -1 (not a member, out of range, invalid team).
 *  shmem_team_get_config(team, mask, &config): the configuration the team was created with,
 *    for the fields in `mask` (SHMEM_TEAM_NUM_CONTEXTS); 0, or nonzero for an invalid team,
 *    a NULL config or unknown mask bits.
 *  shmem_team_split_strided(parent, start, stride, size, config, mask, &new_team):
 *    collective over the parent (every member calls it with the same arguments): the new team
 *    holds the parent's PEs start, start + stride, ... (size of them, stride >= 1, all inside
 *    the parent), numbered in that order. Members get the new team, the other parent PEs
 *    SHMEM_TEAM_INVALID. Returns 0; nonzero (reason on stderr) and SHMEM_TEAM_INVALID on
 *    every PE for arguments that describe no such subset, for a parent that is
 *    SHMEM_TEAM_INVALID (quietly), or when no team slot is left. Consecutive splits of one
 *    parent need no synchronization between them.
 *  shmem_team_split_2d(parent, xrange, xconfig, xmask, &xteam, yconfig, ymask, &yteam):
 *    collective over the parent: parent PE p has coordinates (p % xrange, p / xrange); xteam
 *    holds the PEs of its row (same y, numbered by x), yteam those of its column (same x,
 *    numbered by y). xrange >= 1 (larger than the parent: one row). Returns 0, or nonzero
 *    with SHMEM_TEAM_INVALID for a team that could not be made.
 *  shmem_team_destroy(team): collective over the team; completes and destroys the contexts
 *    still open on it, then releases the team. SHMEM_TEAM_INVALID: nothing. The predefined
 *    teams cannot be destroyed (the job ends with an error).
 *  shmem_team_ptr(team, dest, pe) (OpenSHMEM 1.6, here for convenience): shmem_ptr of the
 *    PE numbered `pe` in `team`; NULL for SHMEM_TEAM_INVALID or a PE outside the team. */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_sync(shmem_team_t team);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);

/* ------------------------------------------------------------------------------------------
 * Memory management (collective: every PE calls with the same arguments in the same order;
 * each includes a barrier). Allocations are 64-byte aligned (or `alignment`).
 * ---------------------------------------------------------------------------------------- */

/** shmem_malloc: symmetric allocation of `size` bytes; NULL (reason on stderr) if the heap is
 *  full (raise HGAS_HEAP_SIZE) or size is 0. shmem_calloc: zero-filled count*size bytes.
 *  shmem_align: with any power-of-two alignment (NULL and a message for other values). shmem_malloc_with_hints: as shmem_malloc (the
 *  hints need nothing special here). shmem_realloc: a new allocation holding the first
 *  min(old, new) bytes of `ptr`, which is freed; NULL ptr = malloc, size 0 = free.
 *  shmem_free: releases an allocation of these routines (NULL accepted); a pointer they did
 *  not return ends the job with an error. Do not pass their results to hgas_free.
 *  Old names: shmalloc, shfree, shrealloc, shmemalign. */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);

/* ------------------------------------------------------------------------------------------
 * Contexts. Every RMA, signal and atomic routine below also exists as shmem_ctx_NAME(ctx, ...)
 * (e.g. shmem_ctx_long_put(ctx, dest, source, nelems, pe)), as do shmem_ctx_fence and
 * shmem_ctx_quiet. Every context is a completion domain of its own: shmem_ctx_quiet(ctx)
 * completes the context's operations and does not wait for other contexts' _nbi puts and gets
 * (so threads with a context each do not wait for each other); shmem_ctx_fence(ctx) completes
 * its pending _nbi operations, which orders them before later ones. shmem_quiet / shmem_fence
 * (the default context) are the PE's quiet and fence: they complete or order the default
 * context's operations and those that every context completes through the PE's quiet (blocking
 * puts, put_signal, strided puts); another context's pending _nbi puts and gets may still be
 * in flight after them.
 *  shmem_ctx_create(options, &ctx): options are SHMEM_CTX_SERIALIZED, _PRIVATE, _NOSTORE or
 *    0 (accepted; a context's completion does not depend on them). Returns 0, or nonzero (ctx set to
 *    SHMEM_CTX_INVALID) for unknown option bits. Not collective.
 *  shmem_team_create_ctx(team, options, &ctx): the same on a team; the `pe` of every RMA,
 *    signal and atomic routine given this context is a PE number in that team (a number
 *    outside it ends the job with an error). Nonzero (ctx SHMEM_CTX_INVALID) for an invalid
 *    team. shmem_ctx_get_team: the team of a context (0), or nonzero and SHMEM_TEAM_INVALID
 *    for SHMEM_CTX_INVALID. Destroying a team destroys the contexts still open on it.
 *  shmem_ctx_destroy: quiets the context, then releases it (SHMEM_CTX_INVALID: nothing; the
 *    default context or an unknown handle ends the job with an error).
 *  shmem_ctx_fence / shmem_ctx_quiet on SHMEM_CTX_INVALID do nothing (OpenSHMEM 1.5). Any
 *  other routine given SHMEM_CTX_INVALID, a destroyed context or a foreign handle ends the
 *  job. The type-generic names take a context as an optional first argument.
 * ---------------------------------------------------------------------------------------- */

typedef struct hgasi_shmem_ctx *shmem_ctx_t;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)1)
#define SHMEM_CTX_SERIALIZED 1L
#define SHMEM_CTX_PRIVATE 2L
#define SHMEM_CTX_NOSTORE 4L

int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
void shmem_ctx_destroy(shmem_ctx_t ctx);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);

/* The declaration macros below expand each routine twice: with prefix P = shmem_TYPENAME (or
 * shmem) and no context, and with P = shmem_ctx_TYPENAME (or shmem_ctx) and C =
 * (shmem_ctx_t ctx,) as the first parameter. */
#define HGASI_SHMEM_UNPAREN(...) __VA_ARGS__
#define HGASI_SHMEM_WITH_CTX(DECL, N, ...) DECL(shmem_##N, (), __VA_ARGS__) DECL(shmem_ctx_##N, (shmem_ctx_t ctx,), __VA_ARGS__)
#define HGASI_SHMEM_WITH_CTX0(DECL, ...) DECL(shmem, (), __VA_ARGS__) DECL(shmem_ctx, (shmem_ctx_t ctx,), __VA_ARGS__)

/* ------------------------------------------------------------------------------------------
 * RMA. For TYPE/TYPENAME in HGAS_SHMEM_TYPES_RMA:
 *  shmem_TYPENAME_put(dest, source, nelems, pe): copies nelems elements to the symmetric dest
 *    on pe; returns when source may be reused. shmem_TYPENAME_p: one element by value.
 *  shmem_TYPENAME_iput(dest, source, dst, sst, nelems, pe): element i*sst of source to
 *    element i*dst of dest (strides in elements).
 *  shmem_TYPENAME_get / g / iget: the same in the other direction; return when the data is
 *    in dest. shmem_TYPENAME_put_nbi / get_nbi: return at once, complete at shmem_quiet.
 *  shmem_putBITS / getBITS / iputBITS / igetBITS (_nbi for put/get), BITS in
 *  HGAS_SHMEM_SIZES: the same on elements of BITS bits; shmem_putmem / getmem (_nbi): bytes.
 *  nelems 0 does nothing.
 * ---------------------------------------------------------------------------------------- */

#define HGASI_SHMEM_DECL_RMA_P(P, C, T)                                                            \
    void P##_put(HGASI_SHMEM_UNPAREN C T *dest, const T *source, size_t nelems, int pe);            \
    void P##_p(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                                     \
    void P##_iput(HGASI_SHMEM_UNPAREN C T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,     \
                  size_t nelems, int pe);                                                           \
    void P##_get(HGASI_SHMEM_UNPAREN C T *dest, const T *source, size_t nelems, int pe);            \
    T P##_g(HGASI_SHMEM_UNPAREN C const T *source, int pe);                                         \
    void P##_iget(HGASI_SHMEM_UNPAREN C T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,     \
                  size_t nelems, int pe);                                                           \
    void P##_put_nbi(HGASI_SHMEM_UNPAREN C T *dest, const T *source, size_t nelems, int pe);        \
    void P##_get_nbi(HGASI_SHMEM_UNPAREN C T *dest, const T *source, size_t nelems, int pe);
#define HGASI_SHMEM_DECL_RMA(T, N, G) HGASI_SHMEM_WITH_CTX(HGASI_SHMEM_DECL_RMA_P, N, T)
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_DECL_RMA)

/* P is shmem or shmem_ctx here; B the element size in bits, or mem for bytes. */
#define HGASI_SHMEM_DECL_SIZED_P(P, C, B)                                                           \
    void P##_put##B(HGASI_SHMEM_UNPAREN C void *dest, const void *source, size_t nelems, int pe);   \
    void P##_get##B(HGASI_SHMEM_UNPAREN C void *dest, const void *source, size_t nelems, int pe);   \
    void P##_put##B##_nbi(HGASI_SHMEM_UNPAREN C void *dest, const void *source, size_t nelems,      \
                          int pe);                                                                  \
    void P##_get##B##_nbi(HGASI_SHMEM_UNPAREN C void *dest, const void *source, size_t nelems,      \
                          int pe);
#define HGASI_SHMEM_DECL_STRIDED_P(P, C, B)                                                         \
    void P##_iput##B(HGASI_SHMEM_UNPAREN C void *dest, const void *source, ptrdiff_t dst,           \
                     ptrdiff_t sst, size_t nelems, int pe);                                         \
    void P##_iget##B(HGASI_SHMEM_UNPAREN C void *dest, const void *source, ptrdiff_t dst,           \
                     ptrdiff_t sst, size_t nelems, int pe);
#define HGASI_SHMEM_DECL_SIZED(B)                                                                   \
    HGASI_SHMEM_WITH_CTX0(HGASI_SHMEM_DECL_SIZED_P, B) HGASI_SHMEM_WITH_CTX0(HGASI_SHMEM_DECL_STRIDED_P, B)
HGAS_SHMEM_SIZES(HGASI_SHMEM_DECL_SIZED)
HGASI_SHMEM_WITH_CTX0(HGASI_SHMEM_DECL_SIZED_P, mem)

/* ------------------------------------------------------------------------------------------
 * Put with signal (hgas_put_signal). For TYPE/TYPENAME in HGAS_SHMEM_TYPES_RMA, BITS in
 * HGAS_SHMEM_SIZES and bytes (putmem):
 *  shmem_TYPENAME_put_signal(dest, source, nelems, sig_addr, signal, sig_op, pe): puts the
 *    data, then updates the symmetric uint64_t *sig_addr on pe by sig_op (SHMEM_SIGNAL_SET or
 *    SHMEM_SIGNAL_ADD) with `signal`; a PE that sees the new signal sees the data. Returns
 *    when source may be reused. _nbi: completes at shmem_quiet.
 *  shmem_signal_fetch: atomic read of a local signal word.
 *  shmem_signal_wait_until: waits until *sig_addr `cmp` cmp_value, returns the value seen.
 * ---------------------------------------------------------------------------------------- */

#define HGASI_SHMEM_DECL_SIGNAL_P(P, C, T)                                                         \
    void P##_put_signal(HGASI_SHMEM_UNPAREN C T *dest, const T *source, size_t nelems,              \
                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);                   \
    void P##_put_signal_nbi(HGASI_SHMEM_UNPAREN C T *dest, const T *source, size_t nelems,          \
                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
#define HGASI_SHMEM_DECL_SIGNAL(T, N, G) HGASI_SHMEM_WITH_CTX(HGASI_SHMEM_DECL_SIGNAL_P, N, T)
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_DECL_SIGNAL)
#define HGASI_SHMEM_DECL_SIZED_SIGNAL_P(P, C, B)                                                    \
    void P##_put##B##_signal(HGASI_SHMEM_UNPAREN C void *dest, const void *source, size_t nelems,   \
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);              \
    void P##_put##B##_signal_nbi(HGASI_SHMEM_UNPAREN C void *dest, const void *source,              \
                                 size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op,    \
                                 int pe);
#define HGASI_SHMEM_DECL_SIZED_SIGNAL(B) HGASI_SHMEM_WITH_CTX0(HGASI_SHMEM_DECL_SIZED_SIGNAL_P, B)
HGAS_SHMEM_SIZES(HGASI_SHMEM_DECL_SIZED_SIGNAL)
HGASI_SHMEM_DECL_SIZED_SIGNAL(mem)
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ------------------------------------------------------------------------------------------
 * Atomic memory operations on the symmetric `dest`/`source` of PE `pe` (hgas_atomic). Each
 * is complete at return (the `_nbi` fetching forms too: *fetch holds the old value at once,
 * which OpenSHMEM allows). For TYPE/TYPENAME in
 *  HGAS_SHMEM_TYPES_AMO and HGAS_SHMEM_TYPES_AMO_EXT:
 *    shmem_TYPENAME_atomic_fetch(source, pe)            returns *source
 *    shmem_TYPENAME_atomic_set(dest, value, pe)         *dest = value
 *    shmem_TYPENAME_atomic_swap(dest, value, pe)        returns old; *dest = value
 *  HGAS_SHMEM_TYPES_AMO:
 *    shmem_TYPENAME_atomic_compare_swap(dest, cond, value, pe)  returns old; if old == cond
 *                                                                 *dest = value
 *    shmem_TYPENAME_atomic_fetch_inc(dest, pe) / _inc(dest, pe)          *dest += 1
 *    shmem_TYPENAME_atomic_fetch_add(dest, value, pe) / _add(dest, value, pe)
 *  HGAS_SHMEM_TYPES_AMO_BIT: atomic_fetch_and/and, fetch_or/or, fetch_xor/xor(dest, value, pe)
 *  and `_nbi` forms of every fetching one, e.g. shmem_TYPENAME_atomic_fetch_add_nbi(fetch,
 *  dest, value, pe), writing the old value to *fetch.
 *  float/double fetch, set and swap move the bit pattern atomically.
 *  Deprecated names (HGAS_SHMEM_TYPES_OLD_AMO, the standard AMO types): shmem_TYPENAME_fadd,
 *  _finc, _add, _inc, _cswap, _swap, _fetch, _set; (HGAS_SHMEM_TYPES_OLD_AMO_EXT): _swap,
 *  _fetch, _set.
 * ---------------------------------------------------------------------------------------- */

#define HGASI_SHMEM_DECL_AMO_EXT_P(P, C, T)                                                        \
    T P##_atomic_fetch(HGASI_SHMEM_UNPAREN C const T *source, int pe);                              \
    void P##_atomic_set(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                            \
    T P##_atomic_swap(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                              \
    void P##_atomic_fetch_nbi(HGASI_SHMEM_UNPAREN C T *fetch, const T *source, int pe);             \
    void P##_atomic_swap_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, T value, int pe);
#define HGASI_SHMEM_DECL_AMO_P(P, C, T)                                                            \
    HGASI_SHMEM_DECL_AMO_EXT_P(P, C, T)                                                             \
    T P##_atomic_compare_swap(HGASI_SHMEM_UNPAREN C T *dest, T cond, T value, int pe);              \
    T P##_atomic_fetch_inc(HGASI_SHMEM_UNPAREN C T *dest, int pe);                                  \
    void P##_atomic_inc(HGASI_SHMEM_UNPAREN C T *dest, int pe);                                     \
    T P##_atomic_fetch_add(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                         \
    void P##_atomic_add(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                            \
    void P##_atomic_compare_swap_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, T cond, T value,      \
                                     int pe);                                                       \
    void P##_atomic_fetch_inc_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, int pe);                 \
    void P##_atomic_fetch_add_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, T value, int pe);
#define HGASI_SHMEM_DECL_AMO_BIT_P(P, C, T)                                                        \
    T P##_atomic_fetch_and(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                         \
    void P##_atomic_and(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                            \
    T P##_atomic_fetch_or(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                          \
    void P##_atomic_or(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                             \
    T P##_atomic_fetch_xor(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                         \
    void P##_atomic_xor(HGASI_SHMEM_UNPAREN C T *dest, T value, int pe);                            \
    void P##_atomic_fetch_and_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, T value, int pe);        \
    void P##_atomic_fetch_or_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, T value, int pe);         \
    void P##_atomic_fetch_xor_nbi(HGASI_SHMEM_UNPAREN C T *fetch, T *dest, T value, int pe);
#define HGASI_SHMEM_DECL_AMO(T, N, G) HGASI_SHMEM_WITH_CTX(HGASI_SHMEM_DECL_AMO_P, N, T)
#define HGASI_SHMEM_DECL_AMO_EXT(T, N, G) HGASI_SHMEM_WITH_CTX(HGASI_SHMEM_DECL_AMO_EXT_P, N, T)
#define HGASI_SHMEM_DECL_AMO_BIT(T, N, G) HGASI_SHMEM_WITH_CTX(HGASI_SHMEM_DECL_AMO_BIT_P, N, T)
HGAS_SHMEM_TYPES_AMO(HGASI_SHMEM_DECL_AMO)
HGAS_SHMEM_TYPES_AMO_EXT(HGASI_SHMEM_DECL_AMO_EXT)
HGAS_SHMEM_TYPES_AMO_BIT(HGASI_SHMEM_DECL_AMO_BIT)

#define HGASI_SHMEM_DECL_OLD_AMO_EXT(T, N, G)                                                      \
    T shmem_##N##_swap(T *dest, T value, int pe);                                                   \
    T shmem_##N##_fetch(const T *source, int pe);                                                   \
    void shmem_##N##_set(T *dest, T value, int pe);
#define HGASI_SHMEM_DECL_OLD_AMO(T, N, G)                                                          \
    HGASI_SHMEM_DECL_OLD_AMO_EXT(T, N, G)                                                           \
    T shmem_##N##_fadd(T *dest, T value, int pe);                                                   \
    T shmem_##N##_finc(T *dest, int pe);                                                            \
    void shmem_##N##_add(T *dest, T value, int pe);                                                 \
    void shmem_##N##_inc(T *dest, int pe);                                                          \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe);
HGAS_SHMEM_TYPES_OLD_AMO(HGASI_SHMEM_DECL_OLD_AMO)
HGAS_SHMEM_TYPES_OLD_AMO_EXT(HGASI_SHMEM_DECL_OLD_AMO_EXT)

/* ------------------------------------------------------------------------------------------
 * Ordering and point-to-point synchronization
 *  shmem_fence: puts, put_signals and atomics to each PE issued before it are delivered
 *    before those issued after it (hgas_fence). shmem_quiet: every operation this PE issued
 *    is complete at its target (hgas_quiet).
 *  For TYPE/TYPENAME in HGAS_SHMEM_TYPES_SYNC, on the local symmetric ivar(s), with cmp one
 *  of SHMEM_CMP_EQ/NE/GT/GE/LT/LE (signed comparison for signed types):
 *    shmem_TYPENAME_wait_until(ivar, cmp, value): returns once *ivar cmp value.
 *    _wait_until_all(ivars, nelems, status, cmp, value): once every ivars[i] whose status[i]
 *      is 0 (status may be NULL: all) satisfies it.
 *    _wait_until_any(...): returns the index of one that does (SIZE_MAX if all are excluded);
 *      the search starts after the index the PE's last *_any call returned, so that ready
 *      variables are served in turn.
 *    _wait_until_some(ivars, nelems, indices, status, cmp, value): waits for at least one,
 *      writes the indices of all that satisfy it to `indices` and returns their count.
 *    _all_vector/_any_vector/_some_vector: the same, element i compared with cmp_values[i].
 *    shmem_TYPENAME_test(ivar, cmp, value): 1 if satisfied now, else 0; test_all (1/0),
 *      test_any (index or SIZE_MAX), test_some (count, possibly 0) and their _vector forms
 *      check once without waiting.
 *    Deprecated: shmem_TYPENAME_wait(ivar, value) (HGAS_SHMEM_TYPES_OLD_INT) and
 *      shmem_wait(long *ivar, long value): wait until *ivar != value.
 *  A wait makes progress while it spins and ends the job after HGAS_TIMEOUT seconds.
 * ---------------------------------------------------------------------------------------- */

void shmem_fence(void);
void shmem_quiet(void);

#define HGASI_SHMEM_DECL_SYNC(T, N, G)                                                             \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                     \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,            \
                                    T cmp_value);                                                   \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,          \
                                      T cmp_value);                                                 \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                    \
                                       const int *status, int cmp, T cmp_value);                    \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                           T *cmp_values);                                          \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
                                             T *cmp_values);                                        \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,             \
                                              const int *status, int cmp, T *cmp_values);           \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                            \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);     \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);  \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,       \
                                 int cmp, T cmp_value);                                             \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,            \
                                    T *cmp_values);                                                 \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,         \
                                       T *cmp_values);                                              \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                   \
                                        const int *status, int cmp, T *cmp_values);
HGAS_SHMEM_TYPES_SYNC(HGASI_SHMEM_DECL_SYNC)
#define HGASI_SHMEM_DECL_OLD_WAIT(T, N, G) void shmem_##N##_wait(T *ivar, T cmp_value);
HGAS_SHMEM_TYPES_OLD_INT(HGASI_SHMEM_DECL_OLD_WAIT)
void shmem_wait(long *ivar, long cmp_value);

/* ------------------------------------------------------------------------------------------
 * Distributed locks on a symmetric `long` initialized to 0 on every PE (the word on PE 0
 * holds the lock). shmem_set_lock: acquires, spinning with progress and back-off (ends the
 * job after HGAS_TIMEOUT). shmem_test_lock: acquires if free and returns 0, else returns 1.
 * shmem_clear_lock: completes this PE's outstanding puts (quiet), then releases.
 * ---------------------------------------------------------------------------------------- */

void shmem_set_lock(long *lock);
int shmem_test_lock(long *lock);
void shmem_clear_lock(long *lock);

/* ------------------------------------------------------------------------------------------
 * Collectives on teams. Every PE of the team calls them in the same order with the same sizes
 * and root (a PE number in the team); buffers are symmetric (shmem_malloc or global/static).
 * Each returns 0, or nonzero with the reason on stderr for an invalid team.
 *  shmem_barrier_all: quiet, then wait for every PE. shmem_sync_all: wait for every PE.
 *  shmem_TYPENAME_broadcast(team, dest, source, nelems, PE_root) / shmem_broadcastmem (bytes):
 *    source of PE_root lands in dest on every PE of the team, the root included.
 *  shmem_TYPENAME_collect(team, dest, source, nelems) / collectmem: each PE's nelems (which
 *    may differ between PEs) concatenated in PE order in dest on every PE.
 *  shmem_TYPENAME_fcollect / fcollectmem: the same with equal nelems everywhere.
 *  shmem_TYPENAME_alltoall(team, dest, source, nelems) / alltoallmem: block j of PE i's
 *    source (nelems elements) lands as block i of PE j's dest.
 *  shmem_TYPENAME_alltoalls(team, dest, source, dst, sst, nelems) / alltoallsmem: the same
 *    with element strides dst and sst (>= 1) inside the blocks.
 *  shmem_TYPENAME_OP_reduce(team, dest, source, nreduce), OP in and/or/xor
 *    (HGAS_SHMEM_TYPES_REDUCE_BIT) and max/min/sum/prod (HGAS_SHMEM_TYPES_REDUCE_ARITH):
 *    and sum/prod only for HGAS_SHMEM_TYPES_REDUCE_COMPLEX (complexd, complexf):
 *    dest[i] = OP over every PE of source[i]; dest and source may be the same array.
 *    Integer sum/prod wrap around.
 * ---------------------------------------------------------------------------------------- */

void shmem_barrier_all(void);
void shmem_sync_all(void);
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems);

#define HGASI_SHMEM_DECL_COLL(T, N, G)                                                             \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,           \
                              int PE_root);                                                         \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);            \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);           \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);           \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,           \
                              ptrdiff_t sst, size_t nelems);
HGAS_SHMEM_TYPES_RMA(HGASI_SHMEM_DECL_COLL)

#define HGASI_SHMEM_DECL_REDUCE(T, N, OP)                                                          \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define HGASI_SHMEM_DECL_REDUCE_BIT(T, N, G)                                                       \
    HGASI_SHMEM_DECL_REDUCE(T, N, and) HGASI_SHMEM_DECL_REDUCE(T, N, or)                            \
    HGASI_SHMEM_DECL_REDUCE(T, N, xor)
#define HGASI_SHMEM_DECL_REDUCE_ARITH(T, N, G)                                                     \
    HGASI_SHMEM_DECL_REDUCE(T, N, max) HGASI_SHMEM_DECL_REDUCE(T, N, min)                           \
    HGASI_SHMEM_DECL_REDUCE(T, N, sum) HGASI_SHMEM_DECL_REDUCE(T, N, prod)
HGAS_SHMEM_TYPES_REDUCE_BIT(HGASI_SHMEM_DECL_REDUCE_BIT)
HGAS_SHMEM_TYPES_REDUCE_ARITH(HGASI_SHMEM_DECL_REDUCE_ARITH)
#define HGASI_SHMEM_DECL_REDUCE_COMPLEX(T, N, G)                                                   \
    HGASI_SHMEM_EXT HGASI_SHMEM_DECL_REDUCE(T, N, sum) HGASI_SHMEM_EXT HGASI_SHMEM_DECL_REDUCE(T, N, prod)
HGAS_SHMEM_TYPES_REDUCE_COMPLEX(HGASI_SHMEM_DECL_REDUCE_COMPLEX)

/* ------------------------------------------------------------------------------------------
 * Deprecated active-set collectives. The active set is the PEs PE_start + i * 2^logPE_stride
 * for i < PE_size; only its members call, all with the same arguments. pSync is a symmetric
 * array of SHMEM_*_SYNC_SIZE longs, every element SHMEM_SYNC_VALUE before the call (restored
 * on return); it is used when the active set is not the whole job, and must then come from
 * shmem_malloc. pWrk is not needed and may be anything. A NULL pSync, a negative or too large
 * active set, a caller outside it, or a root outside it ends the job naming the call.
 *  shmem_barrier: quiet, then wait for the active set. shmem_sync: wait for the active set.
 *  shmem_broadcast32/64(dest, source, nelems, PE_root, ...): PE_root is an index in the active
 *    set; nelems 32/64-bit elements of its source land in dest on every other member (the
 *    root's dest is not written).
 *  shmem_collect32/64, shmem_fcollect32/64(dest, source, nelems, ...), shmem_alltoall32/64,
 *    shmem_alltoalls32/64(dest, source, dst, sst, nelems, ...): as the team versions.
 *  shmem_TYPENAME_OP_to_all(dest, source, nreduce, PE_start, logPE_stride, PE_size, pWrk,
 *    pSync): OP in and/or/xor (HGAS_SHMEM_TYPES_OLD_INT), max/min/sum/prod
 *    (HGAS_SHMEM_TYPES_OLD_ARITH), sum/prod (HGAS_SHMEM_TYPES_REDUCE_COMPLEX); as the team
 *    reductions over the active set.
 * ---------------------------------------------------------------------------------------- */

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define HGASI_SHMEM_DECL_ACTIVE(B)                                                                  \
    void shmem_broadcast##B(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                            int logPE_stride, int PE_size, long *pSync);                            \
    void shmem_collect##B(void *dest, const void *source, size_t nelems, int PE_start,              \
                          int logPE_stride, int PE_size, long *pSync);                              \
    void shmem_fcollect##B(void *dest, const void *source, size_t nelems, int PE_start,             \
                           int logPE_stride, int PE_size, long *pSync);                             \
    void shmem_alltoall##B(void *dest, const void *source, size_t nelems, int PE_start,             \
                           int logPE_stride, int PE_size, long *pSync);                             \
    void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,           \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
HGASI_SHMEM_DECL_ACTIVE(32)
HGASI_SHMEM_DECL_ACTIVE(64)

#define HGASI_SHMEM_DECL_TO_ALL(T, N, OP)                                                          \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,             \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define HGASI_SHMEM_DECL_TO_ALL_BIT(T, N, G)                                                       \
    HGASI_SHMEM_DECL_TO_ALL(T, N, and) HGASI_SHMEM_DECL_TO_ALL(T, N, or)                            \
    HGASI_SHMEM_DECL_TO_ALL(T, N, xor)
#define HGASI_SHMEM_DECL_TO_ALL_ARITH(T, N, G)                                                     \
    HGASI_SHMEM_DECL_TO_ALL(T, N, max) HGASI_SHMEM_DECL_TO_ALL(T, N, min)                           \
    HGASI_SHMEM_DECL_TO_ALL(T, N, sum) HGASI_SHMEM_DECL_TO_ALL(T, N, prod)
HGAS_SHMEM_TYPES_OLD_INT(HGASI_SHMEM_DECL_TO_ALL_BIT)
HGAS_SHMEM_TYPES_OLD_ARITH(HGASI_SHMEM_DECL_TO_ALL_ARITH)
#define HGASI_SHMEM_DECL_TO_ALL_COMPLEX(T, N, G)                                                   \
    HGASI_SHMEM_EXT HGASI_SHMEM_DECL_TO_ALL(T, N, sum) HGASI_SHMEM_EXT HGASI_SHMEM_DECL_TO_ALL(T, N, prod)
HGAS_SHMEM_TYPES_REDUCE_COMPLEX(HGASI_SHMEM_DECL_TO_ALL_COMPLEX)

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------------------------
 * Type-generic interfaces (C11 _Generic; overloads in C++), over the types with G = 1 in the
 * lists above. Each takes the arguments of its typed form: shmem_put(dest, source, nelems,
 * pe) is shmem_TYPENAME_put, chosen by the type of *dest. Those whose typed form has a
 * context form also take a context first: shmem_put(ctx, dest, source, nelems, pe) is
 * shmem_ctx_TYPENAME_put (chosen by the first argument's type, then by the second's).
 *  with a context form: put, p, iput, get, g, iget, put_nbi, get_nbi, put_signal(_nbi);
 *    atomic_fetch, set, swap, compare_swap, fetch_inc, inc, fetch_add, add, fetch_and, and,
 *    fetch_or, or, fetch_xor, xor; atomic_fetch_nbi, swap_nbi, compare_swap_nbi,
 *    fetch_inc_nbi, fetch_add_nbi, fetch_and_nbi, fetch_or_nbi, fetch_xor_nbi.
 *  without: wait_until, wait_until_all/any/some(_vector), test, test_all/any/some(_vector);
 *    broadcast, collect, fcollect, alltoall, alltoalls, and/or/xor/max/min/sum/prod_reduce
 *    (team first, chosen by dest); shmem_sync(team) (with four arguments, the deprecated
 *    active-set shmem_sync); the deprecated shmem_add, cswap, fadd, finc, inc (standard AMO
 *    types) and shmem_swap, fetch, set (also float, double).
 * A type outside the table fails to compile (C: naming hgasi_shmem_type_not_supported; C++:
 * no matching overload).
 * ---------------------------------------------------------------------------------------- */
#define HGASI_SHMEM_IF_1(...) __VA_ARGS__
#define HGASI_SHMEM_IF_0(...)
#define HGASI_SHMEM_AMO_ALL(X) HGAS_SHMEM_TYPES_AMO(X) HGAS_SHMEM_TYPES_AMO_EXT(X)
#define HGASI_SHMEM_OLD_AMO_ALL(X) HGAS_SHMEM_TYPES_OLD_AMO(X) HGAS_SHMEM_TYPES_OLD_AMO_EXT(X)
#define HGASI_SHMEM_SUM_PROD_TYPES(X) HGAS_SHMEM_TYPES_REDUCE_ARITH(X) HGAS_SHMEM_TYPES_REDUCE_COMPLEX(X)

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
/* Never defined: selected for a type outside the table, so that the call fails to compile
 * ("too many arguments to function 'hgasi_shmem_type_not_supported'"). */
void hgasi_shmem_type_not_supported(void);
/* The first and second of the arguments (the sentinels keep a short list valid). */
#define HGASI_SHMEM_ARG0(...) HGASI_SHMEM_ARG0_(__VA_ARGS__, 0)
#define HGASI_SHMEM_ARG0_(a, ...) a
#define HGASI_SHMEM_ARG1(...) HGASI_SHMEM_ARG1_(__VA_ARGS__, 0, 0)
#define HGASI_SHMEM_ARG1_(a, b, ...) b
/* Association generators, one per routine: HGASI_SHMEM_G_op(T, N, G) gives `T *: shmem_N_op,`
 * and HGASI_SHMEM_C_op the context form `T *: shmem_ctx_N_op,` (G = 1 only). Routines whose
 * pointer is const in the typed form also take `const T *`. */
#define HGASI_SHMEM_GN(T, N, G, OP) HGASI_SHMEM_IF_##G(T *: shmem_##N##_##OP,)
#define HGASI_SHMEM_GC(T, N, G, OP) HGASI_SHMEM_IF_##G(T *: shmem_##N##_##OP, const T *: shmem_##N##_##OP,)
#define HGASI_SHMEM_CN(T, N, G, OP) HGASI_SHMEM_IF_##G(T *: shmem_ctx_##N##_##OP,)
#define HGASI_SHMEM_CC(T, N, G, OP) HGASI_SHMEM_IF_##G(T *: shmem_ctx_##N##_##OP, const T *: shmem_ctx_##N##_##OP,)
#define HGASI_SHMEM_G_put(T, N, G) HGASI_SHMEM_GN(T, N, G, put)
#define HGASI_SHMEM_C_put(T, N, G) HGASI_SHMEM_CN(T, N, G, put)
#define HGASI_SHMEM_G_p(T, N, G) HGASI_SHMEM_GN(T, N, G, p)
#define HGASI_SHMEM_C_p(T, N, G) HGASI_SHMEM_CN(T, N, G, p)
#define HGASI_SHMEM_G_iput(T, N, G) HGASI_SHMEM_GN(T, N, G, iput)
#define HGASI_SHMEM_C_iput(T, N, G) HGASI_SHMEM_CN(T, N, G, iput)
#define HGASI_SHMEM_G_get(T, N, G) HGASI_SHMEM_GN(T, N, G, get)
#define HGASI_SHMEM_C_get(T, N, G) HGASI_SHMEM_CN(T, N, G, get)
#define HGASI_SHMEM_G_g(T, N, G) HGASI_SHMEM_GC(T, N, G, g)
#define HGASI_SHMEM_C_g(T, N, G) HGASI_SHMEM_CC(T, N, G, g)
#define HGASI_SHMEM_G_iget(T, N, G) HGASI_SHMEM_GN(T, N, G, iget)
#define HGASI_SHMEM_C_iget(T, N, G) HGASI_SHMEM_CN(T, N, G, iget)
#define HGASI_SHMEM_G_put_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, put_nbi)
#define HGASI_SHMEM_C_put_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, put_nbi)
#define HGASI_SHMEM_G_get_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, get_nbi)
#define HGASI_SHMEM_C_get_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, get_nbi)
#define HGASI_SHMEM_G_put_signal(T, N, G) HGASI_SHMEM_GN(T, N, G, put_signal)
#define HGASI_SHMEM_C_put_signal(T, N, G) HGASI_SHMEM_CN(T, N, G, put_signal)
#define HGASI_SHMEM_G_put_signal_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, put_signal_nbi)
#define HGASI_SHMEM_C_put_signal_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, put_signal_nbi)
#define HGASI_SHMEM_G_atomic_fetch(T, N, G) HGASI_SHMEM_GC(T, N, G, atomic_fetch)
#define HGASI_SHMEM_C_atomic_fetch(T, N, G) HGASI_SHMEM_CC(T, N, G, atomic_fetch)
#define HGASI_SHMEM_G_atomic_set(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_set)
#define HGASI_SHMEM_C_atomic_set(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_set)
#define HGASI_SHMEM_G_atomic_swap(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_swap)
#define HGASI_SHMEM_C_atomic_swap(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_swap)
#define HGASI_SHMEM_G_atomic_compare_swap(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_compare_swap)
#define HGASI_SHMEM_C_atomic_compare_swap(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_compare_swap)
#define HGASI_SHMEM_G_atomic_fetch_inc(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_inc)
#define HGASI_SHMEM_C_atomic_fetch_inc(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_inc)
#define HGASI_SHMEM_G_atomic_inc(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_inc)
#define HGASI_SHMEM_C_atomic_inc(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_inc)
#define HGASI_SHMEM_G_atomic_fetch_add(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_add)
#define HGASI_SHMEM_C_atomic_fetch_add(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_add)
#define HGASI_SHMEM_G_atomic_add(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_add)
#define HGASI_SHMEM_C_atomic_add(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_add)
#define HGASI_SHMEM_G_atomic_fetch_and(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_and)
#define HGASI_SHMEM_C_atomic_fetch_and(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_and)
#define HGASI_SHMEM_G_atomic_and(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_and)
#define HGASI_SHMEM_C_atomic_and(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_and)
#define HGASI_SHMEM_G_atomic_fetch_or(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_or)
#define HGASI_SHMEM_C_atomic_fetch_or(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_or)
#define HGASI_SHMEM_G_atomic_or(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_or)
#define HGASI_SHMEM_C_atomic_or(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_or)
#define HGASI_SHMEM_G_atomic_fetch_xor(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_xor)
#define HGASI_SHMEM_C_atomic_fetch_xor(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_xor)
#define HGASI_SHMEM_G_atomic_xor(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_xor)
#define HGASI_SHMEM_C_atomic_xor(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_xor)
#define HGASI_SHMEM_G_atomic_fetch_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_nbi)
#define HGASI_SHMEM_C_atomic_fetch_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_nbi)
#define HGASI_SHMEM_G_atomic_swap_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_swap_nbi)
#define HGASI_SHMEM_C_atomic_swap_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_swap_nbi)
#define HGASI_SHMEM_G_atomic_compare_swap_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_compare_swap_nbi)
#define HGASI_SHMEM_C_atomic_compare_swap_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_compare_swap_nbi)
#define HGASI_SHMEM_G_atomic_fetch_inc_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_inc_nbi)
#define HGASI_SHMEM_C_atomic_fetch_inc_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_inc_nbi)
#define HGASI_SHMEM_G_atomic_fetch_add_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_add_nbi)
#define HGASI_SHMEM_C_atomic_fetch_add_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_add_nbi)
#define HGASI_SHMEM_G_atomic_fetch_and_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_and_nbi)
#define HGASI_SHMEM_C_atomic_fetch_and_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_and_nbi)
#define HGASI_SHMEM_G_atomic_fetch_or_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_or_nbi)
#define HGASI_SHMEM_C_atomic_fetch_or_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_or_nbi)
#define HGASI_SHMEM_G_atomic_fetch_xor_nbi(T, N, G) HGASI_SHMEM_GN(T, N, G, atomic_fetch_xor_nbi)
#define HGASI_SHMEM_C_atomic_fetch_xor_nbi(T, N, G) HGASI_SHMEM_CN(T, N, G, atomic_fetch_xor_nbi)
#define HGASI_SHMEM_G_wait_until(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until)
#define HGASI_SHMEM_G_wait_until_all(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until_all)
#define HGASI_SHMEM_G_wait_until_any(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until_any)
#define HGASI_SHMEM_G_wait_until_some(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until_some)
#define HGASI_SHMEM_G_wait_until_all_vector(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until_all_vector)
#define HGASI_SHMEM_G_wait_until_any_vector(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until_any_vector)
#define HGASI_SHMEM_G_wait_until_some_vector(T, N, G) HGASI_SHMEM_GN(T, N, G, wait_until_some_vector)
#define HGASI_SHMEM_G_test(T, N, G) HGASI_SHMEM_GN(T, N, G, test)
#define HGASI_SHMEM_G_test_all(T, N, G) HGASI_SHMEM_GN(T, N, G, test_all)
#define HGASI_SHMEM_G_test_any(T, N, G) HGASI_SHMEM_GN(T, N, G, test_any)
#define HGASI_SHMEM_G_test_some(T, N, G) HGASI_SHMEM_GN(T, N, G, test_some)
#define HGASI_SHMEM_G_test_all_vector(T, N, G) HGASI_SHMEM_GN(T, N, G, test_all_vector)
#define HGASI_SHMEM_G_test_any_vector(T, N, G) HGASI_SHMEM_GN(T, N, G, test_any_vector)
#define HGASI_SHMEM_G_test_some_vector(T, N, G) HGASI_SHMEM_GN(T, N, G, test_some_vector)
#define HGASI_SHMEM_G_broadcast(T, N, G) HGASI_SHMEM_GN(T, N, G, broadcast)
#define HGASI_SHMEM_G_collect(T, N, G) HGASI_SHMEM_GN(T, N, G, collect)
#define HGASI_SHMEM_G_fcollect(T, N, G) HGASI_SHMEM_GN(T, N, G, fcollect)
#define HGASI_SHMEM_G_alltoall(T, N, G) HGASI_SHMEM_GN(T, N, G, alltoall)
#define HGASI_SHMEM_G_alltoalls(T, N, G) HGASI_SHMEM_GN(T, N, G, alltoalls)
#define HGASI_SHMEM_G_and_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, and_reduce)
#define HGASI_SHMEM_G_or_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, or_reduce)
#define HGASI_SHMEM_G_xor_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, xor_reduce)
#define HGASI_SHMEM_G_max_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, max_reduce)
#define HGASI_SHMEM_G_min_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, min_reduce)
#define HGASI_SHMEM_G_sum_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, sum_reduce)
#define HGASI_SHMEM_G_prod_reduce(T, N, G) HGASI_SHMEM_GN(T, N, G, prod_reduce)
#define HGASI_SHMEM_G_add(T, N, G) HGASI_SHMEM_GN(T, N, G, add)
#define HGASI_SHMEM_G_cswap(T, N, G) HGASI_SHMEM_GN(T, N, G, cswap)
#define HGASI_SHMEM_G_fadd(T, N, G) HGASI_SHMEM_GN(T, N, G, fadd)
#define HGASI_SHMEM_G_finc(T, N, G) HGASI_SHMEM_GN(T, N, G, finc)
#define HGASI_SHMEM_G_inc(T, N, G) HGASI_SHMEM_GN(T, N, G, inc)
#define HGASI_SHMEM_G_swap(T, N, G) HGASI_SHMEM_GN(T, N, G, swap)
#define HGASI_SHMEM_G_fetch(T, N, G) HGASI_SHMEM_GC(T, N, G, fetch)
#define HGASI_SHMEM_G_set(T, N, G) HGASI_SHMEM_GN(T, N, G, set)
/* The routine for a pointer `ptr` (`&*` turns an array into a pointer) over list LIST. */
#define HGASI_SHMEM_SELECT(LIST, OP, ptr)                                                           \
    _Generic(&*(ptr), LIST(HGASI_SHMEM_G_##OP) default: hgasi_shmem_type_not_supported)
/* The same where a context may come first: the outer selection tells a context from a typed
 * pointer; with a context, the inner one selects by the second argument. Both are compiled
 * whichever is chosen, so the inner one's control (`+ 0`) is valid for a value too (the
 * second argument of shmem_p(dest, value, pe)), and it has a default. */
#define HGASI_SHMEM_SELECT_CTX(LIST, OP, ...)                                                       \
    _Generic(&*(HGASI_SHMEM_ARG0(__VA_ARGS__)),                                                     \
        shmem_ctx_t: _Generic((HGASI_SHMEM_ARG1(__VA_ARGS__)) + 0,                                  \
                              LIST(HGASI_SHMEM_C_##OP) default: hgasi_shmem_type_not_supported),    \
        LIST(HGASI_SHMEM_G_##OP) default: hgasi_shmem_type_not_supported)
#define HGASI_SHMEM_CALL_CTX(LIST, OP, ...) HGASI_SHMEM_SELECT_CTX(LIST, OP, __VA_ARGS__)(__VA_ARGS__)

#define shmem_put(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, put, __VA_ARGS__)
#define shmem_p(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, p, __VA_ARGS__)
#define shmem_iput(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, iput, __VA_ARGS__)
#define shmem_get(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, get, __VA_ARGS__)
#define shmem_g(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, g, __VA_ARGS__)
#define shmem_iget(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, iget, __VA_ARGS__)
#define shmem_put_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, get_nbi, __VA_ARGS__)
#define shmem_put_signal(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_RMA, put_signal_nbi, __VA_ARGS__)
#define shmem_atomic_fetch(...) HGASI_SHMEM_CALL_CTX(HGASI_SHMEM_AMO_ALL, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...) HGASI_SHMEM_CALL_CTX(HGASI_SHMEM_AMO_ALL, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) HGASI_SHMEM_CALL_CTX(HGASI_SHMEM_AMO_ALL, atomic_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) HGASI_SHMEM_CALL_CTX(HGASI_SHMEM_AMO_ALL, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) HGASI_SHMEM_CALL_CTX(HGASI_SHMEM_AMO_ALL, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...)                                                          \
    HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) HGASI_SHMEM_CALL_CTX(HGAS_SHMEM_TYPES_AMO_BIT, atomic_fetch_xor_nbi, __VA_ARGS__)

#define HGASI_SHMEM_CALL(LIST, OP, ptr, ...) HGASI_SHMEM_SELECT(LIST, OP, ptr)(ptr, __VA_ARGS__)
#define shmem_wait_until(ivar, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until, ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until_all, ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until_any, ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until_some, ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...)                                                     \
    HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until_all_vector, ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...)                                                     \
    HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until_any_vector, ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...)                                                    \
    HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, wait_until_some_vector, ivars, __VA_ARGS__)
#define shmem_test(ivar, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test, ivar, __VA_ARGS__)
#define shmem_test_all(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test_all, ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test_any, ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test_some, ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test_all_vector, ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test_any_vector, ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...)                                                          \
    HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_SYNC, test_some_vector, ivars, __VA_ARGS__)

/* Collectives: the team comes first, the type is dest's. */
#define HGASI_SHMEM_CALL_TEAM(LIST, OP, team, dest, ...)                                            \
    HGASI_SHMEM_SELECT(LIST, OP, dest)(team, dest, __VA_ARGS__)
#define shmem_broadcast(team, dest, ...) HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_RMA, broadcast, team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_RMA, collect, team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_RMA, fcollect, team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_RMA, alltoall, team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_RMA, alltoalls, team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...)                                                           \
    HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_REDUCE_BIT, and_reduce, team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...)                                                            \
    HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_REDUCE_BIT, or_reduce, team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...)                                                           \
    HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_REDUCE_BIT, xor_reduce, team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...)                                                           \
    HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_REDUCE_ARITH, max_reduce, team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...)                                                           \
    HGASI_SHMEM_CALL_TEAM(HGAS_SHMEM_TYPES_REDUCE_ARITH, min_reduce, team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...)                                                           \
    HGASI_SHMEM_CALL_TEAM(HGASI_SHMEM_SUM_PROD_TYPES, sum_reduce, team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...)                                                          \
    HGASI_SHMEM_CALL_TEAM(HGASI_SHMEM_SUM_PROD_TYPES, prod_reduce, team, dest, __VA_ARGS__)

/* Deprecated (1.4) generic names. */
#define shmem_add(dest, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_OLD_AMO, add, dest, __VA_ARGS__)
#define shmem_cswap(dest, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_OLD_AMO, cswap, dest, __VA_ARGS__)
#define shmem_fadd(dest, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_OLD_AMO, fadd, dest, __VA_ARGS__)
#define shmem_finc(dest, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_OLD_AMO, finc, dest, __VA_ARGS__)
#define shmem_inc(dest, ...) HGASI_SHMEM_CALL(HGAS_SHMEM_TYPES_OLD_AMO, inc, dest, __VA_ARGS__)
#define shmem_swap(dest, ...) HGASI_SHMEM_CALL(HGASI_SHMEM_OLD_AMO_ALL, swap, dest, __VA_ARGS__)
#define shmem_fetch(src, ...) HGASI_SHMEM_CALL(HGASI_SHMEM_OLD_AMO_ALL, fetch, src, __VA_ARGS__)
#define shmem_set(dest, ...) HGASI_SHMEM_CALL(HGASI_SHMEM_OLD_AMO_ALL, set, dest, __VA_ARGS__)

/* shmem_sync(team) is shmem_team_sync(team); with four arguments it stays the deprecated
 * active-set routine (the function of that name). Chosen by the number of arguments. */
#define HGASI_SHMEM_SYNC_PICK(_1, _2, _3, _4, NAME, ...) NAME
#define shmem_sync(...)                                                                             \
    HGASI_SHMEM_SYNC_PICK(__VA_ARGS__, shmem_sync, hgasi_shmem_type_not_supported,                  \
                          hgasi_shmem_type_not_supported, shmem_team_sync, )(__VA_ARGS__)
#endif /* C11 */

#ifdef __cplusplus
#include <hgas/shmem_overloads.h>
#endif

#endif /* HGAS_SHMEM_H */
