/* hgas.h — the C API of hgas, a global address space over the memory of every rank.
 *
 * Model (docs/model.md has the whole text):
 *  - A job has hgas_rank_n() ranks, started by `hgasrun -n N prog` or by srun/mpirun.
 *  - Every rank owns segments of memory. A global pointer names a byte in any of them:
 *    (rank, segment, offset). Symmetric allocations (hgas_malloc) sit at the same offset on
 *    every rank, so a local address of one plus a rank number is a global pointer
 *    (hgas_ptr()). Non-collective allocations (hgas_alloc) return a global pointer directly.
 *  - One-sided operations move bytes between local memory and a global pointer without the
 *    target's participation. Completion rules (OpenSHMEM's):
 *      blocking put      returns when the source buffer may be reused (local completion);
 *      blocking get      returns when the data is in the destination;
 *      _nbi put/get      complete at hgas_quiet() (remote completion for puts);
 *      handle put/get    complete when hgas_wait()/hgas_test() report it (remote completion);
 *      put_signal        the data is visible at the target before the signal changes;
 *      fence             puts to one target are delivered in the order issued across it;
 *      quiet             every operation this rank issued is complete at its target.
 *  - Thread safety: after hgas_init a rank's calls may come from any thread of its process,
 *    but not concurrently (like MPI_THREAD_SERIALIZED). hgas_init_thread(HGAS_THREAD_MULTIPLE)
 *    lets any thread call any function at any time (docs/threads.md).
 *
 * Every call returns hgas_status_t (HGAS_OK = 0); on failure hgas_last_error() says what was
 * wrong, where, and what to do, and no byte has been written anywhere. Output parameters are
 * set only on success. */
#ifndef HGAS_H
#define HGAS_H

#include <stddef.h>
#include <stdint.h>

#include <hgas/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Runtime
 * ---------------------------------------------------------------------------------------- */

/** Joins the job: reads settings (HGAS_* variables; a bad value fails with
 *  HGAS_ERR_INVALID_SETTING naming it), connects to the bootstrap store, maps peers' memory,
 *  and connects transports. Collective over all ranks. Fails with HGAS_ERR_TIMEOUT if some
 *  rank does not join within HGAS_BOOT_TIMEOUT; HGAS_ERR_ALREADY_INITIALIZED if called twice;
 *  HGAS_ERR_UNSUPPORTED at once after hgas_finalize (a process joins its job once). */
hgas_status_t hgas_init(void);

/* Thread levels (hgas_init_thread), as MPI's: SINGLE and FUNNELED promise that one thread
 * calls, SERIALIZED that calls never overlap, MULTIPLE lets every thread call at any time. */
#define HGAS_THREAD_SINGLE 0
#define HGAS_THREAD_FUNNELED 1
#define HGAS_THREAD_SERIALIZED 2
#define HGAS_THREAD_MULTIPLE 3

/** hgas_init with a thread level: `requested` is one of HGAS_THREAD_*; *provided (may be
 *  NULL) is the level granted, which is `requested` (hgas supports all four). At
 *  HGAS_THREAD_MULTIPLE every call takes the rank's API lock, which a thread waiting inside
 *  hgas (signal waits, barriers, hgas_wait, message waits, hgas_progress) lets go while it
 *  waits; quiet and fence act on every operation of the rank, whichever thread issued it
 *  (docs/threads.md). HGAS_ERR_INVALID_ARG for a level out of range. */
hgas_status_t hgas_init_thread(int requested, int *provided);

/** The thread level this thread's rank was initialized with, or -1 before init. */
int hgas_query_thread(void);

/** Leaves the job: quiets outstanding operations, barriers, frees the heaps. Collective.
 *  Idempotent: a second call (or a call without init) returns HGAS_OK. */
hgas_status_t hgas_finalize(void);

/** 1 between hgas_init and hgas_finalize on this thread's rank, else 0. */
int hgas_initialized(void);

/** Threads that act for a rank (docs/threads.md). With ranks as threads a thread that did
 *  not call hgas_init has no rank of its own, so threads that a rank's thread starts name the
 *  rank they act for: hgas_rank_self() is the calling thread's rank as a handle (NULL before
 *  init); hgas_thread_attach(r) on another thread of the same process makes that thread's
 *  calls rank r's until hgas_thread_attach(NULL) or the thread's end. The rank's thread level
 *  binds all its threads (HGAS_THREAD_MULTIPLE to call at once). With one rank per process
 *  every thread finds the rank anyway and attaching changes nothing. hgas_finalize fails while
 *  threads are attached to the rank (they detach or end first). HGAS_ERR_INVALID_ARG for a
 *  handle that is not a live rank of this process, HGAS_ERR_ALREADY_INITIALIZED on the thread
 *  that called hgas_init for a rank. */
typedef struct hgas_rank_handle *hgas_rank_handle_t;
hgas_rank_handle_t hgas_rank_self(void);
hgas_status_t hgas_thread_attach(hgas_rank_handle_t rank);

