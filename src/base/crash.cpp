#include "base/crash.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace hgas {
namespace {

std::atomic<int> g_rank{-1};
std::atomic<bool> g_reporting{false};

// Async-signal-safe output: no stdio, no malloc.
void say(const char *s) {
    ssize_t ignored = write(STDERR_FILENO, s, std::strlen(s));
    (void)ignored;
}
void say_num(uint64_t v, int base) {
    char d[24], out[26];
    int n = 0, at = 0;
    do {
        d[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (base == 16) out[at++] = '0', out[at++] = 'x';
    while (n) out[at++] = d[--n];
    out[at] = 0;
    say(out);
}

const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGFPE: return "SIGFPE (arithmetic fault)";
    case SIGABRT: return "SIGABRT (abort)";
    default: return "a fatal signal";
    }
}

void on_fatal(int sig, siginfo_t *info, void *) {
    // One report per process: a second fault (in another thread, or while reporting) goes
    // straight to the default action.
    if (!g_reporting.exchange(true)) {
        say("hgas: rank ");
        const int r = g_rank.load(std::memory_order_relaxed);
        if (r >= 0) say_num(static_cast<uint64_t>(r), 10);
        else say("?");
        say(" (pid ");
        say_num(static_cast<uint64_t>(getpid()), 10);
        say(") received ");
        say(signal_name(sig));
        if (info && sig != SIGABRT) {
            say(" at address ");
            say_num(reinterpret_cast<uintptr_t>(info->si_addr), 16);
        }
        say("; backtrace (addr2line -e <program> or HGAS built with debug info names the frames):\n");
        void *frames[48];
        const int n = backtrace(frames, 48);
        backtrace_symbols_fd(frames, n, STDERR_FILENO);
    }
    signal(sig, SIG_DFL);
    raise(sig);  // SIGSEGV and friends re-fault on return anyway; raise covers SIGABRT and kill
}

}  // namespace

void crash_report_install(int rank) {
    g_rank.store(rank, std::memory_order_relaxed);
    static std::atomic<bool> installed{false};
    if (installed.exchange(true)) return;
    // backtrace() loads libgcc's unwinder at its first call, which allocates: do that now,
    // not inside the handler.
    void *warm[2];
    (void)backtrace(warm, 2);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (int sig : sigs) {
        struct sigaction old;
        if (sigaction(sig, nullptr, &old) != 0) continue;
        // Keep what the program (or a sanitizer, or mem/shm_guard for SIGBUS) put there.
        if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr : old.sa_handler != SIG_DFL) continue;
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, nullptr);
    }
}

}  // namespace hgas
