#include "coll/symmetric.hpp"

#include <cstring>

#include "coll/coll.hpp"
#include "sync/sync.hpp"

namespace hgas::coll {

namespace {
// Agreement check: every rank passes (x, ~x); MIN of both gives min(x) and ~max(x).
status agree(core::rank &r, const char *op, uint64_t a, uint64_t b) {
    uint64_t v[4] = {a, ~a, b, ~b}, out[4];
    HGAS_TRY(allreduce(r, out, v, 4, HGAS_UINT64, HGAS_OP_MIN));
    if (out[0] != ~out[1] || out[2] != ~out[3])
        return fail(status::invalid_arg, "%s: ranks passed different arguments (values from %llu to %llu); every "
                    "rank must make the same collective allocations in the same order", op,
                    (unsigned long long)(out[0] != ~out[1] ? out[0] : out[2]),
                    (unsigned long long)(out[0] != ~out[1] ? ~out[1] : ~out[3]));
    return status::ok;
}
}  // namespace

status sym_alloc(core::rank &r, const char *op, size_t bytes, size_t align, bool zero, void **out) {
    if (!out) return fail(status::invalid_arg, "%s: the result pointer is NULL", op);
    if (align == 0 || (align & (align - 1)))
        return fail(status::invalid_arg, "%s: alignment %zu is not a power of two", op, align);
    HGAS_TRY(agree(r, op, bytes, align));
    if (bytes == 0) {
        *out = nullptr;
        return status::ok;
    }
    auto off = r.sym_heap().allocate(bytes, align < 64 ? 64 : align);
    // The heaps are identical on every rank, so all ranks fail together here; no rank is left
    // waiting in the barrier below.
    if (!off.ok())
        return fail(status::no_memory, "%s: %zu bytes do not fit in the symmetric heap (%llu of %llu bytes in use, "
                    "largest free block %llu); raise HGAS_HEAP_SIZE", op, bytes,
                    (unsigned long long)r.sym_heap().in_use(), (unsigned long long)r.sym_heap().capacity(),
                    (unsigned long long)r.sym_heap().largest_free());
    char *p = r.own_base(mem::seg_symmetric) + *off;
    if (zero) std::memset(p, 0, bytes);
    // No rank may put into the new block before its owner has zeroed it (calloc) or before
    // every rank knows of it: the barrier is part of the contract (as in shmem_malloc).
    status s = sync::barrier(r);
    if (s != status::ok) {
        (void)r.sym_heap().release(*off);
        return s;
    }
    *out = p;
    return status::ok;
}

status sym_free(core::rank &r, void *p) {
    const uint64_t off = p ? static_cast<uint64_t>(static_cast<char *>(p) - r.own_base(mem::seg_symmetric)) : 0;
    const bool valid = !p || (r.own_segment_of(p, 1) == mem::seg_symmetric && r.sym_heap().block_size(off) != 0);
    // Agree first, so that a bad pointer on one rank fails the call on every rank, none hangs.
    HGAS_TRY(agree(r, "hgas_free", valid ? 0 : 1, 0));
    if (!valid)
        return fail(status::invalid_pointer, "hgas_free: %p is not the start of a live symmetric allocation "
                    "(double free, or memory not from hgas_malloc)", p);
    if (!p) return status::ok;
    HGAS_TRY(sync::barrier(r));  // nobody may still be writing into the block
    return r.sym_heap().release(off);
}

status all_alloc(core::rank &r, uint64_t nblocks, uint64_t block_bytes, hgas_array_t *out) {
    if (!out) return fail(status::invalid_arg, "hgas_all_alloc: the result pointer is NULL");
    if (nblocks == 0 || block_bytes == 0)
        return fail(status::invalid_arg, "hgas_all_alloc: nblocks (%llu) and block_bytes (%llu) must be > 0",
                    (unsigned long long)nblocks, (unsigned long long)block_bytes);
    const uint64_t n = static_cast<uint64_t>(r.n());
    const uint64_t per_rank = (nblocks + n - 1) / n;
    if (block_bytes > UINT64_MAX / per_rank)
        return fail(status::no_memory, "hgas_all_alloc: %llu blocks of %llu bytes overflow", (unsigned long long)nblocks,
                    (unsigned long long)block_bytes);
    void *p = nullptr;
    HGAS_TRY(sym_alloc(r, "hgas_all_alloc", per_rank * block_bytes, 64, false, &p));
    hgas_array_t a{};
    a.base = static_cast<uint64_t>(static_cast<char *>(p) - r.own_base(mem::seg_symmetric));
    a.nblocks = nblocks;
    a.block_bytes = block_bytes;
    a.nranks = static_cast<uint32_t>(n);
    *out = a;
    return status::ok;
}

status all_free(core::rank &r, hgas_array_t *a) {
    if (!a) return fail(status::invalid_arg, "hgas_all_free: the array pointer is NULL");
    HGAS_TRY(sym_free(r, r.own_base(mem::seg_symmetric) + a->base));
    *a = hgas_array_t{};
    return status::ok;
}

status local_alloc(core::rank &r, size_t bytes, hgas_gptr_t *out) {
    if (!out) return fail(status::invalid_arg, "hgas_alloc: the result pointer is NULL");
    if (bytes == 0) return fail(status::invalid_arg, "hgas_alloc: size 0");
    auto off = r.local_heap().allocate(bytes, 64);
    if (!off.ok())
        return fail(status::no_memory, "hgas_alloc: %zu bytes do not fit in rank %d's local heap (%llu of %llu "
                    "bytes in use); raise HGAS_LOCAL_HEAP_SIZE", bytes, r.me(),
                    (unsigned long long)r.local_heap().in_use(), (unsigned long long)r.local_heap().capacity());
    *out = mem::make_gptr(r.me(), mem::seg_local, *off);
    return status::ok;
}

status local_free(core::rank &r, hgas_gptr_t p) {
    if (p.rank != static_cast<uint32_t>(r.me()) || p.segment != mem::seg_local)
        return fail(status::invalid_pointer, "hgas_dealloc: the pointer (rank %u, segment %u) is not an hgas_alloc "
                    "allocation of this rank (%d); only the owner frees it", p.rank, p.segment, r.me());
    if (r.local_heap().release(p.offset) != status::ok)
        return fail(status::invalid_pointer, "hgas_dealloc: offset %llu is not the start of a live allocation "
                    "(double free?)", (unsigned long long)p.offset);
    return status::ok;
}

}  // namespace hgas::coll
