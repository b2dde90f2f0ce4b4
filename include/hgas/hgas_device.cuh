// hgas_device.cuh — communication issued by GPU kernels (the contract; the code is in impl/).
//
// Include it in CUDA sources (nvcc, sm_70 or newer; hgas builds sm_90). No relocatable device
// code is needed: everything here is inline. Host side: hgas/hgas_device.h (included here).
//
//   #include <hgas/hgas_device.cuh>
//   namespace hd = hgas::device;
//   __global__ void k(hd::ctx c, double *halo, const double *edge, uint64_t *sig, uint64_t it) {
//       int right = (c.me + 1) % c.n;
//       hd::put_signal<hd::scope::block>(c, halo, edge, 4096, sig, it, HGAS_SIGNAL_SET, right);
//       hd::signal_wait_until<hd::scope::block>(c, sig, HGAS_CMP_GE, it);  // the left neighbour's
//   }
//   hgas_device_ctx_t c; hgas_device_ctx_get(&c);  k<<<1, 256>>>(c, ...);   // on the host
//
// Addresses. Remote memory is named NVSHMEM-style: a symmetric address of this rank (what
// hgas_malloc_kind returned, in the cuda heap or the host heap) plus a rank. Local buffers
// (put sources, get destinations) are any memory the GPU can load and store; for targets that
// go through the proxy they must be global memory (device or pinned host memory, not a stack
// or shared array) and stay untouched until the operation is complete.
//
// Paths. A target the GPU can store to -- this GPU, a peer GPU mapped through CUDA IPC, host
// memory registered with CUDA -- is reached by loads and stores from the calling threads. Any
// other (another node, GPUs without peer access, HGAS_PATH=staged, HGAS_DEVICE_PROXY=force) goes
// through the proxy: the leader of the group writes a request into a ring in pinned host
// memory, and a thread of the rank's runtime executes it over the host paths (hgas_put, ...)
// and reports completion. Atomics on host memory go to the proxy unless the link has native
// host atomics. Proxied operations need the rank's runtime to run (its proxy thread, started by
// hgas_device_ctx_get, does), and proxied atomics and signals on GPU memory run a one-block
// kernel on the target's GPU: a kernel that occupies every SM must leave one block's room.
//
// Scopes. Every operation takes a cooperation scope as its first template argument:
//   scope::thread  the calling thread alone (the default);
//   scope::warp    all 32 lanes of a warp call it together, with the same arguments;
//   scope::block   all threads of the block call it together, with the same arguments.
// A group moves the bytes together (direct path) or its first thread posts one request (proxy).
//
// Completion (OpenSHMEM's rules, as on the host; docs/model.md):
//   put, put_signal       return when the source may be reused;
//   get, g, fetching atomics  return with the data;
//   *_nbi, p, signal_op, non-fetching atomics  complete at quiet (or barrier);
//   put_signal            a rank that sees the new signal value sees the data;
//   fence                 puts and signals to one rank issued before it arrive before later ones;
//   quiet                 every operation issued so far by this GPU's threads through this
//                         rank is complete at its target (a superset of the caller's own).
//
// Waits and errors. Every device-side wait (signals, barrier, grid barrier, proxy) gives up
// after HGAS_TIMEOUT, records an error and returns; so do bad arguments (a rank out of range,
// an address outside the symmetric heaps, a misaligned signal or atomic word, a proxied
// operation on a stack buffer), which change nothing. hgas_device_status() or hgas_stream_sync()
// on the host report the first error with its rank and argument. No function pointers or
// virtual calls are used on the GPU.
//
// Seed 003's three control modes are built from these pieces (docs/device.md, examples/device/):
//  (a) in-kernel:  last_block() picks the block that finishes last to start the boundary
//      transfer; grid_wait_until() makes every block wait for the remote notification;
//  (b) stream:     hgas_put_signal_on_stream / hgas_signal_wait_on_stream between kernels;
//  (c) device control loop: one persistent kernel runs all iterations, grid_sync() between
//      phases, no CPU involvement until the end.
// A kernel whose blocks wait for each other (grid_sync, or grid_wait_until for a signal some
// later block of the same kernel sends) deadlocks when not all its blocks are resident at once:
// launch it with cudaLaunchCooperativeKernel, or check with hgas::device::check_resident().
#pragma once

#include <cuda_runtime.h>

#include <hgas/hgas_device.h>
#include <hgas/impl/device_coll_plan.h>

