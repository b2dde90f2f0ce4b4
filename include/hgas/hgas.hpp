// hgas.hpp — the C++ API: RAII, typed global pointers, handles. Header-only over hgas.h.
//
// Errors: setup and resource calls (runtime, symmetric<T>, alloc) throw hgas::error{code,
// message}. Hot-path calls (put, get, atomics, signals, barrier, collectives) never throw:
// they return an hgas::code that must be looked at ([[nodiscard]]); hgas::check(code) turns
// one into an exception where that is what the program wants.
#pragma once
#include <hgas/hgas.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace hgas {

/// The status of a hot-path call. Converts to bool: true on success.
class [[nodiscard]] code {
public:
    constexpr code(hgas_status_t s = HGAS_OK) : s_(s) {}  // NOLINT: implicit from the C status
    explicit operator bool() const { return s_ == HGAS_OK; }
    hgas_status_t value() const { return s_; }
    const char *name() const { return hgas_error_string(s_); }

private:
    hgas_status_t s_;
};

/// Thrown by setup and resource calls; carries the status and hgas_last_error()'s message.
class error : public std::runtime_error {
public:
    error(hgas_status_t c, const std::string &msg)
        : std::runtime_error(std::string(hgas_error_string(c)) + ": " + msg), code_(c) {}
    hgas_status_t status() const { return code_; }

private:
    hgas_status_t code_;
};

/// Throws hgas::error if `c` is a failure.
inline void check(code c) {
    if (!c) throw error(c.value(), hgas_last_error());
}

/// Joins the job on construction (hgas_init, throws on failure) and leaves it on destruction
/// (hgas_finalize; errors there are reported by finalize() if called explicitly).
class runtime {
public:
    runtime() { check(hgas_init()); }
    ~runtime() { (void)hgas_finalize(); }
    runtime(const runtime &) = delete;
    runtime &operator=(const runtime &) = delete;
    code finalize() { return hgas_finalize(); }
};

inline int rank_me() { return hgas_rank_me(); }
inline int rank_n() { return hgas_rank_n(); }
inline int local_rank() { return hgas_local_rank(); }
inline int local_n() { return hgas_local_n(); }
inline int node_me() { return hgas_node_me(); }
inline int node_n() { return hgas_node_n(); }

/// A typed pointer into the global address space: (rank, segment, offset). Trivially
/// copyable, so it can itself be put into remote memory.
template <class T>
class global_ptr {
public:
    global_ptr() : g_(hgas_gptr_null()) {}
    explicit global_ptr(hgas_gptr_t g) : g_(g) {}
    /// Pointer to the symmetric object `sym` as it lives on `rank` (throws if `sym` is not
    /// in hgas memory).
    static global_ptr on(T *sym, int rank) {
        hgas_gptr_t g;
        check(hgas_ptr(sym, rank, &g));
        return global_ptr(g);
    }
    int where() const { return hgas_where(g_); }
    bool is_null() const { return hgas_gptr_is_null(g_); }
    /// True if this process can load/store the target directly (own or same-node memory).
    bool is_local() const { return hgas_local_addr(g_) != nullptr; }
    /// The local address, or nullptr when !is_local().
    T *local() const { return static_cast<T *>(hgas_local_addr(g_)); }
    hgas_gptr_t raw() const { return g_; }
    global_ptr operator+(std::ptrdiff_t n) const {
        return global_ptr(hgas_gptr_add(g_, n * static_cast<std::ptrdiff_t>(sizeof(T))));
    }
    global_ptr &operator+=(std::ptrdiff_t n) { return *this = *this + n; }
    bool operator==(const global_ptr &o) const {
        return g_.rank == o.g_.rank && g_.segment == o.g_.segment && g_.offset == o.g_.offset;
    }

private:
    hgas_gptr_t g_;
};
static_assert(std::is_trivially_copyable_v<global_ptr<int>>);

/// A symmetric array of `count` T on every rank (collective; throws on failure).
template <class T>
class symmetric {
    static_assert(std::is_trivially_copyable_v<T>, "symmetric<T> holds raw bytes moved by RMA");

public:
    explicit symmetric(size_t count, bool zero = true) : n_(count) {
        void *p = nullptr;
        check(zero ? hgas_calloc(count, sizeof(T), &p) : hgas_malloc(count * sizeof(T), &p));
        p_ = static_cast<T *>(p);
    }
    ~symmetric() {
        if (p_) (void)hgas_free(p_);  // collective, like the constructor
    }
    symmetric(const symmetric &) = delete;
    symmetric &operator=(const symmetric &) = delete;
    T *data() { return p_; }
    size_t size() const { return n_; }
    T &operator[](size_t i) { return p_[i]; }
    /// Element i of this array on `rank`.
    global_ptr<T> on(int rank, size_t i = 0) const { return global_ptr<T>::on(p_, rank) + i; }

private:
    T *p_ = nullptr;
    size_t n_;
};

