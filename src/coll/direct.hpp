// The "direct" reductions (direct.cpp): each member combines its part of the result straight
// from the other members' mapped vectors. For teams whose members' heaps are all mapped here.
#pragma once
#include <hgas/hgas.h>

#include <cstddef>
#include <cstdint>

#include "coll/coll.hpp"

namespace hgas::coll::detail {

// Whether [p, p + bytes) lies in an allocation of one of this rank's symmetric heaps (host,
// cuda, sim), and where (*ref). Quiet: a buffer elsewhere is no error, only not direct's.
bool symmetric_at(core::rank &r, const void *p, size_t bytes, sym_ref &ref);

// Whether segment `seg` of every member of `t` is mapped in this process (host segments for
// the CPU, device segments for this rank's device), so that the direct algorithms can read it.
bool direct_possible(const team &t, uint16_t seg);

// Allreduce of `count` elements of `d` (symmetric at `dref`, kind `kd`; this rank's vector on
// entry, the result on return). `fp`: the collective's fingerprint.
status allreduce_direct(team &t, const char *name, char *d, mem::kind kd, const sym_ref &dref, size_t count,
                        hgas_dtype_t type, hgas_op_t op, uint32_t fp);

// Reduce-scatter: dst (`count` elements, kind `kd`) gets block me of the reduction of every
// member's `s` (n blocks, symmetric at `sref`, kind `kd`).
status reduce_scatter_direct(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &sref,
                             size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp);

}  // namespace hgas::coll::detail
