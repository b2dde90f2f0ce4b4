// The C API of tagged messages (hgas.h, "Tagged messages"): argument plumbing to src/msg.
#include <hgas/hgas.h>

#include <cstring>
#include <memory>

#include "api/layout_handle.hpp"
#include "api/rank_guard.hpp"
#include "base/clock.hpp"
#include "api/testing_msg.h"
#include "core/rank.hpp"
#include "msg/layout.hpp"
#include "msg/msg.hpp"
#include "rma/rma.hpp"

using namespace hgas;

#define HGAS_TRY_C(expr)                          \
    do {                                          \
        if (status s_ = (expr); s_ != status::ok) \
            return to_c(s_);                      \
    } while (0)

struct hgas_layout_s {
    msg::layout l;
};

const msg::layout &hgasi_layout_of(hgas_layout_t l) { return l->l; }

// A persistent request: the arguments of one send or receive, started many times.
struct hgas_msg_req_s {
    bool is_send;
    msg::send_args s;
    msg::recv_args r;
};

namespace {

status start(core::rank &r, const char *op, hgas_msg_req_t q, hgas_handle_t *h) {
    if (!q) return fail(status::invalid_arg, "%s: the request is NULL (create it with hgas_send_init/hgas_recv_init)", op);
    if (!h) return fail(status::invalid_arg, "%s: the handle pointer is NULL", op);
    return q->is_send ? msg::isend(r, op, q->s, h) : msg::irecv(r, op, q->r, h);
}
}  // namespace