namespace hgas {
namespace device {

/// How many threads cooperate in one call (see "Scopes" above).
enum class scope { thread, warp, block };

/// The device context: pass it to kernels by value (a small trivially copyable struct).
using ctx = hgas_device_ctx_t;

// ---- RMA --------------------------------------------------------------------------------

/// Copies `bytes` from local `src` to symmetric `dst` on `rank`. Returns when src may be
/// reused; remotely complete at quiet.
template <scope S = scope::thread>
__device__ void put(const ctx &c, void *dst, const void *src, size_t bytes, int rank);
/// As put; src must stay untouched until quiet.
template <scope S = scope::thread>
__device__ void put_nbi(const ctx &c, void *dst, const void *src, size_t bytes, int rank);
/// Copies `bytes` from symmetric `src` on `rank` into local `dst`; returns with the data.
template <scope S = scope::thread>
__device__ void get(const ctx &c, void *dst, const void *src, size_t bytes, int rank);
/// As get; the data is in dst after quiet.
template <scope S = scope::thread>
__device__ void get_nbi(const ctx &c, void *dst, const void *src, size_t bytes, int rank);
/// Stores one value (integer or floating point, up to 8 bytes) at symmetric `dst` on `rank`.
template <scope S = scope::thread, class T>
__device__ void p(const ctx &c, T *dst, T value, int rank);
/// Loads one value from symmetric `src` on `rank`.
template <scope S = scope::thread, class T>
__device__ T g(const ctx &c, const T *src, int rank);
/// NVSHMEM's nvshmem_ptr: symmetric `p` as it lives on `rank`, as a pointer this GPU's threads
/// load from and store to directly; nullptr where `rank`'s memory is reached only through the
/// proxy (another node, no peer access, HGAS_DEVICE_PROXY=force) or where `p` is not in a
/// symmetric heap or `rank` does not exist (no error is recorded). Translate once, then use
/// plain loads and stores: a put pays the translation and its checks at every call, which for
/// a few bytes costs more than the copy. Ordering is then the caller's (fences, or a
/// put_signal / signal_op after the stores).
template <class T>
__device__ T *ptr(const ctx &c, T *p, int rank);

// ---- signals ------------------------------------------------------------------------------

/// put, then updates the 8-byte signal word `sig` (symmetric, same rank) by `op` (SET, ADD)
/// with `value`; whoever sees the new value sees the data. Returns when src may be reused.
template <scope S = scope::thread>
__device__ void put_signal(const ctx &c, void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                           hgas_signal_op_t op, int rank);
/// As put_signal; src must stay untouched until quiet.
template <scope S = scope::thread>
__device__ void put_signal_nbi(const ctx &c, void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                               hgas_signal_op_t op, int rank);
/// Only the signal update (ordered after earlier puts to `rank` only by fence).
template <scope S = scope::thread>
__device__ void signal_op(const ctx &c, uint64_t *sig, uint64_t value, hgas_signal_op_t op, int rank);
/// Waits until this rank's signal word `sig` compares true with `value`; returns the value seen.
/// Past HGAS_TIMEOUT it records HGAS_DEVICE_ERR_TIMEOUT_SIGNAL and returns the last value.
template <scope S = scope::thread>
__device__ uint64_t signal_wait_until(const ctx &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value);
/// Reads this rank's signal word (acquire).
__device__ uint64_t signal_fetch(const ctx &c, const uint64_t *sig);
/// One check of the wait's condition.
__device__ bool signal_test(const ctx &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value);

// ---- atomics on 32- and 64-bit integers (aligned), atomic with every hgas atomic ----------

template <scope S = scope::thread, class T>
__device__ T atomic_fetch(const ctx &c, T *dst, int rank);
template <scope S = scope::thread, class T>
__device__ void atomic_set(const ctx &c, T *dst, T value, int rank);
template <scope S = scope::thread, class T>
__device__ T atomic_fetch_add(const ctx &c, T *dst, T value, int rank);
template <scope S = scope::thread, class T>
__device__ void atomic_add(const ctx &c, T *dst, T value, int rank);
template <scope S = scope::thread, class T>
__device__ T atomic_fetch_inc(const ctx &c, T *dst, int rank);
template <scope S = scope::thread, class T>
__device__ void atomic_inc(const ctx &c, T *dst, int rank);
template <scope S = scope::thread, class T>
__device__ T atomic_swap(const ctx &c, T *dst, T value, int rank);
/// Returns the old value; stores `value` if it equalled `compare`.
template <scope S = scope::thread, class T>
__device__ T atomic_compare_swap(const ctx &c, T *dst, T compare, T value, int rank);

// ---- ordering and synchronization ----------------------------------------------------------

/// Orders puts and signals to each rank (see Completion).
template <scope S = scope::thread>
__device__ void fence(const ctx &c);
/// Completes every operation issued so far (see Completion).
template <scope S = scope::thread>
__device__ void quiet(const ctx &c);
/// Barrier across ranks: exactly one caller (thread, warp or block) per rank, each having
/// quieted first. Needs the cuda heap (HGAS_CUDA_HEAP_SIZE > 0).
template <scope S = scope::thread>
__device__ void barrier(const ctx &c);

// ---- collectives from kernels (NVSHMEM's nvshmem_barrier_all, nvshmemx_barrier_all_block,
// nvshmem_<type>_sum_reduce / nvshmemx_..._reduce_block, nvshmem_broadcast, nvshmem_fcollect) --
//
// A team is (start, stride, size) over job ranks (world_team(c) is every rank); each member's
// calling group (one thread, warp or block per rank, the scope as above) calls the same
// collectives in the same order with the same arguments. They synchronize the team: each starts
// with a team barrier, so destinations may be reused as soon as a call returns. The team's
// collectives need a workspace: symmetric memory, the same on every member (hgas_malloc_kind,
// then zeroed, e.g. by cudaMemset, before any member's first call), of
// coll_plan::workspace_bytes(team size, chunk) bytes (impl/device_coll_plan.h); one per team
// whose collectives may run at the same time. A rank outside the team, a bad root or a workspace too small records
// HGAS_DEVICE_ERR_BAD_COLL and returns; waits give up after HGAS_TIMEOUT as every device wait.

/// barrier<S>(c) under NVSHMEM's name: every rank of the job (needs the cuda heap).
template <scope S = scope::thread>
__device__ void barrier_all(const ctx &c);
/// Barrier over the team's members (after a quiet: earlier puts are complete at their targets).
template <scope S = scope::thread>
__device__ void team_barrier(const ctx &c, team t, coll_workspace w);
/// `bytes` from member `root`'s src (local memory) into every member's symmetric `dst`.
template <scope S = scope::thread>
__device__ void broadcast(const ctx &c, team t, coll_workspace w, void *dst, const void *src, size_t bytes, int root);
/// Every member's `bytes` from src land at dst + member * bytes on every member (`dst` symmetric).
template <scope S = scope::thread>
__device__ void fcollect(const ctx &c, team t, coll_workspace w, void *dst, const void *src, size_t bytes);
/// dst[i] = src[i] of member 0 op ... op src[i] of member size - 1 on every member (an all-reduce,
/// as NVSHMEM's reduce on a team), combined in member order: bit-identical on every member. T:
/// 4- or 8-byte integers and floats; src and dst local memory, may be the same; vectors larger
/// than the workspace's slot run in chunks.
template <scope S = scope::thread, class T>
__device__ void reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count, reduce_op op);
template <scope S = scope::thread, class T>
__device__ void sum_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count);
template <scope S = scope::thread, class T>
__device__ void prod_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count);
template <scope S = scope::thread, class T>
__device__ void min_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count);
template <scope S = scope::thread, class T>
__device__ void max_reduce(const ctx &c, team t, coll_workspace w, T *dst, const T *src, size_t count);
/// The team of every rank: {0, 1, c.n}.
__device__ inline team world_team(const ctx &c);

