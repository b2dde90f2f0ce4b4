// impl/device_core.cuh — what every device operation is built of: the cooperation groups
// (thread, warp, block), address translation from symmetric addresses to the pointer a store
// takes (or the proxy), group copies, and the argument checks. Read hgas/hgas_device.cuh first.
#pragma once

#include <hgas/hgas.h>
#include <hgas/impl/proxy_producer.h>

namespace hgas {
namespace device {
namespace detail {

using hgas::detail::fence_sys;
using hgas::detail::has_error;
using hgas::detail::ld_acquire_sys;
using hgas::detail::now_ns;
using hgas::detail::record_error;
using hgas::detail::st_release_sys;

// ---- groups ------------------------------------------------------------------------------

__device__ __forceinline__ unsigned lane_id() {
    unsigned l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
__device__ __forceinline__ unsigned block_thread() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

template <scope S>
__device__ __forceinline__ unsigned group_rank() {
    if constexpr (S == scope::thread) return 0;
    else if constexpr (S == scope::warp) return lane_id();
    else return block_thread();
}
template <scope S>
__device__ __forceinline__ unsigned group_size() {
    if constexpr (S == scope::thread) return 1;
    else if constexpr (S == scope::warp) return 32;
    else return blockDim.x * blockDim.y * blockDim.z;
}
template <scope S>
__device__ __forceinline__ void group_sync() {
    if constexpr (S == scope::warp) __syncwarp();
    else if constexpr (S == scope::block) __syncthreads();
}
template <scope S>
__device__ __forceinline__ bool leader() {
    return group_rank<S>() == 0;
}

// The leader's value in every thread of the group.
template <scope S>
__device__ __forceinline__ uint64_t broadcast(uint64_t v) {
    if constexpr (S == scope::thread) {
        return v;
    } else if constexpr (S == scope::warp) {
        return __shfl_sync(0xffffffffu, static_cast<unsigned long long>(v), 0);
    } else {
        __shared__ uint64_t box;
        if (block_thread() == 0) box = v;
        __syncthreads();
        const uint64_t r = box;
        __syncthreads();  // nobody overwrites the box before everyone has read it
        return r;
    }
}

// ---- targets -----------------------------------------------------------------------------

struct target {
    char *ptr;      // where the GPU stores (nullptr: the proxy)
    uint64_t off;   // offset in the heap
    uint16_t seg;   // HGAS_SEG_* of the heap
    bool atomics;   // GPU atomics on ptr are coherent with the runtime's
    bool ok;        // false: bad rank or address (error recorded)
};

// Symmetric address `p` (bytes long) of this rank's heaps, on `rank`. `local` waits and reads
// (signal_wait_until) ignore HGAS_DEVICE_PROXY=force: they are loads of this rank's memory.
// ok is false (and nothing recorded) for a bad rank or address; a range must begin inside a
// heap, even an empty one.
//
// `off` wraps around for an address below the base, so one unsigned comparison covers both
// ends of a window. Puts and gets try near_heap() first.
__device__ __forceinline__ target find(const hgas_device_ctx_t &c, const void *p, uint64_t bytes, int rank,
                                       bool local = false) {
    static_assert((HGAS_DEVICE_NEAR & (HGAS_DEVICE_NEAR - 1)) == 0, "the near table is indexed by a rank's low bits");
    constexpr unsigned low = HGAS_DEVICE_NEAR - 1;
    const unsigned r = static_cast<unsigned>(rank);
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
#pragma unroll
    for (int w = 0; w < HGAS_DEVICE_WINDOWS; ++w) {
        const hgas_device_window_t &win = c.win[w];
        const uint64_t off = a - reinterpret_cast<uintptr_t>(win.base);
        if (off < win.size && bytes <= win.size - off) {
            if (r >= static_cast<unsigned>(c.n)) break;
            // Ranks of this rank's group of HGAS_DEVICE_NEAR that exist are in the table.
            const bool near = ((r ^ static_cast<unsigned>(c.near_first)) & ~low) == 0;
            char *base = near ? c.near[w][r & low] : win.peer[r];
            if (!local && (c.flags & HGAS_DEVICE_FORCE_PROXY)) base = nullptr;
            return target{base ? base + off : nullptr, off, win.segment, win.gpu_atomics != 0, true};
        }
    }
    return target{nullptr, 0, 0, false, false};
}

// The common case of find() in few instructions: `p` in this rank's cuda heap, `rank` one of
// the context's near ranks, mapped, no proxy forced (the context's near_count is 0 then). Every
// put and get pays the translation per call, and in a block-scope call every warp pays it: with
// 16 warps each instruction costs about 4 cycles of the block's time, so at 32 B - 8 KiB, where
// plain stores take 0.15 us a call, find()'s 70 instructions made a block's put 2.4x their time
// (H200). nullptr: take find().
__device__ __forceinline__ char *near_heap(const hgas_device_ctx_t &c, const void *p, uint64_t bytes, int rank) {
    const uint64_t size = c.win[0].size;
    const uint64_t off = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(c.win[0].base);
    // rank - near_first for a rank of this rank's group of HGAS_DEVICE_NEAR (near_first is a
    // multiple of it); HGAS_DEVICE_NEAR or more for any other rank, negative ones included.
    const unsigned i = static_cast<unsigned>(rank) ^ static_cast<unsigned>(c.near_first);
    if (off >= size || bytes > size - off || i >= static_cast<unsigned>(c.near_count)) return nullptr;
    char *const base = c.near[0][i];
    return base ? base + off : nullptr;
}

// find(), recording HGAS_DEVICE_ERR_BAD_ADDRESS for a bad rank or address.
__device__ __forceinline__ target translate(const hgas_device_ctx_t &c, const void *p, uint64_t bytes, int rank,
                                            bool local = false) {
    const target t = find(c, p, bytes, rank, local);
    if (!t.ok) record_error(c, HGAS_DEVICE_ERR_BAD_ADDRESS, rank, reinterpret_cast<uint64_t>(p));
    return t;
}

// A proxied request can be made: the proxy is on. Records the error otherwise.
__device__ __forceinline__ bool proxy_on(const hgas_device_ctx_t &c, int rank, uint64_t what) {
    if (c.slots) return true;
    record_error(c, HGAS_DEVICE_ERR_UNREACHABLE, rank, what);
    return false;
}

// The proxy's host path reads and writes `local` ends: they must be global memory (device or
// pinned host memory), never a thread's stack or shared memory.
__device__ __forceinline__ bool global_buffer(const hgas_device_ctx_t &c, const void *p, uint64_t bytes, int rank) {
    if (bytes == 0 || __isGlobal(p)) return true;
    record_error(c, HGAS_DEVICE_ERR_BAD_ADDRESS, rank, reinterpret_cast<uint64_t>(p));
    return false;
}

__device__ __forceinline__ hgasi_proxy_slot_t request(uint32_t op, int rank, const target &t) {
    hgasi_proxy_slot_t r{};
    r.op = op;
    r.rank = static_cast<uint32_t>(rank);
    r.seg = t.seg;
    r.off = t.off;
    return r;
}

// ---- copies --------------------------------------------------------------------------------

// Loads that must not hit a stale L1 line (another GPU or the CPU may have written the
// memory since this SM last read it): cache-volatile.
template <class W, bool Fresh>
__device__ __forceinline__ W load_word(const W *p) {
    if constexpr (Fresh) return __ldcv(p);
    else return *p;
}

// The next smaller word: the tail of a copy in W words is copied in halves.
template <class W> struct half_word;
template <> struct half_word<uint4> { using type = unsigned long long; };
template <> struct half_word<unsigned long long> { using type = unsigned int; };
template <> struct half_word<unsigned int> { using type = unsigned short; };
template <> struct half_word<unsigned short> { using type = unsigned char; };

// The group's threads r of g copy n bytes between W-aligned ends: W words, the remainder in
// halves.
template <class W, bool Fresh>
__device__ __forceinline__ void copy_aligned(char *dst, const char *src, size_t n, unsigned r, unsigned g) {
    constexpr size_t w = sizeof(W);
    W *vd = reinterpret_cast<W *>(dst);
    const W *vs = reinterpret_cast<const W *>(src);
    const size_t nv = n / w;
    size_t i = r;
    // Four independent words in flight per thread: what NVLink and HBM need to be kept busy.
    for (; i + 3 * static_cast<size_t>(g) < nv; i += 4 * static_cast<size_t>(g)) {
        const W a = load_word<W, Fresh>(vs + i), b = load_word<W, Fresh>(vs + i + g);
        const W c = load_word<W, Fresh>(vs + i + 2 * g), d = load_word<W, Fresh>(vs + i + 3 * g);
        vd[i] = a;
        vd[i + g] = b;
        vd[i + 2 * g] = c;
        vd[i + 3 * g] = d;
    }
    for (; i < nv; i += g) vd[i] = load_word<W, Fresh>(vs + i);
    if constexpr (w > 1) {
        const size_t done = nv * w;
        if (done < n) copy_aligned<typename half_word<W>::type, Fresh>(dst + done, src + done, n - done, r, g);
    }
}

// The group copies n bytes: bytes up to the first address where both ends are aligned alike,
// then the widest words that alignment allows.
template <class W, bool Fresh>
__device__ __forceinline__ void copy_words(char *dst, const char *src, size_t n, unsigned r, unsigned g) {
    constexpr size_t w = sizeof(W);
    size_t head = (w - (reinterpret_cast<uintptr_t>(dst) & (w - 1))) & (w - 1);
    if (head > n) head = n;
    for (size_t i = r; i < head; i += g) dst[i] = load_word<char, Fresh>(src + i);
    copy_aligned<W, Fresh>(dst + head, src + head, n - head, r, g);
}

// Threads r of g (r < g) copy n bytes. Both ends and the length 16-byte aligned and under
// 4 GiB, the usual case, take 16-byte words with 32-bit indices and nothing else: on an H100
// that alone brought a block's put of 32 KiB from 0.69-0.83 of plain stores to 0.97, and of
// 128 KiB-2 MiB from 0.81-0.92 to 0.99-1.00 (the general path's alignment tests, tails and
// 64-bit index arithmetic cost about as much as a 32 KiB copy's loads). Keep it one loop: a
// second, 64-bit copy of it here measured 0.74-0.85 again.
template <bool Fresh>
__device__ __forceinline__ void copy_by(void *dst, const void *src, size_t n, unsigned r, unsigned g) {
    char *d = static_cast<char *>(dst);
    const char *s = static_cast<const char *>(src);
    const uintptr_t ud = reinterpret_cast<uintptr_t>(d), us = reinterpret_cast<uintptr_t>(s);
    if (((ud | us | n) & 15) == 0 && n < (uint64_t{1} << 32)) {
        uint4 *vd = reinterpret_cast<uint4 *>(d);
        const uint4 *vs = reinterpret_cast<const uint4 *>(s);
        const unsigned nv = static_cast<unsigned>(n >> 4);  // below 2^28: i + 4g cannot wrap
        unsigned i = r;
        for (; i + 3 * g < nv; i += 4 * g) {
            const uint4 a = load_word<uint4, Fresh>(vs + i), b = load_word<uint4, Fresh>(vs + i + g);
            const uint4 c = load_word<uint4, Fresh>(vs + i + 2 * g), e = load_word<uint4, Fresh>(vs + i + 3 * g);
            vd[i] = a;
            vd[i + g] = b;
            vd[i + 2 * g] = c;
            vd[i + 3 * g] = e;
        }
        for (; i < nv; i += g) vd[i] = load_word<uint4, Fresh>(vs + i);
        return;
    }
    // At most one 8-byte word per thread, both ends and the length 8-byte aligned: one word
    // each without the general path's alignment tests, which took an 8-byte put<block> from
    // 0.14 to 0.27 us (H200). Longer copies keep the general path's four loads in flight.
    if (((ud | us | n) & 7) == 0 && n <= 8 * static_cast<size_t>(g)) {
        if (8 * static_cast<size_t>(r) < n)
            reinterpret_cast<uint2 *>(d)[r] = load_word<uint2, Fresh>(reinterpret_cast<const uint2 *>(s) + r);
        return;
    }
    const uintptr_t x = ud ^ us;
    if ((x & 15) == 0) copy_words<uint4, Fresh>(d, s, n, r, g);
    else if ((x & 7) == 0) copy_words<unsigned long long, Fresh>(d, s, n, r, g);
    else if ((x & 3) == 0) copy_words<unsigned int, Fresh>(d, s, n, r, g);
    else if ((x & 1) == 0) copy_words<unsigned short, Fresh>(d, s, n, r, g);
    else copy_words<unsigned char, Fresh>(d, s, n, r, g);
}

template <scope S, bool Fresh>
__device__ __forceinline__ void group_copy(void *dst, const void *src, size_t n) {
    copy_by<Fresh>(dst, src, n, group_rank<S>(), group_size<S>());
}

// ---- comparisons ---------------------------------------------------------------------------

__device__ __forceinline__ bool compare(uint64_t v, hgas_cmp_t cmp, uint64_t value) {
    switch (cmp) {
    case HGAS_CMP_EQ: return v == value;
    case HGAS_CMP_NE: return v != value;
    case HGAS_CMP_GT: return v > value;
    case HGAS_CMP_GE: return v >= value;
    case HGAS_CMP_LT: return v < value;
    case HGAS_CMP_LE: return v <= value;
    }
    return false;
}

}  // namespace detail
}  // namespace device
}  // namespace hgas
