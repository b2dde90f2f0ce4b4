#include "gpu/mem_hooks.hpp"

#include <hgas/config.h>

#include "gpu/reg_cache.hpp"

#if HGAS_HAVE_UCX
#include <ucm/api/ucm.h>
#endif

namespace hgas::gpu::mem_hooks {

#if HGAS_HAVE_UCX

namespace {
// Runs before the unmap, inside munmap/free/... of whichever thread: reg_cache::invalidate
// takes no lock and allocates nothing.
void on_unmap(ucm_event_type_t, ucm_event_t *ev, void *arg) {
    static_cast<reg_cache *>(arg)->invalidate(ev->vm_unmapped.address, ev->vm_unmapped.size);
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
