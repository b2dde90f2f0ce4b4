// impl/device_rma.cuh — put, get, p, g, put_signal, signal_op, atomics, fence and quiet on the
// device (declared and documented in hgas/hgas_device.cuh). Each takes the direct path (stores
// and loads through the peer pointer) when the target is mapped, else the proxy.
#pragma once

#include <type_traits>

#include <hgas/impl/device_core.cuh>

namespace hgas {
namespace device {
namespace detail {

// One proxied request for the group: every thread fences the data it wrote (a put's source is
// read by the host's copy), the leader posts and, for a blocking operation, waits for
// completion (`wait`) or for the reply; the reply reaches every thread of the group.
template <scope S>
__device__ __forceinline__ uint64_t proxied(const hgas_device_ctx_t &c, const hgasi_proxy_slot_t &r, bool wait,
                                            bool reply) {
    fence_sys();
    group_sync<S>();
    uint64_t res = 0;
    if (leader<S>()) {
        uint64_t t;
        if (hgas::detail::proxy_post(c, r, &t)) {
            if (reply) hgas::detail::proxy_wait_reply(c, t, &res);
            else if (wait) hgas::detail::proxy_wait_done(c, t);
        }
    }
    return broadcast<S>(res);  // also the group's synchronization
}

template <scope S>
__device__ __forceinline__ void put_impl(const hgas_device_ctx_t &c, void *dst, const void *src, size_t bytes, int rank,
                                         bool wait) {
    if (bytes == 0) return;
    char *d = near_heap(c, dst, bytes, rank);
    if (!d) {
        const target t = translate(c, dst, bytes, rank);
        if (!t.ok) return;
        if (!t.ptr) {
            if (!proxy_on(c, rank, t.off) || !global_buffer(c, src, bytes, rank)) return;
            hgasi_proxy_slot_t r = request(HGASI_PX_PUT, rank, t);
            r.local = reinterpret_cast<uint64_t>(src);
            r.bytes = bytes;
            proxied<S>(c, r, wait, false);
            return;
        }
        d = t.ptr;
    }
    // One copy loop for both translations: a second inlined copy doubles the kernel's code.
    group_copy<S, false>(d, src, bytes);
    group_sync<S>();  // the source may be reused once every thread of the group has read its part
}

template <scope S>
__device__ __forceinline__ void get_impl(const hgas_device_ctx_t &c, void *dst, const void *src, size_t bytes, int rank,
                                         bool wait) {
    if (bytes == 0) return;
    const char *s = near_heap(c, src, bytes, rank);
    if (!s) {
        const target t = translate(c, src, bytes, rank);
        if (!t.ok) return;
        if (!t.ptr) {
            if (!proxy_on(c, rank, t.off) || !global_buffer(c, dst, bytes, rank)) return;
            hgasi_proxy_slot_t r = request(HGASI_PX_GET, rank, t);
            r.local = reinterpret_cast<uint64_t>(dst);
            r.bytes = bytes;
            proxied<S>(c, r, wait, false);
            return;
        }
        s = t.ptr;
    }
    group_copy<S, true>(dst, s, bytes);  // fresh loads: the owner may have written since
    group_sync<S>();
}

// A signal update through a pointer the GPU stores to, with release semantics at system scope:
// a release store (set) or a release reduction (add). The release is cumulative: it orders the
// group's data stores, which the caller's group barrier made visible to the leader, before the
// signal for every observer. One MEMBAR.ALL.SYS, where a __threadfence_system() before it would
// add a second, sequentially consistent one (about 1 us each across NVLink).
__device__ __forceinline__ void signal_store(char *p, uint64_t value, hgas_signal_op_t op) {
    uint64_t *w = reinterpret_cast<uint64_t *>(p);
    if (op == HGAS_SIGNAL_SET) st_release_sys(w, value);
    else asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(w), "l"(value) : "memory");
}

template <scope S>
__device__ __forceinline__ void put_signal_impl(const hgas_device_ctx_t &c, void *dst, const void *src, size_t bytes,
                                                uint64_t *sig, uint64_t value, hgas_signal_op_t op, int rank, bool wait) {
    const target ts = translate(c, sig, 8, rank);
    if (!ts.ok) return;
    if (ts.off & 7) {
        record_error(c, HGAS_DEVICE_ERR_MISALIGNED, rank, ts.off);
        return;
    }
    const target td = bytes ? translate(c, dst, bytes, rank) : ts;
    if (!td.ok) return;
    const bool sig_direct = ts.ptr && (op == HGAS_SIGNAL_SET || ts.atomics);
    if (bytes && td.ptr) group_copy<S, false>(td.ptr, src, bytes);
    if ((td.ptr || !bytes) && sig_direct) {
        group_sync<S>();  // every thread's part of the data is written before the leader's release
        if (leader<S>()) signal_store(ts.ptr, value, op);
        group_sync<S>();
        return;
    }
    if (!proxy_on(c, rank, ts.off)) return;
    hgasi_proxy_slot_t r;
    if (!bytes || td.ptr) {
        // The data went directly (or there is none); only the signal needs the host. proxied()
        // fences the data before the request, so the host's update comes after it.
        r = request(HGASI_PX_SIGNAL, rank, ts);
    } else {
        if (!global_buffer(c, src, bytes, rank)) return;
        r = request(HGASI_PX_PUT_SIGNAL, rank, td);
        r.local = reinterpret_cast<uint64_t>(src);
        r.bytes = bytes;
        r.aux_seg = ts.seg;
        r.aux = ts.off;
    }
    r.value = value;
    r.sig_op = static_cast<uint8_t>(op);
    proxied<S>(c, r, wait && r.op == HGASI_PX_PUT_SIGNAL, false);
}

// ---- scalars and atomics --------------------------------------------------------------------

template <class T>
__device__ __forceinline__ uint64_t to_bits(T v) {
    uint64_t b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
__device__ __forceinline__ T from_bits(uint64_t b) {
    T v;
    memcpy(&v, &b, sizeof(T));
    return v;
}

template <class T>
inline constexpr bool amo_type = std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8) && !std::is_same_v<T, bool>;

// One atomic by the calling thread; the old value as bits (0 for non-fetching operations).
template <class T>
__device__ __forceinline__ uint64_t amo_one(const hgas_device_ctx_t &c, T *dst, hgas_amo_t op, T value, T cmp, int rank) {
    const target t = translate(c, dst, sizeof(T), rank);
    if (!t.ok) return 0;
    if (t.off % sizeof(T)) {
        record_error(c, HGAS_DEVICE_ERR_MISALIGNED, rank, t.off);
        return 0;
    }
    if (t.ptr && t.atomics) {
        // System scope: the word may also be updated by the owner's CPU-side runtime (its agent
        // kernel), by other GPUs, and read by the host.
        using U = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
        U *p = reinterpret_cast<U *>(t.ptr);
        const U v = static_cast<U>(value), k = static_cast<U>(cmp);
        U old = 0;
        switch (op) {
        case HGAS_AMO_FETCH: old = atomicAdd_system(p, U(0)); break;
        case HGAS_AMO_SET: atomicExch_system(p, v); break;
        case HGAS_AMO_ADD:
        case HGAS_AMO_FETCH_ADD: old = atomicAdd_system(p, v); break;
        case HGAS_AMO_INC:
        case HGAS_AMO_FETCH_INC: old = atomicAdd_system(p, U(1)); break;
        case HGAS_AMO_SWAP: old = atomicExch_system(p, v); break;
        case HGAS_AMO_COMPARE_SWAP: old = atomicCAS_system(p, k, v); break;
        default: break;
        }
        return static_cast<uint64_t>(old);
    }
    if (!proxy_on(c, rank, t.off)) return 0;
    hgasi_proxy_slot_t r = request(HGASI_PX_AMO, rank, t);
    r.width = sizeof(T);
    r.amo = static_cast<uint8_t>(op);
    r.is_signed = std::is_signed_v<T> ? 1 : 0;
    r.value = static_cast<uint64_t>(value);
    r.aux = static_cast<uint64_t>(cmp);
    return proxied<scope::thread>(c, r, false, hgas::detail::proxy_replies(HGASI_PX_AMO, r.amo));
}

template <scope S, class T>
__device__ __forceinline__ T amo(const hgas_device_ctx_t &c, T *dst, hgas_amo_t op, T value, T cmp, int rank) {
    static_assert(amo_type<T>, "hgas device atomics take 32- or 64-bit integers");
    group_sync<S>();
    uint64_t old = 0;
    if (leader<S>()) old = amo_one<T>(c, dst, op, value, cmp, rank);
    // Sign-extends nothing: the bits of a T, as the atomic returned them.
    return from_bits<T>(broadcast<S>(sizeof(T) == 4 ? (old & 0xffffffffull) : old));
}

}  // namespace detail

// ---- the API (declared in hgas/hgas_device.cuh) -------------------------------------------

template <scope S>
__device__ void put(const ctx &c, void *dst, const void *src, size_t bytes, int rank) {
    detail::put_impl<S>(c, dst, src, bytes, rank, true);
}
template <scope S>
__device__ void put_nbi(const ctx &c, void *dst, const void *src, size_t bytes, int rank) {
    detail::put_impl<S>(c, dst, src, bytes, rank, false);
}
template <scope S>
__device__ void get(const ctx &c, void *dst, const void *src, size_t bytes, int rank) {
    detail::get_impl<S>(c, dst, src, bytes, rank, true);
}
template <scope S>
__device__ void get_nbi(const ctx &c, void *dst, const void *src, size_t bytes, int rank) {
    detail::get_impl<S>(c, dst, src, bytes, rank, false);
}

template <scope S, class T>
__device__ void p(const ctx &c, T *dst, T value, int rank) {
    static_assert(std::is_arithmetic_v<T> && sizeof(T) <= 8, "hgas::device::p takes an integer or floating-point value");
    detail::group_sync<S>();
    if (detail::leader<S>()) {
        const detail::target t = detail::translate(c, dst, sizeof(T), rank);
        if (t.ok && t.ptr) {
            *reinterpret_cast<volatile T *>(t.ptr) = value;
        } else if (t.ok && detail::proxy_on(c, rank, t.off)) {
            hgasi_proxy_slot_t r = detail::request(HGASI_PX_P, rank, t);
            r.width = sizeof(T);
            r.value = detail::to_bits(value);
            detail::proxied<scope::thread>(c, r, false, false);
        }
    }
    detail::group_sync<S>();
}

template <class T>
__device__ T *ptr(const ctx &c, T *p, int rank) {
    return static_cast<T *>(static_cast<void *>(detail::find(c, p, 1, rank).ptr));  // p itself must lie in a heap
}

template <scope S, class T>
__device__ T g(const ctx &c, const T *src, int rank) {
    static_assert(std::is_arithmetic_v<T> && sizeof(T) <= 8, "hgas::device::g takes an integer or floating-point value");
    detail::group_sync<S>();
    uint64_t bits = 0;
    if (detail::leader<S>()) {
        const detail::target t = detail::translate(c, src, sizeof(T), rank);
        if (t.ok && t.ptr) {
            bits = detail::to_bits<T>(*reinterpret_cast<const volatile T *>(t.ptr));
        } else if (t.ok && detail::proxy_on(c, rank, t.off)) {
            hgasi_proxy_slot_t r = detail::request(HGASI_PX_G, rank, t);
            r.width = sizeof(T);
            bits = detail::proxied<scope::thread>(c, r, false, true);
        }
    }
    return detail::from_bits<T>(detail::broadcast<S>(bits));
}

template <scope S>
__device__ void put_signal(const ctx &c, void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                           hgas_signal_op_t op, int rank) {
    detail::put_signal_impl<S>(c, dst, src, bytes, sig, value, op, rank, true);
}
template <scope S>
__device__ void put_signal_nbi(const ctx &c, void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                               hgas_signal_op_t op, int rank) {
    detail::put_signal_impl<S>(c, dst, src, bytes, sig, value, op, rank, false);
}
template <scope S>
__device__ void signal_op(const ctx &c, uint64_t *sig, uint64_t value, hgas_signal_op_t op, int rank) {
    detail::put_signal_impl<S>(c, nullptr, nullptr, 0, sig, value, op, rank, false);
}

template <scope S, class T>
__device__ T atomic_fetch(const ctx &c, T *dst, int rank) {
    return detail::amo<S, T>(c, dst, HGAS_AMO_FETCH, T(0), T(0), rank);
}
template <scope S, class T>
__device__ void atomic_set(const ctx &c, T *dst, T value, int rank) {
    detail::amo<S, T>(c, dst, HGAS_AMO_SET, value, T(0), rank);
}
template <scope S, class T>
__device__ T atomic_fetch_add(const ctx &c, T *dst, T value, int rank) {
    return detail::amo<S, T>(c, dst, HGAS_AMO_FETCH_ADD, value, T(0), rank);
}
template <scope S, class T>
__device__ void atomic_add(const ctx &c, T *dst, T value, int rank) {
    detail::amo<S, T>(c, dst, HGAS_AMO_ADD, value, T(0), rank);
}
template <scope S, class T>
__device__ T atomic_fetch_inc(const ctx &c, T *dst, int rank) {
    return detail::amo<S, T>(c, dst, HGAS_AMO_FETCH_INC, T(0), T(0), rank);
}
template <scope S, class T>
__device__ void atomic_inc(const ctx &c, T *dst, int rank) {
    detail::amo<S, T>(c, dst, HGAS_AMO_INC, T(0), T(0), rank);
}
template <scope S, class T>
__device__ T atomic_swap(const ctx &c, T *dst, T value, int rank) {
    return detail::amo<S, T>(c, dst, HGAS_AMO_SWAP, value, T(0), rank);
}
template <scope S, class T>
__device__ T atomic_compare_swap(const ctx &c, T *dst, T compare, T value, int rank) {
    return detail::amo<S, T>(c, dst, HGAS_AMO_COMPARE_SWAP, value, compare, rank);
}

template <scope S>
__device__ void fence(const ctx &c) {
    detail::fence_sys();
    detail::group_sync<S>();
    // Proxied operations are executed in ticket order, but over a network a later one may pass
    // an earlier one: the host fences too, once the proxy has been used at all.
    if (detail::leader<S>() && c.slots && hgas::detail::load_ticket(c.tail) > 0) {
        hgasi_proxy_slot_t r{};
        r.op = HGASI_PX_FENCE;
        r.rank = static_cast<uint32_t>(c.me);
        uint64_t t;
        (void)hgas::detail::proxy_post(c, r, &t);
    }
    detail::group_sync<S>();
}

template <scope S>
__device__ void quiet(const ctx &c) {
    detail::fence_sys();
    detail::group_sync<S>();
    if (detail::leader<S>()) (void)hgas::detail::proxy_quiet(c);
    detail::group_sync<S>();
}

}  // namespace device
}  // namespace hgas
