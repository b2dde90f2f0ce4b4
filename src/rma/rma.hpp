// One-sided operations of one rank: put/get (blocking, nbi, handle), put_signal, atomics,
// fence and quiet. Each checks its arguments fully before any byte moves, then takes the fast
// path (a peer mapped into this process: memcpy / CPU atomic) or the peer's transport.
#pragma once
#include <hgas/hgas.h>

#include "core/rank.hpp"

namespace hgas::rma {

// Who issues an operation. The user (the C API, a kernel's proxied request) reaches only the
// user part of a heap — hgas's own objects (barrier and collective words, scratch, staging
// rings) lie below the heap's user base at the same offsets on every rank — and, in checked
// mode (HGAS_CHECK=1), only the inside of one live allocation. The runtime itself (barriers,
// collectives) reaches its own objects.
enum class issuer { user, runtime };

status put(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, bool nbi);
status get(core::rank &r, void *dst, hgas_gptr_t src, size_t n, bool nbi, issuer by = issuer::user);
status put_nb(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, hgas_handle_t *h);
status get_nb(core::rank &r, void *dst, hgas_gptr_t src, size_t n, hgas_handle_t *h);
status wait(core::rank &r, hgas_handle_t h);
// An operation behind a handle that is not a transport request (a tagged message, src/msg):
// hgas_test/hgas_wait call its test() until done, then delete it with the handle.
using completion = core::completion;
// A handle of rank r for `c`, which the handle owns from here on.
hgas_handle_t make_handle(core::rank &r, std::unique_ptr<completion> c);
status test(core::rank &r, hgas_handle_t h, int *done);
status put_signal(core::rank &r, hgas_gptr_t dst, const void *src, size_t n, hgas_gptr_t sig, uint64_t value,
                  hgas_signal_op_t op, bool nbi, issuer by = issuer::user);
status atomic(core::rank &r, hgas_gptr_t t, hgas_amo_t op, hgas_dtype_t type, const void *operand,
              const void *compare, void *result, issuer by = issuer::user);
// Non-fetching 64-bit signal update (used by barriers and collectives).
status signal_update(core::rank &r, hgas_gptr_t sig, hgas_signal_op_t op, uint64_t value,
                     issuer by = issuer::user);
status fence(core::rank &r);
status quiet(core::rank &r);

// Validation shared with other semantics: the segment of `p`, after checking rank, segment
// and bounds of [p, p+n) (for the user: the user part of the heap, and in checked mode one
// live allocation). `op` names the call in the message.
result<const core::peer_segment *> target(core::rank &r, const char *op, hgas_gptr_t p, uint64_t n,
                                          issuer by = issuer::user);
// The checked-mode test alone (HGAS_CHECK=1; nothing otherwise): [p, p+n) inside one live
// allocation where this rank knows the allocations of p's segment (symmetric heaps: the same
// on every rank; its own local heaps). Collectives use it for their symmetric buffers.
status check_live(core::rank &r, const char *op, hgas_gptr_t p, uint64_t n);

}  // namespace hgas::rma
