// One-sided operations of one rank: put/get (blocking, nbi, handle), put_signal, atomics,
// fence and quiet. Each checks its arguments fully before any byte moves, then takes the fast
// path (a peer mapped into this process: memcpy / CPU atomic) or the peer's transport.
#pragma once
#include <hgas/hgas.h>

#include "core/rank.hpp"

namespace hgas::rma {

status put(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, bool nbi);
status get(core::rank &r, void *dst, hgas_gptr_t src, size_t n, bool nbi);
status put_nb(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, hgas_handle_t *h);
status get_nb(core::rank &r, void *dst, hgas_gptr_t src, size_t n, hgas_handle_t *h);
status wait(core::rank &r, hgas_handle_t h);
// An operation behind a handle that is not a transport request (a tagged message, src/msg):
// hgas_test/hgas_wait call its test() until done, then delete it with the handle.
struct completion {
    virtual ~completion() = default;
    // Advances the operation; done = true once it is finished. A failure finishes it too.
    virtual status test(core::rank &r, bool &done) = 0;
};
hgas_handle_t make_handle(completion *c);
status test(core::rank &r, hgas_handle_t h, int *done);
status put_signal(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, hgas_gptr_t sig, uint64_t value,
                  hgas_signal_op_t op, bool nbi);
status atomic(core::rank &r, hgas_gptr_t t, hgas_amo_t op, hgas_dtype_t type, const void *operand,
              const void *compare, void *result);
// Non-fetching 64-bit signal update (used by barriers and collectives).
status signal_update(core::rank &r, hgas_gptr_t sig, hgas_signal_op_t op, uint64_t value);
status fence(core::rank &r);
status quiet(core::rank &r);

// Validation shared with other semantics: the segment of `p`, after checking rank, segment
// and bounds of [p, p+n). `op` names the call in the message.
result<const core::peer_segment *> target(core::rank &r, const char *op, hgas_gptr_t p, uint64_t n);

}  // namespace hgas::rma
