// The transport interface: how bytes reach another rank's segment. Implementations: `self`
// (the rank's own memory), `shm` (peers on the same node, through shared mappings), `ucx`
// (everything else, and everything when HGAS_TRANSPORTS=ucx).
//
// Fast path first (docs/style.md, "Transports"): a transport that can map a peer's segment returns its base from
// peer_base(); the semantics layer then copies and stores directly and never makes a virtual
// call. The data methods below exist for every transport all the same, so that every
// transport test runs on every transport.
//
// Threading: setup calls come from the rank's thread. Data calls come from the rank's thread
// (serialized). progress() may also be called from the rank's helper thread at the same time
// as data calls: implementations must allow that.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/ops.hpp"
#include "base/settings.hpp"
#include "base/status.hpp"
#include "boot/boot.hpp"

namespace hgas::transport {

// A byte range in a peer's segment, already bounds-checked by the initiator.
struct remote {
    int rank;
    uint16_t seg;
    uint64_t offset;
};

// Atomic and signal operations (base/ops.hpp), shared with the gpu layer.
using hgas::amo_op;
using hgas::amo_fetches;
using hgas::signal_op;

// What a transport can do and what it costs; proto uses the costs to choose among transports
// that can reach a peer, hgas-info prints them.
struct caps {
    bool direct = false;       // peer_base() gives load/store access
    bool needs_target_progress = false;  // some operations are executed by the target's CPU
    double latency_us = 0;     // rough small-message latency
    double bandwidth_gbs = 0;  // rough large-message bandwidth
};

// Outstanding explicit non-blocking operation (hgas_put_nb/get_nb).
struct pending {
    void *req = nullptr;  // transport-owned request, nullptr when complete
    int peer = -1;
    bool is_put = false;
    int stage = 0;        // transport-private progress state (e.g. put done, flush issued)
};

// Everything a transport needs to set itself up.
struct setup {
    const settings *cfg = nullptr;
    const boot::job_info *job = nullptr;
    const boot::topology *topo = nullptr;
    boot::client *store = nullptr;
    bool oversubscribed = false;  // more ranks on this machine than cores: waits back off
    // Is the job still alive? peer_failed (naming the rank that died or aborted) once the store
    // announced the job's end. Every wait a transport runs itself calls it between polls, so a
    // wait for a peer that died ends with the job's abort instead of at HGAS_TIMEOUT. Cheap to
    // call often (the core rate-limits the look at the store socket); may be empty in tests.
    std::function<status()> job_alive;
    // Tells the job that this rank found a peer dead (the message names it), so that the job's
    // abort names that peer even when this rank's own exit reaches the store first. Rank thread
    // only; may be empty.
    std::function<void(const std::string &why)> peer_lost;
};

// A segment of this rank as transports register it.
struct local_segment {
    uint16_t seg;
    void *base;
    uint64_t size;
    std::string shm_name;  // for host segments: the shared-memory name peers on the node map
    int fd = -1;           // and its open descriptor in this process, or -1
};

// Tagged messages matched by the transport itself (UCX's tag API), for the message layer's
// peers on other nodes (src/msg/README.md "Messages by UCX tag matching"). `tag_op` is the
// completion of one posted send or receive: `done` is set (release) once the buffer may be
// reused or holds the message, with `code`/`error` saying how it ended. The caller keeps the
// op alive until `done`: a transport callback writes it.
struct tag_op {
    std::atomic<bool> done{false};
    status code = status::ok;
    std::string error;
};
class tag_channel {
public:
    virtual ~tag_channel() = default;
    // Whether CUDA device memory may be handed to the transport directly.
    virtual bool cuda_memory() const = 0;
    // Sends n bytes at buf to `peer` with the 64-bit `tag` (host: buf is host memory).
    virtual status tag_send(int peer, uint64_t tag, const void *buf, size_t n, bool host, tag_op *op) = 0;
    // Progresses the transport, then takes the first arrived message whose tag has the bits
    // `want` under `mask` out of its unexpected queue (in arrival order): false if none.
    virtual bool tag_take(uint64_t want, uint64_t mask, uint64_t &tag, size_t &len, void *&msg) = 0;
    // Receives a taken message into buf (n: its length; `peer` names the sender in errors).
    virtual status tag_recv(void *msg, void *buf, size_t n, bool host, int peer, tag_op *op) = 0;
    // Whether the connection to `peer` broke (it died).
    virtual bool tag_peer_failed(int peer) const = 0;
    // Whether any connection broke (cheap: checked at every message progress).
    virtual bool tag_any_failed() const = 0;
};

class transport {
public:
    virtual ~transport() = default;
    virtual const char *name() const = 0;
    virtual caps capabilities() const = 0;

