// Stream-ordered collectives (hgas_*_on_stream): the collective runs on this rank's CPU once
// the stream has reached it, and the stream goes on once it is complete. This file is the
// collective's half: a queue of calls, each with two words in the rank's local host heap (which
// the GPU maps). The device layer enqueues the stream's half (device/state.cpp): write `seq`
// into `go`, then wait until `done` reaches `seq`. `pump` starts the calls whose `go` is set,
// strictly in the order they were enqueued (that is the collectives' order on every rank), and
// writes `done`; it runs only where the rank's thread waits on a stream (hgas_stream_sync), never
// nested inside another operation. A failed collective still lets its stream go on; its error
// is kept for stream_status (hgas_stream_sync returns it).
#pragma once
#include <functional>

#include "core/rank.hpp"

namespace hgas::coll {

struct stream_slot {
    uint64_t seq = 0;
    uint64_t *go = nullptr, *done = nullptr;
};

// Queues `run` (the collective with its arguments, already checked as far as they can be
// without the stream's data). At most 256 outstanding per rank.
result<stream_slot> stream_enqueue(core::rank &r, const char *op, std::function<status()> run);
// The stream's half could not be enqueued: forget the call.
void stream_cancel(core::rank &r, uint64_t seq);
// Whether the oldest queued call's stream has reached it.
bool stream_ready(core::rank &r);
// Runs every queued call whose stream has reached it, oldest first; stops at the first that is
// not reached yet.
void stream_pump(core::rank &r);
// The first error of a stream-ordered collective since the last call (then cleared).
status stream_status(core::rank &r);

}  // namespace hgas::coll
