// The C API's entry into a rank, shared by its files (c_api.cpp, c_msg_api.cpp): the calling
// thread's rank, or HGAS_ERR_NOT_INITIALIZED with a message that says what to do.
#pragma once
#include "base/status.hpp"
#include "base/trace.hpp"
#include "core/rank.hpp"

namespace hgas::api {
inline status not_initialized(const char *fn) {
    return fail(status::not_initialized, "%s called before hgas_init() or after hgas_finalize(); call hgas_init() "
                "first", fn);
}
}  // namespace hgas::api

// Looks up the calling thread's rank or returns HGAS_ERR_NOT_INITIALIZED from the function;
// holds the rank's API mutex for the call once a thread of the runtime acts for the rank too
// (the device proxy: src/device); records the call as a span when HGAS_TRACE is on
// (hgasi_span_: calls add their arguments to it).
#define HGASI_RANK(r)                                                  \
    hgas::core::rank *r = hgas::core::current();                       \
    if (!r) return to_c(hgas::api::not_initialized(__func__));         \
    hgas::core::api_guard hgasi_guard_(*r);                            \
    hgas::trace::span hgasi_span_(__func__)