/** This rank's number in [0, hgas_rank_n()), or -1 before init. Thread safe. */
int hgas_rank_me(void);
/** Number of ranks in the job, or -1 before init. */
int hgas_rank_n(void);
/** Index of this rank's node in [0, hgas_node_n()) and the number of nodes (-1 before init). */
int hgas_node_me(void);
int hgas_node_n(void);
/** This rank's index among the ranks of its node, and how many ranks its node has. */
int hgas_local_rank(void);
int hgas_local_n(void);
/** Node index of any rank (-1 for an unknown rank or before init). */
int hgas_node_of(int rank);

/** Ends the whole job from any rank: prints `reason` with this rank's number, tells the
 *  launcher and every other rank, and exits with `code`. Never returns. */
void hgas_abort(int code, const char *reason);

/** Ends the whole job from any rank as a normal end, not a failure (OpenSHMEM's
 *  shmem_global_exit): flushes stdio, tells the launcher and every other rank, and exits with
 *  `code` & 0xff. Every other rank exits with the same status at its next hgas call (or wait);
 *  hgasrun ends ranks that make none within 2 s and exits with `code` itself. `reason` (may
 *  be NULL) is for the log only; nothing is printed. Never returns. Callable before init. */
void hgas_global_exit(int code, const char *reason);

/** Per-rank storage for code layered on this API (the OpenSHMEM front end keeps its teams in
 *  it), so that such code keeps no rank state in process globals. Attaches `value` to the
 *  calling thread's rank under `key` (an address unique to the caller, e.g. of one of its
 *  static constants); an earlier value under the same key is released first. At
 *  hgas_finalize, after the rank has left the job, `release(value)` is called (`release` may
 *  be NULL); it must not call hgas. Not collective. HGAS_ERR_NOT_INITIALIZED before init,
 *  HGAS_ERR_INVALID_ARG for a NULL key. */
hgas_status_t hgas_rank_data_set(const void *key, void *value, void (*release)(void *));
/** The value attached under `key` to the calling thread's rank, or NULL (none, or not
 *  initialized). */
void *hgas_rank_data(const void *key);

/** Makes progress on this rank's outstanding operations and serves remote requests (the
 *  active-message path) that target this rank. Called implicitly by every blocking call. */
hgas_status_t hgas_progress(void);

/* ------------------------------------------------------------------------------------------
 * Global pointers
 * ---------------------------------------------------------------------------------------- */

/** A byte in the global address space. Trivially copyable; compare with hgas_gptr_eq.
 *  The null global pointer has segment HGAS_SEG_NULL. */
typedef struct hgas_gptr {
    uint64_t offset;   /**< byte offset inside the segment */
    uint32_t rank;     /**< owning rank (its affinity) */
    uint16_t segment;  /**< segment id on that rank (HGAS_SEG_*) */
    uint16_t flags;    /**< reserved: must be 0 (an operation on a pointer with any bit set fails
                            with HGAS_ERR_INVALID_ARG) */
} hgas_gptr_t;

#define HGAS_SEG_SYMMETRIC 0u       /**< the symmetric host heap of each rank */
#define HGAS_SEG_LOCAL 1u           /**< each rank's heap for non-collective allocations */
#define HGAS_SEG_STATIC 2u          /**< the program's data and bss (OpenSHMEM static objects) */
#define HGAS_SEG_CUDA_SYMMETRIC 3u  /**< symmetric heap in the rank's GPU memory */
#define HGAS_SEG_CUDA_LOCAL 4u      /**< non-collective heap in the rank's GPU memory */
#define HGAS_SEG_SIM_SYMMETRIC 5u   /**< symmetric heap of simulated device memory */
#define HGAS_SEG_SIM_LOCAL 6u       /**< non-collective heap of simulated device memory */
#define HGAS_SEG_NULL 0xffffu

/** The null global pointer. */
hgas_gptr_t hgas_gptr_null(void);
int hgas_gptr_is_null(hgas_gptr_t p);
/** p advanced by `bytes` (no bounds check here; every operation checks bounds). */
hgas_gptr_t hgas_gptr_add(hgas_gptr_t p, int64_t bytes);

/** Global pointer to the symmetric object at local address `sym` as it lives on `rank`.
 *  `sym` must lie in this rank's symmetric heap or local heap, or be a global or static
 *  variable of the main program (segment HGAS_SEG_STATIC: its data and bss, symmetric when
 *  every rank runs the same executable and HGAS_STATIC_DATA is on; docs/model.md); fails
 *  with HGAS_ERR_INVALID_POINTER otherwise (the message says why globals are not symmetric
 *  where that is the case), HGAS_ERR_INVALID_ARG for an unknown rank. */
hgas_status_t hgas_ptr(const void *sym, int rank, hgas_gptr_t *out);

/** Local address of `p` if this rank can load and store it directly (its own memory, or a
 *  peer's on the same node mapped through shared memory), else NULL. */
void *hgas_local_addr(hgas_gptr_t p);

/** Rank that owns `p` (its affinity). */
int hgas_where(hgas_gptr_t p);

/* ------------------------------------------------------------------------------------------
 * Memory
 * ---------------------------------------------------------------------------------------- */

