// The C API of the device layer (include/hgas/hgas_device.h): argument plumbing to src/device.
#include <hgas/hgas_device.h>

#include <string>

#include "api/enum_arg.hpp"
#include "api/layout_handle.hpp"
#include "base/trace.hpp"
#include "coll/coll.hpp"
#include "coll/direct.hpp"
#include "coll/team.hpp"
#include "core/rank.hpp"
#include "device/device.hpp"

using namespace hgas;

#define HGASI_DEVICE_RANK(r)                                                                                   \
    core::rank *r = core::current();                                                                           \
    if (!r)                                                                                                    \
        return to_c(fail(status::not_initialized, "%s called before hgas_init() or after hgas_finalize(); call " \
                         "hgas_init() first", __func__));                                                      \
    core::api_guard hgasi_guard_(*r);                                                                          \
    trace::span hgasi_span_(__func__) /* HGAS_TRACE: a stream-ordered call is the span of its enqueue */

// --- collectives in stream order ------------------------------------------------------------
namespace {
// The team is looked up again when the collective runs: a team destroyed in between fails
// then, with the lookup's message, instead of reaching freed state.
template <class F>
hgas_status_t coll_on_stream(core::rank &r, const char *op, hgas_team_t team, F f, cudaStream_t s) {
    auto t = coll::find(r, op, team);
    if (!t.ok()) return to_c(t.error());
    core::rank *rp = &r;
    return to_c(device::coll_on_stream(r, op, [rp, op, team, f]() -> status {
        HGAS_TRY_ASSIGN(coll::team *tm, coll::find(*rp, op, team));
        return f(*tm);
    }, s));
}
// A stream-ordered collective of a team of rank threads on one GPU as one kernel for all
// members (coll/direct.hpp, group_on_stream): true when it ran (or failed: *st says how).
// Before any other check: a member whose arguments are wrong still meets the others (and
// then fails), so that the team's later calls stay in step.
bool grouped(core::rank &r, const char *op, hgas_team_t team, int what, void *dst, const void *src, size_t count,
             hgas_dtype_t type, hgas_op_t rop, int root, cudaStream_t s, hgas_status_t *st, status prior = status::ok,
             const std::string &prior_msg = std::string()) {
    auto t = coll::find(r, op, team);
    if (!t.ok()) return false;  // the queued path says what is wrong
    auto g = coll::detail::group_on_stream(**t, op, what, dst, src, count, type, rop, root, s, prior, prior_msg);
    *st = g.ok() ? HGAS_OK : to_c(g.error());
    return !g.ok() || *g;
}
// Argument checks that need no data, at enqueue time.
status check_reduction(const char *op, hgas_dtype_t type, hgas_op_t rop) {
    return coll::detail::check_type_op(op, type, rop);
}
}  // namespace

extern "C" {

hgas_status_t hgas_device_ctx_get(hgas_device_ctx_t *ctx) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::ctx_get(*r, ctx));
}

int hgas_device_gpu(void) {
    core::rank *r = core::current();
    return r ? device::gpu(*r) : -1;
}

hgas_status_t hgas_device_status(void) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::check(*r));
}

hgas_status_t hgas_stream_sync(cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::stream_sync(*r, s));
}

hgas_status_t hgas_put_on_stream(void *dst, const void *src, size_t bytes, int rank, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::put_on_stream(*r, dst, src, bytes, rank, s));
}

hgas_status_t hgas_put_signal_on_stream(void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t value,
                                        hgas_signal_op_t op, int rank, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::put_signal_on_stream(*r, dst, src, bytes, sig, value, op, rank, s));
}

hgas_status_t hgas_signal_wait_on_stream(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::signal_wait_on_stream(*r, sig, api::enum_arg(cmp), value, s));
}

hgas_status_t hgas_barrier_on_stream(cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    // Ranks that are all threads of this process: the device barrier's kernel would wait inside
    // the GPU for the other members' kernels (which can stall: docs/threads.md), so they meet
    // on the host like the team barrier, after this rank's quiet (what the device barrier
    // completes first).
    // A failed quiet is returned after the meeting, so that the members stay in step.
    if (auto t = coll::find(*r, __func__, HGAS_TEAM_WORLD); t.ok() && coll::detail::in_process_group(**t)) {
        const status q = device::quiet_on_stream(*r, s);
        const std::string qmsg = q == status::ok ? std::string() : std::string(last_error());
        hgas_status_t g;
        if (grouped(*r, __func__, HGAS_TEAM_WORLD, gpu::device::team_barrier_op, nullptr, nullptr, 0, HGAS_UINT8,
                    HGAS_OP_SUM, 0, s, &g, q, qmsg))
            return g;
        if (q != status::ok) return to_c(fail(q, "%s", qmsg.c_str()));
    }
    return to_c(device::barrier_on_stream(*r, s));
}

