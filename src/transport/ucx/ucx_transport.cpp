// The UCX transport: setup (context, worker, endpoints, segment registration), the waits that
// every operation shares, and the `rma` data mode (UCX put/get/atomics). The `am` mode lives in
// am.cpp. README.md describes both.
#include "transport/ucx/ucx_transport.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>

#include "base/log.hpp"
#include "mem/segment.hpp"

namespace hgas::transport {
namespace ucx {
namespace {

// Blob that register_segment hands to peers (hex encoded): this header, then the packed rkey.
struct seg_blob_hdr {
    uint32_t magic;
    uint16_t seg;
    uint16_t pad;
    uint64_t base;
    uint64_t size;
};
constexpr uint32_t k_blob_magic = 0x58554748;  // "HGUX"

// Shutdown gives endpoints this long (at most) to flush and close politely before forcing:
// after the final barrier nothing is outstanding, so a longer wait only means a dead peer.
constexpr double k_close_timeout_s = 10.0;

void ep_error_cb(void *arg, ucp_ep_h, ucs_status_t st) {
    auto *p = static_cast<peer_state *>(arg);
    p->owner->on_ep_error(*p, st);
}

// Completion of an implicit (nbi) request: counted in peer_state::outstanding.
void nbi_done_cb(void *request, ucs_status_t st, void *user_data) {
    auto *p = static_cast<peer_state *>(user_data);
    p->owner->nbi_done(*p, st);
    ucp_request_free(request);
}

bool is_connection_error(ucs_status_t st) {
    // UCS_ERR_IO_ERROR: what UCX's shared-memory and CMA transports report for an operation
    // whose target process is gone (a rank killed with operations in flight).
    return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
           st == UCS_ERR_UNREACHABLE || st == UCS_ERR_REJECTED || st == UCS_ERR_IO_ERROR;
}

}  // namespace

std::string format(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

std::string hex_encode(const void *data, size_t n) {
    static const char digits[] = "0123456789abcdef";
    const auto *p = static_cast<const unsigned char *>(data);
    std::string out(2 * n, '0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    return out;
}

bool hex_decode(const std::string &text, std::string &out) {
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    if (text.size() % 2 != 0) return false;
    std::string bin(text.size() / 2, '\0');
    for (size_t i = 0; i < bin.size(); ++i) {
        int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        bin[i] = static_cast<char>(hi << 4 | lo);
    }
    out = std::move(bin);
    return true;
}

// --- creation and setup ------------------------------------------------------------------

result<std::unique_ptr<ucx_transport>> ucx_transport::create(const settings &cfg) {
    std::unique_ptr<ucx_transport> t(new ucx_transport());
    t->mode_ = cfg.text(setting::ucx_mode) == "am" ? data_mode::am : data_mode::rma;
    t->multi_thread_ = cfg.flag(setting::progress_thread);
    t->timeout_s_ = cfg.seconds(setting::timeout);
    t->boot_timeout_s_ = cfg.seconds(setting::boot_timeout);
    HGAS_TRY(t->init_context());
    return t;
}

ucx_transport::~ucx_transport() { shutdown(); }

status ucx_transport::init_context() {
    ucp_config_t *config = nullptr;
    ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
    if (st != UCS_OK)
        return fail(status::transport, "UCX could not read its configuration (check the UCX_* environment variables): %s",
                    ucs_status_string(st));
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM | UCP_FEATURE_TAG;
    params.mt_workers_shared = 0;  // one worker per context: each rank object has its own
    params.name = "hgas";
    st = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (st != UCS_OK)
        return fail(status::transport,
                    "UCX initialization failed: %s (check UCX_TLS / UCX_NET_DEVICES, or run without UCX: HGAS_TRANSPORTS=self,shm)",
                    ucs_status_string(st));

    ucp_context_attr_t cattr{};
    cattr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context_query(context_, &cattr) == UCS_OK)
        cuda_memory_ = (cattr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;

    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // MULTI only when a helper thread calls progress() beside the rank's data calls: the
    // worker lock costs on every call.
    wp.thread_mode = multi_thread_ ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(context_, &wp, &worker_);
    if (st != UCS_OK) return fail(status::transport, "UCX worker creation failed: %s", ucs_status_string(st));

    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
    st = ucp_worker_query(worker_, &attr);
    if (st != UCS_OK) return fail(status::transport, "UCX worker query failed: %s", ucs_status_string(st));
    if (multi_thread_ && attr.thread_mode != UCS_THREAD_MODE_MULTI)
        return fail(status::unsupported,
                    "HGAS_PROGRESS_THREAD=1 needs a UCX built with thread support (configure --enable-mt); "
                    "this UCX (%s) gives a single-threaded worker. Use such a UCX or set HGAS_PROGRESS_THREAD=0",
                    ucp_get_version_string());
    return status::ok;
}

caps ucx_transport::capabilities() const {
    caps c;
    c.direct = false;
    // Atomics and put_signal are executed by the target (both modes); tcp emulates RMA there too.
    c.needs_target_progress = true;
    // Rough inter-node figures (a 100 Gb/s class network): only used to rank UCX after self/shm.
    c.latency_us = mode_ == data_mode::am ? 6.0 : 3.0;
    c.bandwidth_gbs = 10.0;
    return c;
}

status ucx_transport::connect(const setup &s) {
    if (connected_) return fail(status::internal, "UCX transport: connect() called twice");
    if (!s.job || s.job->size < 1 || s.job->rank < 0 || s.job->rank >= s.job->size)
        return fail(status::internal, "UCX transport: connect() needs the job's rank and size");
    me_ = s.job->rank;
    size_ = s.job->size;
    yield_when_idle_ = s.oversubscribed;
    job_alive_ = s.job_alive;
    peer_lost_ = s.peer_lost;
    // Both modes: atomics and put_signal always travel as active messages (see README).
    HGAS_TRY(register_am_handlers());

    ucp_address_t *addr = nullptr;
    size_t addr_len = 0;
    ucs_status_t st = ucp_worker_get_address(worker_, &addr, &addr_len);
    if (st != UCS_OK) return fail(status::transport, "UCX: cannot get this worker's address: %s", ucs_status_string(st));
    // Worker addresses are binary; hex keeps them intact through any text-minded store code.
    std::string mine = hex_encode(addr, addr_len);
    ucp_worker_release_address(worker_, addr);

    std::vector<std::string> all;
    if (s.store) {
        // Start-up, not an operation: HGAS_BOOT_TIMEOUT, as the core's own exchanges. With
        // HGAS_TIMEOUT here a short operation timeout (a test's 0.3 s) failed the connect on a
        // loaded machine, where the ranks reach this point seconds apart.
        status bs = s.store->allgather("ucx.addr", mine, all, boot_timeout_s_);
        if (bs != status::ok) {
            std::string why = last_error();
            return fail(bs, "UCX address exchange through the bootstrap store failed: %s", why.c_str());
        }
    } else if (size_ == 1) {
        all.push_back(mine);
    } else {
        return fail(status::bootstrap, "UCX transport: a job of %d ranks needs a bootstrap store to exchange addresses", size_);
    }
    if (static_cast<int>(all.size()) != size_)
        return fail(status::bootstrap, "UCX address exchange returned %zu addresses for %d ranks", all.size(), size_);

    peers_.clear();
    remote_.assign(size_, {});
    for (int r = 0; r < size_; ++r) {
        auto p = std::make_unique<peer_state>();
        p->owner = this;
        p->rank = r;
        peers_.push_back(std::move(p));
    }
    for (int r = 0; r < size_; ++r) {
        std::string bin;
        if (!hex_decode(all[r], bin) || bin.empty())
            return fail(status::bootstrap, "UCX address of rank %d from the bootstrap store is malformed", r);
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
        ep.address = reinterpret_cast<const ucp_address_t *>(bin.data());
        // Off-node peers: PEER mode, so a dead peer fails its requests (peer_failed) instead
        // of hanging them. Same-node peers: UCX's shared-memory transports (self, posix, sysv)
        // have no peer-failure support and PEER mode would push them onto tcp loopback; a dead
        // same-node peer is caught by the job's abort (setup::job_alive, checked by every wait)
        // or, failing that, the HGAS_TIMEOUT deadline. The
        // choice is symmetric (both ends see the same topology), as UCX requires.
        bool same_node = r == me_ || (s.topo && static_cast<int>(s.topo->node_of.size()) == size_ &&
                                      s.topo->node_of[r] == s.topo->node_of[me_]);
        peers_[r]->err_mode_peer = !same_node;
        if (!same_node) {
            ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
            ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
            ep.err_handler.cb = ep_error_cb;
            ep.err_handler.arg = peers_[r].get();
        } else {
            ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
        }
        st = ucp_ep_create(worker_, &ep, &peers_[r]->ep);
        if (st != UCS_OK)
            return fail(status::transport, "UCX: cannot create an endpoint from rank %d to rank %d: %s", me_, r,
                        ucs_status_string(st));
    }
    connected_ = true;
    HGASI_DEBUG("ucx", "connected to %d ranks (mode %s, worker thread mode %s, UCX %s)", size_,
                mode_ == data_mode::am ? "am" : "rma", multi_thread_ ? "multi" : "single", ucp_get_version_string());
    return status::ok;
}

result<void *> ucx_transport::allocate_segment(uint16_t seg, uint64_t size) {
    if (seg >= k_max_segments || size == 0)
        return fail(status::internal, "UCX transport: cannot allocate segment %u of %" PRIu64 " bytes", seg, size);
    local_seg &l = local_[seg];
    if (l.memh) return fail(status::internal, "UCX transport: segment %u allocated twice", seg);
    // UCX's shared-memory transports (posix, sysv) store directly only into memory that UCX
    // allocated; into memory it merely registered, a same-node put becomes a CMA system call.
    // The address is a hint so that the heap starts aligned like the shm transport's
    // (mem::base_alignment; shmem_align needs it). UCX maps over a hint with MAP_FIXED (two
    // rank threads once got the same heap from hints taken at the same moment), so the hint
    // lies in address space held for us until UCX has mapped.
    mem::aligned_reservation hold(size);
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address = hold.at();
    mp.length = size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    ucs_status_t st = ucp_mem_map(context_, &mp, &l.memh);
    if (st != UCS_OK)
        return fail(status::no_memory, "UCX could not allocate %" PRIu64 " bytes for segment %u: %s; lower "
                    "HGAS_HEAP_SIZE / HGAS_LOCAL_HEAP_SIZE", size, seg, ucs_status_string(st));
    ucp_mem_attr_t attr{};
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    st = ucp_mem_query(l.memh, &attr);
    if (st != UCS_OK || attr.length < size) {
        ucp_mem_unmap(context_, l.memh);
        l.memh = nullptr;
        return fail(status::transport, "UCX allocated segment %u but cannot say where: %s", seg, ucs_status_string(st));
    }
    hold.keep(attr.address, attr.length);
    l.base = attr.address;
    l.size = size;
    l.allocated = true;
    HGASI_DEBUG("ucx", "segment %u: %" PRIu64 " bytes allocated by UCX at %p", seg, size, attr.address);
    return attr.address;
}

status ucx_transport::register_segment(const local_segment &seg, std::string &blob) {
    if (seg.seg >= k_max_segments)
        return fail(status::internal, "UCX transport: segment id %u is beyond its table of %u", seg.seg, k_max_segments);
    local_seg &l = local_[seg.seg];
    if (l.ready.load(std::memory_order_relaxed))
        return fail(status::internal, "UCX transport: segment %u registered twice", seg.seg);
    std::string rkey;
    if (l.allocated && (l.base != seg.base || l.size != seg.size))
        return fail(status::internal, "UCX transport: segment %u registered with other memory than it allocated", seg.seg);
    if (seg.size > 0) {
        if (!l.allocated) {  // memory UCX allocated is registered already
            ucp_mem_map_params_t mp{};
            mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
            mp.address = seg.base;
            mp.length = seg.size;
            ucs_status_t st = ucp_mem_map(context_, &mp, &l.memh);
            if (st != UCS_OK)
                return fail(status::transport, "UCX could not register segment %u (%" PRIu64 " bytes at %p): %s",
                            seg.seg, seg.size, seg.base, ucs_status_string(st));
        }
        void *buf = nullptr;
        size_t len = 0;
        ucs_status_t st = ucp_rkey_pack(context_, l.memh, &buf, &len);
        if (st != UCS_OK) {
            ucp_mem_unmap(context_, l.memh);
            l.memh = nullptr;
            return fail(status::transport, "UCX could not pack the remote key of segment %u: %s", seg.seg,
                        ucs_status_string(st));
        }
        rkey.assign(static_cast<const char *>(buf), len);
        ucp_rkey_buffer_release(buf);
    }
    seg_blob_hdr h{k_blob_magic, seg.seg, 0, reinterpret_cast<uint64_t>(seg.base), seg.size};
    std::string bin(reinterpret_cast<const char *>(&h), sizeof h);
    bin += rkey;
    blob = hex_encode(bin.data(), bin.size());
    l.base = seg.base;
    l.size = seg.size;
    // release: AM handlers on the progress thread read base/size after an acquire of `ready`.
    l.ready.store(true, std::memory_order_release);
    HGASI_DEBUG("ucx", "registered segment %u: %" PRIu64 " bytes at %p (rkey %zu bytes)", seg.seg, seg.size, seg.base,
                rkey.size());
    return status::ok;
}

status ucx_transport::attach_segment(int peer, uint16_t seg, uint64_t size, const std::string &blob) {
    if (!connected_ || !can_reach(peer))
        return fail(status::internal, "UCX transport: attach_segment for rank %d before connect() or beyond the job", peer);
    if (seg >= k_max_segments)
        return fail(status::internal, "UCX transport: segment id %u is beyond its table of %u", seg, k_max_segments);
    std::string bin;
    seg_blob_hdr h{};
    if (!hex_decode(blob, bin) || bin.size() < sizeof h)
        return fail(status::bootstrap, "UCX: the segment %u description from rank %d is malformed", seg, peer);
    std::memcpy(&h, bin.data(), sizeof h);
    if (h.magic != k_blob_magic || h.seg != seg || h.size != size)
        return fail(status::bootstrap,
                    "UCX: the segment %u description from rank %d does not match (segment %u, %" PRIu64
                    " bytes, expected %" PRIu64 "): were the ranks built from different hgas versions?",
                    seg, peer, h.seg, h.size, size);
    remote_seg &r = remote_[peer][seg];
    if (r.rkey) {
        ucp_rkey_destroy(r.rkey);
        r.rkey = nullptr;
    }
    // The am mode never touches peer memory from here, so it needs no rkey.
    if (mode_ == data_mode::rma && bin.size() > sizeof h) {
        ucs_status_t st = ucp_ep_rkey_unpack(peers_[peer]->ep, bin.data() + sizeof h, &r.rkey);
        if (st != UCS_OK)
            return fail(status::transport, "UCX could not unpack the remote key of segment %u of rank %d: %s", seg, peer,
                        ucs_status_string(st));
    }
    r.base = h.base;
    r.size = h.size;
    r.attached = true;
    return status::ok;
}

void ucx_transport::shutdown() {
    if (shut_down_) return;
    shut_down_ = true;
    closing_.store(true, std::memory_order_seq_cst);  // see progress()
    while (in_progress_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    if (worker_) {
        for (auto &per_peer : remote_)
            for (remote_seg &r : per_peer)
                if (r.rkey) {
                    ucp_rkey_destroy(r.rkey);  // before the endpoints they were unpacked on
                    r.rkey = nullptr;
                }
        close_endpoints();
        {
            std::lock_guard<std::mutex> lk(ops_mu_);
            ops_.clear();
        }
    }
    for (local_seg &l : local_)
        if (l.memh) {
            ucp_mem_unmap(context_, l.memh);
            l.memh = nullptr;
            l.allocated = false;
            l.ready.store(false, std::memory_order_relaxed);
        }
    if (worker_) ucp_worker_destroy(worker_);
    worker_ = nullptr;
    if (context_) ucp_cleanup(context_);
    context_ = nullptr;
    HGASI_DEBUG("ucx", "shut down");
}

void ucx_transport::close_endpoints() {
    std::vector<std::pair<int, void *>> closing;
    for (auto &p : peers_) {
        if (!p->ep) continue;
        ucp_request_param_t prm{};
        if (p->err_mode_peer && p->ep_error.load(std::memory_order_acquire) != UCS_OK) {
            // A failed endpoint cannot flush; UCX requires the forced close for it.
            prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
        }
        ucs_status_ptr_t req = ucp_ep_close_nbx(p->ep, &prm);
        p->ep = nullptr;
        if (UCS_PTR_IS_PTR(req)) closing.emplace_back(p->rank, req);
        else if (UCS_PTR_IS_ERR(req))
            HGASI_DEBUG("ucx", "closing the endpoint to rank %d: %s", p->rank, ucs_status_string(UCS_PTR_STATUS(req)));
    }
    deadline dl(std::min(timeout_s_, k_close_timeout_s));
    for (auto &[rank, req] : closing) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS && !dl.expired()) ucp_worker_progress(worker_);
        if (ucp_request_check_status(req) == UCS_INPROGRESS)
            HGASI_DEBUG("ucx", "the endpoint to rank %d did not close in time; destroying the worker anyway", rank);
        ucp_request_free(req);
    }
}

// --- failures and waits ------------------------------------------------------------------

void ucx_transport::on_ep_error(peer_state &p, ucs_status_t st) {
    int expected = UCS_OK;
    p.ep_error.compare_exchange_strong(expected, st, std::memory_order_acq_rel);
    // release: a wait that sees `any_ep_error_` then scans the peers' ep_error.
    any_ep_error_.store(true, std::memory_order_release);
    if (!closing_.load(std::memory_order_acquire))
        HGASI_DEBUG("ucx", "endpoint to rank %d failed: %s", p.rank, ucs_status_string(st));
}

void ucx_transport::nbi_done(peer_state &p, ucs_status_t st) {
    if (st != UCS_OK)
        record_async_error(p.ep_error.load(std::memory_order_acquire) != UCS_OK || is_connection_error(st)
                               ? status::peer_failed
                               : status::transport,
                           format("a non-blocking operation from rank %d to rank %d failed: %s%s", me_, p.rank,
                                  ucs_status_string(st),
                                  is_connection_error(st) ? " (that rank probably died; see its output)" : ""));
    // release: pairs with quiet's acquire, so an error recorded above is seen once the count is 0.
    p.outstanding.fetch_sub(1, std::memory_order_release);
    outstanding_.fetch_sub(1, std::memory_order_release);
}

void ucx_transport::record_async_error(status st, std::string msg) {
    if (closing_.load(std::memory_order_acquire)) return;  // cancellations while closing are expected
    std::lock_guard<std::mutex> lk(err_mu_);
    if (async_code_ == status::ok) {
        async_code_ = st;
        async_msg_ = std::move(msg);
    }
}

status ucx_transport::take_async_error() {
    status code;
    std::string msg;
    {
        std::lock_guard<std::mutex> lk(err_mu_);
        code = async_code_;
        msg.swap(async_msg_);
        async_code_ = status::ok;
    }
    if (code == status::peer_failed && peer_lost_) peer_lost_(msg);
    return code == status::ok ? status::ok : fail(code, "%s", msg.c_str());
}

int ucx_transport::first_dead_peer(bool with_outstanding) const {
    if (!any_ep_error_.load(std::memory_order_acquire)) return -1;
    for (const auto &p : peers_)
        if (p->ep_error.load(std::memory_order_acquire) != UCS_OK &&
            (!with_outstanding || p->outstanding.load(std::memory_order_acquire) > 0))
            return p->rank;
    return -1;
}

status ucx_transport::peer_failure(int peer, const char *what) {
    int e = peers_[peer]->ep_error.load(std::memory_order_acquire);
    const std::string msg = format("%s from rank %d to rank %d failed: the connection to rank %d broke (UCX: %s); "
                                   "that rank probably died or aborted, see its output",
                                   what, me_, peer, peer, ucs_status_string(static_cast<ucs_status_t>(e)));
    if (peer_lost_) peer_lost_(msg);
    return fail(status::peer_failed, "%s", msg.c_str());
}

status ucx_transport::ucs_failure(ucs_status_t st, const char *what, int peer) {
    if (peer < 0) peer = first_dead_peer(false);
    if (peer >= 0 && (peer_dead(peer) || is_connection_error(st))) {
        if (!peer_dead(peer)) {
            int expected = UCS_OK;
            peers_[peer]->ep_error.compare_exchange_strong(expected, st);
        }
        return peer_failure(peer, what);
    }
    if (peer >= 0)
        return fail(status::transport, "UCX %s from rank %d to rank %d failed: %s", what, me_, peer, ucs_status_string(st));
    return fail(status::transport, "UCX %s on rank %d failed: %s", what, me_, ucs_status_string(st));
}

status ucx_transport::timeout_failure(const char *what, int peer) {
    if (peer >= 0)
        return fail(status::timeout,
                    "%s from rank %d to rank %d did not complete within HGAS_TIMEOUT=%gs: is rank %d stuck outside "
                    "hgas calls? (HGAS_PROGRESS_THREAD=1 lets a busy rank serve requests; raise HGAS_TIMEOUT for long "
                    "phases)",
                    what, me_, peer, timeout_s_, peer);
    std::string who;
    int listed = 0;
    for (const auto &p : peers_) {
        if (p->outstanding.load(std::memory_order_acquire) <= 0) continue;
        if (listed++ == 8) {
            who += " ...";
            break;
        }
        who += (who.empty() ? "" : " ") + std::to_string(p->rank);
    }
    return fail(status::timeout,
                "%s on rank %d did not complete within HGAS_TIMEOUT=%gs%s%s (HGAS_PROGRESS_THREAD=1 lets a busy rank "
                "serve requests; raise HGAS_TIMEOUT for long phases)",
                what, me_, timeout_s_, who.empty() ? "" : "; operations still outstanding to rank(s) ", who.c_str());
}

status ucx_transport::wait_request(ucs_status_ptr_t req, const char *what, int peer) {
    if (req == nullptr) return status::ok;
    if (UCS_PTR_IS_ERR(req)) return ucs_failure(UCS_PTR_STATUS(req), what, peer);
    status s = wait_until([&] { return ucp_request_check_status(req) != UCS_INPROGRESS; }, what, peer);
    if (s != status::ok) {
        ucp_request_cancel(worker_, req);
        ucp_request_free(req);  // UCX releases it once it really completes
        return s;
    }
    ucs_status_t st = ucp_request_check_status(req);
    ucp_request_free(req);
    return st == UCS_OK ? status::ok : ucs_failure(st, what, peer);
}

status ucx_transport::progress() {
    // Without a helper thread every call comes from the rank's thread, which is also the one
    // that shuts down: no guard needed, and this is the hot loop of every wait.
    if (!multi_thread_) {
        if (worker_) ucp_worker_progress(worker_);
        return status::ok;
    }
    // The core stops the helper thread before shutdown(); this guard only keeps a late call
    // from touching a destroyed worker. seq_cst on both sides (here and in shutdown): each
    // thread stores, then loads the other's flag, which weaker orders would let pass.
    in_progress_.fetch_add(1, std::memory_order_seq_cst);
    if (!closing_.load(std::memory_order_seq_cst) && worker_) ucp_worker_progress(worker_);
    in_progress_.fetch_sub(1, std::memory_order_release);
    return status::ok;
}

// --- rma mode ----------------------------------------------------------------------------

status ucx_transport::check_target(remote r, size_t n, const char *what) {
    if (!connected_) return fail(status::not_initialized, "UCX %s: the transport is not connected", what);
    if (!can_reach(r.rank)) return fail(status::invalid_arg, "UCX %s: rank %d is not in this job of %d ranks", what, r.rank, size_);
    if (r.seg >= k_max_segments || !remote_[r.rank][r.seg].attached)
        return fail(status::invalid_arg, "UCX %s: segment %u of rank %d is not attached to the UCX transport", what, r.seg,
                    r.rank);
    const remote_seg &s = remote_[r.rank][r.seg];
    if (r.offset > s.size || n > s.size - r.offset)
        return fail(status::out_of_bounds,
                    "UCX %s of %zu bytes at offset %" PRIu64 " leaves segment %u of rank %d (%" PRIu64 " bytes)", what,
                    n, r.offset, r.seg, r.rank, s.size);
    return status::ok;
}

template <class Post>
status ucx_transport::issue(bool nbi, int peer, const char *what, Post &&post) {
    ucp_request_param_t prm{};
    if (!nbi) return wait_request(post(prm), what, peer);
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.send = nbi_done_cb;
    prm.user_data = peers_[peer].get();
    // Counted before posting: the callback may run on the helper thread as soon as it is posted.
    peer_state &p = *peers_[peer];
    p.outstanding.fetch_add(1, std::memory_order_relaxed);
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    ucs_status_ptr_t req = post(prm);
    if (UCS_PTR_IS_PTR(req)) return status::ok;  // nbi_done_cb uncounts it
    p.outstanding.fetch_sub(1, std::memory_order_relaxed);
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
    return req == nullptr ? status::ok : ucs_failure(UCS_PTR_STATUS(req), what, peer);
}

status ucx_transport::put(remote dst, const void *src, size_t n, bool nbi) {
    if (mode_ == data_mode::am) return am_put(dst, src, n, !nbi, nullptr);
    if (n == 0) return status::ok;
    HGAS_TRY(check_target(dst, n, "put"));
    const remote_seg &s = remote_[dst.rank][dst.seg];
    ucp_ep_h ep = peers_[dst.rank]->ep;
    return issue(nbi, dst.rank, "put", [&](ucp_request_param_t &prm) {
        return ucp_put_nbx(ep, src, n, s.base + dst.offset, s.rkey, &prm);
    });
}

status ucx_transport::get(void *dst, remote src, size_t n, bool nbi) {
    if (mode_ == data_mode::am) return am_get(dst, src, n, nbi, nullptr);
    if (n == 0) return status::ok;
    HGAS_TRY(check_target(src, n, "get"));
    const remote_seg &s = remote_[src.rank][src.seg];
    ucp_ep_h ep = peers_[src.rank]->ep;
    return issue(nbi, src.rank, "get", [&](ucp_request_param_t &prm) {
        return ucp_get_nbx(ep, dst, n, s.base + src.offset, s.rkey, &prm);
    });
}

// Explicit non-blocking: p.stage 0 = the put/get is in flight, 1 = the flush that makes the
// put remotely complete is in flight, 2 = complete.
status ucx_transport::put_nb(remote dst, const void *src, size_t n, pending &p) {
    p = pending{};
    p.peer = dst.rank;
    p.is_put = true;
    if (mode_ == data_mode::am) {
        am_op *op = nullptr;
        HGAS_TRY(am_put(dst, src, n, false, &op));
        p.req = op;
        p.stage = op ? 0 : 2;
        return status::ok;
    }
    if (n == 0) {
        p.stage = 2;
        return status::ok;
    }
    HGAS_TRY(check_target(dst, n, "put_nb"));
    const remote_seg &s = remote_[dst.rank][dst.seg];
    ucp_request_param_t prm{};
    ucs_status_ptr_t req = ucp_put_nbx(peers_[dst.rank]->ep, src, n, s.base + dst.offset, s.rkey, &prm);
    if (UCS_PTR_IS_ERR(req)) return ucs_failure(UCS_PTR_STATUS(req), "put_nb", dst.rank);
    p.req = req;
    bool done = false;
    return test(p, done);  // issues the flush at once when the put completed in place
}

status ucx_transport::get_nb(void *dst, remote src, size_t n, pending &p) {
    p = pending{};
    p.peer = src.rank;
    p.is_put = false;
    if (mode_ == data_mode::am) {
        am_op *op = nullptr;
        HGAS_TRY(am_get(dst, src, n, false, &op));
        p.req = op;
        p.stage = op ? 0 : 2;
        return status::ok;
    }
    if (n == 0) {
        p.stage = 2;
        return status::ok;
    }
    HGAS_TRY(check_target(src, n, "get_nb"));
    const remote_seg &s = remote_[src.rank][src.seg];
    ucp_request_param_t prm{};
    ucs_status_ptr_t req = ucp_get_nbx(peers_[src.rank]->ep, dst, n, s.base + src.offset, s.rkey, &prm);
    if (UCS_PTR_IS_ERR(req)) return ucs_failure(UCS_PTR_STATUS(req), "get_nb", src.rank);
    p.req = req;
    p.stage = req ? 0 : 2;
    return status::ok;
}

status ucx_transport::test(pending &p, bool &done) {
    done = false;
    if (p.stage == 2) {
        done = true;
        return status::ok;
    }
    if (mode_ == data_mode::am) return am_test(p, done);
    const char *what = p.is_put ? "put_nb" : "get_nb";
    for (;;) {
        if (p.req) {
            ucs_status_t st = ucp_request_check_status(p.req);
            if (st == UCS_INPROGRESS) {
                ucp_worker_progress(worker_);
                st = ucp_request_check_status(p.req);
                if (st == UCS_INPROGRESS) return status::ok;
            }
            ucp_request_free(p.req);
            p.req = nullptr;
            if (st != UCS_OK) {
                p.stage = 2;
                done = true;
                return ucs_failure(st, what, p.peer);
            }
        }
        if (p.is_put && p.stage == 0) {
            // A put request completes locally; an endpoint flush issued after it completes
            // once the put is done at the target (remote completion, as hgas_test promises).
            p.stage = 1;
            ucp_request_param_t prm{};
            ucs_status_ptr_t req = ucp_ep_flush_nbx(peers_[p.peer]->ep, &prm);
            if (UCS_PTR_IS_ERR(req)) {
                p.stage = 2;
                done = true;
                return ucs_failure(UCS_PTR_STATUS(req), what, p.peer);
            }
            p.req = req;
            if (req) continue;
        }
        p.stage = 2;
        done = true;
        return status::ok;
    }
}

// Atomics and put_signal are executed by the target's CPU in both modes (am.cpp): the result is
// atomic with respect to the CPU atomics that the target's same-node peers issue through shm
// (NIC atomics are not), data and signal travel in one message, and it works over every UCX
// transport (UCX 1.22 has no atomics over tcp with peer error handling).
status ucx_transport::amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare,
                          uint64_t *result) {
    if (width != 4 && width != 8)
        return fail(status::invalid_arg, "UCX atomic: width %u is not supported (4 or 8 bytes)", width);
    if (static_cast<unsigned>(op) > static_cast<unsigned>(amo_op::fetch_xor))
        return fail(status::invalid_arg, "UCX atomic: unknown operation %d", static_cast<int>(op));
    // Same-node peers in rma mode: UCX's own atomics, which its shared-memory transports
    // perform as CPU atomics on the target's memory (no target CPU needed). Off-node peers, and
    // transports without atomics (tcp), go through active messages executed by the target
    // with the same CPU atomics, so both kinds stay atomic with respect to each other.
    if (mode_ == data_mode::rma && !peers_[t.rank]->err_mode_peer && native_amo_) {
        status s = native_amo(t, op, width, operand, compare, result);
        if (s != status::unsupported) return s;
        native_amo_ = false;  // this UCX cannot: use active messages from now on
        HGASI_DEBUG("ucx", "UCX has no atomic protocol to rank %d; atomics go through active messages", t.rank);
    }
    return am_amo(t, op, width, operand, compare, result);
}

status ucx_transport::native_amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare,
                                 uint64_t *result) {
    HGAS_TRY(check_target(t, width, "atomic"));
    if (t.offset % width)  // what the target checks on the active-message path
        return fail(status::misaligned, "UCX atomic: offset %" PRIu64 " on rank %d is not aligned to %u bytes",
                    t.offset, t.rank, width);
    ucp_atomic_op_t uop;
    bool fetch = amo_fetches(op);
    uint64_t value = operand;
    switch (op) {
    case amo_op::fetch: uop = UCP_ATOMIC_OP_OR; value = 0; break;
    case amo_op::set: uop = UCP_ATOMIC_OP_SWAP; fetch = true; break;  // a swap whose old value is dropped
    case amo_op::add: case amo_op::fetch_add: uop = UCP_ATOMIC_OP_ADD; break;
    case amo_op::swap: uop = UCP_ATOMIC_OP_SWAP; break;
    case amo_op::compare_swap: uop = UCP_ATOMIC_OP_CSWAP; break;
    case amo_op::and_: case amo_op::fetch_and: uop = UCP_ATOMIC_OP_AND; break;
    case amo_op::or_: case amo_op::fetch_or: uop = UCP_ATOMIC_OP_OR; break;
    default: uop = UCP_ATOMIC_OP_XOR; break;
    }
    // CSWAP takes the compare value in `buffer` and the new value in the reply buffer, which
    // then receives the old value.
    uint64_t buf64 = op == amo_op::compare_swap ? compare : value;
    uint64_t reply64 = op == amo_op::compare_swap ? operand : 0;
    uint32_t buf32 = static_cast<uint32_t>(buf64), reply32 = static_cast<uint32_t>(reply64);
    void *buf = width == 4 ? static_cast<void *>(&buf32) : static_cast<void *>(&buf64);
    void *reply = width == 4 ? static_cast<void *>(&reply32) : static_cast<void *>(&reply64);
    const remote_seg &s = remote_[t.rank][t.seg];
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(width);
    if (fetch) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = reply;
    }
    ucs_status_ptr_t req = ucp_atomic_op_nbx(peers_[t.rank]->ep, uop, buf, 1, s.base + t.offset, s.rkey, &prm);
    if (UCS_PTR_IS_ERR(req) && UCS_PTR_STATUS(req) == UCS_ERR_UNSUPPORTED) return status::unsupported;
    HGAS_TRY(wait_request(req, "atomic", t.rank));
    if (result) *result = width == 4 ? reply32 : reply64;
    return status::ok;
}

