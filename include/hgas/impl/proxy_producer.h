/* impl/proxy_producer.h — the producer side of the proxy ring (impl/device_types.h), written
 * once for both compilers: nvcc compiles it into kernels (PTX acquire/release at system scope),
 * a host compiler into threads that produce requests exactly as a kernel would (the CPU tests of
 * the proxy, tests/ranks/test_device_proxy.cpp). Every wait has the context's deadline, counted
 * from the proxy's last step (proxy_deadline); a wait that passes it records an error in the
 * ring (hgas_device_status() reports it) and gives up. */
#ifndef HGAS_IMPL_PROXY_PRODUCER_H
#define HGAS_IMPL_PROXY_PRODUCER_H

#include <hgas/hgas.h>
#include <hgas/impl/device_types.h>

#if !defined(__CUDA_ARCH__)
#include <time.h>
#endif

#if defined(__CUDACC__)
#define HGASI_HD __host__ __device__ __forceinline__
#else
#define HGASI_HD inline
#endif

namespace hgas {
namespace detail {

/* ---- memory-order primitives at system scope (GPU, CPU and peer GPUs agree) ------------- */

HGASI_HD uint64_t ld_acquire_sys(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

HGASI_HD uint64_t ld_relaxed_sys(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
    uint64_t v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

HGASI_HD void st_release_sys(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

HGASI_HD void st_relaxed_sys(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/* Orders this thread's earlier stores (to any memory) before its later ones, for every observer. */
HGASI_HD void fence_sys() {
#if defined(__CUDA_ARCH__)
    __threadfence_system();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* The ticket counter lives in device memory (GPU-scope atomics are enough: only this GPU's
 * threads claim tickets), or in host memory for host producers. */
HGASI_HD uint64_t fetch_add_ticket(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
    return atomicAdd(reinterpret_cast<unsigned long long *>(p), static_cast<unsigned long long>(v));
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

HGASI_HD uint64_t load_ticket(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
    uint64_t v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

HGASI_HD uint64_t now_ns() {
#if defined(__CUDA_ARCH__)
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

/* A polite pause in a wait loop on memory the CPU or another GPU must write: on the GPU it
 * leaves issue slots (and PCIe reads) to others once a wait has lasted. */
HGASI_HD void backoff(unsigned &polls) {
    ++polls;
#if defined(__CUDA_ARCH__)
    if (polls > 64) __nanosleep(polls > 1024 ? 1000 : 100);
#else
    if (polls > 1024) {
        struct timespec ts = {0, 1000};
        nanosleep(&ts, 0);
    }
#endif
}

/* ---- errors -------------------------------------------------------------------------------- */

/* Records the first error of the context in the ring (pinned host memory): the host reports it
 * at hgas_device_status()/hgas_stream_sync(). Racing writers may both write; either is right. */
HGASI_HD void record_error(const hgas_device_ctx_t &c, uint64_t code, int64_t rank, uint64_t arg) {
    if (!c.ring) return;
    if (ld_relaxed_sys(&c.ring->error) != 0) return;
    st_relaxed_sys(&c.ring->err_rank, static_cast<uint64_t>(rank));
    st_relaxed_sys(&c.ring->err_arg, arg);
    st_release_sys(&c.ring->error, code);
}

HGASI_HD bool has_error(const hgas_device_ctx_t &c) { return c.ring && ld_relaxed_sys(&c.ring->error) != 0; }

/* ---- the producer ---------------------------------------------------------------------------- */

/* The deadline of a wait on the proxy: it passes once the proxy has executed no request for
 * the context's timeout. Counting from the wait's start instead starved requests queued behind
 * many others (thousands of GPU threads claim tickets at once; with processes time-slicing one
 * GPU each request waits for its process's slice): they gave up while the proxy was busy, and
 * their tickets, never published, stopped the ring for good. The heartbeat (`taken`, in pinned
 * memory) is read only when the clock says the deadline would pass, not on every poll. */
struct proxy_deadline {
    uint64_t t0, taken;
    HGASI_HD explicit proxy_deadline(const hgas_device_ctx_t &c) : t0(now_ns()), taken(ld_relaxed_sys(&c.ring->taken)) {}
    HGASI_HD bool expired(const hgas_device_ctx_t &c) {
        const uint64_t now = now_ns();
        if (now - t0 <= c.timeout_ns) return false;
        const uint64_t k = ld_relaxed_sys(&c.ring->taken);
        if (k == taken) return true;
        taken = k;  // the proxy moved on since: a new period starts
        t0 = now;
        return false;
    }
};


/* Whether a request is answered in its slot (the producer then frees the slot) or only
 * completed (the consumer frees it). One definition for both sides. */
HGASI_HD bool proxy_replies(uint32_t op, uint8_t amo) {
    return op == HGASI_PX_G ||
           (op == HGASI_PX_AMO && !(amo == HGAS_AMO_SET || amo == HGAS_AMO_ADD || amo == HGAS_AMO_INC ||
                                    amo == HGAS_AMO_AND || amo == HGAS_AMO_OR || amo == HGAS_AMO_XOR));
}

HGASI_HD hgasi_proxy_slot_t *proxy_slot(const hgas_device_ctx_t &c, uint64_t t) {
    return reinterpret_cast<hgasi_proxy_slot_t *>(reinterpret_cast<char *>(c.ring) + HGASI_PROXY_HEADER) +
           (t & (c.slots - 1));
}

/* Posts a request (every field of `r` but seq, reply and result) and returns its ticket in
 * *ticket. False (error recorded) if the ring stayed full past the deadline. */
HGASI_HD bool proxy_post(const hgas_device_ctx_t &c, const hgasi_proxy_slot_t &r, uint64_t *ticket) {
    const uint64_t t = fetch_add_ticket(c.tail, 1);
    hgasi_proxy_slot_t *s = proxy_slot(c, t);
    // The slot is ours once its previous user (ticket t - slots) has been consumed and freed.
    if (ld_acquire_sys(&s->seq) != t) {
        proxy_deadline d(c);
        unsigned polls = 0;
        while (ld_acquire_sys(&s->seq) != t) {
            if (d.expired(c)) {
                record_error(c, HGAS_DEVICE_ERR_TIMEOUT_PROXY, r.rank, t);
                return false;
            }
            backoff(polls);
        }
    }
    s->op = r.op;
    s->rank = r.rank;
    s->seg = r.seg;
    s->aux_seg = r.aux_seg;
    s->width = r.width;
    s->amo = r.amo;
    s->sig_op = r.sig_op;
    s->is_signed = r.is_signed;
    s->off = r.off;
    s->local = r.local;
    s->bytes = r.bytes;
    s->value = r.value;
    s->aux = r.aux;
    // Release at system scope: the request's fields (and, through the caller's fence, the data
    // a put reads) are visible to the CPU before it sees the sequence number.
    st_release_sys(&s->seq, t + 1);
    *ticket = t;
    return true;
}

/* Waits until ticket t is complete (done > t). False (error recorded) past the deadline. */
HGASI_HD bool proxy_wait_done(const hgas_device_ctx_t &c, uint64_t t) {
    if (ld_acquire_sys(&c.ring->done) > t) return true;
    proxy_deadline d(c);
    unsigned polls = 0;
    while (ld_acquire_sys(&c.ring->done) <= t) {
        if (d.expired(c)) {
            record_error(c, HGAS_DEVICE_ERR_TIMEOUT_PROXY, -1, t);
            return false;
        }
        backoff(polls);
    }
    return true;
}

/* Waits for the reply of ticket t, reads it and frees the slot. False past the deadline (the
 * slot then stays taken: the proxy is stuck anyway, and the error says so). */
HGASI_HD bool proxy_wait_reply(const hgas_device_ctx_t &c, uint64_t t, uint64_t *result) {
    hgasi_proxy_slot_t *s = proxy_slot(c, t);
    proxy_deadline d(c);
    unsigned polls = 0;
    while (ld_acquire_sys(&s->reply) != t + 1) {
        if (d.expired(c)) {
            record_error(c, HGAS_DEVICE_ERR_TIMEOUT_PROXY, -1, t);
            return false;
        }
        backoff(polls);
    }
    *result = ld_relaxed_sys(&s->result);  // ordered after the acquire of `reply`
    st_release_sys(&s->seq, t + c.slots);  // the result is read: the slot may be reused
    return true;
}

/* Every ticket claimed so far is complete. */
HGASI_HD bool proxy_quiet(const hgas_device_ctx_t &c) {
    if (!c.slots) return true;
    const uint64_t t = load_ticket(c.tail);
    return t == 0 || proxy_wait_done(c, t - 1);
}

}  // namespace detail
}  // namespace hgas

#endif /* HGAS_IMPL_PROXY_PRODUCER_H */
