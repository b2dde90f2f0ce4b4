// Copies and combines of the collectives on any memory kind (devmem.hpp).
#include "coll/devmem.hpp"

#include <cstdlib>
#include <cstring>

#include "gpu/gpu.hpp"
#include "gpu/reduce_cpu.hpp"

namespace hgas::coll::detail {

status wait_ticket(core::rank &r, const char *op, gpu::device *d, gpu::ticket t) {
    status st = status::ok;
    HGAS_TRY(r.wait(op, [&] {
        auto done = d->test(t);
        if (!done.ok()) {
            st = done.error();
            return true;
        }
        return *done;
    }));
    return st;
}

namespace {
gpu::device *device_of(core::rank &r, const char *op, mem::kind k, status &st) {
    gpu::device *d = r.device(k);
    if (!d) st = fail(status::internal, "%s: this rank has %s memory but no %s device", op, mem::kind_name(k),
                      mem::kind_name(k));
    return d;
}
}  // namespace

status check_any_buf(core::rank &r, const char *op, const void *p, size_t bytes, const char *what, mem::kind *k) {
    if (bytes && !p) return fail(status::invalid_arg, "%s: %s is NULL but %zu bytes were asked for", op, what, bytes);
    *k = bytes && r.has_devices() ? r.kind_of(p, bytes) : mem::kind::host;
    return status::ok;
}

// A user host buffer at one end of a device copy: the registration cache first drops what a
// freed buffer at that address left registered (else the driver copies the old pages: seen
// with a std::vector of 1 MiB freed and allocated again), and may register it, as puts and
// gets do (rank::cache_user_range).
// hgas's own memory (the heaps, the collective scratch) is never a user buffer: skipped at once.
static status user_host_ends(core::rank &r, const void *dst, mem::kind kd, const void *src, mem::kind ks, size_t n) {
    if (ks == mem::kind::host && r.own_segment_of(src, n) < 0) HGAS_TRY(r.cache_user_range(src, n));
    if (kd == mem::kind::host && r.own_segment_of(dst, n) < 0) HGAS_TRY(r.cache_user_range(dst, n));
    return status::ok;
}

status local_copy(core::rank &r, const char *op, void *dst, const void *src, size_t n) {
    if (!n || dst == src) return status::ok;
    const mem::kind kd = r.has_devices() ? r.kind_of(dst, n) : mem::kind::host;
    const mem::kind ks = r.has_devices() ? r.kind_of(src, n) : mem::kind::host;
    if (kd == mem::kind::host && ks == mem::kind::host) {
        std::memmove(dst, src, n);
        return status::ok;
    }
    status st = status::ok;
    gpu::device *d = device_of(r, op, kd != mem::kind::host ? kd : ks, st);
    if (!d) return st;
    HGAS_TRY(user_host_ends(r, dst, kd, src, ks, n));
    HGAS_TRY_ASSIGN(gpu::ticket t, d->copy_async(dst, src, n, 0));
    return wait_ticket(r, op, d, t);
}

status combine(core::rank &r, const char *op, mem::kind k, void *inout, const void *in, size_t count,
               hgas_dtype_t type, hgas_op_t rop, bool rev) {
    if (!count) return status::ok;
    if (k == mem::kind::host) {
        gpu::reduce_cpu(inout, in, count, type, rop, rev);
        return status::ok;
    }
    status st = status::ok;
    gpu::device *d = device_of(r, op, k, st);
    if (!d) return st;
    HGAS_TRY_ASSIGN(gpu::ticket t, d->reduce(inout, in, count, type, rop, rev, 0));
    return wait_ticket(r, op, d, t);
}

status batch::copy(void *dst, const void *src, size_t n) {
    if (!n || dst == src) return status::ok;
    if (k_ == mem::kind::host) {
        std::memcpy(dst, src, n);
        return status::ok;
    }
    status st = status::ok;
    if (!d_ && !(d_ = device_of(r_, op_, k_, st))) return st;
    // Both ends are device memory, this rank's or a peer's mapped (no user host buffer here).
    HGAS_TRY_ASSIGN(gpu::ticket t, d_->copy_async(dst, src, n, 0));
    tickets_.push_back(t);
    ++copies_;
    return status::ok;
}

status batch::combine(void *inout, const void *in, size_t count, hgas_dtype_t type, hgas_op_t rop, bool rev) {
    if (!count) return status::ok;
    if (k_ == mem::kind::host) {
        gpu::reduce_cpu(inout, in, count, type, rop, rev);
        return status::ok;
    }
    status st = status::ok;
    if (!d_ && !(d_ = device_of(r_, op_, k_, st))) return st;
    if (copies_) HGAS_TRY(wait());
    HGAS_TRY_ASSIGN(gpu::ticket t, d_->reduce(inout, in, count, type, rop, rev, 0));
    tickets_.push_back(t);
    return status::ok;
}

status batch::wait() {
    for (const gpu::ticket &t : tickets_) HGAS_TRY(wait_ticket(r_, op_, d_, t));
    tickets_.clear();
    copies_ = 0;
    return status::ok;
}

scratch_buf::~scratch_buf() {
    if (!p_) return;
    if (k_ == mem::kind::host) std::free(p_);
    else (void)r_->heap(mem::local_segment(k_)).release(off_);
}

status scratch_buf::allocate(core::rank &r, const char *op, mem::kind k, size_t bytes) {
    r_ = &r;
    k_ = k;
    if (k == mem::kind::host) {
        p_ = static_cast<char *>(std::malloc(bytes ? bytes : 1));
        if (!p_) return fail(status::no_memory, "%s: no memory for %zu bytes of host scratch", op, bytes);
        return status::ok;
    }
    const uint16_t seg = mem::local_segment(k);
    auto off = r.heap(seg).allocate(bytes ? bytes : 1, 256);
    if (!off.ok())
        return fail(status::no_memory, "%s: needs %zu bytes of %s scratch from this rank's local %s heap, which has "
                    "%llu free in one piece: raise its size (HGAS_CUDA_LOCAL_HEAP_SIZE / HGAS_SIM_LOCAL_HEAP_SIZE)",
                    op, bytes, mem::kind_name(k), mem::kind_name(k),
                    static_cast<unsigned long long>(r.heap(seg).largest_free()));
    off_ = *off;
    p_ = r.own_base(seg) + off_;
    return status::ok;
}

}  // namespace hgas::coll::detail
