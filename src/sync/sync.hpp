// Waiting on signals and the world barrier.
#pragma once
#include <hgas/hgas.h>

#include "core/rank.hpp"

namespace hgas::sync {

// True when `v cmp value`.
bool compare(uint64_t v, hgas_cmp_t cmp, uint64_t value);
// `sig` must be an 8-byte aligned word in this rank's hgas memory.
// `cmp` is the integer the caller passed for an hgas_cmp_t: C lets any int through an enum
// parameter, and in C++ an enum object holding a value outside the enum's range is undefined
// behaviour to load, so it is checked as an int and becomes an hgas_cmp_t only once valid.
status signal_wait_until(core::rank &r, const uint64_t *sig, int cmp, uint64_t value, uint64_t *observed);
status signal_test(core::rank &r, const uint64_t *sig, int cmp, uint64_t value, int *satisfied);
status signal_fetch(core::rank &r, const uint64_t *sig, uint64_t *value);
// Dissemination barrier over signal words in the symmetric heap: ceil(log2 n) rounds, each
// one signal add to rank (me + 2^k) mod n and one wait. Quiets first.
status barrier(core::rank &r);

}  // namespace hgas::sync