// --- RMA ---------------------------------------------------------------------------------
template <class T>
code put(global_ptr<T> dst, const T *src, size_t count = 1) {
    return hgas_put(dst.raw(), src, count * sizeof(T));
}
template <class T>
code put_value(global_ptr<T> dst, const T &value) {
    return hgas_put(dst.raw(), &value, sizeof(T));
}
template <class T>
code get(T *dst, global_ptr<T> src, size_t count = 1) {
    return hgas_get(dst, src.raw(), count * sizeof(T));
}
template <class T>
code put_nbi(global_ptr<T> dst, const T *src, size_t count = 1) {
    return hgas_put_nbi(dst.raw(), src, count * sizeof(T));
}
template <class T>
code get_nbi(T *dst, global_ptr<T> src, size_t count = 1) {
    return hgas_get_nbi(dst, src.raw(), count * sizeof(T));
}
inline code quiet() { return hgas_quiet(); }
inline code fence() { return hgas_fence(); }
inline code barrier() { return hgas_barrier(); }
inline code progress() { return hgas_progress(); }

/// A non-blocking operation in flight. Move-only; wait() or test() to completion. The
/// destructor waits if the program did not (destructors never throw: an error there is lost,
/// so call wait() to see it).
class handle {
public:
    handle() = default;
    explicit handle(hgas_handle_t h) : h_(h), live_(true) {}
    handle(handle &&o) noexcept : h_(o.h_), live_(o.live_) { o.live_ = false; }
    handle &operator=(handle &&o) noexcept {
        if (this != &o) {
            (void)wait();
            h_ = o.h_;
            live_ = o.live_;
            o.live_ = false;
        }
        return *this;
    }
    ~handle() { (void)wait(); }
    code wait() {
        if (!live_) return HGAS_OK;
        live_ = false;
        return hgas_wait(h_);
    }
    /// True once complete (then the handle is spent).
    bool test(code *c = nullptr) {
        if (!live_) return true;
        int done = 0;
        code r = hgas_test(h_, &done);
        if (c) *c = r;
        if (!r || done) live_ = false;
        return !live_;
    }

private:
    hgas_handle_t h_ = HGAS_HANDLE_DONE;
    bool live_ = false;
};

template <class T>
handle put_nb(global_ptr<T> dst, const T *src, size_t count, code *c = nullptr) {
    hgas_handle_t h = HGAS_HANDLE_DONE;
    code r = hgas_put_nb(dst.raw(), src, count * sizeof(T), &h);
    if (c) *c = r;
    return r ? handle(h) : handle();
}
template <class T>
handle get_nb(T *dst, global_ptr<T> src, size_t count, code *c = nullptr) {
    hgas_handle_t h = HGAS_HANDLE_DONE;
    code r = hgas_get_nb(dst, src.raw(), count * sizeof(T), &h);
    if (c) *c = r;
    return r ? handle(h) : handle();
}

// --- signals -----------------------------------------------------------------------------
template <class T>
code put_signal(global_ptr<T> dst, const T *src, size_t count, global_ptr<uint64_t> sig, uint64_t value,
                hgas_signal_op_t op = HGAS_SIGNAL_SET) {
    return hgas_put_signal(dst.raw(), src, count * sizeof(T), sig.raw(), value, op);
}
inline code signal_wait_until(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, uint64_t *observed = nullptr) {
    return hgas_signal_wait_until(sig, cmp, value, observed);
}

// --- atomics -----------------------------------------------------------------------------
namespace detail {
template <class T> struct dtype_of;
template <> struct dtype_of<int32_t> { static constexpr hgas_dtype_t value = HGAS_INT32; };
template <> struct dtype_of<int64_t> { static constexpr hgas_dtype_t value = HGAS_INT64; };
template <> struct dtype_of<uint32_t> { static constexpr hgas_dtype_t value = HGAS_UINT32; };
template <> struct dtype_of<uint64_t> { static constexpr hgas_dtype_t value = HGAS_UINT64; };
template <> struct dtype_of<float> { static constexpr hgas_dtype_t value = HGAS_FLOAT; };
template <> struct dtype_of<double> { static constexpr hgas_dtype_t value = HGAS_DOUBLE; };
}  // namespace detail

/// One atomic on an integer in hgas memory; fetching ops write the old value to *old.
template <class T>
code atomic(global_ptr<T> t, hgas_amo_t op, T operand = T{}, T *old = nullptr, T compare = T{}) {
    static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8), "atomics on 32/64-bit integers");
    return hgas_atomic(t.raw(), op, detail::dtype_of<T>::value, &operand, &compare, old);
}
template <class T>
code fetch_add(global_ptr<T> t, T v, T *old) { return atomic(t, HGAS_AMO_FETCH_ADD, v, old); }
template <class T>
code compare_swap(global_ptr<T> t, T expected, T desired, T *old) {
    return atomic(t, HGAS_AMO_COMPARE_SWAP, desired, old, expected);
}

