// Streams of records between every pair of ranks, one per simulated day, whose lengths the
// receiver cannot know ahead: the sender cuts its records for a rank into fixed-size fragments
// and ends the day's stream with a shorter fragment (possibly empty): the end-of-stream
// marker. The receiver keeps `per_peer` persistent receives of one fragment each posted for
// every rank (hgas_recv_init once, hgas_start to repost), takes fragments as they arrive and
// reposts each buffer as soon as its bytes have been moved on. Or, in place: a day's worth of
// fragment slots in one block, all posted at once for any rank, each fragment left where it
// lands.
#pragma once
#include <hgas/hgas.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "device.hpp"

namespace episim {

// Where a stream's receive fragments (or send staging) live.
enum class memory { host, pinned, device };

class Receiver {
public:
    Receiver(Device &dev, hgas_msg_ctx_t ctx, int tag, size_t frag_bytes, int per_peer, memory where,
             double timeout_s);
    // In place: `slots` fragment slots in one block of `where` memory, every one posted for any
    // rank (HGAS_ANY_RANK). Fragments fill the slots in the order they are matched, a ring:
    // the day's fragments are consecutive slots (modulo `slots`), each received where it
    // stays. Nothing is reposted during the day; start() reposts the slots the last day used,
    // so the sink's data must have been moved on by then. `slots` must hold a day: at least
    // (bytes of the most visits) / frag_bytes + ranks (each stream's shorter end marker).
    struct in_place_t {};
    static constexpr in_place_t in_place{};
    Receiver(in_place_t, Device &dev, hgas_msg_ctx_t ctx, int tag, size_t frag_bytes, size_t slots, memory where,
             double timeout_s);
    ~Receiver();
    Receiver(const Receiver &) = delete;
    Receiver &operator=(const Receiver &) = delete;
    // One day: every rank's stream until its end marker. sink(rank, fragment, bytes) moves a
    // fragment's bytes on and returns a device event after which the buffer may be reused
    // (0: at once; in place: ignored, the slots wait for the next start()). Returns the bytes
    // received.
    using sink_t = std::function<uint64_t(int, const void *, size_t)>;
    void start();  // posts the free fragments (before this rank's own sends of the day)
    uint64_t day(const sink_t &sink);
    // Ends the stream: tells every rank how many receives are still posted for it, lets
    // `mine` (this rank's Sender of the same stream) complete the peers' ones, and completes
    // its own; then frees the requests. Collective.
    void close(class Sender &mine);
    size_t buffer_bytes() const { return bytes_; }

private:
    struct Slot {
        void *buf = nullptr;
        hgas_msg_req_t req = nullptr;
        hgas_msg_info_t info{};
        hgas_handle_t h = HGAS_HANDLE_DONE;
        bool posted = false;
    };
    void post(int q, int k);
    char *alloc_block();
    uint64_t day_in_place(const sink_t &sink);
    [[noreturn]] void timed_out(const std::vector<char> &ended) const;
    Device &dev_;
    hgas_msg_ctx_t ctx_;
    int tag_, n_, per_peer_;
    size_t frag_;
    memory where_;
    double timeout_;
    size_t bytes_ = 0;
    std::vector<std::vector<Slot>> slots_;
    std::vector<std::deque<int>> queue_;  // posted slots of each peer, in posting order
    void *block_ = nullptr;               // the device or pinned block of all fragments
    // In place: slots_[0] is the ring of slots; posted slots are [head_, head_ + posted_) mod
    // the ring's size, head_ the next to be filled.
    bool in_place_ = false;
    size_t head_ = 0, posted_ = 0;
};

class Sender {
public:
    Sender(Device &dev, hgas_msg_ctx_t ctx, int tag, size_t frag_bytes);
    // Sends `bytes` of `data` (any memory hgas messages take: host or device) to rank q as
    // fragments and the end marker. The data must stay until wait().
    void send(int q, const void *data, size_t bytes);
    // One fragment of rank q's stream: `bytes` == the fragment size, or fewer for the end
    // marker. Lets the message layer progress (this rank's receives too), so that fragments
    // sent while the rest is being made move on meanwhile.
    void fragment(int q, const void *data, size_t bytes);
    // As send, from device memory staged by hand through `per_peer` pinned fragments per rank
    // (device-to-host copies on the device's streams, each fragment sent once its copy is done).
    void send_staged(int q, const void *dev_data, size_t bytes, int per_peer);
    void wait();
    // Completes the receives every rank still has posted for this one with empty messages
    // (called by Receiver::close).
    void close();

private:
    Device &dev_;
    hgas_msg_ctx_t ctx_;
    int tag_;
    size_t frag_;
    std::vector<hgas_handle_t> hs_;
    std::vector<std::vector<char *>> staging_;  // per peer, pinned fragments (send_staged)
    std::vector<std::vector<hgas_handle_t>> staging_h_;
};

}  // namespace episim