    // Setup ------------------------------------------------------------------------------
    // Collective over all ranks (every rank constructs the same transports): exchange what
    // peers need to reach this rank (addresses), using setup.store.
    virtual status connect(const setup &s) = 0;
    virtual bool can_reach(int peer) const = 0;
    // Register one of this rank's segments; `blob` is what peers need to reach it (rkey,
    // shm name). The core exchanges blobs (allgather) and calls attach_segment on each rank
    // for each peer this transport reaches.
    virtual status register_segment(const local_segment &seg, std::string &blob) = 0;
    virtual status attach_segment(int peer, uint16_t seg, uint64_t size, const std::string &blob) = 0;
    // Whether attach_segment may wait for the peer's first use (HGAS_PEER_ATTACH=lazy): the core
    // then keeps the blobs and calls attach_segment for a peer when something first reaches it,
    // from the rank's thread or one acting for it (helper, device proxy), one call at a time and
    // never while another thread may be inside setup. Such a transport's peer_base() must be
    // safe to call for other peers meanwhile. After segments_attached() the blob must still work.
    virtual bool attaches_lazily() const { return false; }
    // Called once every peer has attached (after a barrier): e.g. unlink shm names.
    virtual void segments_attached() {}
    // Memory for one of this rank's segments that this transport allocates itself (and then
    // registers in register_segment), for transports that reach same-node peers fastest in
    // memory they allocated (UCX's shared-memory transports). status::unsupported by default:
    // the core then creates the segment as POSIX shared memory.
    virtual result<void *> allocate_segment(uint16_t seg, uint64_t size) { return status::unsupported; }
    // Base address of a peer segment mapped into this process, or nullptr.
    virtual void *peer_base(int peer, uint16_t seg) const { return nullptr; }
    // Release everything; called after the final barrier. Idempotent.
    virtual void shutdown() = 0;

    // Data (destination ranges already checked by the initiator) ------------------------
    // nbi == false: complete locally at return (src reusable / dst filled);
    // nbi == true:  complete at quiet().
    virtual status put(remote dst, const void *src, size_t n, bool nbi) = 0;
    virtual status get(void *dst, remote src, size_t n, bool nbi) = 0;
    // Explicit non-blocking; test() reports remote completion for puts.
    virtual status put_nb(remote dst, const void *src, size_t n, pending &p) = 0;
    virtual status get_nb(void *dst, remote src, size_t n, pending &p) = 0;
    virtual status test(pending &p, bool &done) = 0;
    // width 4 or 8; `result` receives the old value for fetching ops. Complete at return.
    virtual status amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare,
                       uint64_t *result) = 0;
    // Data, then the 8-byte signal at `sig` (same rank): data visible before the signal.
    virtual status put_signal(remote dst, const void *src, size_t n, remote sig, signal_op op,
                              uint64_t value, bool nbi) = 0;
    // Order puts to each peer across this call / complete everything at the targets.
    virtual status fence() = 0;
    virtual status quiet() = 0;
    // Advance outstanding work and serve requests from peers. Cheap when idle.
    virtual status progress() = 0;
    // Steps of serving peers' requests since the start, where the transport counts them (0
    // otherwise): the helper thread keeps polling without sleeping while this moves.
    virtual uint64_t progressed() const { return 0; }
    // Whether it is in the middle of serving a peer (a rendezvous payload or reply under way,
    // which needs more progress calls to finish): the helper thread does not sleep meanwhile.
    virtual bool serving() const { return false; }
    // Its own tag matching for the message layer, if it has one.
    virtual tag_channel *tags() { return nullptr; }
};

// Factories. create_ucx returns status::unsupported in a build without UCX.
std::unique_ptr<transport> create_self();
std::unique_ptr<transport> create_shm();
result<std::unique_ptr<transport>> create_ucx(const settings &cfg);
// "1.22.0" or "" when built without UCX.
const char *ucx_version();

// Direct-access helpers shared by self, shm and the semantics fast path.
namespace direct {
// Orders stores (including the non-temporal ones that large memcpy uses) before later stores.
void store_fence();
// Copies of at least this many bytes between mapped host memory (puts and gets on this node)
// use non-temporal stores (copy_nt); smaller ones memcpy. Set once per process from
// HGAS_SHM_NT_MIN (set_copy_nt_min; SIZE_MAX until then).
extern std::atomic<size_t> copy_nt_min;
void set_copy_nt_min(uint64_t setting);
// memcpy with non-temporal stores (a following store_fence orders them; it ends with one).
void copy_nt(void *dst, const void *src, size_t n);
// The copy of a put or get to or from mapped host memory.
inline void copy(void *dst, const void *src, size_t n) {
    if (n >= copy_nt_min.load(std::memory_order_relaxed)) copy_nt(dst, src, n);
    else std::memcpy(dst, src, n);
}
uint64_t amo(void *addr, amo_op op, unsigned width, uint64_t operand, uint64_t compare);
void signal_update(void *addr, signal_op op, uint64_t value);
}  // namespace direct

}  // namespace hgas::transport
