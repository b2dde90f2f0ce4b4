/* Internal counters of the message layer for hgas's own tests (tests/ranks/test_msg.cpp): not
 * part of the public API. */
#ifndef HGAS_API_TESTING_MSG_H
#define HGAS_API_TESTING_MSG_H
#include <stdint.h>

#include <hgas/hgas.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t eager_sent, rndv_sent, rndv_one_sided, rndv_chunked;
    uint64_t unexpected, unexpected_bytes_peak, flow_stalls;
    uint64_t rndv_pool, pool_chunks, pool_send_peak, pool_bytes, ring_bytes;
    uint64_t rndv_ipc, ipc_opens, ipc_hits, ipc_invalidated;
    uint64_t tag_sent, tag_received; /* by UCX tag matching (HGAS_MSG_UCX_TAG) */
    uint64_t pack_steps, unpack_steps; /* typed messages packed / unpacked piece by piece */
    uint64_t typed_plain, typed_packed, typed_unpacked; /* typed messages as plain bytes; packed; unpacked */
    uint64_t ring_copies; /* eager messages and ring chunks copied into device memory asynchronously */
    uint64_t pool_direct_pulls; /* pool chunks copied into device memory from the sender's mapped chunk */
} hgasi_msg_stats_t;

hgas_status_t hgasi_msg_stats(hgasi_msg_stats_t *out);

/* Device memory of `kind` (HGAS_KIND_CUDA or HGAS_KIND_SIM) allocated the way a program does,
 * outside hgas's heaps (cuda: cudaMalloc; sim: an allocation of its own, at `at` when that
 * address is free, else anywhere), freed again, and copied to or from (synchronously; either
 * end host or device memory): the user device buffers of the IPC rendezvous tests. */
hgas_status_t hgasi_user_dev_alloc(hgas_kind_t kind, size_t bytes, void *at, void **out);
hgas_status_t hgasi_user_dev_free(hgas_kind_t kind, void *p);
hgas_status_t hgasi_user_dev_copy(void *dst, const void *src, size_t bytes);
/* The same made by virtual memory management (cuda: cuMemCreate + cuMemMap, with the POSIX-fd
 * handle type when `exportable`, else none; sim: an anonymous memory file, passed by fd only
 * when `exportable`); freed by hgasi_user_dev_free. */
hgas_status_t hgasi_user_dev_alloc_vmm(hgas_kind_t kind, size_t bytes, void *at, int exportable, void **out);

#ifdef __cplusplus
}
#endif
#endif
