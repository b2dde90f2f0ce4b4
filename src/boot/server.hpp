// Private to src/boot: what a rank that hosts the store (rank 0 under srun/mpirun) needs
// beyond the public store_server interface.
#pragma once
#include "boot/boot.hpp"

namespace hgas::boot {

// Waits until every rank has joined and then said goodbye or disconnected, so that the
// hosting rank does not take the store away while others still use it. False on timeout.
bool store_wait_drained(store_server &s, double timeout_s);

}  // namespace hgas::boot
