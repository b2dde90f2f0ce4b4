#include "mem/allocator.hpp"

namespace hgas::mem {

allocator::allocator(uint64_t size, uint64_t min_align) : size_(size), min_align_(min_align) {
    if (size > 0) free_[0] = size;
}

result<uint64_t> allocator::allocate(uint64_t bytes, uint64_t align, bool commit) {
    commit_failed_ = false;
    if (bytes == 0 || align == 0 || (align & (align - 1)) != 0)
        return fail(status::invalid_arg, "allocation of %llu bytes with alignment %llu: the size must be > 0 and "
                    "the alignment a power of two", (unsigned long long)bytes, (unsigned long long)align);
    if (align < min_align_) align = min_align_;
    // Round sizes up to the minimum alignment so that every block starts aligned and the
    // free list does not fragment into slivers.
    if (bytes > UINT64_MAX - min_align_) return status::no_memory;
    const uint64_t len = (bytes + min_align_ - 1) & ~(min_align_ - 1);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        const uint64_t start = it->first, flen = it->second;
        const uint64_t aligned = (start + align - 1) & ~(align - 1);
        const uint64_t pad = aligned - start;
        if (pad > flen || flen - pad < len) continue;
        free_.erase(it);
        if (pad) free_[start] = pad;  // the gap before stays free
        const uint64_t rest = flen - pad - len;
        if (rest) free_[aligned + len] = rest;
        live_[aligned] = block{len, bytes};
        used_ += len;
        if (commit && commit_) {
            status s = commit_(aligned, len);
            if (s != status::ok) {
                const uint64_t keep = user_base_;  // release() refuses the runtime's prefix
                user_base_ = 0;
                (void)release(aligned);
                user_base_ = keep;
                commit_failed_ = true;
                return s;
            }
        }
        return aligned;
    }
    return status::no_memory;  // the caller adds the message naming the setting
}

status allocator::release(uint64_t offset) {
    if (offset < user_base_) return status::invalid_pointer;  // the runtime's own objects
    auto it = live_.find(offset);
    if (it == live_.end()) return status::invalid_pointer;
    uint64_t start = offset, len = it->second.len;
    live_.erase(it);
    used_ -= len;
    // Coalesce with the neighbours so that a freed heap returns to one block.
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + len) {
        len += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            len += prev->second;
            free_.erase(prev);
        }
    }
    free_[start] = len;
    return status::ok;
}

uint64_t allocator::block_size(uint64_t offset) const {
    if (offset < user_base_) return 0;
    auto it = live_.find(offset);
    return it == live_.end() ? 0 : it->second.len;
}

bool allocator::find_block(uint64_t offset, uint64_t &start, uint64_t &size) const {
    return block_before(offset, start, size) && offset < start + size;
}

bool allocator::block_before(uint64_t offset, uint64_t &start, uint64_t &size) const {
    auto it = live_.upper_bound(offset);
    if (it == live_.begin()) return false;
    --it;
    if (it->first < user_base_) return false;
    start = it->first;
    size = it->second.bytes;
    return true;
}

bool allocator::block_after(uint64_t offset, uint64_t &start, uint64_t &size) const {
    auto it = live_.lower_bound(offset < user_base_ ? user_base_ : offset);
    if (it == live_.end()) return false;
    start = it->first;
    size = it->second.bytes;
    return true;
}

void allocator::seal_runtime_prefix() {
    user_base_ = live_.empty() ? 0 : live_.rbegin()->first + live_.rbegin()->second.len;
    // Free gaps between the runtime's blocks (alignment) stay unused: user blocks start above.
    while (!free_.empty() && free_.begin()->first < user_base_) free_.erase(free_.begin());
}

uint64_t allocator::largest_free() const {
    uint64_t m = 0;
    for (const auto &f : free_) m = f.second > m ? f.second : m;
    return m;
}

}  // namespace hgas::mem
