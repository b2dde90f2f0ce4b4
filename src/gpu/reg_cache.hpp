// The registration cache: user host ranges registered with the devices (hgas_register), as an
// interval map that the device copy paths consult (the cuda device treats a copy from or to a
// registered range as a pinned copy). Thread-safe: the rank's thread registers while its
// progress helper or device proxy copies.
//
// Entries are either explicit (hgas_register: kept until hgas_deregister) or cached (taken on
// first use by an automatic policy: evicted least recently used first once the cached bytes
// pass a limit). The automatic policy itself is not built yet (docs/design.md): it needs
// memory-unmap hooks so that a freed and reused range is never copied as stale pages; the
// eviction bookkeeping is here, tested, for it.
//
// Pure bookkeeping: no device calls, so that it is tested on the CPU (tests/unit/test_gpu.cpp).
#pragma once
#include <cstddef>
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
    // Any entry that overlaps [p, p+n).
    bool overlaps(const void *p, size_t n, entry *out = nullptr) const;
    // Removes the entry that starts exactly at p.
    bool remove(const void *p, entry *out = nullptr);
    // Removes least recently used cached entries until the cached bytes are at most `limit`;
    // returns them (the caller unregisters them with the device).
    std::vector<entry> evict(size_t limit);
    // Removes every entry and returns them (finalize).
    std::vector<entry> clear();

    size_t count() const;
    size_t cached_bytes() const;
    size_t explicit_bytes() const;

private:
    mutable std::mutex mu_;
    std::map<uintptr_t, entry> map_;  // by base; entries never overlap
    size_t cached_bytes_ = 0, explicit_bytes_ = 0;
    uint64_t tick_ = 0;
    void account(const entry &e, bool add);
};

}  // namespace hgas::gpu
