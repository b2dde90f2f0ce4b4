// The collectives' memory on any kind: host memory is copied and combined by this thread;
// device memory (cuda, sim) by the rank's device -- copies on its copy engines, reductions by
// its kernel (gpu::device::reduce: a CUDA kernel, the sim engine) -- so the CPU never loads or
// stores a device byte. Each call here completes before it returns.
#pragma once
#include <hgas/hgas.h>

#include <cstddef>
#include <cstdint>

#include "core/rank.hpp"

namespace hgas::coll::detail {

// check_buf, and the kind of [p, p + bytes) (host, cuda or sim) in *k.
status check_any_buf(core::rank &r, const char *op, const void *p, size_t bytes, const char *what, mem::kind *k);

// dst = src (n bytes, any kinds, may be the same; host ranges may overlap).
status local_copy(core::rank &r, const char *op, void *dst, const void *src, size_t n);

// inout = inout op in (in op inout with `rev`) on `count` elements. `inout` is memory of
// kind `k` (the combine runs where it lives); `in` is host memory or memory of that kind.
status combine(core::rank &r, const char *op, mem::kind k, void *inout, const void *in, size_t count,
               hgas_dtype_t type, hgas_op_t rop, bool rev);

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
