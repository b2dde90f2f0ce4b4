// The automatic registration cache (HGAS_REG_CACHE=auto), as UCX's rcache or a CUDA-aware
// MPI's: a user host buffer of at least HGAS_REG_CACHE_MIN bytes that is one end of a device
// copy is registered with the GPU (page-aligned enclosing range) on first use and kept as a
// cached entry of the rank's reg_cache, so that this and later copies run from page-locked
// memory (55 GB/s instead of the driver's own staging of pageable memory, 8-17 GB/s).
//  - A smaller buffer, of at least HGAS_REG_CACHE_REUSE_MIN bytes, is registered at its
//    HGAS_REG_CACHE_REUSE-th use: registering costs tens of microseconds, more than one
//    pageable copy of it loses, so only a buffer that comes back (a halo, a message buffer)
//    is worth it. Recent uses are counted in a small table of page ranges (16, the least
//    recently used one forgotten for a new range).
//
//  - Cached entries that overlap or touch the new range are merged into one registration
//    (the old ones unregistered, the union registered); an explicit entry (hgas_register) in
//    the way means no caching: that copy stays pageable, and correct.
//  - Beyond HGAS_REG_CACHE_MAX cached bytes the least recently used entries are unregistered.
//  - Unmapped pages invalidate their entries (gpu/mem_hooks.hpp); without the hooks the
//    policy stays off, since a reused range would be copied from stale pages.
//  - Nothing is unregistered while a DMA may use it: the rank's quiet (every copy_nbi
//    complete) runs first, as for hgas_deregister.
//
// Called on the rank's thread only (rma, under the API guard). The device is the rank's cuda
// device, or nullptr: then entries are recorded only (kind sim, where CI tests the policy).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "base/settings.hpp"
#include "base/status.hpp"
#include "gpu/reg_cache.hpp"

namespace hgas::gpu {

class device;

class reg_policy {
public:
    struct config {
        bool want = true;            // HGAS_REG_CACHE=auto
        bool asked = false;          // ... set in the environment (not the default)
        uint64_t min = 1 << 20;      // HGAS_REG_CACHE_MIN
        uint64_t max = 4ull << 30;   // HGAS_REG_CACHE_MAX
        uint64_t reuse_min = 4096;   // HGAS_REG_CACHE_REUSE_MIN
        uint64_t reuse = 2;          // HGAS_REG_CACHE_REUSE (0: never below min)
    };
    struct counters {
        uint64_t hits = 0, added = 0, merged = 0, evicted = 0, invalidated = 0, skipped = 0;
    };

    explicit reg_policy(reg_cache &c) : c_(c) {}
    ~reg_policy() { stop(); }
    reg_policy(const reg_policy &) = delete;
    reg_policy &operator=(const reg_policy &) = delete;

    // Turns the policy on as `cfg` asks and the hooks allow; why_off() says otherwise.
    // `quiet` completes every device copy in flight (rank: staging quiet).
    void start(const config &cfg, device *pin, std::function<status()> quiet);
    // Removes the hook and unregisters the entries that unmaps dropped (finalize; the rest
    // goes with reg_cache::clear). Idempotent.
    void stop();
    bool active() const { return active_; }
    const std::string &why_off() const { return why_off_; }
    const config &cfg() const { return cfg_; }
    const counters &stats() const { return n_; }

    // Before a device copy with the host range [p, p+n) at one end: unregisters what unmaps
    // invalidated, then caches the range if it is `cacheable` (a user buffer: not hgas memory,
    // not device memory) and worth it. A registration that fails only leaves the copy
    // pageable; errors are those of the quiet.
    status prepare(const void *p, size_t n, bool cacheable = true);
    // Takes the cached entries that overlap [p, p+n) out of the cache and unregisters them
    // (after a quiet), so that an explicit registration (hgas_register) of the range wins.
    // Explicit entries are left alone.
    status drop_cached(const void *p, size_t n);

private:
    status release(const std::vector<reg_cache::entry> &gone, uint64_t *counter);
    // Counts a use of the page range [lo, lo+size) below the size threshold; true when it has
    // now been used HGAS_REG_CACHE_REUSE times.
    bool reused(uintptr_t lo, uintptr_t size);
    struct seen {
        uintptr_t lo = 0, size = 0;
        uint64_t uses = 0, last = 0;  // last: when it was last used (tick_)
    };
    // The recent ranges, least recently used replaced: a direct-mapped table let two buffers
    // used in turn (a put's source and a get's destination) evict each other for ever.
    static constexpr size_t seen_slots = 16;
    seen seen_[seen_slots];
    uint64_t tick_ = 0;
    reg_cache &c_;
    device *pin_ = nullptr;
    std::function<status()> quiet_;
    config cfg_;
    counters n_;
    bool active_ = false, hooked_ = false;
    std::string why_off_ = "not started";
};

// What HGAS_REG_CACHE* under `cfg` do in this build and process (for hgas-info): the mode,
// the threshold and limit, and the hooks, or why the cache is off. Installs the hooks once to
// see that they work, and removes them.
std::string reg_cache_plan(const settings &cfg);

}  // namespace hgas::gpu
