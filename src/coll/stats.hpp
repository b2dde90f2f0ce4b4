// Per-rank counters of the collectives: which algorithm each call ran, and which scratch the
// reductions' chunks crossed. Tests read them (testing_coll.h) to check the algorithm choice
// by value; they cost one increment per call or chunk.
#pragma once
#include <cstdint>

#include "coll/testing_coll.h"
#include "core/rank.hpp"

namespace hgas::coll::detail {

// This rank's counters (attached to the rank, zero at first use).
hgasi_coll_stats_t &stats(core::rank &r);

}  // namespace hgas::coll::detail
