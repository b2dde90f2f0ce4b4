#include "gpu/reg_policy.hpp"

#include <unistd.h>

#include "base/log.hpp"
#include "gpu/agent_gate.hpp"
#include "gpu/gpu.hpp"
#include "gpu/mem_hooks.hpp"

namespace hgas::gpu {

void reg_policy::start(const config &cfg, device *pin, std::function<status()> quiet) {
    cfg_ = cfg;
    pin_ = pin;
    quiet_ = std::move(quiet);
    if (!cfg.want) {
        why_off_ = "HGAS_REG_CACHE=off";
        return;
    }
    std::string why;
    if (!mem_hooks::install(&c_, why)) {
        why_off_ = "no memory-unmap hooks: " + why;
        // A warning where the user asked for auto; the default says it at level info (and
        // hgas-info always), so that every program of a build without UCX is not noisy.
        if (cfg.asked)
            HGASI_WARN("mem", "HGAS_REG_CACHE=auto acts as off: %s. User buffers are copied pageable unless "
                       "hgas_register'ed (HGAS_REG_CACHE=off silences this)", why.c_str());
        else
            HGASI_LOG(info, "mem", "the registration cache is off: %s", why.c_str());
        return;
    }
    hooked_ = active_ = true;
    why_off_.clear();
}

void reg_policy::stop() {
    if (hooked_) mem_hooks::remove(&c_);
    hooked_ = active_ = false;
    // Entries dropped by unmaps: their pages are gone, no DMA may use them.
    for (const auto &e : c_.drain())
        if (e.pinned && pin_) pin_->unregister_user(reinterpret_cast<void *>(e.base));
    pin_ = nullptr;  // the device may go now
}

// Unregisters entries taken out of the cache, once no copy in flight can still use them.
status reg_policy::release(const std::vector<reg_cache::entry> &gone, uint64_t *counter) {
    if (gone.empty()) return status::ok;
    bool any_pinned = false;
    for (const auto &e : gone) any_pinned |= e.pinned;
    if (any_pinned && quiet_) HGAS_TRY(quiet_());
    // One stop of the process's copy agents for all of them (each unregister waits for the
    // context's kernels: agent_gate.hpp), not one per entry.
    agent_gate::process().quiesced(agent_gate::stop_wait_s, [&] {
        for (const auto &e : gone) {
            if (e.pinned && pin_) pin_->unregister_user(reinterpret_cast<void *>(e.base));
            ++*counter;
        }
    });
    return status::ok;
}

bool reg_policy::reused(uintptr_t lo, uintptr_t size) {
    ++tick_;
    seen *oldest = &seen_[0];
    for (seen &e : seen_) {
        if (e.lo == lo && e.size == size && e.uses) {
            e.last = tick_;
            return ++e.uses >= cfg_.reuse;
        }
        if (e.last < oldest->last) oldest = &e;
    }
    *oldest = seen{lo, size, 1, tick_};
    return 1 >= cfg_.reuse;
}

status reg_policy::prepare(const void *p, size_t n, bool cacheable) {
    if (!active_) return status::ok;
    HGAS_TRY(release(c_.drain(), &n_.invalidated));
    if (!cacheable || n == 0) return status::ok;
    const bool small = n < cfg_.min;
    if (small && (cfg_.reuse == 0 || n < cfg_.reuse_min)) return status::ok;
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto a = reinterpret_cast<uintptr_t>(p);
    if (n > UINTPTR_MAX - a - page) return status::ok;  // the caller checked; no wrap here either
    const uintptr_t lo = a & ~(page - 1), hi = (a + n + page - 1) & ~(page - 1);
    if (small && !reused(lo, hi - lo)) return status::ok;
    reg_cache::plan pl = c_.plan_cached(lo, hi - lo);
    if (pl.what == reg_cache::plan::hit) {
        ++n_.hits;
        return status::ok;
    }
    if (pl.what == reg_cache::plan::blocked || pl.size > cfg_.max) {
        ++n_.skipped;
        return status::ok;
    }
    // Merge: the old registrations go first (a page may be registered only once).
    std::vector<reg_cache::entry> old;
    for (const auto &e : pl.merge) {
        reg_cache::entry r;
        if (c_.remove(reinterpret_cast<void *>(e.base), &r)) old.push_back(r);
    }
    HGAS_TRY(release(old, &n_.merged));
    reg_cache::entry e;
    e.base = pl.base;
    e.size = pl.size;
    e.cached = true;
    if (pin_) {
        auto r = pin_->register_user(reinterpret_cast<void *>(pl.base), pl.size);
        if (!r.ok() || !*r) {  // failed, or the program registered these pages itself
            HGASI_DEBUG("mem", "reg cache: [%p, +%zu) not cached: %s", reinterpret_cast<void *>(pl.base), pl.size,
                        r.ok() ? "registered by the program already" : last_error().c_str());
            ++n_.skipped;
            return status::ok;
        }
        e.pinned = true;
    }
    if (!c_.insert(e)) {  // cannot happen on the rank's thread; never leave a registration unrecorded
        if (e.pinned) pin_->unregister_user(reinterpret_cast<void *>(e.base));
        ++n_.skipped;
        return status::ok;
    }
    ++n_.added;
    HGASI_DEBUG("mem", "reg cache: cached [%p, +%zu)%s", reinterpret_cast<void *>(e.base), e.size,
                e.pinned ? " (registered with the GPU)" : "");
    return release(c_.evict(cfg_.max), &n_.evicted);
}

status reg_policy::drop_cached(const void *p, size_t n) {
    std::vector<reg_cache::entry> gone;
    reg_cache::entry e;
    // overlaps() returns the entry holding p first, then the lowest one starting inside.
    const char *c = static_cast<const char *>(p);
    for (size_t pos = 0; pos < n && c_.overlaps(c + pos, n - pos, &e);) {
        const uintptr_t end = e.base + e.size, a = reinterpret_cast<uintptr_t>(c + pos);
        if (e.cached && c_.remove(reinterpret_cast<void *>(e.base), &e)) gone.push_back(e);
        if (end <= a) break;  // cannot happen: an overlapping entry ends after a
        pos = end - reinterpret_cast<uintptr_t>(c);
    }
    return release(gone, &n_.evicted);
}

std::string reg_cache_plan(const settings &cfg) {
    if (cfg.text(setting::reg_cache) == "off")
        return "off (HGAS_REG_CACHE=off): user buffers are copied pageable unless hgas_register'ed";
    std::string why;
    reg_cache probe;
    if (!mem_hooks::install(&probe, why))
        return "off although HGAS_REG_CACHE=auto: " + why + "; user buffers are copied pageable unless hgas_register'ed";
    mem_hooks::remove(&probe);
    const std::string reuse = cfg.integer(setting::reg_cache_reuse) > 0
        ? ", those of " + cfg.value_text(setting::reg_cache_reuse_min) + " B or more at their use number " +
              cfg.value_text(setting::reg_cache_reuse)
        : "";
    return "auto: user buffers of " + cfg.value_text(setting::reg_cache_min) + " B or more registered on first use" + reuse + ", " +
           "at most " + cfg.value_text(setting::reg_cache_max) + " B kept (LRU), invalidated by " +
           mem_hooks::describe();
}

}  // namespace hgas::gpu
