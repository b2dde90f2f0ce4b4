// Names the cause of a SIGBUS in hgas's shared memory. Host segments are sparse (segment.hpp):
// a page that nobody committed gets its /dev/shm page on first touch, and when /dev/shm is
// full the kernel answers that touch with SIGBUS, which by default kills the process with no
// word of why. hgas's own rarely used areas (the message rings, whose size grows with the
// number of ranks) are left sparse on purpose, so this can happen; a handler installed with
// the first guarded range prints which segment, that /dev/shm is full and what to change, then
// lets the signal take its default course (or the handler that was there before, for faults
// outside hgas's segments).
#pragma once
#include <cstddef>
#include <string>

namespace hgas::mem {

// Records [base, base+size) as a shared segment named `name`; installs the handler once.
// A fixed table (shm_guard_capacity ranges): ranges beyond it go unnamed (default SIGBUS).
void shm_guard(void *base, size_t size, const std::string &name);
void shm_unguard(void *base);
inline constexpr int shm_guard_capacity = 8192;

// "/dev/shm has N MiB free of M MiB" (statfs), for messages.
std::string shm_free_text();

// The message the handler prints for a fault at `addr` (tests); empty if addr is not guarded.
std::string shm_guard_message(const void *addr);

}  // namespace hgas::mem
