/* hgas_device.h — the host side of GPU-issued communication: the device context that kernels
 * take, error reports of device-side operations, and stream-ordered operations. Plain C; the
 * device API itself is hgas/hgas_device.cuh. docs/device.md has the whole story.
 *
 * Memory: `dst`, `sig` and `src` of remote operations are symmetric addresses of this rank
 * (what hgas_malloc_kind returned: the cuda heap or the host heap) naming the same object on
 * `rank`; local buffers are any memory the GPU reaches (device memory, pinned host memory).
 * Threads: like every hgas call (MPI_THREAD_SERIALIZED per rank). Every call validates its
 * arguments and fails with a message naming the call; nothing is enqueued then. */
#ifndef HGAS_DEVICE_H
#define HGAS_DEVICE_H

#include <hgas/hgas.h>
#include <hgas/impl/device_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA runtime's stream type (the same declaration as cuda_runtime_api.h's), so that this
 * header needs no CUDA include. */
typedef struct CUstream_st *cudaStream_t;

/** The device context of this rank, to pass to kernels by value. Created at the first call
 *  (not collective): maps every rank's symmetric heaps for the GPU where it can, sets up the
 *  proxy ring in pinned host memory and starts the rank's proxy thread (HGAS_DEVICE_PROXY).
 *  Without the cuda kind (no GPU) the context has no heaps and its ring is in ordinary host
 *  memory: host threads can still produce requests (the CPU tests do). Valid until
 *  hgas_finalize. */
hgas_status_t hgas_device_ctx_get(hgas_device_ctx_t *ctx);

/** CUDA device ordinal of this rank's GPU (hgas picks local rank modulo GPUs visible), or -1.
 *  Call cudaSetDevice(hgas_device_gpu()) before your own CUDA calls. */
int hgas_device_gpu(void);

/** HGAS_OK, or the first error a kernel recorded (a wait past HGAS_TIMEOUT: HGAS_ERR_TIMEOUT;
 *  a bad address or rank: HGAS_ERR_INVALID_ARG; a failed proxied operation:
 *  HGAS_ERR_TRANSPORT; ...) with a message naming the operation, rank and argument. Reporting
 *  clears it. */
hgas_status_t hgas_device_status(void);

/** Waits for everything enqueued on `s` (NULL: the legacy default stream), serving proxied
 *  requests meanwhile, at most HGAS_TIMEOUT; then hgas_device_status(). Use it instead of
 *  cudaStreamSynchronize where a stream waits on a signal: a signal that never comes is then
 *  a clear HGAS_ERR_TIMEOUT, not a hang. */
hgas_status_t hgas_stream_sync(cudaStream_t s);

/* ---- stream-ordered operations ---------------------------------------------------------------
 * Each is executed when the stream reaches it: after the work enqueued before it, before the
 * work enqueued after it. Targets the GPU can store to are written by the copy engines and
 * stream memory operations (no SM is used); others go through the proxy from a one-thread
 * kernel. */

/** Copies `bytes` from `src` to symmetric `dst` on `rank` in stream order. Complete (remotely)
 *  in stream order once hgas_quiet_on_stream has passed. */
hgas_status_t hgas_put_on_stream(void *dst, const void *src, size_t bytes, int rank, cudaStream_t s);
/** put, then the signal update `sig op= value` on `rank` (the data visible before the
 *  signal). SET to a mapped target is a stream memory operation (cuStreamWriteValue64); ADD
 *  is a one-thread kernel. */
hgas_status_t hgas_put_signal_on_stream(void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                                        hgas_signal_op_t op, int rank, cudaStream_t s);
/** Later work on `s` waits until this rank's signal word `sig` compares true with `value`.
 *  EQ and GE on the cuda heap are stream memory operations (cuStreamWaitValue64: no SM, but
 *  no deadline either: finish with hgas_stream_sync); other comparisons, host-heap words and
 *  HGAS_STREAM_MEMOPS=off use a one-thread kernel with the HGAS_TIMEOUT deadline. GE is
 *  (int64_t)(*sig - value) >= 0, as the driver compares. */
hgas_status_t hgas_signal_wait_on_stream(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, cudaStream_t s);
/** The device barrier across ranks (hgas::device::barrier) in stream order: one-thread kernel.
 *  Collective: every rank enqueues the same number. Where every rank is a thread of this
 *  process, they meet on the host instead (this rank's quiet on `s`, then the team barrier's
 *  events: no kernel, and no cuda heap needed; docs/threads.md). */
hgas_status_t hgas_barrier_on_stream(cudaStream_t s);
/** Every operation enqueued on `s` before it (and every proxied device operation so far) is
 *  complete at its target before work after it starts. Nothing to enqueue when no proxy is
 *  in use; else a one-thread kernel. */
hgas_status_t hgas_quiet_on_stream(cudaStream_t s);

/** Tagged messages in stream order (docs/messaging.md), like NCCL's send/recv: the message
 *  (hgas_send / hgas_recv semantics, any memory kind, HGAS_MSG_CTX_WORLD) starts when the stream
 *  reaches it, and work enqueued after it waits until it is complete (for a receive: the data
 *  is in `buf` and `*info`, if not NULL, is written). Messages of one pair and tag match in the
 *  order their streams reach them. The rank's CPU moves the message: wait for the stream with
 *  hgas_stream_sync (or any hgas call that waits), not cudaStreamSynchronize; a message that
 *  failed lets the stream go on and its error is returned by the next hgas_stream_sync. At most
 *  256 outstanding per rank; the stream's wait has the HGAS_TIMEOUT deadline. */
