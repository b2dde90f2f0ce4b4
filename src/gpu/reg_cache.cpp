#include "gpu/reg_cache.hpp"

#include <algorithm>
#include <iterator>

namespace hgas::gpu {

namespace {
// End of [base, base+size), saturated at the top of the address space.
uintptr_t end_of(uintptr_t base, size_t size) {
    return size > UINTPTR_MAX - base ? UINTPTR_MAX : base + size;
}
}  // namespace

void reg_cache::account(const entry &e, bool add) {
    size_t &b = e.cached ? cached_bytes_ : explicit_bytes_;
    b = add ? b + e.size : b - e.size;
}

bool reg_cache::insert(const entry &e, entry *clash) {
    if (e.size == 0) return false;
    std::lock_guard<std::mutex> g(mu_);
    const uintptr_t end = end_of(e.base, e.size);
    // The only candidates: the last entry starting at or before base, and the first after it.
    auto it = map_.upper_bound(e.base);
    if (it != map_.begin()) {
        auto prev = std::prev(it);
        if (end_of(prev->first, prev->second.size) > e.base) {
            if (clash) *clash = prev->second;
            return false;
        }
    }
    if (it != map_.end() && it->first < end) {
        if (clash) *clash = it->second;
        return false;
    }
    entry n = e;
    n.last_use = ++tick_;
    map_.emplace(e.base, n);
    account(n, true);
    return true;
}

bool reg_cache::find(const void *p, size_t n, entry *out) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.upper_bound(a);
    if (it == map_.begin()) return false;
    --it;
    const uintptr_t end = end_of(it->first, it->second.size);
    if (a >= end || end_of(a, n ? n : 1) > end) return false;
    it->second.last_use = ++tick_;
    if (out) *out = it->second;
    return true;
}

bool reg_cache::overlaps(const void *p, size_t n, entry *out) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    const uintptr_t end = end_of(a, n ? n : 1);
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.upper_bound(a);
    if (it != map_.begin()) {
        auto prev = std::prev(it);
        if (end_of(prev->first, prev->second.size) > a) {
            if (out) *out = prev->second;
            return true;
        }
    }
    if (it != map_.end() && it->first < end) {
        if (out) *out = it->second;
        return true;
    }
    return false;
}

bool reg_cache::remove(const void *p, entry *out) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(reinterpret_cast<uintptr_t>(p));
    if (it == map_.end()) return false;
    if (out) *out = it->second;
    account(it->second, false);
    map_.erase(it);
    return true;
}

std::vector<reg_cache::entry> reg_cache::evict(size_t limit) {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<entry> out;
    if (cached_bytes_ <= limit) return out;
    std::vector<entry> cached;
    for (const auto &kv : map_)
        if (kv.second.cached) cached.push_back(kv.second);
    std::sort(cached.begin(), cached.end(), [](const entry &a, const entry &b) { return a.last_use < b.last_use; });
    for (const entry &e : cached) {
        if (cached_bytes_ <= limit) break;
        account(e, false);
        map_.erase(e.base);
        out.push_back(e);
    }
    return out;
}

std::vector<reg_cache::entry> reg_cache::clear() {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<entry> out;
    for (const auto &kv : map_) out.push_back(kv.second);
    map_.clear();
    cached_bytes_ = explicit_bytes_ = 0;
    return out;
}

size_t reg_cache::count() const {
    std::lock_guard<std::mutex> g(mu_);
    return map_.size();
}
size_t reg_cache::cached_bytes() const {
    std::lock_guard<std::mutex> g(mu_);
    return cached_bytes_;
}
size_t reg_cache::explicit_bytes() const {
    std::lock_guard<std::mutex> g(mu_);
    return explicit_bytes_;
}

}  // namespace hgas::gpu
