// The device layer: the host side of communication issued by GPUs (include/hgas/hgas_device.h,
// hgas_device.cuh). Each function validates its arguments and names the public call in its
// messages. The rank's device state (context, proxy ring and thread) is created at the first
// call that needs it and lives in the rank (core::rank_extension).
#pragma once
#include <hgas/hgas_device.h>

#include <functional>

#include "core/rank.hpp"

namespace hgas::msg {
struct layout;  // msg/layout.hpp
}

namespace hgas::device {

status ctx_get(core::rank &r, hgas_device_ctx_t *out);
int gpu(core::rank &r);
// The first error a kernel or the proxy recorded, then cleared.
status check(core::rank &r);
status stream_sync(core::rank &r, cudaStream_t s);

status put_on_stream(core::rank &r, void *dst, const void *src, size_t bytes, int rank, cudaStream_t s);
status put_signal_on_stream(core::rank &r, void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                            hgas_signal_op_t op, int rank, cudaStream_t s);
// `cmp`: the caller's int, validated here before it becomes an hgas_cmp_t (sync/sync.hpp says why).
status signal_wait_on_stream(core::rank &r, const uint64_t *sig, int cmp, uint64_t value, cudaStream_t s);
status barrier_on_stream(core::rank &r, cudaStream_t s);
status quiet_on_stream(core::rank &r, cudaStream_t s);
// Tagged messages in stream order (src/msg does the message; this the stream's part).
// `op` names the public call; `ctx` is the scope; `l` a typed message's layout (else nullptr).
status send_on_stream(core::rank &r, const char *op, uint32_t ctx, const void *buf, size_t bytes, int dest, int tag,
                      const msg::layout *l, cudaStream_t s);
status recv_on_stream(core::rank &r, const char *op, uint32_t ctx, void *buf, size_t bytes, int src, int tag,
                      hgas_msg_info_t *info, const msg::layout *l, cudaStream_t s);

// A collective in stream order: `run` (the collective with its arguments) runs on this rank's
// thread in hgas_stream_sync once the stream has reached it; later work on the stream waits
// for it (coll/stream.hpp).
status coll_on_stream(core::rank &r, const char *op, std::function<status()> run, cudaStream_t s);

status grid_check(int grid_blocks, int max_resident, const char *what);

}  // namespace hgas::device