/** Memory kinds. `host`: the rank's host memory. `cuda`: device memory of the rank's GPU
 *  (GPU = local rank modulo the GPUs visible; several ranks may share one). `sim`: host-backed
 *  simulated device memory, reachable only through hgas calls (its pointers fault on a plain
 *  load or store), with a copy engine of settable latency and bandwidth (HGAS_SIM_*), so that
 *  every device path runs on machines without a GPU. */
typedef enum hgas_kind {
    HGAS_KIND_DEFAULT = -1, /**< the calling rank's current default kind (an enumerator, not a cast
                                 of -1, so that the value lies in the enum's range in C++) */
    HGAS_KIND_HOST = 0,
    HGAS_KIND_CUDA = 1,
    HGAS_KIND_SIM = 2
} hgas_kind_t;

/** 1 if this rank has memory of kind `k` (cuda: a GPU and HGAS_CUDA_HEAP_SIZE > 0). */
int hgas_kind_available(hgas_kind_t k);
/** Sets the kind that hgas_malloc, hgas_alloc and hgas_all_alloc use from now on (the seeds'
 *  upc_on_device / upc_off_device) and returns the previous one. Per rank; HOST at init.
 *  An unavailable kind is refused: the default stays and HGAS_KIND_DEFAULT is returned. */
hgas_kind_t hgas_set_default_kind(hgas_kind_t k);
hgas_kind_t hgas_default_kind(void);
/** Kind of a global pointer's memory; HGAS_KIND_DEFAULT for a null or unknown segment. */
hgas_kind_t hgas_gptr_kind(hgas_gptr_t p);
/** Kind of a local address: HOST for anything that is not device memory hgas knows of. */
hgas_kind_t hgas_ptr_kind(const void *p);
/** "host", "cuda", "sim" (or "?"). */
const char *hgas_kind_name(hgas_kind_t k);

/** Collective symmetric allocation: every rank must call with the same size, in the same
 *  order; the result is at the same offset of every rank's symmetric heap, aligned to 64
 *  bytes. Includes a barrier. A heap that is too small fails with HGAS_ERR_NO_MEMORY and a
 *  message naming HGAS_HEAP_SIZE. `size` 0 gives NULL and HGAS_OK. */
hgas_status_t hgas_malloc(size_t size, void **ptr);
/** hgas_malloc in memory of kind `k` (HGAS_KIND_DEFAULT: the current default). For `cuda`
 *  the pointer is a device pointer; for `sim` it is only a name for hgas calls. */
hgas_status_t hgas_malloc_kind(size_t size, hgas_kind_t k, void **ptr);
/** As hgas_malloc, zero-filled. */
hgas_status_t hgas_calloc(size_t count, size_t size, void **ptr);
/** As hgas_malloc with a power-of-two alignment (at least 64 is used). */
hgas_status_t hgas_align(size_t alignment, size_t size, void **ptr);
/** Collective free of a symmetric allocation (NULL is accepted). A pointer that is not the
 *  start of a live symmetric allocation (e.g. a double free) fails with
 *  HGAS_ERR_INVALID_POINTER. Includes a barrier. */
hgas_status_t hgas_free(void *ptr);

/** Non-collective allocation in this rank's local heap: the global pointer has this rank's
 *  affinity, and any rank may use it once it has been passed to them. 64-byte aligned. */
hgas_status_t hgas_alloc(size_t size, hgas_gptr_t *out);
/** hgas_alloc in memory of kind `k`. */
hgas_status_t hgas_alloc_kind(size_t size, hgas_kind_t k, hgas_gptr_t *out);
/** Frees an hgas_alloc allocation. Only the owning rank may free it. */
hgas_status_t hgas_dealloc(hgas_gptr_t p);

/** A distributed shared array: `nblocks` blocks of `block_bytes` bytes, block i living on
 *  rank i % rank_n at local block i / rank_n (block-cyclic, like upc_all_alloc). */
typedef struct hgas_array {
    uint64_t base;        /**< symmetric offset of each rank's part */
    uint64_t nblocks;
    uint64_t block_bytes;
    uint32_t nranks;
    uint16_t segment;     /**< symmetric segment of the parts (its kind) */
    uint16_t reserved;
} hgas_array_t;

/** Collective: allocate a distributed array (symmetric; includes a barrier). */
hgas_status_t hgas_all_alloc(uint64_t nblocks, uint64_t block_bytes, hgas_array_t *out);
/** hgas_all_alloc in memory of kind `k`. */
hgas_status_t hgas_all_alloc_kind(uint64_t nblocks, uint64_t block_bytes, hgas_kind_t k, hgas_array_t *out);
/** Collective free. */
hgas_status_t hgas_all_free(hgas_array_t *a);
/** Global pointer to byte `byte_index` of the array (as if its blocks were contiguous). */
hgas_status_t hgas_array_ptr(const hgas_array_t *a, uint64_t byte_index, hgas_gptr_t *out);
/** Rank that owns block `block` (its affinity), or -1 if out of range. */
int hgas_array_where(const hgas_array_t *a, uint64_t block);
/** Local address of this rank's part of the array (its blocks one after another). */
void *hgas_array_local(const hgas_array_t *a);

