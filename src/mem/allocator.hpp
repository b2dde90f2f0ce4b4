// A first-fit allocator over offsets [0, size) of a segment. Deterministic: the same sequence
// of calls gives the same offsets, which is what makes collective allocation symmetric.
// Written by hand because it manages offsets in memory that other processes map (a general
// malloc would put its bookkeeping inside the shared segment and differ across ranks).
#pragma once
#include <cstdint>
#include <functional>
#include <map>

#include "base/status.hpp"

namespace hgas::mem {

class allocator {
public:
    allocator() = default;
    allocator(uint64_t size, uint64_t min_align = 64);

    // Offset of a new block of `bytes` (> 0) aligned to `align` (power of two). With a commit
    // function set and `commit` true, the block's memory is committed before it is handed out
    // (segment.hpp: /dev/shm pages); if that fails the block is not allocated, the error is
    // commit's (its message says why) and commit_failed() is true until the next allocate.
    result<uint64_t> allocate(uint64_t bytes, uint64_t align, bool commit = true);
    using commit_fn = std::function<status(uint64_t offset, uint64_t bytes)>;
    void set_commit(commit_fn f) { commit_ = std::move(f); }
    bool commit_failed() const { return commit_failed_; }
    // Frees the block that starts at `offset`; invalid_pointer if no live block starts there.
    status release(uint64_t offset);
    // Size of the live block at `offset` as reserved, or 0 (also for the runtime's own blocks).
    uint64_t block_size(uint64_t offset) const;
    // The live block containing `offset`: its start and size as asked for, false if none.
    // The runtime's own blocks (below user_base) are not reported.
    bool find_block(uint64_t offset, uint64_t &start, uint64_t &size) const;
    // The nearest live block below / at or above `offset` (user blocks only), false if none.
    bool block_before(uint64_t offset, uint64_t &start, uint64_t &size) const;
    bool block_after(uint64_t offset, uint64_t &start, uint64_t &size) const;

    // Ends the runtime's allocations: every block allocated so far is the runtime's own (its
    // internal objects, allocated first at init), and [0, user_base()) is never released,
    // reported or reachable by a user operation. Later blocks are the user's.
    void seal_runtime_prefix();
    uint64_t user_base() const { return user_base_; }

    uint64_t capacity() const { return size_; }
    uint64_t in_use() const { return used_; }
    uint64_t largest_free() const;

private:
    uint64_t size_ = 0, min_align_ = 64, used_ = 0, user_base_ = 0;
    commit_fn commit_;
    bool commit_failed_ = false;
    std::map<uint64_t, uint64_t> free_;  // offset -> length, coalesced
    struct block {
        uint64_t len;    // as reserved (rounded up to min_align)
        uint64_t bytes;  // as asked for: the extent a checked access must stay inside
    };
    std::map<uint64_t, block> live_;  // offset -> block
    std::map<uint64_t, uint64_t> pad_;   // offset -> bytes of padding before it
};

}  // namespace hgas::mem