// ---- seed 003's building blocks --------------------------------------------------------------

/// Called by every thread of every block at the end of its work: true (in all threads of that
/// block) for the block that finished last, whose threads then see every other block's results.
/// `counter` is a zeroed unsigned in device memory, one per kernel, reset for the next launch.
__device__ bool last_block(unsigned int *counter);
/// Every block waits for a remote notification (a block-scope signal wait in each block; the
/// grid must be resident if the signal depends on another block of the same kernel).
template <scope S = scope::block>
__device__ uint64_t grid_wait_until(const ctx &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value);

/// A barrier over all blocks of a kernel, for persistent kernels (mode c). Zero-initialised
/// device memory, one per kernel. Every block must be resident (cooperative launch, or
/// check_resident); past HGAS_TIMEOUT it records HGAS_DEVICE_ERR_TIMEOUT_GRID and returns false.
struct grid_barrier {
    unsigned int count;
    unsigned int gen;
};
__device__ bool grid_sync(const ctx &c, grid_barrier *b);

/// Host: HGAS_OK if `grid_blocks` blocks of `kernel` (with `block_threads` threads and
/// `smem_bytes` of dynamic shared memory) are all resident at once on this rank's GPU, with
/// `reserve_blocks` blocks' room left (1 when proxied atomics or signals target this GPU);
/// HGAS_ERR_INVALID_ARG (hgas_last_error says how many fit) otherwise. Runs in the caller's
/// CUDA runtime, which knows the caller's kernels.
template <class Kernel>
inline hgas_status_t check_resident(Kernel *kernel, int grid_blocks, int block_threads, size_t smem_bytes = 0,
                                    int reserve_blocks = 0) {
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void *>(kernel), block_threads,
                                                          smem_bytes);
    if (e != cudaSuccess) return hgas_device_grid_check(grid_blocks, -1, cudaGetErrorString(e));
    return hgas_device_grid_check(grid_blocks + reserve_blocks, per_sm * sms, "blocks resident at once");
}

}  // namespace device
}  // namespace hgas

#include <hgas/impl/device_rma.cuh>
#include <hgas/impl/device_sync.cuh>
#include <hgas/impl/device_coll.cuh>
