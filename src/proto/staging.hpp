// Device paths: every transfer that involves device memory (kinds cuda and sim).
//
// Three ways, chosen per operation by rma (the path table is in docs/paths.md):
//  - local copy: both ends are memory this process names (own memory, a peer's device memory
//    mapped by IPC, a peer's host heap mapped by shm): one device copy on an internal stream.
//    Device memory of two different kinds (cuda and sim) bounces through a pinned buffer.
//  - bounce: a device buffer here and a host segment the transports reach (another node): the
//    chunks go through this rank's pinned pool, the device copy of chunk k+1 overlapping the
//    network transfer of chunk k.
//  - staged (the seeds' eager ring with credits, and pipelined rendezvous through pinned
//    buffers): the target's device memory is not reachable from here (another node, no peer
//    access, or HGAS_PATH=staged). Each pair of ranks has a ring of `slots` slots of
//    `chunk` bytes in the target's (registered) symmetric host heap. The initiator writes a
//    chunk into a slot -- straight from its GPU into the mapped slot when the target is on the
//    node, else from its pinned pool through the transport -- and publishes the slot's header
//    last; the target's agent (run by its progress engine) copies the slot into device memory,
//    applies any signal once the data is there, and returns credits (a count of slots applied)
//    at the half-way mark or when its ring runs empty. Large transfers are simply many chunks:
//    the initiator's device-to-host copies, the transport, and the target's host-to-device
//    copies of successive chunks overlap. Gets and atomics travel as requests in the same ring;
//    the target answers into the initiator's reply slots.
//
// Ordering: a ring is FIFO, so staged operations from one rank to another are applied in
// order; signals are applied after their data. quiet() waits until every target has applied
// (credited) every message sent to it.
//
// Threading: the initiator side runs on the rank's thread. The agent runs inside progress,
// on the rank's thread or its helper thread (never both at once); on the helper thread it
// does only what needs no transport call (answers to peers that map this rank's heap), and
// leaves the rest for the rank's thread.
#pragma once
#include <atomic>
#include <array>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "gpu/gpu.hpp"
#include "mem/segment.hpp"
#include "transport/transport.hpp"

namespace hgas::proto {

struct staging_config {
    int me = 0, n = 0;
    uint64_t chunk = 0;
    int slots = 0;
    uint64_t area = 0;                   // offset of the staging area in the symmetric heap
    // Rank p's symmetric host heap mapped here, or nullptr (mapped at the first call for p).
    std::function<char *(int)> peer_sym;
    std::array<char *, mem::seg_count> own_base{};
    std::array<uint64_t, mem::seg_count> own_size{};
    std::array<gpu::device *, 3> dev{};  // by kind; nullptr where absent
    std::function<transport::transport *(int)> route;
    // rank::wait: spins on pred with progress and HGAS_TIMEOUT.
    std::function<status(const char *, const std::function<bool()> &)> wait;
};

struct signal_req {
    uint16_t seg;
    uint64_t offset;
    signal_op op;
    uint64_t value;
};

// How large the rings of an n-rank job are: ranks x slots x chunk would grow 2 MiB per peer
// at the defaults (8 x 256K), filling a 64 MiB heap at 32 ranks. Under a budget, what came
// from the defaults shrinks: the chunk first (to 64K: bandwidth with few peers is kept, as
// few peers fit the budget whole), then the slots (to 4), then the chunk (to 4K), then the
// slots (to 2). Values the user set are kept. Every rank computes the same.
struct staging_plan {
    uint64_t chunk = 0;
    int slots = 0;
    uint64_t bytes = 0;   // area_bytes(n, chunk, slots)
    bool shrunk = false;  // smaller than asked for
};

class staging {
public:
    // Bytes of the symmetric host heap the staging area needs.
    static uint64_t area_bytes(int n, uint64_t chunk, int slots);
    // The rings for n ranks within `budget` bytes; chunk_fixed / slots_fixed: the user's values.
    static staging_plan plan(int n, uint64_t chunk, int slots, uint64_t budget, bool chunk_fixed, bool slots_fixed);

    explicit staging(staging_config c);
    ~staging();

    // Local copy between memory this process names. Kinds say which engine moves the bytes.
    status copy(void *dst, mem::kind dk, const void *src, mem::kind sk, size_t n);
    // The same, complete at quiet(): copies spread over the device's streams and overlap.
    status copy_nbi(void *dst, mem::kind dk, const void *src, mem::kind sk, size_t n);
    // Bounce: device memory here <-> a host segment that `t` reaches.
    status bounce_put(transport::transport *t, transport::remote dst, const void *src, mem::kind sk, size_t n);
    status bounce_get(void *dst, mem::kind dk, transport::transport *t, transport::remote src, size_t n);

