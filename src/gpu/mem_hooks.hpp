// Memory-unmap hooks for the registration cache: every munmap, madvise(DONTNEED/FREE), brk
// shrink, mremap and shmdt of the process is reported to reg_cache::invalidate before it
// happens, so that a cached registration never outlives its pages (a reused virtual range
// with new physical pages would otherwise be copied from the old, still page-locked ones).
//
// The hooks are UCX's (libucm, UCM_EVENT_VM_UNMAPPED): it patches the process's calls of
// those functions (relocations or code patching, UCX_MEM_MMAP_HOOK_MODE). A build without UCX
// has no hooks: install() then fails with the reason, and HGAS_REG_CACHE=auto acts as off.
#pragma once
#include <string>

namespace hgas::gpu {

class reg_cache;

namespace mem_hooks {

// Whether this build has the hooks at all.
bool built();
// Reports the process's unmaps to `c` from now on. False, with `why`, where they cannot be
// installed (no UCX in this build, or UCM failed to patch the process).
bool install(reg_cache *c, std::string &why);
// Stops reporting to `c` (before `c` is destroyed).
void remove(reg_cache *c);
// What install() uses, for hgas-info: "UCX memory hooks (libucm)" or why there are none.
std::string describe();

}  // namespace mem_hooks
}  // namespace hgas::gpu
