#include "mem/gptr.hpp"

namespace hgas::mem {

status check_range(const char *op, hgas_gptr_t p, uint64_t len, int nranks, uint64_t seg_size) {
    if (p.segment == HGAS_SEG_NULL)
        return fail(status::invalid_pointer, "%s: null global pointer", op);
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
    return status::ok;
}

status check_aligned(const char *op, hgas_gptr_t p, unsigned width) {
    if (p.offset % width != 0)
        return fail(status::misaligned, "%s: offset %llu on rank %u is not aligned to %u bytes", op,
                    (unsigned long long)p.offset, p.rank, width);
    return status::ok;
}

}  // namespace hgas::mem
