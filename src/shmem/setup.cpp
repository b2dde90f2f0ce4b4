// OpenSHMEM setup, queries, symmetric memory and locks over the hgas C API.
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "internal.hpp"

#include <shmemx.h>  // after internal.hpp, which sets up shmem.h for C++

namespace hgas::shmem {

void fatal(const char *fn, const char *fmt, ...) {
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char msg[1024];
    std::snprintf(msg, sizeof msg, "%s: %s", fn, what);
    hgas_abort(1, msg);  // prints the message with the PE number and ends every PE
    std::abort();        // not reached: hgas_abort never returns
}

void fatal_status(const char *fn, hgas_status_t s) {
    const char *last = hgas_last_error();
    fatal(fn, "%s (%s)", last && *last ? last : "failed", hgas_error_string(s));
}

hgas_gptr_t gptr(const char *fn, const void *sym, int pe) {
    hgas_gptr_t g;
    const hgas_status_t s = hgas_ptr(sym, pe, &g);
    if (s == HGAS_OK) return g;
    const int n = hgas_rank_n();
    if (n > 0 && (pe < 0 || pe >= n)) fatal(fn, "PE %d does not exist (the job has %d PEs)", pe, n);
    if (s == HGAS_ERR_INVALID_POINTER)  // hgas's message says why, also for a global variable
        fatal(fn, "%p is not symmetric: allocate it with shmem_malloc or make it a global or static variable (%s)",
              sym, hgas_last_error());
    fatal_status(fn, s);
}

void check_cmp(const char *fn, int cmp) {
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE)
        fatal(fn, "comparison %d is not one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE", cmp);
}

namespace {
double now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
// HGAS_TIMEOUT as the runtime reads it (a positive number of seconds, default 300); hgas_init
// has already rejected a malformed value, so a parse failure here cannot happen after init.
double timeout_setting() {
    const char *v = std::getenv("HGAS_TIMEOUT");
    if (!v || !*v) return 300;
    char *end = nullptr;
    double t = std::strtod(v, &end);
    return (end && !*end && t > 0) ? t : 300;
}
}  // namespace

spinner::spinner(const char *fn) : fn_(fn), timeout_(timeout_setting()) { deadline_ = now() + timeout_; }

void spinner::idle() {
    check(fn_, hgas_progress());  // a peer that died is reported here
    ++idle_;
    // Back off like the runtime's own waits: spinning PEs must not starve the PE they wait on
    // when PEs outnumber cores.
    if (idle_ >= 4096) {
        timespec ts{0, 20000};
        nanosleep(&ts, nullptr);
    } else if (idle_ >= 64) {
        sched_yield();
    }
    if ((idle_ & 255) == 0 && now() > deadline_)
        fatal(fn_, "did not complete within HGAS_TIMEOUT=%g s on PE %d (the PE that should update the variable "
              "is stuck, or not calling what this one waits for?)", timeout_, hgas_rank_me());
}