    // Staged: target memory on `rank` at (seg, offset), applied by its agent. A blocking put
    // returns once the source may be reused (every chunk left it); `nbi` returns as soon as
    // the chunks are queued: they are published as their copies finish (by the next staged
    // call, by progress on the rank's thread, or at quiet), so that a stream of puts keeps
    // the copy engines busy.
    status put(int rank, uint16_t seg, uint64_t offset, const void *src, mem::kind sk, size_t n,
               const signal_req *sig, bool nbi = false);
    status get(void *dst, mem::kind dk, int rank, uint16_t seg, uint64_t offset, size_t n);
    result<uint64_t> amo(int rank, uint16_t seg, uint64_t offset, amo_op op, unsigned width, uint64_t operand,
                         uint64_t compare);
    // Every copy_nbi is complete and every staged message sent has been applied by its target.
    status quiet();

    // The agent: serve this rank's rings. `on_rank_thread` allows transport calls.
    status poll(bool on_rank_thread);

    // Statistics for tests and hgas-info.
    uint64_t messages_sent() const { return total_sent_; }
    uint64_t messages_applied() const { return total_applied_.load(std::memory_order_relaxed); }

private:
    struct header;
    struct outgoing;  // a message whose payload is still being copied from device memory
    struct incoming;  // a message the agent has started to apply
    struct ring_in {
        uint64_t next = 1;      // sequence number of the next message to read
        uint64_t applied = 0;   // messages finished
        uint64_t returned = 0;  // credits last written to the sender
        std::deque<incoming> q;
    };

    gpu::device *engine_for(mem::kind a, mem::kind b) const;
    size_t chunk_len(size_t k, size_t left, bool ramp_up, bool ramp_down) const;
    status wait_ticket(gpu::device *d, gpu::ticket t, const char *what);
    char *slot_in(int src, uint64_t seq) const;       // in this rank's heap: ring of `src`
    uint64_t slot_offset(int src, uint64_t seq) const;  // in any rank's heap
    char *reply_slot(int j) const;
    uint64_t reply_offset(int j) const;
    const uint64_t *credit_word(int target) const;
    // Sender: claim the next slot of ring `t` (waits for a credit), returns its sequence number.
    result<uint64_t> claim(int t);
    status send(int t, uint64_t seq, header &h, const void *payload, mem::kind pk, size_t len);
    status flush_outgoing(bool all);
    status publish_ready(bool on_rank_thread);  // publishes finished messages at the head of out_; never waits
    status serve(bool on_rank_thread);          // the agent: this rank's incoming rings
    status publish(int t, uint64_t seq, const header &h, char *staged_payload, size_t len);
    // Agent helpers.
    status start(int src, ring_in &r, incoming &in);
    result<bool> finish(int src, incoming &in, bool on_rank_thread);
    status reply(int src, const header &h, const void *data, size_t len, bool data_in_place, bool on_rank_thread);
    status return_credits(int src, ring_in &r, bool on_rank_thread, bool force);

    staging_config c_;
    uint64_t slot_bytes_ = 0, ring_bytes_ = 0, rings_ = 0, credits_ = 0, replies_ = 0;
    std::vector<uint64_t> sent_;  // messages sent to each rank
    std::deque<outgoing> out_;
    std::mutex out_mu_;      // out_: the rank's thread, and the helper in publish_ready
    bool flushing_ = false;  // the rank's thread is working on out_ further up its stack
    std::vector<std::pair<gpu::device *, gpu::ticket>> nbi_;  // copy_nbi not yet complete
    std::vector<gpu::device *> nbi_devices_;  // devices with untracked copy_nbi on stream 0
    std::vector<ring_in> in_;
    char *pinned_ = nullptr;      // slots * slot_bytes: assembly of messages that travel by transport
    gpu::device *pinned_owner_ = nullptr;
    uint64_t next_reply_ = 0, token_ = 0;
    uint64_t total_sent_ = 0;
    std::atomic<uint64_t> total_applied_{0};  // written under agent_mu_, read by the progress poller on either thread
    std::mutex agent_mu_;  // the rank's thread and the helper never run the agent at once
};

}  // namespace hgas::proto
