#include "util.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>

namespace nas {
namespace {
const char *g_program = "nas";
}

void set_program(const char *name) { g_program = name; }
const char *program() { return g_program; }

void check(hgas_status_t s, const char *what) {
    if (s == HGAS_OK) return;
    die(std::string(g_program) + ": " + what + ": " + hgas_last_error());
}

void die(const std::string &msg) {
    hgas_abort(1, msg.c_str());
    std::abort();  // not reached: hgas_abort does not return
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

double wait_timeout_s() {
    const char *v = std::getenv("HGAS_TIMEOUT");  // hgas validated it at init
    const double t = v ? std::strtod(v, nullptr) : 0.0;
    return t > 0 ? t : 300.0;
}

}  // namespace nas
