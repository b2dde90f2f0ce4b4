// Global pointers: (rank, segment, offset), checked against the target segment's bounds before
// any byte moves. The same check runs at the target for operations it executes itself.
#pragma once
#include <hgas/hgas.h>

#include <cstdint>

#include "base/status.hpp"
#include "mem/allocator.hpp"

namespace hgas::mem {

inline hgas_gptr_t make_gptr(int rank, uint16_t seg, uint64_t offset) {
    hgas_gptr_t g;
    g.offset = offset;
    g.rank = static_cast<uint32_t>(rank);
    g.segment = seg;
    g.flags = 0;
    return g;
}

// [offset, offset+len) inside a segment of `seg_size` bytes, without overflow.
inline bool in_bounds(uint64_t offset, uint64_t len, uint64_t seg_size) {
    return offset <= seg_size && len <= seg_size - offset;
}

// Full check of a global pointer range against the sizes of the target's segments.
// `seg_size` is 0 for a segment the target does not have. `user_base`: where the user part of
// the segment starts (hgas's own objects lie below it in a symmetric heap, at the same offsets
// on every rank); 0 for the runtime's own accesses. Describes the problem on failure.
status check_range(const char *op, hgas_gptr_t p, uint64_t len, int nranks, uint64_t seg_size,
                   uint64_t user_base = 0);
// Checked mode (HGAS_CHECK): [p.offset, +len) must lie inside one live allocation of `heap`,
// the allocator of p's segment as the caller knows it (the same on every rank for symmetric
// heaps). `base` is the caller's address of the segment's offset 0 (for the message), or
// nullptr. Fails with out_of_bounds naming the rank, address, size and the allocation the
// range overlaps, or the nearest one.
status check_allocation(const char *op, hgas_gptr_t p, uint64_t len, const allocator &heap, const char *base);
// Atomic/signal targets must be aligned to their width.
status check_aligned(const char *op, hgas_gptr_t p, unsigned width);

}  // namespace hgas::mem
