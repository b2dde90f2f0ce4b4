// Collective allocation: the symmetric heap (hgas_malloc family) and distributed arrays
// (hgas_all_alloc), plus the non-collective local heap (hgas_alloc).
#pragma once
#include <hgas/hgas.h>

#include "core/rank.hpp"

namespace hgas::coll {

// Every rank must ask for the same size in the same order; checked (min/max allreduce of the
// size) so a mismatch fails on every rank instead of corrupting memory later.
// `k`: the memory kind (its symmetric heap). Collective; includes a barrier.
status sym_alloc(core::rank &r, const char *op, size_t bytes, size_t align, bool zero, void **out,
                 mem::kind k = mem::kind::host);
status sym_free(core::rank &r, void *p);
status all_alloc(core::rank &r, uint64_t nblocks, uint64_t block_bytes, hgas_array_t *out,
                 mem::kind k = mem::kind::host);
status all_free(core::rank &r, hgas_array_t *a);

status local_alloc(core::rank &r, size_t bytes, hgas_gptr_t *out, mem::kind k = mem::kind::host);
status local_free(core::rank &r, hgas_gptr_t p);

}  // namespace hgas::coll
