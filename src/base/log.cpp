#include "base/log.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>

namespace hgas {
namespace {
// Process-wide on purpose: the log configuration is the same for every rank of a process
// (it comes from the process environment) and is not rank state.
std::atomic<int> g_level{static_cast<int>(log_level::warn)};
std::mutex g_mask_mutex;
std::string g_mask;
thread_local int tls_rank = -1;
const char *level_name(log_level l) {
    switch (l) {
    case log_level::error: return "error";
    case log_level::warn: return "warning";
    case log_level::info: return "info";
    case log_level::debug: return "debug";
    }
    return "";
}
const char *host() {
    static const std::string h = [] {
        char b[256] = {};
        gethostname(b, sizeof b - 1);
        return std::string(b);
    }();
    return h.c_str();
}
}  // namespace

void log_configure(log_level level, const char *debug_subsystems) {
    g_level.store(static_cast<int>(level), std::memory_order_relaxed);
    std::lock_guard<std::mutex> lk(g_mask_mutex);
    g_mask = std::string(",") + (debug_subsystems ? debug_subsystems : "") + ",";
    // Without spaces, so that "boot, mem" matches like "boot,mem".
    g_mask.erase(std::remove(g_mask.begin(), g_mask.end(), ' '), g_mask.end());
}

void log_set_rank(int rank) { tls_rank = rank; }

bool log_enabled(log_level level, const char *subsystem) {
    if (static_cast<int>(level) <= g_level.load(std::memory_order_relaxed)) return true;
    if (level != log_level::debug) return false;
    std::lock_guard<std::mutex> lk(g_mask_mutex);
    return g_mask.find(",all,") != std::string::npos ||
           g_mask.find(std::string(",") + subsystem + ",") != std::string::npos;
}

void log_write(log_level level, const char *subsystem, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[2200];
    if (tls_rank >= 0)
        std::snprintf(line, sizeof line, "hgas[rank %d] %s %s: %s\n", tls_rank, subsystem, level_name(level), msg);
    else  // before the rank is known (early in hgas_init, or a thread of no rank): host and pid
        std::snprintf(line, sizeof line, "hgas[%s pid %ld] %s %s: %s\n", host(), static_cast<long>(getpid()),
                      subsystem, level_name(level), msg);
    std::fputs(line, stderr);  // one call per line so ranks' lines do not interleave mid-line
}

}  // namespace hgas