/* ------------------------------------------------------------------------------------------
 * One-sided data movement. `src`/`dst` local buffers may be any host memory, any device
 * pointer of this rank's GPU (cudaMalloc'd or not), or memory hgas allocated of any kind
 * (sim memory: an address inside an hgas sim allocation). Targets may be of any kind.
 * ---------------------------------------------------------------------------------------- */

/** Registers a host buffer of the program for device transfers (like nvshmemx_buffer_register,
 *  ncclMemRegister, cudaHostRegister): where kind cuda is available the range is page-locked
 *  and mapped for the GPU (cudaHostRegister, portable and mapped), so that puts and gets
 *  between it and device memory run as pinned copies (measured 55 GB/s against 9-19 GB/s
 *  through the driver's staging of pageable memory) and kernels may use it directly. Without
 *  CUDA the range is only recorded, so that programs stay portable. Per rank, not collective.
 *  Fails with HGAS_ERR_INVALID_ARG for NULL, size 0, a range that overlaps an existing
 *  registration, hgas's host heaps (registered already) and device memory (which needs none).
 *  The buffer must stay allocated until hgas_deregister; registrations left at hgas_finalize
 *  are released there. The GPU pins whole pages: keep registered buffers from sharing
 *  a page with another registration (page-aligned buffers never do). A range the program
 *  registered with cudaHostRegister itself is recorded and left registered at deregistration. */
hgas_status_t hgas_register(void *ptr, size_t bytes);
/** Releases a registration; `ptr` is the pointer given to hgas_register. Device transfers
 *  still in flight (the _nbi forms) complete first. HGAS_ERR_INVALID_ARG for a pointer that
 *  is not the start of a registration. */
hgas_status_t hgas_deregister(void *ptr);

/** Blocking put: returns when `src` may be reused. */
hgas_status_t hgas_put(hgas_gptr_t dst, const void *src, size_t bytes);
/** Blocking get: returns when the data is in `dst`. */
hgas_status_t hgas_get(void *dst, hgas_gptr_t src, size_t bytes);
/** Implicit non-blocking: `src`/`dst` must not be touched until hgas_quiet(). */
hgas_status_t hgas_put_nbi(hgas_gptr_t dst, const void *src, size_t bytes);
hgas_status_t hgas_get_nbi(void *dst, hgas_gptr_t src, size_t bytes);
/** hgas_ptr + hgas_put/get(_nbi) in one call, with one address lookup (what OpenSHMEM's
 *  shmem_putmem(dst, src, bytes, pe) does): `dst` of a put, `src` of a get is this rank's local
 *  address of a symmetric object (hgas_ptr's rules, also for bytes == 0), meant as it lives on
 *  `rank`. Same checks and errors as the pair; messages name the _sym call for the address. */
hgas_status_t hgas_put_sym(void *dst, const void *src, size_t bytes, int rank);
hgas_status_t hgas_get_sym(void *dst, const void *src, size_t bytes, int rank);
hgas_status_t hgas_put_sym_nbi(void *dst, const void *src, size_t bytes, int rank);
hgas_status_t hgas_get_sym_nbi(void *dst, const void *src, size_t bytes, int rank);

/** A handle on one non-blocking operation. HGAS_HANDLE_DONE is an already complete one. */
typedef struct hgas_handle_s *hgas_handle_t;
#define HGAS_HANDLE_DONE ((hgas_handle_t)0)

/** Explicit non-blocking put/get: complete (remotely, for puts) when hgas_wait returns or
 *  hgas_test reports done. Every handle must be waited or tested to completion once. */
hgas_status_t hgas_put_nb(hgas_gptr_t dst, const void *src, size_t bytes, hgas_handle_t *h);
hgas_status_t hgas_get_nb(void *dst, hgas_gptr_t src, size_t bytes, hgas_handle_t *h);
/** Waits (with progress, up to HGAS_TIMEOUT) until `h` is complete, then releases it.
 *  A handle already waited or tested to completion (and HGAS_HANDLE_DONE) returns HGAS_OK at
 *  once, like MPI_Wait on MPI_REQUEST_NULL; a value that is not a handle of this rank fails
 *  with HGAS_ERR_INVALID_ARG. On HGAS_ERR_TIMEOUT the handle stays live. */
hgas_status_t hgas_wait(hgas_handle_t h);
/** Sets *done to 1 and releases `h` if complete, else 0 (after one progress pass). A handle
 *  already completed reports 1 again. */
hgas_status_t hgas_test(hgas_handle_t h, int *done);

/** Orders puts and put_signals to each target: those issued before are delivered before
 *  those issued after. Does not wait. */
hgas_status_t hgas_fence(void);
/** Waits until every operation this rank issued is complete at its target. */
hgas_status_t hgas_quiet(void);

/* ------------------------------------------------------------------------------------------
 * Signals: 64-bit words in hgas memory, updated by put_signal and waited on by their owner.
 * ---------------------------------------------------------------------------------------- */

typedef enum hgas_signal_op { HGAS_SIGNAL_SET = 0, HGAS_SIGNAL_ADD = 1 } hgas_signal_op_t;
typedef enum hgas_cmp {
    HGAS_CMP_EQ = 0, HGAS_CMP_NE = 1, HGAS_CMP_GT = 2, HGAS_CMP_GE = 3, HGAS_CMP_LT = 4, HGAS_CMP_LE = 5
} hgas_cmp_t;