extern "C" {

hgas_status_t hgas_send(const void *buf, size_t bytes, int dest, int tag) {
    HGASI_RANK(r);
    return to_c(msg::send(*r, msg::send_args{0, buf, bytes, dest, tag}));
}
hgas_status_t hgas_recv(void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info) {
    HGASI_RANK(r);
    return to_c(msg::recv(*r, msg::recv_args{0, buf, bytes, src, tag, info}));
}
hgas_status_t hgas_isend(const void *buf, size_t bytes, int dest, int tag, hgas_handle_t *h) {
    HGASI_RANK(r);
    return to_c(msg::isend(*r, "hgas_isend", msg::send_args{0, buf, bytes, dest, tag}, h));
}
hgas_status_t hgas_irecv(void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info, hgas_handle_t *h) {
    HGASI_RANK(r);
    return to_c(msg::irecv(*r, "hgas_irecv", msg::recv_args{0, buf, bytes, src, tag, info}, h));
}
hgas_status_t hgas_isend_ctx(hgas_msg_ctx_t ctx, const void *buf, size_t bytes, int dest, int tag, hgas_handle_t *h) {
    HGASI_RANK(r);
    return to_c(msg::isend(*r, "hgas_isend_ctx", msg::send_args{ctx, buf, bytes, dest, tag}, h));
}
hgas_status_t hgas_irecv_ctx(hgas_msg_ctx_t ctx, void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info,
                             hgas_handle_t *h) {
    HGASI_RANK(r);
    return to_c(msg::irecv(*r, "hgas_irecv_ctx", msg::recv_args{ctx, buf, bytes, src, tag, info}, h));
}
hgas_status_t hgas_iprobe(int src, int tag, int *flag, hgas_msg_info_t *info) {
    HGASI_RANK(r);
    return to_c(msg::iprobe(*r, "hgas_iprobe", 0, src, tag, flag, info));
}
hgas_status_t hgas_iprobe_ctx(hgas_msg_ctx_t ctx, int src, int tag, int *flag, hgas_msg_info_t *info) {
    HGASI_RANK(r);
    return to_c(msg::iprobe(*r, "hgas_iprobe_ctx", ctx, src, tag, flag, info));
}
hgas_status_t hgas_probe(int src, int tag, hgas_msg_info_t *info) {
    HGASI_RANK(r);
    return to_c(msg::probe(*r, src, tag, info));
}

hgas_status_t hgas_wait_all(hgas_handle_t *hs, size_t n) {
    HGASI_RANK(r);
    if (n && !hs) return to_c(fail(status::invalid_arg, "hgas_wait_all: the handle array is NULL but n is %zu", n));
    status first = status::ok;
    std::string first_msg;
    for (size_t i = 0; i < n; ++i) {
        status s = rma::wait(*r, hs[i]);
        hs[i] = HGAS_HANDLE_DONE;
        if (s != status::ok && first == status::ok) {
            first = s;
            first_msg = last_error();
        }
    }
    if (first != status::ok) return to_c(fail(first, "hgas_wait_all: %s", first_msg.c_str()));
    return HGAS_OK;
}

hgas_status_t hgas_test_any(hgas_handle_t *hs, size_t n, int *index, int *done) {
    HGASI_RANK(r);
    if (!index || !done) return to_c(fail(status::invalid_arg, "hgas_test_any: index or done is NULL"));
    if (n && !hs) return to_c(fail(status::invalid_arg, "hgas_test_any: the handle array is NULL but n is %zu", n));
    *index = -1;
    *done = 0;
    bool any_open = false;
    for (size_t i = 0; i < n; ++i) {
        if (hs[i] == HGAS_HANDLE_DONE) continue;
        any_open = true;
        int d = 0;
        status s = rma::test(*r, hs[i], &d);
        if (s != status::ok || d) {
            hs[i] = HGAS_HANDLE_DONE;  // finished either way (a failed handle is freed by the test)
            *index = static_cast<int>(i);
            *done = 1;
            return to_c(s);
        }
    }
    if (!any_open) *done = 1;
    return HGAS_OK;
}

hgas_status_t hgas_msg_ctx_create(hgas_msg_ctx_t *ctx) {
    HGASI_RANK(r);
    if (!ctx) return to_c(fail(status::invalid_arg, "hgas_msg_ctx_create: ctx is NULL"));
    auto c = msg::ctx_create(*r);
    if (!c.ok()) return to_c(c.error());
    *ctx = *c;
    return HGAS_OK;
}
hgas_status_t hgas_msg_ctx_destroy(hgas_msg_ctx_t ctx) {
    HGASI_RANK(r);
    return to_c(msg::ctx_destroy(*r, ctx));
}

hgas_status_t hgas_send_init(hgas_msg_ctx_t ctx, const void *buf, size_t bytes, int dest, int tag,
                             hgas_msg_req_t *req) {
    HGASI_RANK(r);
    if (!req) return to_c(fail(status::invalid_arg, "hgas_send_init: req is NULL"));
    // The same checks as a send, now rather than at every start.
    if (bytes && !buf) return to_c(fail(status::invalid_arg, "hgas_send_init: the buffer is NULL but %zu bytes were given", bytes));
    if (dest < 0 || dest >= r->n())
        return to_c(fail(status::invalid_arg, "hgas_send_init: destination rank %d does not exist (the job has ranks "
                         "0..%d)", dest, r->n() - 1));
    if (tag < 0) return to_c(fail(status::invalid_arg, "hgas_send_init: tag %d is negative", tag));
    *req = new hgas_msg_req_s{true, msg::send_args{ctx, buf, bytes, dest, tag}, {}};
    return HGAS_OK;
}
hgas_status_t hgas_recv_init(hgas_msg_ctx_t ctx, void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info,
                             hgas_msg_req_t *req) {
    HGASI_RANK(r);
    if (!req) return to_c(fail(status::invalid_arg, "hgas_recv_init: req is NULL"));
    if (bytes && !buf) return to_c(fail(status::invalid_arg, "hgas_recv_init: the buffer is NULL but %zu bytes were given", bytes));
    if (src != HGAS_ANY_RANK && (src < 0 || src >= r->n()))
        return to_c(fail(status::invalid_arg, "hgas_recv_init: source rank %d does not exist (the job has ranks 0..%d; "
                         "HGAS_ANY_RANK is -1)", src, r->n() - 1));
    if (tag != HGAS_ANY_TAG && tag < 0) return to_c(fail(status::invalid_arg, "hgas_recv_init: tag %d is negative", tag));
    *req = new hgas_msg_req_s{false, {}, msg::recv_args{ctx, buf, bytes, src, tag, info}};
    return HGAS_OK;
}
hgas_status_t hgas_start(hgas_msg_req_t req, hgas_handle_t *h) {
    HGASI_RANK(r);
    return to_c(start(*r, "hgas_start", req, h));
}
hgas_status_t hgas_start_all(hgas_msg_req_t *reqs, size_t n, hgas_handle_t *hs) {
    HGASI_RANK(r);
    if (n && (!reqs || !hs)) return to_c(fail(status::invalid_arg, "hgas_start_all: reqs or hs is NULL but n is %zu", n));
    for (size_t i = 0; i < n; ++i) {
        status s = start(*r, "hgas_start_all", reqs[i], &hs[i]);
        if (s != status::ok) {
            // Requests already started stay started: their handles are valid (hs[0..i)).
            for (size_t j = i; j < n; ++j) hs[j] = HGAS_HANDLE_DONE;
            return to_c(fail(s, "hgas_start_all: request %zu of %zu: %s (the %zu before it were started: wait for "
                             "their handles)", i, n, last_error().c_str(), i));
        }
    }
    return HGAS_OK;
}
hgas_status_t hgas_msg_req_free(hgas_msg_req_t req) {
    HGASI_RANK(r);
    delete req;
    return HGAS_OK;
}

namespace {
hgas_status_t make_layout(result<msg::layout> l, hgas_layout_t *out, const char *op) {
    if (!out) return to_c(fail(status::invalid_arg, "%s: out is NULL", op));
    if (!l.ok()) return to_c(l.error());
    *out = new hgas_layout_s{std::move(*l)};
    return HGAS_OK;
}
status layout_arg(const char *op, hgas_layout_t l) {
    if (!l) return fail(status::invalid_arg, "%s: the layout is NULL (create one with hgas_layout_vector, "
                        "hgas_layout_indexed or hgas_layout_subarray3d)", op);
    return status::ok;
}
}  // namespace

hgas_status_t hgas_layout_vector(size_t count, size_t block_bytes, size_t stride_bytes, hgas_layout_t *out) {
    return make_layout(msg::make_vector(count, block_bytes, stride_bytes), out, "hgas_layout_vector");
}
hgas_status_t hgas_layout_indexed(size_t count, const size_t *block_bytes, const size_t *displ_bytes,
                                  hgas_layout_t *out) {
    return make_layout(msg::make_indexed(count, block_bytes, displ_bytes), out, "hgas_layout_indexed");
}
hgas_status_t hgas_layout_subarray3d(const size_t sizes[3], const size_t subsizes[3], const size_t starts[3],
                                     size_t elem_bytes, hgas_layout_t *out) {
    return make_layout(msg::make_subarray3d(sizes, subsizes, starts, elem_bytes), out, "hgas_layout_subarray3d");
}
hgas_status_t hgas_layout_bytes(hgas_layout_t l, size_t *packed, size_t *extent) {
    HGAS_TRY_C(layout_arg("hgas_layout_bytes", l));
    if (packed) *packed = l->l.packed;
    if (extent) *extent = l->l.extent;
    return HGAS_OK;
}
hgas_status_t hgas_layout_free(hgas_layout_t l) {
    delete l;
    return HGAS_OK;
}
hgas_status_t hgas_isend_typed(const void *buf, hgas_layout_t l, int dest, int tag, hgas_handle_t *h) {
    HGASI_RANK(r);
    HGAS_TRY_C(layout_arg("hgas_isend_typed", l));
    return to_c(msg::isend_layout(*r, "hgas_isend_typed", l->l, buf, dest, tag, h));
}
hgas_status_t hgas_irecv_typed(void *buf, hgas_layout_t l, int src, int tag, hgas_msg_info_t *info, hgas_handle_t *h) {
    HGASI_RANK(r);
    HGAS_TRY_C(layout_arg("hgas_irecv_typed", l));
    return to_c(msg::irecv_layout(*r, "hgas_irecv_typed", l->l, buf, src, tag, info, h));
}
hgas_status_t hgas_isend_typed_ctx(hgas_msg_ctx_t ctx, const void *buf, hgas_layout_t l, int dest, int tag,
                                   hgas_handle_t *h) {
    HGASI_RANK(r);
    HGAS_TRY_C(layout_arg(__func__, l));
    return to_c(msg::isend_layout(*r, __func__, l->l, buf, dest, tag, h, ctx));
}
hgas_status_t hgas_irecv_typed_ctx(hgas_msg_ctx_t ctx, void *buf, hgas_layout_t l, int src, int tag,
                                   hgas_msg_info_t *info, hgas_handle_t *h) {
    HGASI_RANK(r);
    HGAS_TRY_C(layout_arg(__func__, l));
    return to_c(msg::irecv_layout(*r, __func__, l->l, buf, src, tag, info, h, ctx));
}
hgas_status_t hgas_send_typed(const void *buf, hgas_layout_t l, int dest, int tag) {
    HGASI_RANK(r);
    HGAS_TRY_C(layout_arg("hgas_send_typed", l));
    hgas_handle_t h;
    HGAS_TRY_C(msg::isend_layout(*r, "hgas_send_typed", l->l, buf, dest, tag, &h));
    return to_c(rma::wait(*r, h));
}
hgas_status_t hgas_recv_typed(void *buf, hgas_layout_t l, int src, int tag, hgas_msg_info_t *info) {
    HGASI_RANK(r);
    HGAS_TRY_C(layout_arg("hgas_recv_typed", l));
    hgas_handle_t h;
    HGAS_TRY_C(msg::irecv_layout(*r, "hgas_recv_typed", l->l, buf, src, tag, info, &h));
    return to_c(rma::wait(*r, h));
}

hgas_status_t hgasi_msg_stats(hgasi_msg_stats_t *out) {
    HGASI_RANK(r);
    auto s = msg::get_stats(*r);
    if (!s.ok()) return to_c(s.error());
    const msg::stats &v = *s;
    *out = hgasi_msg_stats_t{v.eager_sent,       v.rndv_sent,      v.rndv_one_sided,
                             v.rndv_chunked,     v.unexpected,     v.unexpected_bytes_peak,
                             v.flow_stalls,      v.rndv_pool,      v.pool_chunks,
                             v.pool_send_peak,   v.pool_bytes,     v.ring_bytes,
                             v.rndv_ipc,         v.ipc_opens,      v.ipc_hits,
                             v.ipc_invalidated,  v.tag_sent,       v.tag_received,
                             v.pack_steps,       v.unpack_steps,   v.typed_plain,
                             v.typed_packed,     v.typed_unpacked, v.ring_copies,
                             v.pool_direct_pulls};
    return HGAS_OK;
}

namespace {
gpu::device *user_dev(core::rank &r, hgas_kind_t kind) {
    const mem::kind k = kind == HGAS_KIND_CUDA ? mem::kind::cuda : kind == HGAS_KIND_SIM ? mem::kind::sim : mem::kind::host;
    gpu::device *d = k == mem::kind::host ? nullptr : r.device(k);
    if (!d) (void)fail(status::invalid_arg, "hgasi_user_dev: kind %d has no device on rank %d", kind, r.me());
    return d;
}
}  // namespace

hgas_status_t hgasi_user_dev_alloc(hgas_kind_t kind, size_t bytes, void *at, void **out) {
    HGASI_RANK(r);
    gpu::device *d = user_dev(*r, kind);
    if (!d || !out) return to_c(d ? fail(status::invalid_arg, "hgasi_user_dev_alloc: out is NULL") : status::invalid_arg);
    auto p = d->alloc_user(bytes, at);
    if (!p.ok()) return to_c(p.error());
    *out = *p;
    return HGAS_OK;
}

hgas_status_t hgasi_user_dev_alloc_vmm(hgas_kind_t kind, size_t bytes, void *at, int exportable, void **out) {
    HGASI_RANK(r);
    gpu::device *d = user_dev(*r, kind);
    if (!d || !out)
        return to_c(d ? fail(status::invalid_arg, "hgasi_user_dev_alloc_vmm: out is NULL") : status::invalid_arg);
    auto p = d->alloc_user_vmm(bytes, at, exportable != 0);
    if (!p.ok()) return to_c(p.error());
    *out = *p;
    return HGAS_OK;
}

hgas_status_t hgasi_user_dev_free(hgas_kind_t kind, void *p) {
    HGASI_RANK(r);
    gpu::device *d = user_dev(*r, kind);
    if (!d) return to_c(status::invalid_arg);
    return to_c(d->free_user(p));
}

hgas_status_t hgasi_user_dev_copy(void *dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    const mem::kind dk = r->kind_of(dst, bytes), sk = r->kind_of(src, bytes);
    gpu::device *d = r->device(dk != mem::kind::host ? dk : sk);
    if (!d) {
        std::memcpy(dst, src, bytes);
        return HGAS_OK;
    }
    auto t = d->copy_async(dst, src, bytes, 0);
    if (!t.ok()) return to_c(t.error());
    const deadline dl(r->timeout());
    for (;;) {
        auto done = d->test(*t);
        if (!done.ok()) return to_c(done.error());
        if (*done) return HGAS_OK;
        if (dl.expired()) return to_c(fail(status::timeout, "hgasi_user_dev_copy: not done within HGAS_TIMEOUT"));
    }
}

}  // extern "C"