hgas_status_t hgas_quiet_on_stream(cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::quiet_on_stream(*r, s));
}

hgas_status_t hgas_send_on_stream(const void *buf, size_t bytes, int dest, int tag, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::send_on_stream(*r, __func__, 0, buf, bytes, dest, tag, nullptr, s));
}

hgas_status_t hgas_recv_on_stream(void *buf, size_t bytes, int src, int tag, hgas_msg_info_t *info, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::recv_on_stream(*r, __func__, 0, buf, bytes, src, tag, info, nullptr, s));
}

hgas_status_t hgas_send_on_stream_ctx(hgas_msg_ctx_t ctx, const void *buf, size_t bytes, int dest, int tag,
                                      cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::send_on_stream(*r, __func__, ctx, buf, bytes, dest, tag, nullptr, s));
}

hgas_status_t hgas_recv_on_stream_ctx(hgas_msg_ctx_t ctx, void *buf, size_t bytes, int src, int tag,
                                      hgas_msg_info_t *info, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    return to_c(device::recv_on_stream(*r, __func__, ctx, buf, bytes, src, tag, info, nullptr, s));
}

namespace {
status stream_layout_arg(const char *op, hgas_layout_t l) {
    if (!l) return fail(status::invalid_arg, "%s: the layout is NULL (create one with hgas_layout_vector, "
                        "hgas_layout_indexed or hgas_layout_subarray3d)", op);
    return status::ok;
}
}  // namespace

hgas_status_t hgas_send_typed_on_stream_ctx(hgas_msg_ctx_t ctx, const void *buf, hgas_layout_t l, int dest, int tag,
                                            cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (status e = stream_layout_arg(__func__, l); e != status::ok) return to_c(e);
    return to_c(device::send_on_stream(*r, __func__, ctx, buf, 0, dest, tag, &hgasi_layout_of(l), s));
}

hgas_status_t hgas_recv_typed_on_stream_ctx(hgas_msg_ctx_t ctx, void *buf, hgas_layout_t l, int src, int tag,
                                            hgas_msg_info_t *info, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (status e = stream_layout_arg(__func__, l); e != status::ok) return to_c(e);
    return to_c(device::recv_on_stream(*r, __func__, ctx, buf, 0, src, tag, info, &hgasi_layout_of(l), s));
}

hgas_status_t hgas_send_typed_on_stream(const void *buf, hgas_layout_t l, int dest, int tag, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (status e = stream_layout_arg(__func__, l); e != status::ok) return to_c(e);
    return to_c(device::send_on_stream(*r, __func__, 0, buf, 0, dest, tag, &hgasi_layout_of(l), s));
}

hgas_status_t hgas_recv_typed_on_stream(void *buf, hgas_layout_t l, int src, int tag, hgas_msg_info_t *info,
                                        cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (status e = stream_layout_arg(__func__, l); e != status::ok) return to_c(e);
    return to_c(device::recv_on_stream(*r, __func__, 0, buf, 0, src, tag, info, &hgasi_layout_of(l), s));
}


hgas_status_t hgas_team_allreduce_on_stream(hgas_team_t team, void *dst, const void *src, size_t count,
                                            hgas_dtype_t type, hgas_op_t op, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_allreduce_op, dst, src, count, type, op, 0, s, &g)) return g;
    if (status e = check_reduction(__func__, type, op); e != status::ok) return to_c(e);
    // Small device vectors: one kernel on the stream, no host step (coll/direct.hpp).
    if (auto t = coll::find(*r, __func__, team); t.ok()) {
        auto k = coll::detail::allreduce_kernel_on_stream(**t, __func__, dst, src, count, type, op, s);
        if (!k.ok()) return to_c(k.error());
        if (*k) return HGAS_OK;
    }
    return coll_on_stream(*r, __func__, team, [=](coll::team &t) { return coll::allreduce(t, dst, src, count, type, op); }, s);
}

hgas_status_t hgas_team_reduce_on_stream(hgas_team_t team, void *dst, const void *src, size_t count,
                                         hgas_dtype_t type, hgas_op_t op, int root, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_reduce_op, dst, src, count, type, op, root, s, &g)) return g;
    if (status e = check_reduction(__func__, type, op); e != status::ok) return to_c(e);
    return coll_on_stream(*r, __func__, team,
                          [=](coll::team &t) { return coll::reduce(t, dst, src, count, type, op, root); }, s);
}