// --- symmetric memory -------------------------------------------------------------------------
// Every shmem allocation is preceded by a header inside its hgas block, so that shmem_realloc
// knows the old size and shmem_free can tell memory it handed out from anything else.
namespace {
constexpr uint64_t k_magic = 0x68676173'73686d6dull;  // "hgasshmm"
struct header {
    uint64_t magic;
    uint64_t size;    // bytes the user asked for
    uint64_t offset;  // bytes from the hgas block start to the user's pointer
};
static_assert(sizeof(header) <= 64);

header *header_of(void *user) { return reinterpret_cast<header *>(static_cast<char *>(user) - sizeof(header)); }

// Returns the header of a live shmem allocation, or ends the job naming `fn`.
header *valid_header(const char *fn, void *user) {
    hgas_gptr_t g;
    header *h = header_of(user);
    if (hgas_ptr(h, hgas_rank_me(), &g) != HGAS_OK || h->magic != k_magic)
        fatal(fn, "%p was not returned by shmem_malloc/calloc/align/realloc (or was freed already)", user);
    return h;
}

void *allocate(const char *fn, size_t alignment, size_t size, bool zero) {
    if (!hgas_initialized()) fatal(fn, "called before shmem_init()");
    if (alignment == 0 || (alignment & (alignment - 1))) {
        std::fprintf(stderr, "%s: alignment %zu is not a power of two (1, 2, 4, 8, ...); returning NULL\n", fn, alignment);
        return nullptr;
    }
    void *base = nullptr;
    if (size == 0) {  // NULL on every PE, after the same collective as any other size
        check(fn, hgas_malloc(0, &base));
        return nullptr;
    }
    const size_t off = alignment < 64 ? 64 : alignment;
    if (size > SIZE_MAX - off) {
        std::fprintf(stderr, "%s: %zu bytes is too large\n", fn, size);
        return nullptr;
    }
    // calloc is only asked for 64-byte alignment, which hgas_calloc gives.
    hgas_status_t s = zero ? hgas_calloc(1, size + off, &base) : hgas_align(off, size + off, &base);
    if (s != HGAS_OK) {
        // Same outcome on every PE (the heaps are identical), so returning NULL keeps them in step.
        std::fprintf(stderr, "%s: %s\n", fn, hgas_last_error());
        return nullptr;
    }
    char *user = static_cast<char *>(base) + off;
    // hgas aligns the offset in the heap; the address is aligned as well where the heap's base
    // is (it is mapped at an address aligned to its size, up to 1 GiB). Where a heap was placed
    // otherwise (UCX allocates it when it carries this node's traffic), or for an alignment
    // beyond the base's, the PEs agree to fail rather than return a misaligned pointer.
    if (off > 64) {
        const int64_t mine = reinterpret_cast<uintptr_t>(user) % alignment != 0;
        int64_t any = 0;
        check(fn, hgas_allreduce(&any, &mine, 1, HGAS_INT64, HGAS_OP_MAX));
        if (any) {
            check(fn, hgas_free(base));
            std::fprintf(stderr, "%s: cannot align to %zu bytes: the symmetric heap's base is not that aligned on every "
                         "PE (it is aligned to its size, up to 1 GiB: raise HGAS_HEAP_SIZE / SHMEM_SYMMETRIC_SIZE)\n",
                         fn, alignment);
            return nullptr;
        }
    }
    // Written after hgas's barrier, which is safe: no peer ever writes into the header.
    *header_of(user) = header{k_magic, size, off};
    return user;
}

void release(const char *fn, void *user) {
    if (!user) {
        check(fn, hgas_free(nullptr));
        return;
    }
    if (hgas_ptr_kind(user) != HGAS_KIND_HOST) {  // shmemx_malloc_kind: no header in device memory
        check(fn, hgas_free(user));
        return;
    }
    header *h = valid_header(fn, user);
    void *base = static_cast<char *>(user) - h->offset;
    h->magic = 0;  // a second free of the same pointer is reported, not undefined
    check(fn, hgas_free(base));
}

void *reallocate(const char *fn, void *user, size_t size) {
    if (!user) return allocate(fn, 64, size, false);
    if (hgas_ptr_kind(user) != HGAS_KIND_HOST)
        fatal(fn, "%p is %s memory (shmemx_malloc_kind): reallocate it with shmemx_malloc_kind, a put, and shmem_free",
              user, hgas_kind_name(hgas_ptr_kind(user)));
    header *h = valid_header(fn, user);
    if (size == 0) {
        release(fn, user);
        return nullptr;
    }
    void *fresh = allocate(fn, h->offset, size, false);
    if (!fresh) return nullptr;  // the old block stays valid, as with realloc(3)
    std::memcpy(fresh, user, h->size < size ? h->size : size);
    release(fn, user);  // its barrier also orders the copy before any peer's put into `fresh`
    return fresh;
}

// --- locks ------------------------------------------------------------------------------------
static_assert(sizeof(long) == 8, "OpenSHMEM locks are longs; hgas atomics on them are 64-bit");

// One compare-and-swap of the lock word on PE 0: 0 → this PE's number + 1. True if acquired.
bool try_lock(const char *fn, long *lock) {
    const hgas_gptr_t g = gptr(fn, lock, 0);
    const int64_t zero = 0, mine = hgas_rank_me() + 1;
    int64_t old = -1;
    check(fn, hgas_atomic(g, HGAS_AMO_COMPARE_SWAP, HGAS_INT64, &mine, &zero, &old));
    return old == 0;
}
}  // namespace
}  // namespace hgas::shmem

using namespace hgas::shmem;

