// hgas.hpp — the C++ API: RAII, typed global pointers, handles. Header-only over hgas.h.
//
// Errors, in two styles:
//  - setup and resource calls (runtime, symmetric<T>, global_ptr<T>::on) always throw
//    hgas::error{code, message};
//  - communication calls come twice. In namespace hgas (put, get, atomics, signals, barrier,
//    collectives) they never throw: they return an hgas::code that must be looked at
//    ([[nodiscard]]; hgas::check(code) throws it). In namespace hgas::checked the same calls
//    throw hgas::error on failure and return what they fetched, the style of UPC++:
//        namespace hx = hgas::checked;
//        hx::put(a.on(right), src, n);  long old = hx::fetch_add(counter.on(0), 1);
//        hx::barrier();                 double sum = hx::allreduce(x, HGAS_OP_SUM);
//    (Call them qualified or through an alias: `using namespace hgas::checked` makes calls
//    with hgas::global_ptr arguments ambiguous, as argument-dependent lookup finds hgas::put.)
// Atomics take every integer type of 32 or 64 bits (int, long, long long, unsigned, int64_t,
// ...); the operand of an atomic is converted to the pointer's type (fetch_add on a
// global_ptr<long> with 1 compiles). Reductions take every integer type of 8 to 64 bits
// (int8_t ... uint64_t), float, double and the 16-bit floats hgas::half (IEEE binary16) and
// hgas::bfloat16 -- and CUDA's __half / __nv_bfloat16 where cuda_fp16.h / cuda_bf16.h are
// included before this header. 16-bit floats are combined in float and rounded to nearest
// even after every step, so a sum of many may differ from the exact sum rounded once.
#pragma once
#include <hgas/hgas.h>
#include <hgas/impl/float16.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace hgas {

/// IEEE 754 binary16 (HGAS_FLOAT16): 16 bits of storage, as CUDA's __half and NCCL's
/// ncclFloat16. Converts from and to float explicitly; from float it rounds to nearest even.
/// Arithmetic is the user's: convert to float, compute, convert back.
struct half {
    uint16_t bits;  // the binary16 encoding
    half() = default;  // trivial, as float: value-initialize (half{}) for +0
    explicit half(float f) : bits(detail::float_to_half(f)) {}
    explicit operator float() const { return detail::half_to_float(bits); }
    static constexpr half from_bits(uint16_t b) {
        half h{};
        h.bits = b;
        return h;
    }
};
/// bfloat16 (HGAS_BFLOAT16): the upper 16 bits of a float, as CUDA's __nv_bfloat16 and NCCL's
/// ncclBfloat16; the same conversions as hgas::half.
struct bfloat16 {
    uint16_t bits;  // the upper half of the float encoding
    bfloat16() = default;
    explicit bfloat16(float f) : bits(detail::float_to_bf16(f)) {}
    explicit operator float() const { return detail::bf16_to_float(bits); }
    static constexpr bfloat16 from_bits(uint16_t b) {
        bfloat16 h{};
        h.bits = b;
        return h;
    }
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2 && std::is_trivially_copyable_v<half> &&
                  std::is_trivially_copyable_v<bfloat16>,
              "hgas::half and hgas::bfloat16 are 16-bit values, copied as bytes");

