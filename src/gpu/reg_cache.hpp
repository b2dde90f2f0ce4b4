// The registration cache: user host ranges registered with the devices (hgas_register), as an
// interval map that the device copy paths consult (the cuda device treats a copy from or to a
// registered range as a pinned copy). Thread-safe: the rank's thread registers while its
// progress helper or device proxy copies.
//
// Entries are either explicit (hgas_register: kept until hgas_deregister, never invalidated:
// the user promised to keep the buffer mapped) or cached (taken on first use by the automatic
// policy, gpu/reg_policy.hpp, HGAS_REG_CACHE=auto: evicted least recently used first once the
// cached bytes pass HGAS_REG_CACHE_MAX, and dropped when their pages are unmapped).
//
// Invalidation: a memory hook (gpu/mem_hooks.hpp) calls invalidate() for every range the
// process unmaps. That call may run inside malloc/free of any thread, so it takes no lock and
// allocates nothing: it appends to a fixed ring (a full ring sets a flag that drops every
// cached entry). The ring is applied under the mutex by drain(), and by every find() and
// overlaps() and plan_cached() before they look, so a cached entry is never found after its unmap; what a
// find() removes is kept until the next drain() hands it to the policy to unregister.
//
// Pure bookkeeping: no device calls, so that it is tested on the CPU (tests/unit/test_gpu.cpp).
#pragma once
#include <cstddef>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace hgas::gpu {

class reg_cache {
public:
    struct entry {
        uintptr_t base = 0;
        size_t size = 0;
        bool cached = false;   // false: explicit (never evicted)
        bool pinned = false;   // a device registered it (and must unregister it); false: record only
        uint64_t last_use = 0; // LRU tick of cached entries
    };

    // Adds [base, base+size). False (and `clash` set to the first overlapping entry) when it
    // overlaps an existing entry; size 0 is refused too.
    bool insert(const entry &e, entry *clash = nullptr);
    // The entry that contains all of [p, p+n) (n 0 counts as 1), refreshing its LRU tick.
    bool find(const void *p, size_t n, entry *out = nullptr);
    // Any entry that overlaps [p, p+n) (after applying recorded unmaps, like find).
    bool overlaps(const void *p, size_t n, entry *out = nullptr);
    // Removes the entry that starts exactly at p.
    bool remove(const void *p, entry *out = nullptr);
    // Removes least recently used cached entries until the cached bytes are at most `limit`;
    // returns them (the caller unregisters them with the device).
    std::vector<entry> evict(size_t limit);
    // Removes every entry and returns them (finalize).
    std::vector<entry> clear();

    // --- the automatic policy (gpu/reg_policy.hpp) ---
    // [p, p+n) is being unmapped. Lock-free and allocation-free (see the top of this file).
    void invalidate(const void *p, size_t n) noexcept;
    // Applies the unmaps recorded so far: removes the cached entries that overlap one (every
    // cached entry after a ring overflow) and returns them with those find() removed before;
    // the caller unregisters them with the device.
    std::vector<entry> drain();
    // Applies the recorded unmaps without handing anything out (for queries: what a query
    // sees is then current; drain() still returns the removed entries).
    void apply_unmaps();
    // Where a cached entry for the page-aligned [base, base+size) would go. hit: a cached entry
    // holds it already (its LRU tick is refreshed); blocked: it overlaps an explicit entry (do
    // not cache); add: register [base, base+size) after removing `merge` (cached entries that
    // overlap or touch the range, folded into it). Applies recorded unmaps first.
    struct plan {
        enum { hit, blocked, add } what = add;
        uintptr_t base = 0;
        size_t size = 0;
        std::vector<entry> merge;
    };
    plan plan_cached(uintptr_t base, size_t size);
    static constexpr size_t ring_slots = 256;
    uint64_t invalidated() const;  // cached entries dropped by unmaps so far

    size_t count() const;
    size_t cached_bytes() const;
    size_t explicit_bytes() const;

private:
    mutable std::mutex mu_;
    std::map<uintptr_t, entry> map_;  // by base; entries never overlap
    size_t cached_bytes_ = 0, explicit_bytes_ = 0;
    uint64_t tick_ = 0;
    void account(const entry &e, bool add);
    void apply_unmaps_locked();  // ring -> stale_
    void widen(uintptr_t base, size_t size);  // the hull of ranges whose unmaps count
    std::vector<entry> stale_;   // cached entries removed by unmaps, not yet unregistered
    uint64_t invalidated_ = 0;

    // The ring of unmapped ranges: a bounded multi-producer queue (sequence numbers per slot,
    // after D. Vyukov), one consumer under mu_.
    struct slot {
        std::atomic<uint64_t> seq{0};
        uintptr_t base = 0;
        size_t size = 0;
    };
    std::array<slot, ring_slots> ring_{};
    std::atomic<uint64_t> head_{0};
    uint64_t tail_ = 0;  // under mu_
    std::atomic<bool> overflow_{false};
    // Hull of the cached entries (only widened while any exist): unmaps outside it are ignored
    // without touching the ring, so that the program's unrelated frees do not fill it.
    std::atomic<uintptr_t> lo_{UINTPTR_MAX}, hi_{0};

public:
    reg_cache();
};

}  // namespace hgas::gpu