extern "C" {

// --- setup and queries ------------------------------------------------------------------------
void shmem_init(void) {
    if (!hgas_initialized()) {
        if (!apply_environment("shmem_init")) std::exit(1);
        hgas_status_t s = hgas_init();
        if (s != HGAS_OK) {
            std::fprintf(stderr, "shmem_init: %s (%s)\n", hgas_last_error(), hgas_error_string(s));
            std::exit(1);  // not part of a job: hgas_abort would have nobody to tell
        }
    }
    if (setup_teams("shmem_init")) report_environment();  // collective, once per PE (also after an hgas_init of the program's)
}
int shmem_init_thread(int requested, int *provided) {
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        std::fprintf(stderr, "shmem_init_thread: %d is not a SHMEM_THREAD_* level\n", requested);
        return 1;
    }
    if (!hgas_initialized()) {
        if (!apply_environment("shmem_init_thread")) return 1;
        // SHMEM_THREAD_* and HGAS_THREAD_* have the same values.
        hgas_status_t s = hgas_init_thread(requested, nullptr);
        if (s != HGAS_OK) {
            std::fprintf(stderr, "shmem_init_thread: %s (%s)\n", hgas_last_error(), hgas_error_string(s));
            return 1;
        }
    }
    if (setup_teams("shmem_init_thread")) report_environment();
    // A program that called hgas_init itself keeps the level it asked for there.
    if (provided) *provided = hgas_query_thread();
    return 0;
}
void shmem_query_thread(int *provided) {
    if (provided) *provided = hgas_initialized() ? hgas_query_thread() : SHMEM_THREAD_SERIALIZED;
}
// OpenSHMEM 1.5: shmem_finalize destroys the shareable contexts (private ones are the program's
// to destroy before; hgas destroys those too): each is completed first, since the rank's quiet
// in hgas_finalize need not complete a context's handle operations.
void shmem_finalize(void) {
    if (hgas_initialized()) destroy_all_contexts("shmem_finalize");
    check("shmem_finalize", hgas_finalize());
}
void shmem_global_exit(int status) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "shmem_global_exit(%d)", status);
    hgas_global_exit(status, msg);
}
int shmem_my_pe(void) { return hgas_rank_me(); }
int shmem_n_pes(void) { return hgas_rank_n(); }
int shmem_pe_accessible(int pe) { return hgas_initialized() && pe >= 0 && pe < hgas_rank_n() ? 1 : 0; }
int shmem_addr_accessible(const void *addr, int pe) {
    hgas_gptr_t g;
    return hgas_ptr(addr, pe, &g) == HGAS_OK ? 1 : 0;
}
void *shmem_ptr(const void *dest, int pe) {
    hgas_gptr_t g;
    if (hgas_ptr(dest, pe, &g) != HGAS_OK) return nullptr;
    return hgas_local_addr(g);
}
void shmem_info_get_version(int *major, int *minor) {
    if (major) *major = SHMEM_MAJOR_VERSION;
    if (minor) *minor = SHMEM_MINOR_VERSION;
}
void shmem_info_get_name(char *name) {
    if (name) std::snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}
// start_pes is OpenSHMEM 1.0's entry, from before shmem_finalize existed: its programs (OSU's
// benchmarks among them) return from main without finalizing, and expect the library to end
// the PE at exit. Without this, a PE that returns first leaves while a peer may still target
// its memory, and the launcher reports it as exiting without finalizing.
static void finalize_at_exit() {
    if (hgas_initialized()) shmem_finalize();
}
void start_pes(int) {
    shmem_init();
    static bool registered = false;
    if (!registered) registered = std::atexit(finalize_at_exit) == 0;
}
int _my_pe(void) { return hgas_rank_me(); }
int _num_pes(void) { return hgas_rank_n(); }
int shmem_num_pes(void) { return hgas_rank_n(); }
void shmem_pcontrol(const int, ...) {}
// Cache management: hgas delivers RMA into coherent memory, so there is nothing to invalidate.
void shmem_set_cache_inv(void) {}
void shmem_set_cache_line_inv(void *) {}
void shmem_clear_cache_inv(void) {}
void shmem_clear_cache_line_inv(void *) {}
void shmem_udcflush(void) {}
void shmem_udcflush_line(void *) {}

// --- memory -----------------------------------------------------------------------------------
void *shmem_malloc(size_t size) { return allocate("shmem_malloc", 64, size, false); }
void *shmem_calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) {
        std::fprintf(stderr, "shmem_calloc: %zu x %zu bytes overflows\n", count, size);
        return nullptr;
    }
    return allocate("shmem_calloc", 64, count * size, true);
}
void *shmem_align(size_t alignment, size_t size) { return allocate("shmem_align", alignment, size, false); }
void *shmem_malloc_with_hints(size_t size, long) { return allocate("shmem_malloc_with_hints", 64, size, false); }
void *shmem_realloc(void *ptr, size_t size) { return reallocate("shmem_realloc", ptr, size); }
void shmem_free(void *ptr) { release("shmem_free", ptr); }
void *shmalloc(size_t size) { return allocate("shmalloc", 64, size, false); }
void shfree(void *ptr) { release("shfree", ptr); }
void *shrealloc(void *ptr, size_t size) { return reallocate("shrealloc", ptr, size); }
void *shmemalign(size_t alignment, size_t size) { return allocate("shmemalign", alignment, size, false); }

