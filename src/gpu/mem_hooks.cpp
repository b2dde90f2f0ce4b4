#include "gpu/mem_hooks.hpp"

#include <hgas/config.h>

#include "gpu/reg_cache.hpp"

#if HGAS_HAVE_UCX
#include <sys/mman.h>
#include <ucm/api/ucm.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#endif

namespace hgas::gpu::mem_hooks {

#if HGAS_HAVE_UCX

namespace {
// Runs before the unmap, inside munmap/free/... of whichever thread: reg_cache::invalidate
// takes no lock and allocates nothing.
void on_unmap(ucm_event_type_t, ucm_event_t *ev, void *arg) {
    static_cast<reg_cache *>(arg)->invalidate(ev->vm_unmapped.address, ev->vm_unmapped.size);
}

// The probes of install(): whether an unmap of [lo, hi) was reported.
struct probe {
    std::atomic<uintptr_t> lo{0}, hi{0};
    std::atomic<int> seen{0};
};
void on_probe(ucm_event_type_t, ucm_event_t *ev, void *arg) {
    auto *p = static_cast<probe *>(arg);
    const auto a = reinterpret_cast<uintptr_t>(ev->vm_unmapped.address);
    if (a < p->hi.load(std::memory_order_relaxed) && a + ev->vm_unmapped.size > p->lo.load(std::memory_order_relaxed))
        p->seen.fetch_add(1, std::memory_order_relaxed);
}

// Whether the hooks see the ways a program's buffer loses its pages: munmap called by the
// program, and free / operator delete of a block the allocator mapped for it (glibc maps every
// block above its mmap threshold, at most 32 MiB, and unmaps it from inside free, where hooks
// that patch only the program's calls to munmap do not reach). A cached registration whose
// unmap goes unseen is used for whatever is mapped at that address next: the device copies
// the old pages (seen with std::vector buffers of 1 MiB). Empty, or what was not reported.
std::string unreported_unmap() {
    probe p;
    if (ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, -2, on_probe, &p) != UCS_OK) return "a probe's handler";
    constexpr size_t big = size_t{64} << 20;  // above any mmap threshold of glibc's
    auto watch = [&](void *q, size_t n) {
        p.lo.store(reinterpret_cast<uintptr_t>(q), std::memory_order_relaxed);
        p.hi.store(reinterpret_cast<uintptr_t>(q) + n, std::memory_order_relaxed);
        p.seen.store(0, std::memory_order_relaxed);
    };
    std::string missed;
    if (void *m = mmap(nullptr, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); m != MAP_FAILED) {
        watch(m, big);
        munmap(m, big);
        if (!p.seen.load()) missed = "munmap";
    }
    // Through volatile pointers: the compiler may not pair (and drop) the allocation and the free.
    void *(*volatile alloc)(size_t) = std::malloc;
    void (*volatile release)(void *) = std::free;
    // A probe that cannot allocate proves nothing: counted as not reported (the cache stays off).
    auto note = [&](const char *what) { missed += std::string(missed.empty() ? "" : ", ") + what; };
    if (void *q = alloc(big)) {
        watch(q, big);
        release(q);
        if (!p.seen.load()) note("free of a 64 MiB block");
    } else {
        note("free of a 64 MiB block (it could not be allocated)");
    }
    void *(*volatile make)(size_t) = ::operator new;
    void (*volatile drop)(void *) = ::operator delete;
    void *q = nullptr;
    try {
        q = make(big);
    } catch (const std::bad_alloc &) {
        q = nullptr;
    }
    if (q) {
        watch(q, big);
        drop(q);
        if (!p.seen.load()) note("operator delete of a 64 MiB block");
    } else {
        note("operator delete of a 64 MiB block (it could not be allocated)");
    }
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_probe, &p);
    return missed;
}
}  // namespace

bool built() { return true; }

bool install(reg_cache *c, std::string &why) {
    // Negative priority: called before the memory goes (UCM calls VM_UNMAPPED handlers first
    // in any case; the priority orders us among other handlers, e.g. UCX's own rcache).
    const ucs_status_t s = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, -1, on_unmap, c);
    if (s != UCS_OK) {
        why = std::string("UCX's memory hooks could not be installed (ucm_set_event_handler: ") +
              ucs_status_string(s) + "; UCX_MEM_MMAP_HOOK_MODE=none, or a static libc?)";
        return false;
    }
    const std::string missed = unreported_unmap();
    if (!missed.empty()) {
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, c);
        why = "UCX's memory hooks did not report an unmap (" + missed +
              ") in a probe at start-up, so a cached buffer could be freed unseen and its address reused "
              "(UCX_MEM_MMAP_HOOK_MODE, UCX_MEM_MALLOC_HOOKS)";
        return false;
    }
    return true;
}

void remove(reg_cache *c) { ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, c); }

std::string describe() { return "UCX memory hooks (libucm, UCM_EVENT_VM_UNMAPPED)"; }

#else

bool built() { return false; }

bool install(reg_cache *, std::string &why) {
    why = describe();
    return false;
}

void remove(reg_cache *) {}

std::string describe() {
    return "none: this build has no UCX (-DHGAS_UCX=OFF), whose memory hooks (libucm) tell hgas when a cached "
           "buffer is unmapped";
}

#endif

}  // namespace hgas::gpu::mem_hooks
