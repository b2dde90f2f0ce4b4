#include "mem/allocator.hpp"

namespace hgas::mem {

allocator::allocator(uint64_t size, uint64_t min_align) : size_(size), min_align_(min_align) {
    if (size > 0) free_[0] = size;
}

result<uint64_t> allocator::allocate(uint64_t bytes, uint64_t align) {
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
        live_[aligned] = len;
        used_ += len;
        return aligned;
    }
    return status::no_memory;  // the caller adds the message naming the setting
}

status allocator::release(uint64_t offset) {
    auto it = live_.find(offset);
    if (it == live_.end()) return status::invalid_pointer;
    uint64_t start = offset, len = it->second;
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
    auto it = live_.find(offset);
    return it == live_.end() ? 0 : it->second;
}

bool allocator::find_block(uint64_t offset, uint64_t &start, uint64_t &size) const {
    auto it = live_.upper_bound(offset);
    if (it == live_.begin()) return false;
    --it;
    if (offset >= it->first + it->second) return false;
    start = it->first;
    size = it->second;
    return true;
}

uint64_t allocator::largest_free() const {
    uint64_t m = 0;
    for (const auto &f : free_) m = f.second > m ? f.second : m;
    return m;
}

}  // namespace hgas::mem
