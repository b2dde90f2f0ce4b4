// Loads, stores and atomics on memory this process maps (own segments, shm peers).
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "transport/transport.hpp"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hgas::transport::direct {

void store_fence() {
#if defined(__x86_64__)
    // x86 orders ordinary stores already (TSO), but glibc's memcpy uses non-temporal stores
    // for large copies, and only sfence orders those before a following signal store.
    _mm_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

std::atomic<size_t> copy_nt_min{SIZE_MAX};

// HGAS_SHM_NT_MIN: 0 means the size of this core's L2 cache (2 MiB where the system does not
// say). A copy of that size or more has source and destination together beyond the L2, so its
// stores go to memory either way, and non-temporal ones skip reading the destination's lines
// first: on the 2-core development machine (L2 2 MiB a core) memcpy moved 10.4-10.8 GB/s at
// 2 MiB and 9.3-10.9 at 4 MiB, an SSE2 streaming copy 11.7-15.1 and 10.2-13.0, and memcpy won
// at 1 MiB (17-22 against 16-17).
void set_copy_nt_min(uint64_t setting) {
    uint64_t v = setting;
    if (v == 0) {
        const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        v = l2 > 0 ? static_cast<uint64_t>(l2) : uint64_t{2} << 20;
    }
    copy_nt_min.store(v > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(v), std::memory_order_relaxed);
}

void copy_nt(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    // Ordinary stores up to the destination's next 64-byte line, then whole lines streamed
    // (16-byte stores need 16-byte alignment), then the tail.
    size_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;
    if (head > n) head = n;
    std::memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 48), e);
    }
    std::memcpy(d + i, s + i, n - i);
    _mm_sfence();
#else
    std::memcpy(dst, src, n);
#endif
}

namespace {
template <class T>
T amo_t(T *p, amo_op op, T v, T cmp) {
    // SEQ_CST: hgas atomics are also used as flags between ranks (locks, counters), where
    // acquire/release on the same word is what programs expect; the cost on x86 is nil
    // (locked instructions are full barriers).
    switch (op) {
    case amo_op::fetch: return __atomic_load_n(p, __ATOMIC_SEQ_CST);
    case amo_op::set: __atomic_store_n(p, v, __ATOMIC_SEQ_CST); return 0;
    case amo_op::add:
    case amo_op::fetch_add: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case amo_op::swap: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    case amo_op::compare_swap:
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return cmp;  // the old value either way
    case amo_op::and_:
    case amo_op::fetch_and: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case amo_op::or_:
    case amo_op::fetch_or: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    case amo_op::xor_:
    case amo_op::fetch_xor: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    }
    return 0;
}
}  // namespace

uint64_t amo(void *addr, amo_op op, unsigned width, uint64_t operand, uint64_t compare) {
    if (width == 4)
        return amo_t<uint32_t>(static_cast<uint32_t *>(addr), op, static_cast<uint32_t>(operand),
                               static_cast<uint32_t>(compare));
    return amo_t<uint64_t>(static_cast<uint64_t *>(addr), op, operand, compare);
}

void signal_update(void *addr, signal_op op, uint64_t value) {
    // Release: the data written before (and fenced by store_fence for NT stores) is visible
    // to a rank that acquires the new signal value.
    auto *p = static_cast<uint64_t *>(addr);
    if (op == signal_op::set) __atomic_store_n(p, value, __ATOMIC_RELEASE);
    else __atomic_fetch_add(p, value, __ATOMIC_RELEASE);
}

}  // namespace hgas::transport::direct