hgas_status_t hgas_send_on_stream(const void *buf, size_t bytes, int dest, int tag, cudaStream_t s);
hgas_status_t hgas_recv_on_stream(void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info, cudaStream_t s);
/** The same in a scope (hgas_msg_ctx_create), as hgas_isend_ctx / hgas_irecv_ctx. */
hgas_status_t hgas_send_on_stream_ctx(hgas_msg_ctx_t ctx, const void *buf, size_t bytes, int dest, int tag,
                                      cudaStream_t s);
hgas_status_t hgas_recv_on_stream_ctx(hgas_msg_ctx_t ctx, void *buf, size_t bytes, int src, int tag,
                                      hgas_msg_info_t *info, cudaStream_t s);
/** Typed messages in stream order, as hgas_isend_typed / hgas_irecv_typed (the layout is copied:
 *  it may be freed once the call returns); packing and unpacking happen when the stream reaches
 *  the message, before later work on the stream runs. */
hgas_status_t hgas_send_typed_on_stream(const void *buf, hgas_layout_t l, int dest, int tag, cudaStream_t s);
hgas_status_t hgas_recv_typed_on_stream(void *buf, hgas_layout_t l, int src, int tag, hgas_msg_info_t *info,
                                        cudaStream_t s);
hgas_status_t hgas_send_typed_on_stream_ctx(hgas_msg_ctx_t ctx, const void *buf, hgas_layout_t l, int dest, int tag,
                                            cudaStream_t s);
hgas_status_t hgas_recv_typed_on_stream_ctx(hgas_msg_ctx_t ctx, void *buf, hgas_layout_t l, int src, int tag,
                                            hgas_msg_info_t *info, cudaStream_t s);

/** Collectives in stream order, like NCCL's: each call checks its arguments, enqueues and
 *  returns at once; the collective (hgas_team_* semantics, any memory kind: device buffers are
 *  combined by the GPU) starts when the stream reaches it, and work enqueued after it waits
 *  until it is complete on this rank. Every member enqueues the same collectives in the same
 *  order (across all its streams: they run in the order they were enqueued). The rank's CPU
 *  runs them while it waits in hgas_stream_sync (call it on the stream, not
 *  cudaStreamSynchronize); a collective that failed lets the stream go on and its error is
 *  returned by the next hgas_stream_sync. A rank whose stream has reached a collective must
 *  call hgas_stream_sync before it enters another collective on the host, or the two orders
 *  differ between ranks (a timeout, with a message). At most 256 outstanding per rank; the
 *  stream's wait has the HGAS_TIMEOUT deadline. Buffers must stay valid until the stream has
 *  passed the call.
 *  Allreduce, broadcast and fcollect of up to HGAS_COLL_KERNEL_MAX (1 MiB where each member has
 *  a GPU of its own, else 64 KiB), alltoall and reduce_scatter of up to 64 KiB (of src for
 *  reduce_scatter), of device dst in the symmetric heap, on teams of 2 to 8
 *  members whose GPUs run their kernels side by side (a GPU per rank process, MPS, or rank
 *  threads; alltoall and reduce_scatter on the first 8 teams a rank is in), are instead one
 *  kernel on the stream that does the whole collective: no CPU step (hgas_stream_sync still
 *  returns their errors). Every member must then pass a dst of the same kind (all symmetric or
 *  none), as the choice is made by each member from its dst. Rank
 *  threads must then pass streams of their own (cudaStreamPerThread is one): members' kernels
 *  on one stream would wait for each other (docs/collectives.md). */
hgas_status_t hgas_team_allreduce_on_stream(hgas_team_t team, void *dst, const void *src, size_t count,
                                            hgas_dtype_t type, hgas_op_t op, cudaStream_t s);
hgas_status_t hgas_team_reduce_on_stream(hgas_team_t team, void *dst, const void *src, size_t count,
                                         hgas_dtype_t type, hgas_op_t op, int root, cudaStream_t s);
hgas_status_t hgas_team_broadcast_on_stream(hgas_team_t team, void *dst, const void *src, size_t bytes, int root,
                                            cudaStream_t s);
hgas_status_t hgas_team_reduce_scatter_on_stream(hgas_team_t team, void *dst, const void *src, size_t count,
                                                 hgas_dtype_t type, hgas_op_t op, cudaStream_t s);
hgas_status_t hgas_team_fcollect_on_stream(hgas_team_t team, void *dst, const void *src, size_t bytes,
                                           cudaStream_t s);
hgas_status_t hgas_team_alltoall_on_stream(hgas_team_t team, void *dst, const void *src, size_t bytes,
                                           cudaStream_t s);
/** The team barrier (hgas_team_barrier) in stream order. */
hgas_status_t hgas_team_barrier_on_stream(hgas_team_t team, cudaStream_t s);
/** The world team's forms. */
hgas_status_t hgas_allreduce_on_stream(void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op,
                                       cudaStream_t s);
hgas_status_t hgas_broadcast_on_stream(void *dst, const void *src, size_t bytes, int root, cudaStream_t s);

/** The check behind hgas::device::check_resident (hgas_device.cuh): HGAS_OK when
 *  `grid_blocks` <= `max_resident`; else HGAS_ERR_INVALID_ARG with a message. max_resident < 0:
 *  the occupancy query failed and `what` says why. */
hgas_status_t hgas_device_grid_check(int grid_blocks, int max_resident, const char *what);

#ifdef __cplusplus
}
#endif
#endif /* HGAS_DEVICE_H */