status ucx_transport::put_signal(remote dst, const void *src, size_t n, remote sig, signal_op op, uint64_t value,
                                 bool nbi) {
    if (sig.rank != dst.rank)
        return fail(status::invalid_arg, "UCX put_signal: the signal (rank %d) must be on the data's rank %d", sig.rank,
                    dst.rank);
    return am_put_signal(dst, src, n, sig, op, value, nbi);
}

// Waits until every operation issued so far is complete at its target: implicit RMA requests
// and unacknowledged active messages, then (rma mode) a worker flush for the blocking puts,
// whose requests only said "locally complete".
status ucx_transport::complete_all(const char *what) {
    int dead = -1;
    HGAS_TRY(wait_until(
        [&] {
            if (outstanding_.load(std::memory_order_acquire) == 0) return true;
            dead = first_dead_peer(true);
            return dead >= 0;
        },
        what, -1));
    if (dead >= 0) return peer_failure(dead, what);
    if (mode_ == data_mode::rma) {
        ucp_request_param_t prm{};
        HGAS_TRY(wait_request(ucp_worker_flush_nbx(worker_, &prm), what, -1));
    }
    return status::ok;
}

// A full completion rather than ucp_worker_fence: RMA puts must also be ordered before a later
// put_signal, which travels as an active message on possibly another lane, where UCX's weak
// fence promises nothing. Networks pay a round trip for it, as SHMEM libraries' fences do.
// Errors of the completed operations stay for quiet() to report.
status ucx_transport::fence() {
    if (!connected_) return status::ok;
    return complete_all("fence");
}

status ucx_transport::quiet() {
    if (!connected_) return status::ok;
    HGAS_TRY(complete_all("quiet"));
    return take_async_error();
}

}  // namespace ucx

result<std::unique_ptr<transport>> create_ucx(const settings &cfg) {
    auto r = ucx::ucx_transport::create(cfg);
    if (!r.ok()) return r.error();
    return std::unique_ptr<transport>(std::move(r.value()));
}

const char *ucx_version() { return ucp_get_version_string(); }

}  // namespace hgas::transport
