#include "mem/shm_guard.hpp"

#include <signal.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace hgas::mem {
namespace {

// Process-wide: a signal handler has no rank to ask, and mappings are the process's.
// Written under g_mu, read by the handler without locks: an entry's name is written before
// its `hi` is published, and `hi` is cleared before the slot is reused.
struct range {
    std::atomic<uintptr_t> lo{0}, hi{0};
    char name[96];
};
range g_ranges[shm_guard_capacity];
std::atomic<int> g_top{0};  // slots [0, g_top) have been used: scans stop there (a job maps 3N ranges)
std::mutex g_mu;
std::once_flag g_installed;
struct sigaction g_previous;

// Async-signal-safe pieces: no stdio, no malloc.
void put(char *buf, size_t cap, size_t &at, const char *s) {
    while (*s && at + 1 < cap) buf[at++] = *s++;
    buf[at] = 0;
}
void put_u64(char *buf, size_t cap, size_t &at, uint64_t v, int base = 10) {
    char d[24];
    int n = 0;
    do {
        d[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (base == 16) put(buf, cap, at, "0x");
    while (n && at + 1 < cap) buf[at++] = d[--n];
    buf[at] = 0;
}

// Fills buf with the message for `addr`; false if it is in no guarded range.
bool format(const void *addr, char *buf, size_t cap) {
    const auto a = reinterpret_cast<uintptr_t>(addr);
    const int top = g_top.load(std::memory_order_acquire);
    for (int i = 0; i < top; ++i) {
        range &r = g_ranges[i];
        const uintptr_t hi = r.hi.load(std::memory_order_acquire);
        if (!hi || a < r.lo.load(std::memory_order_relaxed) || a >= hi) continue;
        size_t at = 0;
        buf[0] = 0;
        put(buf, cap, at, "hgas: SIGBUS at ");
        put_u64(buf, cap, at, a, 16);
        put(buf, cap, at, " in shared memory ");
        put(buf, cap, at, r.name);
        put(buf, cap, at, " (offset ");
        put_u64(buf, cap, at, a - r.lo.load(std::memory_order_relaxed));
        put(buf, cap, at, "): its page could not be backed because /dev/shm is full");
        struct statfs fs;
        if (statfs("/dev/shm", &fs) == 0) {
            put(buf, cap, at, " (");
            put_u64(buf, cap, at, static_cast<uint64_t>(fs.f_bavail) * fs.f_bsize >> 20);
            put(buf, cap, at, " MiB free of ");
            put_u64(buf, cap, at, static_cast<uint64_t>(fs.f_blocks) * fs.f_bsize >> 20);
            put(buf, cap, at, " MiB)");
        }
        put(buf, cap, at, ". Enlarge /dev/shm (mount -o remount,size=...; containers: --shm-size), run fewer "
                          "ranks per node, or lower HGAS_MSG_SLOTS / HGAS_MSG_SLOT and the program's allocations.\n");
        return true;
    }
    return false;
}

void on_sigbus(int sig, siginfo_t *info, void *ctx) {
    static char buf[512];  // one fault at a time is reported; a second one while formatting waits for the default
    if (info && format(info->si_addr, buf, sizeof buf)) {
        ssize_t ignored = write(STDERR_FILENO, buf, strlen(buf));
        (void)ignored;
        // Returning re-executes the access: with the default action it then ends the process
        // (and dumps core) as a SIGBUS would have without us.
        signal(SIGBUS, SIG_DFL);
        return;
    }
    // Not ours: whatever was there before (a sanitizer, the program) decides.
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, ctx);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        return g_previous.sa_handler(sig);
    }
    signal(SIGBUS, SIG_DFL);
}

void install() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

void shm_guard(void *base, size_t size, const std::string &name) {
    if (!base || !size) return;
    std::call_once(g_installed, install);
    std::lock_guard<std::mutex> lk(g_mu);
    const int top = g_top.load(std::memory_order_relaxed);
    for (int i = 0; i <= top && i < shm_guard_capacity; ++i) {
        range &r = g_ranges[i];
        if (r.hi.load(std::memory_order_relaxed)) continue;
        std::snprintf(r.name, sizeof r.name, "%s", name.c_str());
        r.lo.store(reinterpret_cast<uintptr_t>(base), std::memory_order_relaxed);
        r.hi.store(reinterpret_cast<uintptr_t>(base) + size, std::memory_order_release);
        if (i == top) g_top.store(top + 1, std::memory_order_release);
        return;
    }
}

void shm_unguard(void *base) {
    std::lock_guard<std::mutex> lk(g_mu);
    int top = g_top.load(std::memory_order_relaxed);
    for (int i = 0; i < top; ++i) {
        range &r = g_ranges[i];
        if (r.hi.load(std::memory_order_relaxed) && r.lo.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(base))
            r.hi.store(0, std::memory_order_release);
    }
    while (top > 0 && !g_ranges[top - 1].hi.load(std::memory_order_relaxed)) --top;  // unmapped in reverse: shrink
    g_top.store(top, std::memory_order_release);
}

std::string shm_free_text() {
    struct statfs fs;
    if (statfs("/dev/shm", &fs) != 0) return "/dev/shm cannot be examined: " + std::string(std::strerror(errno));
    char b[128];
    std::snprintf(b, sizeof b, "/dev/shm has %llu MiB free of %llu MiB",
                  (unsigned long long)(static_cast<uint64_t>(fs.f_bavail) * fs.f_bsize >> 20),
                  (unsigned long long)(static_cast<uint64_t>(fs.f_blocks) * fs.f_bsize >> 20));
    return b;
}

std::string shm_guard_message(const void *addr) {
    char buf[512];
    return format(addr, buf, sizeof buf) ? std::string(buf) : std::string();
}

}  // namespace hgas::mem
