// Threads acting for a rank (hgas_rank_self / hgas_thread_attach, docs/threads.md): which
// ranks of this process are alive and how many threads are attached to each, so that an
// attach names a live rank and hgas_finalize does not free a rank other threads still use.
#pragma once

#include "base/status.hpp"
#include "core/rank.hpp"

namespace hgas::api {

// hgas_init made `r` the calling thread's own rank.
void rank_started(core::rank *r);
// hgas_finalize is about to end `r`: fails (and changes nothing) while threads are attached to
// it, the calling thread among them (with one rank per process any other thread may finalize).
status rank_ending(core::rank *r);

}  // namespace hgas::api
