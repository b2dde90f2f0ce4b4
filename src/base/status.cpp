#include "base/status.hpp"

#include <cstdio>

namespace hgas {
namespace {
thread_local std::string tls_last_error;
}

const char *status_name(status s) {
    switch (s) {
    case status::ok: return "HGAS_OK";
    case status::not_initialized: return "HGAS_ERR_NOT_INITIALIZED";
    case status::invalid_arg: return "HGAS_ERR_INVALID_ARG";
    case status::out_of_bounds: return "HGAS_ERR_OUT_OF_BOUNDS";
    case status::no_memory: return "HGAS_ERR_NO_MEMORY";
    case status::unsupported: return "HGAS_ERR_UNSUPPORTED";
    case status::timeout: return "HGAS_ERR_TIMEOUT";
    case status::peer_failed: return "HGAS_ERR_PEER_FAILED";
    case status::transport: return "HGAS_ERR_TRANSPORT";
    case status::bootstrap: return "HGAS_ERR_BOOTSTRAP";
    case status::misaligned: return "HGAS_ERR_MISALIGNED";
    case status::already_initialized: return "HGAS_ERR_ALREADY_INITIALIZED";
    case status::invalid_setting: return "HGAS_ERR_INVALID_SETTING";
    case status::invalid_pointer: return "HGAS_ERR_INVALID_POINTER";
    case status::internal: return "HGAS_ERR_INTERNAL";
    case status::truncated: return "HGAS_ERR_TRUNCATED";
    }
    return "HGAS_ERR_UNKNOWN";
}

status vfail(status s, const char *fmt, va_list ap) {
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    tls_last_error = buf;
    return s;
}

status fail(status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    (void)vfail(s, fmt, ap);
    va_end(ap);
    return s;
}

const std::string &last_error() { return tls_last_error; }
void clear_last_error() { tls_last_error.clear(); }

}  // namespace hgas