/** Puts `bytes` from `src` to `dst`, then updates the 8-byte-aligned signal word `sig` (on
 *  the same rank as dst) by `op` with `value`. A rank that sees the new signal value sees
 *  the data. Blocking: returns when `src` may be reused. */
hgas_status_t hgas_put_signal(hgas_gptr_t dst, const void *src, size_t bytes, hgas_gptr_t sig,
                              uint64_t value, hgas_signal_op_t op);
/** As hgas_put_signal, completing at hgas_quiet(). */
hgas_status_t hgas_put_signal_nbi(hgas_gptr_t dst, const void *src, size_t bytes, hgas_gptr_t sig,
                                  uint64_t value, hgas_signal_op_t op);
/** Waits until the local signal word `*sig` (in this rank's hgas memory) compares true with
 *  `value`; puts its value in *observed (may be NULL). Deadline HGAS_TIMEOUT. */
hgas_status_t hgas_signal_wait_until(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value,
                                     uint64_t *observed);
/** One check of the same condition: *satisfied is 1 or 0. */
hgas_status_t hgas_signal_test(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, int *satisfied);
/** Atomic read of a local signal word. */
hgas_status_t hgas_signal_fetch(const uint64_t *sig, uint64_t *value);

/* ------------------------------------------------------------------------------------------
 * Atomics on 32- and 64-bit integers in hgas memory (aligned to their width).
 * Atomic with respect to every other hgas atomic on the same word, from any rank.
 * ---------------------------------------------------------------------------------------- */

/* Element types of atomics (the 32- and 64-bit integers) and reductions (all of them). The
 * 8/16-bit integers and the 16-bit floats are reduction types only: HGAS_FLOAT16 is IEEE 754
 * binary16 (CUDA's __half, NCCL's ncclFloat16), HGAS_BFLOAT16 is bfloat16 (__nv_bfloat16,
 * ncclBfloat16); both are combined in float and rounded to nearest even after every step. */
typedef enum hgas_dtype {
    HGAS_INT32 = 0, HGAS_INT64 = 1, HGAS_UINT32 = 2, HGAS_UINT64 = 3, HGAS_FLOAT = 4, HGAS_DOUBLE = 5,
    HGAS_INT8 = 6, HGAS_INT16 = 7, HGAS_UINT8 = 8, HGAS_UINT16 = 9, HGAS_FLOAT16 = 10, HGAS_BFLOAT16 = 11
} hgas_dtype_t;
#define HGAS_HALF HGAS_FLOAT16

typedef enum hgas_amo {
    HGAS_AMO_FETCH = 0,        /**< result = *t */
    HGAS_AMO_SET = 1,          /**< *t = operand */
    HGAS_AMO_ADD = 2,          /**< *t += operand */
    HGAS_AMO_FETCH_ADD = 3,    /**< result = *t; *t += operand */
    HGAS_AMO_INC = 4,          /**< *t += 1 */
    HGAS_AMO_FETCH_INC = 5,    /**< result = *t; *t += 1 */
    HGAS_AMO_SWAP = 6,         /**< result = *t; *t = operand */
    HGAS_AMO_COMPARE_SWAP = 7, /**< result = *t; if (*t == compare) *t = operand */
    HGAS_AMO_AND = 8, HGAS_AMO_OR = 9, HGAS_AMO_XOR = 10,
    HGAS_AMO_FETCH_AND = 11, HGAS_AMO_FETCH_OR = 12, HGAS_AMO_FETCH_XOR = 13
} hgas_amo_t;

/** One atomic on the integer at `target` (dtype HGAS_INT32/INT64/UINT32/UINT64). `operand`
 *  and `compare` are read as that type (ignored where the op has none); `result` receives
 *  the old value for fetching ops (may be NULL otherwise). Blocking: complete at return. */
hgas_status_t hgas_atomic(hgas_gptr_t target, hgas_amo_t op, hgas_dtype_t type, const void *operand,
                          const void *compare, void *result);
/** hgas_ptr(target, rank) + hgas_atomic in one call (OpenSHMEM's shmem_atomic_*). */
hgas_status_t hgas_atomic_sym(void *target, int rank, hgas_amo_t op, hgas_dtype_t type, const void *operand,
                              const void *compare, void *result);

/* Typed shorthands for the common cases. */
static inline hgas_status_t hgas_atomic_fetch_add64(hgas_gptr_t t, int64_t v, int64_t *old) {
    return hgas_atomic(t, HGAS_AMO_FETCH_ADD, HGAS_INT64, &v, 0, old);
}
static inline hgas_status_t hgas_atomic_add64(hgas_gptr_t t, int64_t v) {
    return hgas_atomic(t, HGAS_AMO_ADD, HGAS_INT64, &v, 0, 0);
}
static inline hgas_status_t hgas_atomic_compare_swap64(hgas_gptr_t t, int64_t cmp, int64_t v, int64_t *old) {
    return hgas_atomic(t, HGAS_AMO_COMPARE_SWAP, HGAS_INT64, &v, &cmp, old);
}
static inline hgas_status_t hgas_atomic_fetch64(hgas_gptr_t t, int64_t *v) {
    return hgas_atomic(t, HGAS_AMO_FETCH, HGAS_INT64, 0, 0, v);
}