// --- locks ------------------------------------------------------------------------------------
void shmem_set_lock(long *lock) {
    const char *fn = "shmem_set_lock";
    const hgas_gptr_t g = gptr(fn, lock, 0);
    spinner s(fn);
    for (;;) {
        // Test before test-and-set: waiting PEs read the word instead of writing it.
        int64_t cur = -1;
        check(fn, hgas_atomic(g, HGAS_AMO_FETCH, HGAS_INT64, nullptr, nullptr, &cur));
        if (cur == 0 && try_lock(fn, lock)) return;
        s.idle();
    }
}
int shmem_test_lock(long *lock) { return try_lock("shmem_test_lock", lock) ? 0 : 1; }
void shmem_clear_lock(long *lock) {
    const char *fn = "shmem_clear_lock";
    const hgas_gptr_t g = gptr(fn, lock, 0);
    // Everything done under the lock must be complete before the next holder can see it.
    check(fn, hgas_quiet());
    const int64_t mine = hgas_rank_me() + 1, zero = 0;
    int64_t old = -1;
    check(fn, hgas_atomic(g, HGAS_AMO_COMPARE_SWAP, HGAS_INT64, &zero, &mine, &old));
    if (old != mine)
        fatal(fn, "PE %d does not hold this lock (its word holds %lld); call shmem_set_lock first", hgas_rank_me(),
              (long long)old);
}

}  // extern "C"

// --- shmemx: memory kinds -----------------------------------------------------------------------
namespace {
hgas_kind_t to_hgas(const char *fn, shmemx_kind_t k) {
    if (k != SHMEMX_KIND_HOST && k != SHMEMX_KIND_CUDA && k != SHMEMX_KIND_SIM)
        fatal(fn, "%d is not a shmemx_kind_t (SHMEMX_KIND_HOST, SHMEMX_KIND_CUDA, SHMEMX_KIND_SIM)", static_cast<int>(k));
    return static_cast<hgas_kind_t>(k);
}
void *allocate_kind(const char *fn, size_t size, shmemx_kind_t kind, bool zero) {
    if (!hgas_initialized()) fatal(fn, "called before shmem_init()");
    const hgas_kind_t k = to_hgas(fn, kind);
    if (k == HGAS_KIND_HOST) return allocate(fn, 64, size, zero);
    void *p = nullptr;
    if (hgas_malloc_kind(size, k, &p) != HGAS_OK) {  // the same outcome on every PE
        std::fprintf(stderr, "%s: %s\n", fn, hgas_last_error());
        return nullptr;
    }
    if (zero && p) {
        static const char zeros[65536] = {};
        hgas_gptr_t g;
        check(fn, hgas_ptr(p, hgas_rank_me(), &g));
        for (size_t pos = 0; pos < size; pos += sizeof zeros)
            check(fn, hgas_put(hgas_gptr_add(g, static_cast<int64_t>(pos)), zeros,
                               size - pos < sizeof zeros ? size - pos : sizeof zeros));
        check(fn, hgas_barrier());  // zeroed everywhere before any PE puts into it
    }
    return p;
}
}  // namespace

extern "C" {
int shmemx_kind_available(shmemx_kind_t kind) {
    return kind >= SHMEMX_KIND_HOST && kind <= SHMEMX_KIND_SIM && hgas_kind_available(static_cast<hgas_kind_t>(kind));
}
void *shmemx_malloc_kind(size_t size, shmemx_kind_t kind) {
    return allocate_kind("shmemx_malloc_kind", size, kind, false);
}
void *shmemx_calloc_kind(size_t count, size_t size, shmemx_kind_t kind) {
    if (size && count > SIZE_MAX / size) {
        std::fprintf(stderr, "shmemx_calloc_kind: %zu x %zu bytes overflows\n", count, size);
        return nullptr;
    }
    return allocate_kind("shmemx_calloc_kind", count * size, kind, true);
}
shmemx_kind_t shmemx_ptr_kind(const void *ptr) { return static_cast<shmemx_kind_t>(hgas_ptr_kind(ptr)); }
}
