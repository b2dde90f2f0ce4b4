#include "mem/gptr.hpp"

namespace hgas::mem {

status check_range(const char *op, hgas_gptr_t p, uint64_t len, int nranks, uint64_t seg_size, uint64_t user_base) {
    if (p.segment == HGAS_SEG_NULL)
        return fail(status::invalid_pointer, "%s: null global pointer", op);
    if (p.flags != 0)  // reserved for later use: a pointer that sets them means something we do not do
        return fail(status::invalid_arg, "%s: the global pointer has reserved flag bits set (flags 0x%x; they must "
                    "be 0: build pointers with hgas_ptr, hgas_alloc or hgas_array_ptr)", op, p.flags);
    if (p.rank >= static_cast<uint32_t>(nranks))
        return fail(status::invalid_arg, "%s: rank %u does not exist (the job has %d ranks)", op, p.rank, nranks);
    if (seg_size == 0)
        return fail(status::invalid_pointer, "%s: rank %u has no segment %u (a corrupt or foreign global pointer?)",
                    op, p.rank, p.segment);
    if (!in_bounds(p.offset, len, seg_size))
        return fail(status::out_of_bounds,
                    "%s: %llu bytes at offset %llu leave segment %u of rank %u (%llu bytes); nothing was moved", op,
                    (unsigned long long)len, (unsigned long long)p.offset, p.segment, p.rank,
                    (unsigned long long)seg_size);
    if (p.offset < user_base)
        return fail(status::out_of_bounds,
                    "%s: %llu bytes at offset %llu of segment %u on rank %u reach hgas's own objects (offsets below "
                    "%llu, before the first allocation); nothing was moved", op, (unsigned long long)len,
                    (unsigned long long)p.offset, p.segment, p.rank, (unsigned long long)user_base);
    return status::ok;
}

status check_allocation(const char *op, hgas_gptr_t p, uint64_t len, const allocator &heap, const char *base) {
    const uint64_t off = p.offset;
    const void *addr = base ? base + off : nullptr;
    uint64_t start = 0, size = 0;
    if (heap.find_block(off, start, size)) {
        if (len <= size - (off - start)) return status::ok;
        return fail(status::out_of_bounds,
                    "%s: %llu bytes at %p (offset %llu of segment %u) on rank %u run %llu bytes past the end of the "
                    "allocation they start in (%llu bytes at %p, offset %llu); nothing was moved (HGAS_CHECK=1)", op,
                    (unsigned long long)len, addr, (unsigned long long)off, p.segment, p.rank,
                    (unsigned long long)(len - (size - (off - start))), (unsigned long long)size,
                    base ? static_cast<const void *>(base + start) : nullptr, (unsigned long long)start);
    }
    // Outside every allocation: name the one it overlaps (it starts before one) or the nearest.
    uint64_t bs = 0, bsz = 0, as = 0, asz = 0;
    const bool before = heap.block_before(off, bs, bsz), after = heap.block_after(off, as, asz);
    const bool overlaps = after && as - off < len;
    const bool use_after = after && (overlaps || !before || as - off < off - (bs + bsz));
    if (!before && !after)
        return fail(status::out_of_bounds, "%s: %llu bytes at %p (offset %llu of segment %u) on rank %u are not in any "
                    "allocation: the heap has no live allocation; nothing was moved (HGAS_CHECK=1)", op,
                    (unsigned long long)len, addr, (unsigned long long)off, p.segment, p.rank);
    const uint64_t ns = use_after ? as : bs, nsz = use_after ? asz : bsz;
    return fail(status::out_of_bounds,
                "%s: %llu bytes at %p (offset %llu of segment %u) on rank %u are not inside a live allocation; %s the "
                "allocation of %llu bytes at %p (offset %llu); nothing was moved (HGAS_CHECK=1)", op,
                (unsigned long long)len, addr, (unsigned long long)off, p.segment, p.rank,
                overlaps ? "they start before and overlap" : use_after ? "the nearest is" : "the nearest (before them) is",
                (unsigned long long)nsz, base ? static_cast<const void *>(base + ns) : nullptr,
                (unsigned long long)ns);
}

status check_aligned(const char *op, hgas_gptr_t p, unsigned width) {
    if (p.offset % width != 0)
        return fail(status::misaligned, "%s: offset %llu on rank %u is not aligned to %u bytes", op,
                    (unsigned long long)p.offset, p.rank, width);
    return status::ok;
}

}  // namespace hgas::mem
