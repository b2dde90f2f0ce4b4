// Internal status and result types. Every layer returns these; the C API passes the code out.
#pragma once
#include <hgas/status.h>

#include <cstdarg>
#include <string>
#include <utility>

namespace hgas {

enum class status : int {
    ok = HGAS_OK,
    not_initialized = HGAS_ERR_NOT_INITIALIZED,
    invalid_arg = HGAS_ERR_INVALID_ARG,
    out_of_bounds = HGAS_ERR_OUT_OF_BOUNDS,
    no_memory = HGAS_ERR_NO_MEMORY,
    unsupported = HGAS_ERR_UNSUPPORTED,
    timeout = HGAS_ERR_TIMEOUT,
    peer_failed = HGAS_ERR_PEER_FAILED,
    transport = HGAS_ERR_TRANSPORT,
    bootstrap = HGAS_ERR_BOOTSTRAP,
    misaligned = HGAS_ERR_MISALIGNED,
    already_initialized = HGAS_ERR_ALREADY_INITIALIZED,
    invalid_setting = HGAS_ERR_INVALID_SETTING,
    invalid_pointer = HGAS_ERR_INVALID_POINTER,
    internal = HGAS_ERR_INTERNAL,
    truncated = HGAS_ERR_TRUNCATED,
};

inline hgas_status_t to_c(status s) { return static_cast<hgas_status_t>(s); }
const char *status_name(status s);

// Records the calling thread's last-error message and returns `s`, so a failure is decided,
// described and returned in one statement:  return fail(status::invalid_arg, "rank %d ...", r);
// The message should say what is wrong, where, and what to do.
[[nodiscard]] status fail(status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
[[nodiscard]] status vfail(status s, const char *fmt, va_list ap);
// The message recorded by the last fail() on this thread.
const std::string &last_error();
void clear_last_error();

// A value or a status. Output is only valid when ok().
template <class T>
class [[nodiscard]] result {
public:
    result(T v) : st_(status::ok), val_(std::move(v)) {}  // NOLINT: implicit on purpose
    result(status s) : st_(s), val_() {}                     // NOLINT
    bool ok() const { return st_ == status::ok; }
    status error() const { return st_; }
    T &value() { return val_; }
    const T &value() const { return val_; }
    T &operator*() { return val_; }
    T *operator->() { return &val_; }

private:
    status st_;
    T val_;
};

}  // namespace hgas

// Propagate a failed status (or result) to the caller.
#define HGAS_TRY(expr)                                                        \
    do {                                                                      \
        ::hgas::status hgasi_try_st_ = (expr);                                \
        if (hgasi_try_st_ != ::hgas::status::ok) return hgasi_try_st_;        \
    } while (0)

#define HGASI_CONCAT2(a, b) a##b
#define HGASI_CONCAT(a, b) HGASI_CONCAT2(a, b)
// auto x = ...; from a result<T>, returning its status on failure.
#define HGAS_TRY_ASSIGN(lhs, expr)                                            \
    auto HGASI_CONCAT(hgasi_r_, __LINE__) = (expr);                           \
    if (!HGASI_CONCAT(hgasi_r_, __LINE__).ok())                               \
        return HGASI_CONCAT(hgasi_r_, __LINE__).error();                      \
    lhs = std::move(HGASI_CONCAT(hgasi_r_, __LINE__).value())