hgas_status_t hgas_team_broadcast_on_stream(hgas_team_t team, void *dst, const void *src, size_t bytes, int root,
                                            cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_broadcast_op, dst, src, bytes, HGAS_UINT8, HGAS_OP_SUM, root, s, &g)) return g;
    if (auto t = coll::find(*r, __func__, team); t.ok()) {  // small device vectors: one kernel on the stream
        auto k = coll::detail::broadcast_kernel_on_stream(**t, dst, src, bytes, root, s);
        if (!k.ok()) return to_c(k.error());
        if (*k) return HGAS_OK;
    }
    return coll_on_stream(*r, __func__, team, [=](coll::team &t) { return coll::broadcast(t, dst, src, bytes, root); },
                          s);
}

hgas_status_t hgas_team_reduce_scatter_on_stream(hgas_team_t team, void *dst, const void *src, size_t count,
                                                 hgas_dtype_t type, hgas_op_t op, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_reduce_scatter_op, dst, src, count, type, op, 0, s, &g)) return g;
    if (status e = check_reduction(__func__, type, op); e != status::ok) return to_c(e);
    if (auto t = coll::find(*r, __func__, team); t.ok()) {  // small device vectors: one kernel on the stream
        auto k = coll::detail::reduce_scatter_kernel_on_stream(**t, dst, src, count, type, op, s);
        if (!k.ok()) return to_c(k.error());
        if (*k) return HGAS_OK;
    }
    return coll_on_stream(*r, __func__, team,
                          [=](coll::team &t) { return coll::reduce_scatter(t, dst, src, count, type, op); }, s);
}

hgas_status_t hgas_team_fcollect_on_stream(hgas_team_t team, void *dst, const void *src, size_t bytes,
                                           cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_fcollect_op, dst, src, bytes, HGAS_UINT8, HGAS_OP_SUM, 0, s, &g)) return g;
    if (auto t = coll::find(*r, __func__, team); t.ok()) {  // small device vectors: one kernel on the stream
        auto k = coll::detail::fcollect_kernel_on_stream(**t, dst, src, bytes, s);
        if (!k.ok()) return to_c(k.error());
        if (*k) return HGAS_OK;
    }
    return coll_on_stream(*r, __func__, team, [=](coll::team &t) { return coll::fcollect(t, dst, src, bytes); }, s);
}

hgas_status_t hgas_team_alltoall_on_stream(hgas_team_t team, void *dst, const void *src, size_t bytes,
                                           cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    // In place is refused at the call, before anything is enqueued; rank threads still meet
    // (grouped), so that the team's later calls stay in step.
    status prior = status::ok;
    std::string prior_msg;
    if (auto t = coll::find(*r, __func__, team); t.ok()) {
        prior = coll::detail::alltoall_overlap(**t, __func__, dst, src, bytes);
        if (prior != status::ok) prior_msg = last_error();
    }
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_alltoall_op, dst, src, bytes, HGAS_UINT8,
                                 HGAS_OP_SUM, 0, s, &g, prior, prior_msg))
        return g;
    if (prior != status::ok) return to_c(fail(prior, "%s", prior_msg.c_str()));
    if (auto t = coll::find(*r, __func__, team); t.ok()) {  // small device vectors: one kernel on the stream
        auto k = coll::detail::alltoall_kernel_on_stream(**t, dst, src, bytes, s);
        if (!k.ok()) return to_c(k.error());
        if (*k) return HGAS_OK;
    }
    return coll_on_stream(*r, __func__, team, [=](coll::team &t) { return coll::alltoall(t, dst, src, bytes); }, s);
}

hgas_status_t hgas_team_barrier_on_stream(hgas_team_t team, cudaStream_t s) {
    HGASI_DEVICE_RANK(r);
    if (hgas_status_t g; grouped(*r, __func__, team, gpu::device::team_barrier_op, nullptr, nullptr, 0, HGAS_UINT8, HGAS_OP_SUM, 0, s, &g)) return g;
    return coll_on_stream(*r, __func__, team, [](coll::team &t) { return coll::team_barrier(t); }, s);
}

hgas_status_t hgas_allreduce_on_stream(void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op,
                                       cudaStream_t s) {
    return hgas_team_allreduce_on_stream(HGAS_TEAM_WORLD, dst, src, count, type, op, s);
}

hgas_status_t hgas_broadcast_on_stream(void *dst, const void *src, size_t bytes, int root, cudaStream_t s) {
    return hgas_team_broadcast_on_stream(HGAS_TEAM_WORLD, dst, src, bytes, root, s);
}

hgas_status_t hgas_device_grid_check(int grid_blocks, int max_resident, const char *what) {
    return to_c(device::grid_check(grid_blocks, max_resident, what));
}

}  // extern "C"
