// The OpenSHMEM environment variables (OpenSHMEM 1.5, section "Environment Variables"), mapped
// onto hgas's own settings before hgas_init reads them, and the reports they ask for after it:
//  SHMEM_SYMMETRIC_SIZE  bytes of symmetric heap per PE (512M, 2G, 1.5G, plain bytes) → HGAS_HEAP_SIZE
//  SHMEM_DEBUG           debug output → HGAS_LOG_LEVEL=debug
//  SHMEM_INFO            PE 0 prints the library, its version and these settings at start
//  SHMEM_VERSION         PE 0 prints the library and its version at start
// An HGAS_* variable the user set wins over the SHMEM_* one (with a warning where they
// differ). Without either, OpenSHMEM programs get a larger heap than hgas programs
// (k_default_heap; docs/shmem.md says why this size).
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "internal.hpp"

#ifndef HGAS_SHMEM_LIB_VERSION
#define HGAS_SHMEM_LIB_VERSION "unknown"
#endif

namespace hgas::shmem {
namespace {

constexpr const char *k_default_heap = "256M";

// A size as OpenSHMEM implementations take it: a number (decimals allowed) with an optional
// K, M, G or T suffix (either case, optionally followed by B or iB), powers of 1024. False if
// malformed, zero, or beyond 2^63.
bool parse_size(const char *text, unsigned long long &out) {
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (end == text || errno || !(v > 0) || !std::isfinite(v)) return false;
    std::string suffix(end);
    while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.back()))) suffix.pop_back();
    double mul = 1;
    if (!suffix.empty()) {
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
        const std::string rest = suffix.substr(1);
        if (c == 'K') mul = 1024.0;
        else if (c == 'M') mul = 1024.0 * 1024;
        else if (c == 'G') mul = 1024.0 * 1024 * 1024;
        else if (c == 'T') mul = 1024.0 * 1024 * 1024 * 1024;
        else if (c != 'B' || !rest.empty()) return false;
        if (c != 'B' && !rest.empty() && rest != "B" && rest != "b" && rest != "iB" && rest != "ib") return false;
    }
    const double bytes = std::ceil(v * mul);
    if (bytes < 1 || bytes > 9.2e18) return false;
    out = static_cast<unsigned long long>(bytes);
    return true;
}

bool truthy(const char *v) { return v && *v && std::strcmp(v, "0") != 0 && strcasecmp(v, "no") != 0 && strcasecmp(v, "false") != 0; }

// Sets HGAS variable `hgas` to `value` unless the user set it; says so where they differ.
void map_to(const char *shmem_name, const char *shmem_value, const char *hgas, const char *value) {
    const char *mine = std::getenv(hgas);
    if (!mine) {
        setenv(hgas, value, 1);
    } else if (std::strcmp(mine, value) != 0 && shmem_value) {
        std::fprintf(stderr, "shmem_init: %s=%s and %s=%s are both set; using %s\n", shmem_name, shmem_value, hgas,
                     mine, hgas);
    }
}

}  // namespace

bool apply_environment(const char *fn) {
    if (const char *s = std::getenv("SHMEM_SYMMETRIC_SIZE")) {
        unsigned long long bytes = 0;
        if (!parse_size(s, bytes)) {
            std::fprintf(stderr, "%s: SHMEM_SYMMETRIC_SIZE=%s is not a size: give bytes, or a number with K, M, G or T "
                         "(e.g. 512M, 2G)\n", fn, s);
            return false;
        }
        map_to("SHMEM_SYMMETRIC_SIZE", s, "HGAS_HEAP_SIZE", std::to_string(bytes).c_str());
    } else {
        map_to("", nullptr, "HGAS_HEAP_SIZE", k_default_heap);
    }
    if (const char *d = std::getenv("SHMEM_DEBUG"); truthy(d)) map_to("SHMEM_DEBUG", d, "HGAS_LOG_LEVEL", "debug");
    return true;
}

void report_environment() {
    if (hgas_rank_me() != 0) return;
    const bool info = truthy(std::getenv("SHMEM_INFO")), version = truthy(std::getenv("SHMEM_VERSION"));
    if (!info && !version) return;
    std::printf("%s %s (OpenSHMEM %d.%d)\n", SHMEM_VENDOR_STRING, HGAS_SHMEM_LIB_VERSION, SHMEM_MAJOR_VERSION,
                SHMEM_MINOR_VERSION);
    if (info) {
        auto show = [](const char *name, const char *what) {
            const char *v = std::getenv(name);
            std::printf("  %-22s %-12s %s\n", name, v ? v : "(not set)", what);
        };
        std::printf("OpenSHMEM environment (hgas settings they map to: hgas-info lists every HGAS_* setting):\n");
        show("SHMEM_SYMMETRIC_SIZE", "symmetric heap bytes per PE (HGAS_HEAP_SIZE)");
        show("SHMEM_DEBUG", "debug output (HGAS_LOG_LEVEL=debug)");
        show("SHMEM_INFO", "print this at start");
        show("SHMEM_VERSION", "print the library version at start");
        show("HGAS_HEAP_SIZE", "symmetric heap in effect (OpenSHMEM default 256M)");
        static const char *const levels[] = {"SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE"};
        const int level = hgas_query_thread();
        std::printf("  PEs %d, thread level SHMEM_THREAD_%s, each context a completion domain\n", hgas_rank_n(),
                    level >= 0 && level <= 3 ? levels[level] : "SERIALIZED");
    }
    std::fflush(stdout);
}

}  // namespace hgas::shmem
