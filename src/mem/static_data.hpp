// Static data: the main program's global and static variables (its writable data and bss) as
// a segment of the global address space (HGAS_SEG_STATIC), so that OpenSHMEM programs can use
// them as RMA targets. Every rank runs the same executable, so a variable sits at the same
// offset from the start of the range on every rank, whatever address ASLR gave it.
//
// Sharing moves the range onto POSIX shared memory without moving a byte of it as the program
// sees it: its contents are copied into a new shared-memory object, which is then mapped with
// MAP_FIXED over the same addresses. Peers on the node map the object by name (like the
// heaps); UCX registers the range like any other memory.
//
// What is shared is decided from the program headers of the main executable (dl_iterate_phdr)
// and checked against /proc/self/maps before anything is remapped:
//  - the writable PT_LOAD segments, minus what the dynamic linker makes read-only after
//    relocation (PT_GNU_RELRO, up to its page-aligned end), rounded out to whole pages: the
//    first page starts no lower than the segment's own first page, and the last page ends at
//    the page end of the bss, which nothing else shares (the heap starts on a later page);
//  - every page of that range must be mapped read-write, private, by the executable itself or
//    anonymously (bss, or [heap] where the kernel merged the bss into it), else nothing is
//    shared and the reason is kept for the error messages.
// Shared libraries' globals are not part of it (their addresses differ between ranks).
//
// The executable's data belongs to the process, not to a rank, so what this file keeps is
// process state: the layout (computed once) and the range currently shared (for fork).
#pragma once
#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "mem/segment.hpp"

namespace hgas::mem {

// The main program's static data as this process lays it out.
struct static_range {
    char *base = nullptr;     // page aligned; nullptr if it cannot be shared
    uint64_t size = 0;        // whole pages
    std::string fingerprint;  // equal on ranks that run the same executable (build id, layout)
    std::string why_not;      // why it cannot be shared ("" when base is set)
    bool contains(const void *p) const {
        const char *c = static_cast<const char *>(p);
        return base && c >= base && static_cast<uint64_t>(c - base) < size;
    }
};

// The range of the main program (computed on the first call, then cached; thread safe).
const static_range &program_static_range();

// Whether `p` lies in the main program's writable data or bss, even where that cannot be
// shared (for error messages that say so).
bool in_program_data(const void *p);

// Why the range cannot be moved now ("" if it can): a page of it that /proc/self/maps does
// not show as the program's own private read-write memory.
std::string static_range_problem(const static_range &r);

// Copies the range into a new shared-memory object `name` and maps the object over the range
// (the program keeps its variables and addresses). Checks static_range_problem() first; fails
// with invalid_pointer and the reason if there is one. The
// mapping is never unmapped (the program's variables live in it); a forked child gets a
// private copy again (pthread_atfork), so that fork() keeps its usual meaning.
result<host_mapping> share_static_range(const static_range &r, const std::string &name);

}  // namespace hgas::mem
