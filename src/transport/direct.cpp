// Loads, stores and atomics on memory this process maps (own segments, shm peers).
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
