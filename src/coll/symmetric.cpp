#include "coll/symmetric.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "coll/coll.hpp"
#include "sync/sync.hpp"

namespace hgas::coll {

namespace {
// Agreement check: every rank passes (x, ~x) for each value; MIN gives min(x) and ~max(x).
status agree(core::rank &r, const char *op, uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t mine[3] = {a, b, c};
    uint64_t v[6], out[6];
    for (int i = 0; i < 3; ++i) {
        v[2 * i] = mine[i];
        v[2 * i + 1] = ~mine[i];
    }
    HGAS_TRY(allreduce(r, out, v, 6, HGAS_UINT64, HGAS_OP_MIN));
    for (int i = 0; i < 3; ++i)
        if (out[2 * i] != ~out[2 * i + 1])
            return fail(status::invalid_arg, "%s: ranks passed different %s (from %llu to %llu); every rank must make "
                        "the same collective allocations in the same order", op,
                        i == 0 ? "sizes" : i == 1 ? "alignments" : "memory kinds", (unsigned long long)out[2 * i],
                        (unsigned long long)~out[2 * i + 1]);
    return status::ok;
}
}  // namespace

const char *heap_setting(mem::kind k, bool symmetric) {
    if (k == mem::kind::cuda) return symmetric ? "HGAS_CUDA_HEAP_SIZE" : "HGAS_CUDA_LOCAL_HEAP_SIZE";
    if (k == mem::kind::sim) return symmetric ? "HGAS_SIM_HEAP_SIZE" : "HGAS_SIM_LOCAL_HEAP_SIZE";
    return symmetric ? "HGAS_HEAP_SIZE" : "HGAS_LOCAL_HEAP_SIZE";
}

// Zero-fills memory of any kind (device memory through its engine).
status zero_fill(core::rank &r, char *p, size_t bytes, mem::kind k) {
    if (k == mem::kind::host) {
        std::memset(p, 0, bytes);
        return status::ok;
    }
    static const char zeros[65536] = {};
    for (size_t pos = 0; pos < bytes; pos += sizeof zeros)
        HGAS_TRY(r.staging()->copy(p + pos, k, zeros, mem::kind::host, std::min(sizeof zeros, bytes - pos)));
    return status::ok;
}

status sym_alloc(core::rank &r, const char *op, size_t bytes, size_t align, bool zero, void **out, mem::kind k) {
    if (!out) return fail(status::invalid_arg, "%s: the result pointer is NULL", op);
    if (align == 0 || (align & (align - 1)))
        return fail(status::invalid_arg, "%s: alignment %zu is not a power of two", op, align);
    HGAS_TRY(agree(r, op, bytes, align, static_cast<uint64_t>(k)));
    if (k != mem::kind::host) {
        // Every rank must have the kind, or none allocates (no rank waits in the barrier).
        const uint64_t have = r.device(k) ? 1 : 0;
        uint64_t all = 0;
        HGAS_TRY(allreduce(r, &all, &have, 1, HGAS_UINT64, HGAS_OP_MIN));
        if (!all)
            return fail(status::unsupported, "%s: kind %s is not available on every rank%s%s", op, mem::kind_name(k),
                        r.device(k) ? "" : ": ", r.kind_unavailable(k).c_str());
    }
    if (bytes == 0) {
        *out = nullptr;
        return status::ok;
    }
    const uint16_t seg = mem::symmetric_segment(k);
    mem::allocator &heap = r.heap(seg);
    auto off = heap.allocate(bytes, align < 64 ? 64 : align);
    if (!off.ok() && heap.commit_failed()) return off.error();  // /dev/shm is full: its message says so
    // The heaps are identical on every rank, so all ranks fail together here; no rank is left
    // waiting in the barrier below.
    if (!off.ok())
        return fail(status::no_memory, "%s: %zu bytes do not fit in the symmetric %s heap (%llu of %llu bytes in use, "
                    "largest free block %llu); raise %s", op, bytes, mem::kind_name(k),
                    (unsigned long long)heap.in_use(), (unsigned long long)heap.capacity(),
                    (unsigned long long)heap.largest_free(), heap_setting(k, true));
    char *p = r.own_base(seg) + *off;
    status s = zero ? zero_fill(r, p, bytes, k) : status::ok;
    // No rank may put into the new block before its owner has zeroed it (calloc) or before
    // every rank knows of it: the barrier is part of the contract (as in shmem_malloc).
    if (s == status::ok) s = sync::barrier(r);
    if (s != status::ok) {
        (void)heap.release(*off);
        return s;
    }
    *out = p;
    return status::ok;
}

namespace {
// The collective free behind hgas_free and hgas_all_free. `bad` is set where the caller has
// already found the argument invalid (its message is recorded); the agreement still runs, so
// that a bad argument on one rank fails the call on every rank and none waits in the barrier.
status free_collective(core::rank &r, const char *op, void *p, status bad) {
    const int seg = p ? r.own_segment_of(p, 1) : mem::seg_symmetric;
    const bool sym_seg = seg >= 0 && mem::symmetric_segment(mem::segment_kind(static_cast<uint16_t>(seg))) == seg;
    const uint64_t off = p && sym_seg ? static_cast<uint64_t>(static_cast<char *>(p) - r.own_base(seg)) : 0;
    // block_size is 0 for the runtime's own objects (below the heap's user base) too.
    const bool valid =
        bad == status::ok && (!p || (sym_seg && r.heap(static_cast<uint16_t>(seg)).block_size(off) != 0));
    if (!valid && bad == status::ok)
        bad = fail(status::invalid_pointer, "%s: %p is not the start of a live symmetric allocation (double free, "
                   "or memory not from hgas_malloc)", op, p);
    const std::string why = valid ? std::string() : last_error();
    // Agree first, so that a bad pointer on one rank fails the call on every rank, none hangs.
    uint64_t mine = valid ? 0 : 1, any = 0;
    HGAS_TRY(allreduce(r, &any, &mine, 1, HGAS_UINT64, HGAS_OP_MAX));
    if (!valid) return fail(bad, "%s", why.c_str());
    if (any)
        return fail(status::invalid_pointer, "%s: another rank passed a pointer that is not a live symmetric "
                    "allocation (its hgas_last_error() says which); nothing was freed on any rank", op);
    if (!p) return status::ok;
    HGAS_TRY(sync::barrier(r));  // nobody may still be writing into the block
    return r.heap(static_cast<uint16_t>(seg)).release(off);
}
}  // namespace

status sym_free(core::rank &r, void *p) { return free_collective(r, "hgas_free", p, status::ok); }

status all_alloc(core::rank &r, uint64_t nblocks, uint64_t block_bytes, hgas_array_t *out, mem::kind k) {
    if (!out) return fail(status::invalid_arg, "hgas_all_alloc: the result pointer is NULL");
    if (nblocks == 0 || block_bytes == 0)
        return fail(status::invalid_arg, "hgas_all_alloc: nblocks (%llu) and block_bytes (%llu) must be > 0",
                    (unsigned long long)nblocks, (unsigned long long)block_bytes);
    const uint64_t n = static_cast<uint64_t>(r.n());
    const uint64_t per_rank = nblocks / n + (nblocks % n != 0);  // ceil, without nblocks + n - 1 overflowing
    if (block_bytes > UINT64_MAX / per_rank || per_rank * block_bytes > SIZE_MAX)
        return fail(status::no_memory, "hgas_all_alloc: %llu blocks of %llu bytes overflow (%llu blocks per rank)",
                    (unsigned long long)nblocks, (unsigned long long)block_bytes, (unsigned long long)per_rank);
    void *p = nullptr;
    HGAS_TRY(sym_alloc(r, "hgas_all_alloc", static_cast<size_t>(per_rank * block_bytes), 64, false, &p, k));
    hgas_array_t a{};
    a.segment = mem::symmetric_segment(k);
    a.base = static_cast<uint64_t>(static_cast<char *>(p) - r.own_base(a.segment));
    a.nblocks = nblocks;
    a.block_bytes = block_bytes;
    a.nranks = static_cast<uint32_t>(n);
    *out = a;
    return status::ok;
}

status all_free(core::rank &r, hgas_array_t *a) {
    const char *op = "hgas_all_free";
    status bad = status::ok;
    void *p = nullptr;
    if (!a)
        bad = fail(status::invalid_arg, "%s: the array pointer is NULL", op);
    else if (a->nranks == 0 || a->block_bytes == 0)  // hgas_all_free zeroes the array it frees
        bad = fail(status::invalid_pointer, "%s: the array is not allocated (freed already by hgas_all_free, or never "
                   "allocated by hgas_all_alloc)", op);
    else if (a->nranks != static_cast<uint32_t>(r.n()) || a->segment >= mem::seg_count || !r.own_base(a->segment) ||
             mem::symmetric_segment(mem::segment_kind(a->segment)) != a->segment)
        bad = fail(status::invalid_pointer, "%s: the array (segment %u, %u ranks) is not an hgas_all_alloc array of "
                   "this job", op, a->segment, a->nranks);
    else if (!mem::in_bounds(a->base, 1, r.own_size(a->segment)))
        bad = fail(status::invalid_pointer, "%s: the array's base offset %llu is outside segment %u", op,
                   (unsigned long long)a->base, a->segment);
    else
        p = r.own_base(a->segment) + a->base;
    HGAS_TRY(free_collective(r, op, p, bad));
    *a = hgas_array_t{};
    return status::ok;
}

status local_alloc(core::rank &r, size_t bytes, hgas_gptr_t *out, mem::kind k) {
    if (!out) return fail(status::invalid_arg, "hgas_alloc: the result pointer is NULL");
    if (bytes == 0) return fail(status::invalid_arg, "hgas_alloc: size 0");
    if (k != mem::kind::host && !r.device(k))
        return fail(status::unsupported, "hgas_alloc: %s", r.kind_unavailable(k).c_str());
    const uint16_t seg = mem::local_segment(k);
    mem::allocator &heap = r.heap(seg);
    auto off = heap.allocate(bytes, 64);
    if (!off.ok() && heap.commit_failed()) return off.error();  // /dev/shm is full: its message says so
    if (!off.ok())
        return fail(status::no_memory, "hgas_alloc: %zu bytes do not fit in rank %d's local %s heap (%llu of %llu "
                    "bytes in use); raise %s", bytes, r.me(), mem::kind_name(k), (unsigned long long)heap.in_use(),
                    (unsigned long long)heap.capacity(), heap_setting(k, false));
    *out = mem::make_gptr(r.me(), seg, *off);
    return status::ok;
}

status local_free(core::rank &r, hgas_gptr_t p) {
    if (p.rank != static_cast<uint32_t>(r.me()) || p.segment >= mem::seg_count ||
        mem::local_segment(mem::segment_kind(p.segment)) != p.segment)
        return fail(status::invalid_pointer, "hgas_dealloc: the pointer (rank %u, segment %u) is not an hgas_alloc "
                    "allocation of this rank (%d); only the owner frees it", p.rank, p.segment, r.me());
    if (r.heap(p.segment).release(p.offset) != status::ok)
        return fail(status::invalid_pointer, "hgas_dealloc: offset %llu is not the start of a live allocation "
                    "(double free?)", (unsigned long long)p.offset);
    return status::ok;
}

}  // namespace hgas::coll