// --- collectives -------------------------------------------------------------------------
template <class T>
code allreduce(T *dst, const T *src, size_t count, hgas_op_t op) {
    return hgas_allreduce(dst, src, count, detail::dtype_of<T>::value, op);
}
template <class T>
code reduce(T *dst, const T *src, size_t count, hgas_op_t op, int root) {
    return hgas_reduce(dst, src, count, detail::dtype_of<T>::value, op, root);
}
template <class T>
code broadcast(T *dst, const T *src, size_t count, int root) {
    return hgas_broadcast(dst, src, count * sizeof(T), root);
}
template <class T>
code fcollect(T *dst, const T *src, size_t count) {
    return hgas_fcollect(dst, src, count * sizeof(T));
}
template <class T>
code alltoall(T *dst, const T *src, size_t count) {
    return hgas_alltoall(dst, src, count * sizeof(T));
}

// --- tagged messages (docs/messaging.md) ------------------------------------------------
// Buffers of any memory kind; counts are in elements of T.
using msg_info = hgas_msg_info_t;
inline constexpr int any_rank = HGAS_ANY_RANK;
inline constexpr int any_tag = HGAS_ANY_TAG;

template <class T>
code send(const T *buf, size_t count, int dest, int tag) {
    return hgas_send(buf, count * sizeof(T), dest, tag);
}
template <class T>
code recv(T *buf, size_t count, int src, int tag, msg_info *info = nullptr) {
    return hgas_recv(buf, count * sizeof(T), src, tag, info);
}
template <class T>
handle isend(const T *buf, size_t count, int dest, int tag, code *c = nullptr) {
    hgas_handle_t h = HGAS_HANDLE_DONE;
    code r = hgas_isend(buf, count * sizeof(T), dest, tag, &h);
    if (c) *c = r;
    return r ? handle(h) : handle();
}
template <class T>
handle irecv(T *buf, size_t count, int src, int tag, msg_info *info = nullptr, code *c = nullptr) {
    hgas_handle_t h = HGAS_HANDLE_DONE;
    code r = hgas_irecv(buf, count * sizeof(T), src, tag, info, &h);
    if (c) *c = r;
    return r ? handle(h) : handle();
}

/// A communication scope of its own (a library's): created collectively (throws on failure),
/// destroyed with the object. Its messages never match the world's or another scope's.
class msg_scope {
public:
    msg_scope() { check(hgas_msg_ctx_create(&ctx_)); }
    ~msg_scope() { (void)hgas_msg_ctx_destroy(ctx_); }
    msg_scope(const msg_scope &) = delete;
    msg_scope &operator=(const msg_scope &) = delete;
    hgas_msg_ctx_t raw() const { return ctx_; }
    template <class T>
    handle isend(const T *buf, size_t count, int dest, int tag, code *c = nullptr) const {
        hgas_handle_t h = HGAS_HANDLE_DONE;
        code r = hgas_isend_ctx(ctx_, buf, count * sizeof(T), dest, tag, &h);
        if (c) *c = r;
        return r ? handle(h) : handle();
    }
    template <class T>
    handle irecv(T *buf, size_t count, int src, int tag, msg_info *info = nullptr, code *c = nullptr) const {
        hgas_handle_t h = HGAS_HANDLE_DONE;
        code r = hgas_irecv_ctx(ctx_, buf, count * sizeof(T), src, tag, info, &h);
        if (c) *c = r;
        return r ? handle(h) : handle();
    }

private:
    hgas_msg_ctx_t ctx_ = HGAS_MSG_CTX_WORLD;
};

/// A persistent send or receive (throws on bad arguments), freed with the object. start()
/// begins one round; its handle must complete before the next start().
class persistent {
public:
    template <class T>
    static persistent send(const T *buf, size_t count, int dest, int tag, hgas_msg_ctx_t ctx = HGAS_MSG_CTX_WORLD) {
        hgas_msg_req_t q;
        check(hgas_send_init(ctx, buf, count * sizeof(T), dest, tag, &q));
        return persistent(q);
    }
    template <class T>
    static persistent recv(T *buf, size_t count, int src, int tag, msg_info *info = nullptr,
                           hgas_msg_ctx_t ctx = HGAS_MSG_CTX_WORLD) {
        hgas_msg_req_t q;
        check(hgas_recv_init(ctx, buf, count * sizeof(T), src, tag, info, &q));
        return persistent(q);
    }
    persistent(persistent &&o) noexcept : q_(o.q_) { o.q_ = nullptr; }
    persistent &operator=(persistent &&o) noexcept {
        std::swap(q_, o.q_);
        return *this;
    }
    ~persistent() {
        if (q_) (void)hgas_msg_req_free(q_);
    }
    handle start(code *c = nullptr) {
        hgas_handle_t h = HGAS_HANDLE_DONE;
        code r = hgas_start(q_, &h);
        if (c) *c = r;
        return r ? handle(h) : handle();
    }

private:
    explicit persistent(hgas_msg_req_t q) : q_(q) {}
    hgas_msg_req_t q_ = nullptr;
};

}  // namespace hgas
