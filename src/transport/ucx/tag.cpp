// Tag matching for the message layer (transport.hpp `tag_channel`): sends and receives through
// UCX's tag API, so that UCX does the wire protocol (eager, rendezvous, its own GPU paths).
// The message layer does the matching itself: it takes every arrived message out of UCX's
// unexpected queue with a probe (tag_take) and receives it (tag_recv) once a receive matches,
// which keeps one matching order for these messages and the rings' (README.md "Tag matching").
#include "transport/ucx/ucx_transport.hpp"

namespace hgas::transport::ucx {
namespace {

bool broken(ucs_status_t st) {
    return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT || st == UCS_ERR_UNREACHABLE ||
           st == UCS_ERR_REJECTED || st == UCS_ERR_IO_ERROR;
}

// Runs in ucp_worker_progress (the rank's thread or the helper thread): the op's fields, then
// `done` with release, which the message layer reads with acquire.
void finish(tag_op *op, ucs_status_t st) {
    if (st != UCS_OK) {
        op->code = broken(st) ? status::peer_failed : st == UCS_ERR_MESSAGE_TRUNCATED ? status::truncated
                                                                                        : status::transport;
        op->error = ucs_status_string(st);
    }
    op->done.store(true, std::memory_order_release);
}

void send_cb(void *request, ucs_status_t st, void *user_data) {
    finish(static_cast<tag_op *>(user_data), st);
    ucp_request_free(request);
}

void recv_cb(void *request, ucs_status_t st, const ucp_tag_recv_info_t *, void *user_data) {
    finish(static_cast<tag_op *>(user_data), st);
    ucp_request_free(request);
}

ucp_request_param_t params(tag_op *op, bool host) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.user_data = op;
    if (host) {  // spares UCX its memory-type lookup
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
        p.memory_type = UCS_MEMORY_TYPE_HOST;
    }
    return p;
}

}  // namespace

status ucx_transport::tag_send(int peer, uint64_t tag, const void *buf, size_t n, bool host, tag_op *op) {
    if (peer_dead(peer)) return peer_failure(peer, "hgas_send");
    ucp_request_param_t p = params(op, host);
    p.cb.send = send_cb;
    ucs_status_ptr_t req = ucp_tag_send_nbx(peers_[peer]->ep, buf, n, tag, &p);
    if (UCS_PTR_IS_ERR(req)) return ucs_failure(UCS_PTR_STATUS(req), "hgas_send", peer);
    if (!req) finish(op, UCS_OK);  // completed at once: no callback follows
    return status::ok;
}

bool ucx_transport::tag_take(uint64_t want, uint64_t mask, uint64_t &tag, size_t &len, void *&msg) {
    ucp_worker_progress(worker_);
    ucp_tag_recv_info_t info{};
    ucp_tag_message_h m = ucp_tag_probe_nb(worker_, want, mask, 1, &info);
    if (!m) return false;
    tag = info.sender_tag;
    len = info.length;
    msg = m;
    return true;
}

status ucx_transport::tag_recv(void *msg, void *buf, size_t n, bool host, int peer, tag_op *op) {
    ucp_request_param_t p = params(op, host);
    p.cb.recv = recv_cb;
    ucs_status_ptr_t req = ucp_tag_msg_recv_nbx(worker_, buf, n, static_cast<ucp_tag_message_h>(msg), &p);
    if (UCS_PTR_IS_ERR(req)) return ucs_failure(UCS_PTR_STATUS(req), "hgas_recv", peer);
    if (!req) finish(op, UCS_OK);
    return status::ok;
}

}  // namespace hgas::transport::ucx