/* ------------------------------------------------------------------------------------------
 * Synchronization and collectives over all ranks (the world team).
 * All are collective: every rank calls them in the same order with matching arguments.
 * ---------------------------------------------------------------------------------------- */

/** Waits for every rank, and completes this rank's outstanding operations first (quiet). */
hgas_status_t hgas_barrier(void);

/** Reduction operators. AND, OR and XOR are bitwise and take the integer types only. */
typedef enum hgas_op {
    HGAS_OP_SUM = 0, HGAS_OP_MIN = 1, HGAS_OP_MAX = 2, HGAS_OP_PROD = 3,
    HGAS_OP_AND = 4, HGAS_OP_OR = 5, HGAS_OP_XOR = 6
} hgas_op_t;

/** Copies `bytes` from `src` on `root` into `dst` on every rank. `dst` must be symmetric;
 *  `src` is any local memory of the root (ignored elsewhere). */
hgas_status_t hgas_broadcast(void *dst, const void *src, size_t bytes, int root);
/** Combines `count` elements of `src` from every rank with `op` into `dst` on `root`
 *  (`dst` ignored elsewhere). `src` and `dst` are any local memory and may be the same. */
hgas_status_t hgas_reduce(void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op, int root);
/** As hgas_reduce, with the result on every rank. A symmetric `dst` of device memory on a team
 *  within one node is reduced by the members reading each other's vectors directly (no scratch:
 *  the fastest way for large GPU vectors; docs/collectives.md). */
hgas_status_t hgas_allreduce(void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op);
/** Every rank contributes `bytes` from `src`; `dst` (symmetric, rank_n * bytes) receives them
 *  in rank order on every rank. */
hgas_status_t hgas_fcollect(void *dst, const void *src, size_t bytes);
/** Rank i sends block j of `src` (blocks of `bytes`) to rank j, which stores it as block i of
 *  `dst`. `dst` symmetric, both rank_n * bytes. */
hgas_status_t hgas_alltoall(void *dst, const void *src, size_t bytes);

/* ------------------------------------------------------------------------------------------
 * Teams (docs/collectives.md): ordered subsets of the ranks that collectives run over. A team
 * is named by an hgas_team_t, local to each rank (members may hold different numbers for the
 * same team); ranks are numbered 0 .. n-1 within it. Predefined: HGAS_TEAM_WORLD (every rank),
 * HGAS_TEAM_NODE (the ranks on this rank's node) and HGAS_TEAM_GPU (the ranks on this node that
 * use this rank's GPU; a rank without a GPU is alone in it). A rank may belong to at most 80
 * teams at once (the three predefined ones included). Splits and destroy are collective over
 * the parent / the team; every hgas_team_* collective is collective over the team, with the
 * same rules as the world collectives above (all members, same order, matching arguments:
 * a mismatch is detected and fails with a message naming the ranks).
 * ---------------------------------------------------------------------------------------- */
typedef int hgas_team_t;
#define HGAS_TEAM_INVALID (-1)
#define HGAS_TEAM_WORLD 0
#define HGAS_TEAM_NODE 1
#define HGAS_TEAM_GPU 2

/** This rank's number in `team`, or -1 (not a team of this rank, destroyed, or not initialized). */
int hgas_team_my_rank(hgas_team_t team);
/** The number of ranks in `team`, or -1 as above. */
int hgas_team_n(hgas_team_t team);
/** The number in `dst_team` of rank `src_rank` of `src_team`, or -1 if it is not a member of
 *  `dst_team` (or a team or the rank is invalid). */
int hgas_team_translate(hgas_team_t src_team, int src_rank, hgas_team_t dst_team);
/** Collective over `parent`: ranks start, start + stride, ... (`size` of them, parent numbers,
 *  stride >= 1) form a new team in that order. Members get its handle in *new_team, the other
 *  ranks of the parent HGAS_TEAM_INVALID. Every rank of the parent passes the same arguments. */
hgas_status_t hgas_team_split_strided(hgas_team_t parent, int start, int stride, int size, hgas_team_t *new_team);
/** Collective over `parent`: its ranks laid out in rows of `xrange` (the last row may be short);
 *  *xaxis_team gets this rank's row (numbered by column), *yaxis_team its column (numbered by
 *  row), as OpenSHMEM 1.5's shmem_team_split_2d. */
hgas_status_t hgas_team_split_2d(hgas_team_t parent, int xrange, hgas_team_t *xaxis_team, hgas_team_t *yaxis_team);
/** Collective over the team: frees it once every member is here. The predefined teams cannot
 *  be destroyed; a destroyed handle fails every later call with HGAS_ERR_INVALID_ARG. */
hgas_status_t hgas_team_destroy(hgas_team_t team);

