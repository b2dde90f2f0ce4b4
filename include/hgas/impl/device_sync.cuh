// impl/device_sync.cuh — signal waits, the device barrier across ranks, and the building blocks
// of seed 003's control modes (last block, grid barrier). Declared in hgas/hgas_device.cuh.
#pragma once

#include <hgas/impl/device_rma.cuh>

namespace hgas {
namespace device {
namespace detail {

// Spins until `*p cmp value` (acquire at system scope: the data put before the signal is
// visible afterwards). Gives up past the context's deadline, recording `err`, or as soon as
// another error has been recorded (the job is failing; a second timeout would only delay the
// report).
// The spin reads relaxed (no L1 invalidation per poll); the acquire load that follows a match
// orders the data reads after it, and is checked again since the word may have moved on.
__device__ __forceinline__ uint64_t wait_word(const hgas_device_ctx_t &c, const uint64_t *p, hgas_cmp_t cmp,
                                              uint64_t value, uint64_t err, int rank) {
    uint64_t v = ld_acquire_sys(p);
    if (compare(v, cmp, value)) return v;
    const uint64_t t0 = now_ns();
    for (unsigned polls = 1;; ++polls) {
        if (compare(hgas::detail::ld_relaxed_sys(p), cmp, value)) {
            v = ld_acquire_sys(p);
            if (compare(v, cmp, value)) return v;
        }
        if ((polls & 1023) == 0) {
            if (now_ns() - t0 > c.timeout_ns) {
                record_error(c, err, rank, value);
                return v;
            }
            if ((polls & 16383) == 0 && has_error(c)) return v;
        }
    }
}

// This rank's signal word as the GPU loads it, or nullptr (error recorded).
__device__ __forceinline__ const uint64_t *local_word(const hgas_device_ctx_t &c, const uint64_t *sig) {
    const target t = translate(c, sig, 8, c.me, true);
    if (!t.ok) return nullptr;
    if (!t.ptr || (t.off & 7)) {
        record_error(c, t.ptr ? HGAS_DEVICE_ERR_MISALIGNED : HGAS_DEVICE_ERR_BAD_ADDRESS, c.me, t.off);
        return nullptr;
    }
    return reinterpret_cast<const uint64_t *>(t.ptr);
}

}  // namespace detail

template <scope S>
__device__ uint64_t signal_wait_until(const ctx &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value) {
    detail::group_sync<S>();
    uint64_t v = 0;
    if (detail::leader<S>()) {
        if (const uint64_t *p = detail::local_word(c, sig))
            v = detail::wait_word(c, p, cmp, value, HGAS_DEVICE_ERR_TIMEOUT_SIGNAL, c.me);
    }
    return detail::broadcast<S>(v);
}

__device__ inline uint64_t signal_fetch(const ctx &c, const uint64_t *sig) {
    const uint64_t *p = detail::local_word(c, sig);
    return p ? detail::ld_acquire_sys(p) : 0;
}

__device__ inline bool signal_test(const ctx &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value) {
    const uint64_t *p = detail::local_word(c, sig);
    return p && detail::compare(detail::ld_acquire_sys(p), cmp, value);
}

template <scope S>
__device__ void barrier(const ctx &c) {
    detail::fence_sys();
    detail::group_sync<S>();
    if (detail::leader<S>()) {
        (void)hgas::detail::proxy_quiet(c);
        if (!c.win[0].size || !c.state) {
            detail::record_error(c, HGAS_DEVICE_ERR_BAD_ADDRESS, c.me, 0);
        } else {
            // Dissemination: round k adds 1 to word k of rank me + 2^k and waits for word k of
            // this rank to reach the number of barriers passed (a fast peer may be one ahead).
            volatile uint64_t *epoch_p = c.state;
            const uint64_t epoch = *epoch_p + 1;
            *epoch_p = epoch;
            for (int k = 0, dist = 1; dist < c.n; ++k, dist <<= 1) {
                uint64_t *word = reinterpret_cast<uint64_t *>(c.win[0].base + c.sync_offset + 64u * k);
                signal_op<scope::thread>(c, word, 1, HGAS_SIGNAL_ADD, (c.me + dist) % c.n);
                if (const uint64_t *p = detail::local_word(c, word))
                    detail::wait_word(c, p, HGAS_CMP_GE, epoch, HGAS_DEVICE_ERR_TIMEOUT_BARRIER, (c.me + c.n - dist) % c.n);
            }
        }
    }
    detail::group_sync<S>();
}

// ---- seed 003's in-kernel building blocks ---------------------------------------------------

__device__ inline bool last_block(unsigned int *counter) {
    __shared__ bool is_last;
    __threadfence();  // every thread: this block's results are visible GPU-wide before it is counted
    __syncthreads();
    if (detail::block_thread() == 0) {
        const unsigned nb = gridDim.x * gridDim.y * gridDim.z;
        const unsigned prev = atomicAdd(counter, 1u);
        is_last = prev == nb - 1;
        if (is_last) {
            __threadfence();  // acquire side of the pattern: the other blocks' results before ours are read
            atomicExch(counter, 0u);  // ready for the next launch
        }
    }
    __syncthreads();
    return is_last;
}

template <scope S>
__device__ uint64_t grid_wait_until(const ctx &c, const uint64_t *sig, hgas_cmp_t cmp, uint64_t value) {
    return signal_wait_until<S>(c, sig, cmp, value);
}

__device__ inline bool grid_sync(const ctx &c, grid_barrier *b) {
    __shared__ bool ok;
    __threadfence();
    __syncthreads();
    if (detail::block_thread() == 0) {
        ok = true;
        const unsigned nb = gridDim.x * gridDim.y * gridDim.z;
        volatile unsigned *gen = &b->gen;
        const unsigned g = *gen;  // read before arriving: the last arrival changes it
        __threadfence();
        if (atomicAdd(&b->count, 1u) == nb - 1) {
            atomicExch(&b->count, 0u);  // reset before release: the next round's arrivals see 0
            __threadfence();
            atomicExch(&b->gen, g + 1);
        } else {
            const uint64_t t0 = detail::now_ns();
            for (unsigned polls = 1; *gen == g; ++polls) {
                if ((polls & 1023) == 0 && detail::now_ns() - t0 > c.timeout_ns) {
                    detail::record_error(c, HGAS_DEVICE_ERR_TIMEOUT_GRID, c.me, nb);
                    ok = false;
                    break;
                }
            }
        }
        __threadfence();
    }
    __syncthreads();
    return ok;
}

}  // namespace device
}  // namespace hgas
