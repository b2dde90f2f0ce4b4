#include "gpu/reg_cache.hpp"

#include <sched.h>

#include <algorithm>
#include <iterator>
#include <cstdint>

namespace hgas::gpu {

namespace {
// End of [base, base+size), saturated at the top of the address space.
uintptr_t end_of(uintptr_t base, size_t size) {
    return size > UINTPTR_MAX - base ? UINTPTR_MAX : base + size;
}
}  // namespace

reg_cache::reg_cache() {
    for (size_t i = 0; i < ring_slots; ++i) ring_[i].seq.store(i, std::memory_order_relaxed);
}

void reg_cache::account(const entry &e, bool add) {
    size_t &b = e.cached ? cached_bytes_ : explicit_bytes_;
    b = add ? b + e.size : b - e.size;
    if (!e.cached) return;
    if (add) widen(e.base, e.size);
    // Never narrowed here: a range being registered (planned, not inserted yet) must stay
    // covered, or an unmap of it in that window would be dropped. clear() resets the hull.
}

void reg_cache::widen(uintptr_t base, size_t size) {
    const uintptr_t end = end_of(base, size);
    if (base < lo_.load()) lo_.store(base);
    if (end > hi_.load()) hi_.store(end);
}

// May run inside malloc/free (a memory hook) on any thread: no lock, no allocation.
void reg_cache::invalidate(const void *p, size_t n) noexcept {
    const auto a = reinterpret_cast<uintptr_t>(p);
    if (n == 0 || end_of(a, n) <= lo_.load() || a >= hi_.load()) return;
    uint64_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
        slot &s = ring_[pos % ring_slots];
        const uint64_t seq = s.seq.load(std::memory_order_acquire);
        const auto dif = static_cast<int64_t>(seq - pos);
        if (dif == 0) {
            if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                s.base = a;
                s.size = n;
                s.seq.store(pos + 1, std::memory_order_release);
                return;
            }
        } else if (dif < 0) {  // full: the consumer drops every cached entry instead
            overflow_.store(true, std::memory_order_release);
            return;
        } else {
            pos = head_.load(std::memory_order_relaxed);
        }
    }
}

void reg_cache::apply_unmaps_locked() {
    auto drop = [&](auto pred) {
        for (auto it = map_.begin(); it != map_.end();) {
            if (it->second.cached && pred(it->second)) {
                account(it->second, false);
                stale_.push_back(it->second);
                ++invalidated_;
                it = map_.erase(it);
            } else {
                ++it;
            }
        }
    };
    for (;;) {  // the published slots, in order
        slot &s = ring_[tail_ % ring_slots];
        if (s.seq.load(std::memory_order_acquire) != tail_ + 1) {
            if (head_.load(std::memory_order_acquire) == tail_) break;  // nothing more claimed
            // Claimed, not written yet: the writer is a few instructions from publishing (it
            // may be descheduled). A later slot may be published already, so wait for this one
            // rather than stop; if it takes too long, drop every cached entry instead.
            int spins = 0;
            while (s.seq.load(std::memory_order_acquire) != tail_ + 1 && ++spins < 100000) sched_yield();
            if (spins >= 100000) {
                overflow_.store(true, std::memory_order_release);
                break;
            }
        }
        const uintptr_t a = s.base, end = end_of(s.base, s.size);
        s.seq.store(tail_ + ring_slots, std::memory_order_release);
        ++tail_;
        drop([&](const entry &e) { return e.base < end && end_of(e.base, e.size) > a; });
    }
    if (overflow_.exchange(false, std::memory_order_acq_rel)) drop([](const entry &) { return true; });
}

std::vector<reg_cache::entry> reg_cache::drain() {
    std::lock_guard<std::mutex> g(mu_);
    apply_unmaps_locked();
    std::vector<entry> out;
    out.swap(stale_);
    return out;
}

void reg_cache::apply_unmaps() {
    std::lock_guard<std::mutex> g(mu_);
    apply_unmaps_locked();
}

uint64_t reg_cache::invalidated() const {
    std::lock_guard<std::mutex> g(mu_);
    return invalidated_;
}

reg_cache::plan reg_cache::plan_cached(uintptr_t base, size_t size) {
    std::lock_guard<std::mutex> g(mu_);
    apply_unmaps_locked();
    plan p;
    p.base = base;
    p.size = size;
    const uintptr_t end = end_of(base, size);
    // Entries that overlap or touch [base, end): from the last one starting at or before base.
    auto it = map_.upper_bound(base);
    if (it != map_.begin()) --it;
    uintptr_t lo = base, hi = end;
    for (; it != map_.end() && it->first <= end; ++it) {
        entry &e = it->second;
        const uintptr_t e_end = end_of(e.base, e.size);
        if (e_end < base) continue;
        const bool overlap = e.base < end && e_end > base;
        if (!e.cached) {
            if (overlap) {
                p.what = plan::blocked;
                p.merge.clear();
                return p;
            }
            continue;  // an explicit neighbour stays as it is
        }
        if (e.base <= base && e_end >= end) {
            e.last_use = ++tick_;
            p.what = plan::hit;
            p.merge.clear();
            return p;
        }
        p.merge.push_back(e);
        lo = std::min(lo, e.base);
        hi = std::max(hi, e_end);
    }
    p.base = lo;
    p.size = hi - lo;
    widen(lo, hi - lo);  // unmaps of the range are recorded from now on, before it is registered
    return p;
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
    apply_unmaps_locked();  // never answer with an entry whose pages are gone
    auto it = map_.upper_bound(a);
    if (it == map_.begin()) return false;
    --it;
    const uintptr_t end = end_of(it->first, it->second.size);
    if (a >= end || end_of(a, n ? n : 1) > end) return false;
    it->second.last_use = ++tick_;
    if (out) *out = it->second;
    return true;
}

bool reg_cache::overlaps(const void *p, size_t n, entry *out) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    const uintptr_t end = end_of(a, n ? n : 1);
    std::lock_guard<std::mutex> g(mu_);
    apply_unmaps_locked();
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
    out.insert(out.end(), stale_.begin(), stale_.end());
    stale_.clear();
    cached_bytes_ = explicit_bytes_ = 0;
    lo_.store(UINTPTR_MAX);
    hi_.store(0);
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
