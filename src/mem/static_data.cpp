#include "mem/static_data.hpp"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

namespace hgas::mem {
namespace {

uint64_t page_size() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }
uint64_t page_down(uint64_t a, uint64_t pg) { return a & ~(pg - 1); }
uint64_t page_up(uint64_t a, uint64_t pg) { return (a + pg - 1) & ~(pg - 1); }

// FNV-1a: a fingerprint to tell executables apart, not a defence against anyone.
struct fnv {
    uint64_t h = 0xcbf29ce484222325ull;
    void add(const void *p, size_t n) {
        const auto *b = static_cast<const unsigned char *>(p);
        for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    }
    template <class T>
    void add(const T &v) { add(&v, sizeof v); }
};

// The GNU build id of the main program, as hex ("" if it has none).
std::string build_id(const dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
        const char *end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) n;
            std::memcpy(&n, p, sizeof n);
            const char *name = p + sizeof n;
            const char *desc = name + ((n.n_namesz + 3) & ~3u);
            const char *next = desc + ((n.n_descsz + 3) & ~3u);
            if (next > end) break;
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                std::string hex;
                char b[3];
                for (unsigned k = 0; k < n.n_descsz; ++k) {
                    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(desc[k]));
                    hex += b;
                }
                return hex;
            }
            p = next;
        }
    }
    return "";
}

// dl_iterate_phdr visits the main program first; only that one is looked at.
static_range locate() {
    struct found {
        bool seen = false;
        static_range out;
    } f;
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *arg) -> int {
            auto *f = static_cast<found *>(arg);
            if (f->seen) return 1;
            f->seen = true;
            static_range &out = f->out;
            const uint64_t pg = page_size(), bias = info->dlpi_addr;
            uint64_t lo = UINT64_MAX, hi = 0, relro_end = 0;
            fnv h;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_GNU_RELRO) relro_end = bias + ph.p_vaddr + ph.p_memsz;
                if (ph.p_type != PT_LOAD) continue;
                h.add(ph.p_vaddr);
                h.add(ph.p_memsz);
                h.add(ph.p_filesz);
                h.add(ph.p_flags);
                if (!(ph.p_flags & PF_W) || ph.p_memsz == 0) continue;
                lo = std::min(lo, page_down(bias + ph.p_vaddr, pg));
                hi = std::max(hi, page_up(bias + ph.p_vaddr + ph.p_memsz, pg));
            }
            // The dynamic linker write-protects RELRO up to the page below its end; the page
            // holding the end stays writable, and is the program's own like the rest.
            if (relro_end) lo = std::max(lo, page_down(relro_end, pg));
            if (lo >= hi) {
                out.why_not = "the program has no writable data or bss outside its read-only-after-relocation part";
                return 1;
            }
            std::string id = build_id(info);
            if (id.empty()) {
                // No build id: the first bytes of each read-only segment stand in for it.
                for (int i = 0; i < info->dlpi_phnum; ++i) {
                    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                    if (ph.p_type == PT_LOAD && !(ph.p_flags & PF_W))
                        h.add(reinterpret_cast<const void *>(bias + ph.p_vaddr),
                              std::min<uint64_t>(ph.p_filesz, 65536));
                }
            }
            out.base = reinterpret_cast<char *>(lo);
            out.size = hi - lo;
            h.add(lo - bias);
            h.add(out.size);
            char text[64];
            std::snprintf(text, sizeof text, "%016" PRIx64 "/%" PRIu64, h.h, out.size);
            out.fingerprint = (id.empty() ? std::string("layout ") : "build-id " + id + " ") + text;
            return 1;
        },
        &f);
    if (!f.seen) f.out.why_not = "the dynamic linker lists no main program (a static executable?)";
    return f.out;
}

// /proc/self/maps: every page of [lo, hi) must be mapped read-write and private by the
// executable or anonymously; a page of another file (or shared with another process) is not
// ours to move. An earlier share of the same range (/dev/shm/hgas-*, shared: a second
// hgas_init in this process) is accepted as well.
std::string check_maps(uint64_t lo, uint64_t hi) {
    char exe[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = 0;
    FILE *f = std::fopen("/proc/self/maps", "r");
    if (!f) return std::string("cannot read /proc/self/maps: ") + std::strerror(errno);
    std::string why;
    uint64_t covered = lo;
    char line[4600];
    while (why.empty() && std::fgets(line, sizeof line, f)) {
        unsigned long long a = 0, b = 0, off = 0;
        char perms[8] = {}, dev[32] = {}, path[4200] = {};
        unsigned long inode = 0;
        const int got = std::sscanf(line, "%llx-%llx %7s %llx %31s %lu %4199[^\n]", &a, &b, perms, &off, dev, &inode,
                                    path);
        if (got < 6 || b <= lo || a >= hi) continue;
        const char *name = got == 7 ? path : "";
        while (*name == ' ') ++name;
        const bool own_share = std::strncmp(name, "/dev/shm/hgas-", 14) == 0 && perms[3] == 's';
        if (a > covered) {
            why = "a hole in the program's data at " + std::to_string(covered);
        } else if (perms[0] != 'r' || perms[1] != 'w' || (perms[3] != 'p' && !own_share)) {
            why = std::string("part of it is mapped ") + perms + " (" + (*name ? name : "anonymous") + ")";
        } else if (*name && std::strcmp(name, exe) != 0 && std::strcmp(name, "[heap]") != 0 && !own_share) {
            why = std::string("part of it is mapped from ") + name;
        }
        covered = std::max<uint64_t>(covered, b);
    }
    std::fclose(f);
    if (why.empty() && covered < hi) why = "the end of the program's data is not mapped";
    return why;
}

// The range shared in this process, for the fork handler.
std::atomic<char *> g_shared_base{nullptr};
std::atomic<uint64_t> g_shared_size{0};

// In a forked child: give the child a private copy of the program's data again, so that its
// writes to globals stay its own, as fork() promises. Runs single-threaded in the child
// before fork() returns there; only system calls and a plain copy.
void privatize_in_child() {
    char *base = g_shared_base.load(std::memory_order_acquire);
    const uint64_t size = g_shared_size.load(std::memory_order_acquire);
    if (!base || !size) return;
    void *copy = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED) return;  // the child shares its globals with the parent then
    copy_unchecked(copy, base, size);
    if (mremap(copy, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, base) == MAP_FAILED) munmap(copy, size);
    g_shared_base.store(nullptr, std::memory_order_relaxed);
}

}  // namespace

const static_range &program_static_range() {
    static const static_range r = locate();
    return r;
}

bool in_program_data(const void *p) {
    const static_range &r = program_static_range();
    return r.contains(p);
}

std::string static_range_problem(const static_range &r) {
    if (!r.base) return r.why_not;
    const uint64_t lo = reinterpret_cast<uint64_t>(r.base);
    return check_maps(lo, lo + r.size);
}

result<host_mapping> share_static_range(const static_range &r, const std::string &name) {
    const std::string why = static_range_problem(r);
    if (!why.empty())
        return fail(status::invalid_pointer, "the program's static data [%p, +%" PRIu64 ") cannot be shared: %s",
                    r.base, r.size, why.c_str());
    HGAS_TRY_ASSIGN(host_mapping m, host_mapping::create_over(name, r.base, r.size));
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(nullptr, nullptr, privatize_in_child); });
    g_shared_size.store(r.size, std::memory_order_release);
    g_shared_base.store(r.base, std::memory_order_release);
    return m;
}

}  // namespace hgas::mem