/** The collectives above on a team; ranks (roots, block order) are team numbers. */
hgas_status_t hgas_team_barrier(hgas_team_t team);
hgas_status_t hgas_team_broadcast(hgas_team_t team, void *dst, const void *src, size_t bytes, int root);
hgas_status_t hgas_team_reduce(hgas_team_t team, void *dst, const void *src, size_t count, hgas_dtype_t type,
                               hgas_op_t op, int root);
hgas_status_t hgas_team_allreduce(hgas_team_t team, void *dst, const void *src, size_t count, hgas_dtype_t type,
                                  hgas_op_t op);
/** `dst` (symmetric) receives team_n * bytes: member i's `bytes` at dst + i * bytes. */
hgas_status_t hgas_team_fcollect(hgas_team_t team, void *dst, const void *src, size_t bytes);
hgas_status_t hgas_team_alltoall(hgas_team_t team, void *dst, const void *src, size_t bytes);
/** Reduce-scatter: combines `count` * team_n elements of every member's `src` with `op`; member
 *  i gets elements [i * count, (i + 1) * count) of the result in `dst` (count elements). `src`
 *  and `dst` are any memory (host or device) and may not overlap unless dst == src + i * count
 *  elements. A symmetric device `src` on one node is read directly by the members. */
hgas_status_t hgas_team_reduce_scatter(hgas_team_t team, void *dst, const void *src, size_t count,
                                       hgas_dtype_t type, hgas_op_t op);
/** Collect of varying sizes: every member contributes `bytes` (may differ, may be 0) from
 *  `src`; `dst` (symmetric, large enough for the sum on every rank) receives them in team
 *  order, back to back. *total (may be NULL) gets the sum. */
hgas_status_t hgas_team_collect(hgas_team_t team, void *dst, const void *src, size_t bytes, size_t *total);
/** All-to-all with varying blocks: this rank sends send_bytes[j] bytes from src + send_off[j]
 *  to member j, which receives it at its dst + recv_off[i] (recv_bytes[i] bytes; i = this
 *  rank); `dst` symmetric. Each pair must agree on the size (checked: a mismatch fails with a
 *  message naming both). Arrays have team_n entries, in bytes. */
hgas_status_t hgas_team_alltoallv(hgas_team_t team, void *dst, const size_t *recv_off, const size_t *recv_bytes,
                                  const void *src, const size_t *send_off, const size_t *send_bytes);

/* ------------------------------------------------------------------------------------------
 * Tagged messages (two-sided, MPI semantics; docs/messaging.md). Buffers may be any memory
 * of the calling rank: host, or device memory of kind cuda or sim (hgas's heaps or the
 * program's own allocations), and the two ends may differ. A message matches the first posted
 * receive with the same scope whose source and tag equal the message's (or are wildcards);
 * messages from one rank with the same tag and scope are received in the order they were sent.
 * Non-blocking forms give a handle completed by hgas_wait / hgas_test (and the _all / _any
 * forms below). Messages that are never received are reported by hgas_finalize.
 * ---------------------------------------------------------------------------------------- */
#define HGAS_ANY_RANK (-1)
#define HGAS_ANY_TAG (-1)
/** Largest tag (tags are 0..HGAS_TAG_MAX). */
#define HGAS_TAG_MAX 0x7fffffff

/** What a receive got (or a probe found). */
typedef struct hgas_msg_info {
    int source;   /* the sending rank */
    int tag;
    size_t bytes; /* the bytes of the message: what was received, or what a probe found */
} hgas_msg_info_t;

/** Sends `bytes` from `buf` to rank `dest` with `tag` (0..HGAS_TAG_MAX). Returns once `buf` may
 *  be reused: a small message (up to HGAS_MSG_SLOT less 64 bytes) once it is in the receiver's
 *  ring, a larger one once the receiver has taken it. */
hgas_status_t hgas_send(const void *buf, size_t bytes, int dest, int tag);
/** Receives into `buf` (capacity `bytes`) the first message from `src` (or HGAS_ANY_RANK) with
 *  `tag` (or HGAS_ANY_TAG). A message longer than `bytes` fails with HGAS_ERR_TRUNCATED; it is
 *  consumed (and `info` says its size), nothing else is lost. `info` may be NULL. */
hgas_status_t hgas_recv(void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info);
/** Non-blocking forms: `buf` must stay valid (and, for isend, unchanged) until the handle
 *  completes; `info` (may be NULL) is written when the receive completes. */
hgas_status_t hgas_isend(const void *buf, size_t bytes, int dest, int tag, hgas_handle_t *h);
hgas_status_t hgas_irecv(void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info, hgas_handle_t *h);
/** Whether a message that a receive with (src, tag) would match has arrived: *flag 1 and `info`
 *  (may be NULL) describes it, without receiving it. hgas_probe waits for one. */
hgas_status_t hgas_iprobe(int src, int tag, int *flag, hgas_msg_info_t *info);
hgas_status_t hgas_probe(int src, int tag, hgas_msg_info_t *info);

/** Completes every handle of hs[0..n) (any non-blocking hgas operation); each entry becomes
 *  HGAS_HANDLE_DONE. Returns the first failure after waiting for all. */
