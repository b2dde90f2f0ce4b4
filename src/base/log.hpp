// Logging, masked by subsystem. Messages go to stderr as "hgas[rank 3] boot warning: text"
// ("hgas[host pid 1234] ..." before the rank is known). Errors are logged once, where they are
// decided (docs/style.md); most failures are not logged at all but returned with a message
// (fail()).
#pragma once
#include <cstdarg>

namespace hgas {

enum class log_level { error = 0, warn = 1, info = 2, debug = 3 };

// Configure from the HGAS_LOG_LEVEL/HGAS_DEBUG values ("all": every subsystem). Thread safe.
void log_configure(log_level level, const char *debug_subsystems);
// The rank printed in the prefix of messages from this thread (-1: none yet).
void log_set_rank(int rank);
bool log_enabled(log_level level, const char *subsystem);
void log_write(log_level level, const char *subsystem, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace hgas

#define HGASI_LOG(level, subsys, ...)                                               \
    do {                                                                            \
        if (::hgas::log_enabled(::hgas::log_level::level, subsys))                  \
            ::hgas::log_write(::hgas::log_level::level, subsys, __VA_ARGS__);       \
    } while (0)
#define HGASI_DEBUG(subsys, ...) HGASI_LOG(debug, subsys, __VA_ARGS__)
#define HGASI_INFO(subsys, ...) HGASI_LOG(info, subsys, __VA_ARGS__)
#define HGASI_WARN(subsys, ...) HGASI_LOG(warn, subsys, __VA_ARGS__)
#define HGASI_ERROR(subsys, ...) HGASI_LOG(error, subsys, __VA_ARGS__)