namespace detail {
// The 16-bit float types: hgas's own, and CUDA's where its headers came first.
template <class U>
constexpr bool is_float16_v = std::is_same_v<U, half>
#ifdef __CUDA_FP16_H__
                              || std::is_same_v<U, __half>
#endif
    ;
template <class U>
constexpr bool is_bfloat16_v = std::is_same_v<U, bfloat16>
#ifdef __CUDA_BF16_H__
                               || std::is_same_v<U, __nv_bfloat16>
#endif
    ;
template <class U>
constexpr bool is_atomic_int_v =
    std::is_integral_v<U> && !std::is_same_v<U, bool> && (sizeof(U) == 4 || sizeof(U) == 8);
// The element type of reductions (and atomics: atomic() admits only is_atomic_int_v), from
// size and signedness, so that every integer type maps (long and long long are distinct
// types of one size, char is int8 or uint8 as the platform's char is signed or not).
template <class T>
constexpr hgas_dtype_t dtype_of() {
    using U = std::remove_cv_t<T>;
    static_assert((std::is_integral_v<U> && !std::is_same_v<U, bool> && sizeof(U) <= 8) ||
                      std::is_same_v<U, float> || std::is_same_v<U, double> || is_float16_v<U> ||
                      is_bfloat16_v<U>,
                  "hgas reductions take integers of 8 to 64 bits, float, double, hgas::half and "
                  "hgas::bfloat16 (or CUDA's __half and __nv_bfloat16)");
    if constexpr (std::is_same_v<U, float>) return HGAS_FLOAT;
    else if constexpr (std::is_same_v<U, double>) return HGAS_DOUBLE;
    else if constexpr (is_float16_v<U>) return HGAS_FLOAT16;
    else if constexpr (is_bfloat16_v<U>) return HGAS_BFLOAT16;
    else if constexpr (sizeof(U) == 1) return std::is_signed_v<U> ? HGAS_INT8 : HGAS_UINT8;
    else if constexpr (sizeof(U) == 2) return std::is_signed_v<U> ? HGAS_INT16 : HGAS_UINT16;
    else if constexpr (sizeof(U) == 4) return std::is_signed_v<U> ? HGAS_INT32 : HGAS_UINT32;
    else return std::is_signed_v<U> ? HGAS_INT64 : HGAS_UINT64;
}
// Keeps T out of deduction: T comes from the global_ptr<T>, operands convert to it.
template <class T>
struct identity {
    using type = T;
};
template <class T>
using same_t = typename identity<T>::type;
}  // namespace detail

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
code put_value(global_ptr<T> dst, const detail::same_t<T> &value) {
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

/// One atomic on an integer in hgas memory; fetching ops write the old value to *old.
template <class T>
code atomic(global_ptr<T> t, hgas_amo_t op, detail::same_t<T> operand = T{}, T *old = nullptr,
            detail::same_t<T> compare = T{}) {
    static_assert(detail::is_atomic_int_v<std::remove_cv_t<T>>, "hgas atomics take 32- and 64-bit integers");
    return hgas_atomic(t.raw(), op, detail::dtype_of<T>(), &operand, &compare, old);
}
template <class T>
code fetch_add(global_ptr<T> t, detail::same_t<T> v, T *old) { return atomic(t, HGAS_AMO_FETCH_ADD, v, old); }
template <class T>
code compare_swap(global_ptr<T> t, detail::same_t<T> expected, detail::same_t<T> desired, T *old) {
    return atomic(t, HGAS_AMO_COMPARE_SWAP, desired, old, expected);
}

// --- collectives -------------------------------------------------------------------------
template <class T>
code allreduce(T *dst, const T *src, size_t count, hgas_op_t op) {
    return hgas_allreduce(dst, src, count, detail::dtype_of<T>(), op);
}
template <class T>
code reduce(T *dst, const T *src, size_t count, hgas_op_t op, int root) {
    return hgas_reduce(dst, src, count, detail::dtype_of<T>(), op, root);
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

/// A team (hgas_team_t) as a type of its own, for the team overloads below; hgas.h "Teams".
struct team {
    hgas_team_t id = HGAS_TEAM_WORLD;
    constexpr team() = default;
    constexpr explicit team(hgas_team_t t) : id(t) {}
    int my_rank() const { return hgas_team_my_rank(id); }
    int n() const { return hgas_team_n(id); }
};
inline code barrier(team t) { return hgas_team_barrier(t.id); }
template <class T>
code allreduce(team t, T *dst, const T *src, size_t count, hgas_op_t op) {
    return hgas_team_allreduce(t.id, dst, src, count, detail::dtype_of<T>(), op);
}
template <class T>
code reduce(team t, T *dst, const T *src, size_t count, hgas_op_t op, int root) {
    return hgas_team_reduce(t.id, dst, src, count, detail::dtype_of<T>(), op, root);
}
template <class T>
code reduce_scatter(team t, T *dst, const T *src, size_t count, hgas_op_t op) {
    return hgas_team_reduce_scatter(t.id, dst, src, count, detail::dtype_of<T>(), op);
}
template <class T>
code broadcast(team t, T *dst, const T *src, size_t count, int root) {
    return hgas_team_broadcast(t.id, dst, src, count * sizeof(T), root);
}
template <class T>
code fcollect(team t, T *dst, const T *src, size_t count) {
    return hgas_team_fcollect(t.id, dst, src, count * sizeof(T));
}
template <class T>
code alltoall(team t, T *dst, const T *src, size_t count) {
    return hgas_team_alltoall(t.id, dst, src, count * sizeof(T));
}

/// The communication calls in the throwing style: each throws hgas::error{code, message} on
/// failure and returns what it fetched. See the top of this file.
namespace checked {
template <class T>
void put(global_ptr<T> dst, const T *src, size_t count = 1) { check(hgas::put(dst, src, count)); }
template <class T>
void put_value(global_ptr<T> dst, const detail::same_t<T> &value) { check(hgas::put_value(dst, value)); }
template <class T>
void get(T *dst, global_ptr<T> src, size_t count = 1) { check(hgas::get(dst, src, count)); }
template <class T>
T get(global_ptr<T> src) {
    T v;
    check(hgas::get(&v, src, 1));
    return v;
}
template <class T>
void put_nbi(global_ptr<T> dst, const T *src, size_t count = 1) { check(hgas::put_nbi(dst, src, count)); }
template <class T>
void get_nbi(T *dst, global_ptr<T> src, size_t count = 1) { check(hgas::get_nbi(dst, src, count)); }
inline void quiet() { check(hgas::quiet()); }
inline void fence() { check(hgas::fence()); }
inline void barrier() { check(hgas::barrier()); }
inline void progress() { check(hgas::progress()); }
template <class T>
handle put_nb(global_ptr<T> dst, const T *src, size_t count) {
    code c;
    handle h = hgas::put_nb(dst, src, count, &c);
    check(c);
    return h;
}
template <class T>
handle get_nb(T *dst, global_ptr<T> src, size_t count) {
    code c;
    handle h = hgas::get_nb(dst, src, count, &c);
    check(c);
    return h;
}
inline void wait(handle &h) { check(h.wait()); }
template <class T>
void put_signal(global_ptr<T> dst, const T *src, size_t count, global_ptr<uint64_t> sig, uint64_t value,
                hgas_signal_op_t op = HGAS_SIGNAL_SET) {
    check(hgas::put_signal(dst, src, count, sig, value, op));
}
/// Waits until *sig compares true with value; returns the value seen.
inline uint64_t signal_wait_until(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value) {
    uint64_t seen = 0;
    check(hgas::signal_wait_until(sig, cmp, value, &seen));
    return seen;
}
template <class T>
T atomic(global_ptr<T> t, hgas_amo_t op, detail::same_t<T> operand = T{}, detail::same_t<T> compare = T{}) {
    T old{};
    check(hgas::atomic(t, op, operand, &old, compare));
    return old;
}
template <class T>
T fetch_add(global_ptr<T> t, detail::same_t<T> v) { return checked::atomic(t, HGAS_AMO_FETCH_ADD, v); }
template <class T>
void add(global_ptr<T> t, detail::same_t<T> v) { (void)checked::atomic(t, HGAS_AMO_ADD, v); }
template <class T>
T compare_swap(global_ptr<T> t, detail::same_t<T> expected, detail::same_t<T> desired) {
    return checked::atomic(t, HGAS_AMO_COMPARE_SWAP, desired, expected);
}
template <class T>
void allreduce(T *dst, const T *src, size_t count, hgas_op_t op) { check(hgas::allreduce(dst, src, count, op)); }
/// One value reduced over every rank.
template <class T>
T allreduce(const T &value, hgas_op_t op) {
    T out{};
    check(hgas::allreduce(&out, &value, 1, op));
    return out;
}
template <class T>
void reduce(T *dst, const T *src, size_t count, hgas_op_t op, int root) {
    check(hgas::reduce(dst, src, count, op, root));
}
template <class T>
void broadcast(T *dst, const T *src, size_t count, int root) { check(hgas::broadcast(dst, src, count, root)); }
template <class T>
void fcollect(T *dst, const T *src, size_t count) { check(hgas::fcollect(dst, src, count)); }
template <class T>
void alltoall(T *dst, const T *src, size_t count) { check(hgas::alltoall(dst, src, count)); }
inline void barrier(team t) { check(hgas::barrier(t)); }
template <class T>
void allreduce(team t, T *dst, const T *src, size_t count, hgas_op_t op) {
    check(hgas::allreduce(t, dst, src, count, op));
}
/// One value reduced over the team.
template <class T>
T allreduce(team t, const T &value, hgas_op_t op) {
    T out{};
    check(hgas::allreduce(t, &out, &value, 1, op));
    return out;
}
template <class T>
void reduce(team t, T *dst, const T *src, size_t count, hgas_op_t op, int root) {
    check(hgas::reduce(t, dst, src, count, op, root));
}
template <class T>
void broadcast(team t, T *dst, const T *src, size_t count, int root) {
    check(hgas::broadcast(t, dst, src, count, root));
}
template <class T>
void fcollect(team t, T *dst, const T *src, size_t count) { check(hgas::fcollect(t, dst, src, count)); }
template <class T>
void alltoall(team t, T *dst, const T *src, size_t count) { check(hgas::alltoall(t, dst, src, count)); }
}  // namespace checked

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