hgas_status_t hgas_wait_all(hgas_handle_t *hs, size_t n);
/** Tests hs[0..n) once each: *index is the first that completed (now HGAS_HANDLE_DONE) and
 *  *done 1, or *done 0 and *index -1 when none did. Entries already HGAS_HANDLE_DONE are
 *  skipped; if all are, *done is 1 and *index -1. */
hgas_status_t hgas_test_any(hgas_handle_t *hs, size_t n, int *index, int *done);

/** A communication scope: messages sent in one scope only match receives of the same scope,
 *  so a library's messages never match the application's. HGAS_MSG_CTX_WORLD is the scope of
 *  the calls above. */
typedef uint32_t hgas_msg_ctx_t;
#define HGAS_MSG_CTX_WORLD ((hgas_msg_ctx_t)0)
/** Creates a new scope. Collective: every rank calls it in the same order and gets the same
 *  scope (checked). */
hgas_status_t hgas_msg_ctx_create(hgas_msg_ctx_t *ctx);
/** Ends a scope on this rank; messages of it that are still unreceived are reported. */
hgas_status_t hgas_msg_ctx_destroy(hgas_msg_ctx_t ctx);
hgas_status_t hgas_isend_ctx(hgas_msg_ctx_t ctx, const void *buf, size_t bytes, int dest, int tag, hgas_handle_t *h);
hgas_status_t hgas_irecv_ctx(hgas_msg_ctx_t ctx, void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info,
                             hgas_handle_t *h);
hgas_status_t hgas_iprobe_ctx(hgas_msg_ctx_t ctx, int src, int tag, int *flag, hgas_msg_info_t *info);

/** Persistent requests: the arguments of a send or receive fixed once, started many times
 *  (each start gives a handle for that round). A request must not be started again before
 *  the previous round's handle completed. */
typedef struct hgas_msg_req_s *hgas_msg_req_t;
hgas_status_t hgas_send_init(hgas_msg_ctx_t ctx, const void *buf, size_t bytes, int dest, int tag,
                             hgas_msg_req_t *req);
hgas_status_t hgas_recv_init(hgas_msg_ctx_t ctx, void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info,
                             hgas_msg_req_t *req);
hgas_status_t hgas_start(hgas_msg_req_t req, hgas_handle_t *h);
/** Starts reqs[0..n) in order, handles into hs[0..n). */
hgas_status_t hgas_start_all(hgas_msg_req_t *reqs, size_t n, hgas_handle_t *hs);
/** Frees a request whose last round completed. */
hgas_status_t hgas_msg_req_free(hgas_msg_req_t req);

/** Layouts for typed messages: which bytes of a buffer a message carries (vector: `count`
 *  blocks of `block_bytes`, `stride_bytes` apart; indexed: blocks of given lengths at given
 *  displacements; 3-D subarray in C order: dimension 2 varies fastest). The sender packs, the
 *  message carries the packed bytes, the receiver unpacks: on the CPU for host buffers, by the
 *  device's copy engine (one gather of all blocks) for device memory. Blocks may not overlap. */
typedef struct hgas_layout_s *hgas_layout_t;
hgas_status_t hgas_layout_vector(size_t count, size_t block_bytes, size_t stride_bytes, hgas_layout_t *out);
hgas_status_t hgas_layout_indexed(size_t count, const size_t *block_bytes, const size_t *displ_bytes,
                                  hgas_layout_t *out);
hgas_status_t hgas_layout_subarray3d(const size_t sizes[3], const size_t subsizes[3], const size_t starts[3],
                                     size_t elem_bytes, hgas_layout_t *out);
/** Bytes a message of this layout carries, and bytes of buffer it spans from the buffer's start. */
hgas_status_t hgas_layout_bytes(hgas_layout_t l, size_t *packed, size_t *extent);
hgas_status_t hgas_layout_free(hgas_layout_t l);
/** Typed send/receive: as hgas_isend/hgas_irecv with the layout's bytes of `buf`. A typed
 *  message matches any receive of as many bytes (typed or not). */
hgas_status_t hgas_isend_typed(const void *buf, hgas_layout_t l, int dest, int tag, hgas_handle_t *h);
hgas_status_t hgas_irecv_typed(void *buf, hgas_layout_t l, int src, int tag, hgas_msg_info_t *info, hgas_handle_t *h);
hgas_status_t hgas_send_typed(const void *buf, hgas_layout_t l, int dest, int tag);
hgas_status_t hgas_recv_typed(void *buf, hgas_layout_t l, int src, int tag, hgas_msg_info_t *info);
/** Typed messages in a scope (hgas_msg_ctx_create), as hgas_isend_ctx / hgas_irecv_ctx. */
hgas_status_t hgas_isend_typed_ctx(hgas_msg_ctx_t ctx, const void *buf, hgas_layout_t l, int dest, int tag,
                                   hgas_handle_t *h);
hgas_status_t hgas_irecv_typed_ctx(hgas_msg_ctx_t ctx, void *buf, hgas_layout_t l, int src, int tag,
                                   hgas_msg_info_t *info, hgas_handle_t *h);

#ifdef __cplusplus
}
#endif
#endif /* HGAS_H */
