// The collectives' memory on any kind: host memory is copied and combined by this thread;
// device memory (cuda, sim) by the rank's device -- copies on its copy engines, reductions by
// its kernel (gpu::device::reduce: a CUDA kernel, the sim engine) -- so the CPU never loads or
// stores a device byte. Each call here completes before it returns.
#pragma once
#include <hgas/hgas.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/rank.hpp"
#include "gpu/gpu.hpp"

namespace hgas::coll::detail {

// check_buf, and the kind of [p, p + bytes) (host, cuda or sim) in *k.
status check_any_buf(core::rank &r, const char *op, const void *p, size_t bytes, const char *what, mem::kind *k);

// dst = src (n bytes, any kinds, may be the same; host ranges may overlap).
status local_copy(core::rank &r, const char *op, void *dst, const void *src, size_t n);

// inout = inout op in (in op inout with `rev`) on `count` elements. `inout` is memory of
// kind `k` (the combine runs where it lives); `in` is host memory or memory of that kind.
status combine(core::rank &r, const char *op, mem::kind k, void *inout, const void *in, size_t count,
               hgas_dtype_t type, hgas_op_t rop, bool rev);

// Copies and combines on memory of one kind, issued in order and waited for together: on a
// device each is queued (combines on stream 0, so a chain of them into one accumulator needs
// no wait between) and wait() waits for every ticket; on the host each runs at once. A copy
// is not ordered with stream 0 (the copy agent serves small ones, on the GPU's own schedule:
// a reduce_scatter's own-block copy of 32 KiB landed after the combine on 2 H100s), so a
// combine first waits for the copies before it.
// Waits for a device ticket (HGAS_TIMEOUT), with progress meanwhile.
status wait_ticket(core::rank &r, const char *op, gpu::device *d, gpu::ticket t);

class batch {
public:
    batch(core::rank &r, const char *op, mem::kind k) : r_(r), op_(op), k_(k) {}
    status copy(void *dst, const void *src, size_t n);
    // inout = inout op in, as combine() above.
    status combine(void *inout, const void *in, size_t count, hgas_dtype_t type, hgas_op_t rop, bool rev);
    // Waits for everything issued (HGAS_TIMEOUT, with progress meanwhile).
    status wait();

private:
    core::rank &r_;
    const char *op_;
    mem::kind k_;
    gpu::device *d_ = nullptr;
    std::vector<gpu::ticket> tickets_;
    int copies_ = 0;  // copies among tickets_
};

// A private buffer of `bytes` in memory of kind `k`: a host vector, or a block of the kind's
// local (non-collective) device heap, released by the destructor.
class scratch_buf {
public:
    scratch_buf() = default;
    scratch_buf(const scratch_buf &) = delete;
    scratch_buf &operator=(const scratch_buf &) = delete;
    ~scratch_buf();
    status allocate(core::rank &r, const char *op, mem::kind k, size_t bytes);
    char *data() const { return p_; }

private:
    core::rank *r_ = nullptr;
    mem::kind k_ = mem::kind::host;
    char *p_ = nullptr;
    uint64_t off_ = 0;
};

}  // namespace hgas::coll::detail
