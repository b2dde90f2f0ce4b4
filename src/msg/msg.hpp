// Tagged two-sided messages (hgas_send / hgas_recv and friends) with MPI matching semantics,
// on any memory kind at either end. README.md has the protocol; docs/messaging.md the user's
// view.
//
// Memory layout (the message area, allocated by core at init in every rank's symmetric host
// heap at the same offset, core::msg_area_bytes): for each sending rank s a ring of `slots`
// slots of `slot` bytes (ring s carries messages from s to the area's owner), then one 64-byte
// credit word per rank t: how many slots of this rank's ring at t that t has consumed.
#pragma once
#include <hgas/hgas.h>

#include "core/rank.hpp"

namespace hgas::msg {

struct layout;  // layout.hpp

// A message whose bytes are produced while earlier ones travel (a typed message packed chunk by
// chunk): ensure(upto) makes the first `upto` bytes of the send buffer valid. The layer calls
// it with growing values just before it reads those bytes, and with the whole size before any
// path that reads the buffer at once (eager, one-sided, UCX). It outlives the send.
struct producer {
    virtual ~producer() = default;
    virtual status ensure(size_t upto) = 0;
};
// The receiving side's mirror: arrived(upto) says the first `upto` bytes of the receive buffer
// hold the message (called with growing values on the paths that deliver in order: ring chunks
// and pool chunks into host memory); the rest is the owner's business once the receive is done.
struct consumer {
    virtual ~consumer() = default;
    virtual status arrived(size_t upto) = 0;
};

struct send_args {
    uint32_t ctx = 0;
    const void *buf = nullptr;
    size_t bytes = 0;
    int dest = -1;
    int tag = 0;
    producer *prod = nullptr;
};
struct recv_args {
    uint32_t ctx = 0;
    void *buf = nullptr;
    size_t bytes = 0;
    int src = HGAS_ANY_RANK;
    int tag = HGAS_ANY_TAG;
    hgas_msg_info_t *info = nullptr;
    consumer *cons = nullptr;
};

// Creates the rank's message state (hgas_init, once the rank exists).
status attach(core::rank &r);

// `op` names the public call in error messages. Arguments are checked fully before anything
// is sent or posted; *h is written only on success (HGAS_HANDLE_DONE when already complete).
status isend(core::rank &r, const char *op, const send_args &a, hgas_handle_t *h);
status irecv(core::rank &r, const char *op, const recv_args &a, hgas_handle_t *h);
status send(core::rank &r, const send_args &a);
status recv(core::rank &r, const recv_args &a);
status iprobe(core::rank &r, const char *op, uint32_t ctx, int src, int tag, int *flag, hgas_msg_info_t *info);
status probe(core::rank &r, int src, int tag, hgas_msg_info_t *info);

// Stream-ordered messages (hgas_send_on_stream / hgas_recv_on_stream; the device layer does
// the stream's part). Each registers an operation with two words in the rank's symmetric host
// heap: the stream writes `seq` into `go` when it reaches the operation, then waits until
// `done` reaches `seq`. The message layer starts the message once `go` says so (its progress
// polls the words) and writes `done` when the message is complete or failed; a failure is kept
// for stream_status. The arguments are checked here, before anything is registered.
struct stream_slot {
    uint64_t seq = 0;
    uint64_t *go = nullptr, *done = nullptr;
};
// `l`: a typed message (layout.hpp; copied): a.buf is the buffer the layout describes and
// a.bytes is ignored (the layout's packed size).
result<stream_slot> stream_send(core::rank &r, const char *op, const send_args &a, const layout *l = nullptr);
result<stream_slot> stream_recv(core::rank &r, const char *op, const recv_args &a, const layout *l = nullptr);
// The stream's part could not be enqueued: forget the operation.
void stream_cancel(core::rank &r, uint64_t seq);
// The first error of a stream-ordered message since the last call (then cleared).
status stream_status(core::rank &r);

result<uint32_t> ctx_create(core::rank &r);
status ctx_destroy(core::rank &r, uint32_t ctx);

// Counters for tests and hgas-info.
struct stats {
    uint64_t eager_sent = 0, rndv_sent = 0, rndv_one_sided = 0, rndv_chunked = 0;
    uint64_t unexpected = 0;            // messages that arrived before their receive
    uint64_t unexpected_bytes_peak = 0; // most eager bytes held at once
    uint64_t flow_stalls = 0;           // times a ring was left full because the queue was
    uint64_t rndv_pool = 0;             // large messages pipelined through the pinned pools
    uint64_t pool_chunks = 0;           // chunks sent through this rank's pool
    uint64_t pool_send_in_use = 0, pool_send_peak = 0;  // send chunks in use now, at most
    uint64_t pool_bytes = 0;            // the pool's size: 2 x depth x chunk, whatever the peers
    uint64_t ring_bytes = 0;            // this rank's rings: ranks x slots x slot
    uint64_t rndv_ipc = 0;              // large messages copied out of the sender's mapped user buffer
    uint64_t ipc_opens = 0, ipc_hits = 0;  // peer allocations mapped; reuses of a cached mapping
    uint64_t ipc_invalidated = 0;       // cached mappings dropped: the peer freed and reallocated there
    uint64_t tag_sent = 0, tag_received = 0;  // messages by UCX tag matching (HGAS_MSG_UCX_TAG)
    uint64_t pack_steps = 0, unpack_steps = 0;  // typed messages: pieces packed / unpacked while others travelled
    // typed messages sent or received as plain bytes (a one-block layout); sent packed; received unpacked
    uint64_t typed_plain = 0, typed_packed = 0, typed_unpacked = 0;
    uint64_t ring_copies = 0;  // eager messages and ring chunks copied into device memory asynchronously
    uint64_t pool_direct_pulls = 0;  // pool chunks copied into device memory from the sender's mapped chunk
};
result<stats> get_stats(core::rank &r);
// Counts a typed message by the way it takes (layout.cpp).
enum class typed_path { plain, packed, unpacked };
void note_typed(core::rank &r, typed_path p);

}  // namespace hgas::msg
