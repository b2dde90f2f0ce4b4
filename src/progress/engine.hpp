// The progress engine of one rank: polls every transport, and optionally runs a helper thread
// that keeps doing so while the rank computes, so that peers' requests that need this rank's
// CPU (UCX active messages, software RMA over TCP) are served without the rank calling hgas.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "transport/transport.hpp"

namespace hgas::progress {

class engine {
public:
    engine() = default;
    engine(const engine &) = delete;
    engine &operator=(const engine &) = delete;
    ~engine() { stop_helper(); }

    void set_transports(std::vector<transport::transport *> ts);
    // Extra work done on every poll (the staging agent, the message layer, the device proxy).
    // `on_rank_thread` is false on the helper. Layers add theirs after the helper thread may
    // have started (the message layer right after init, the device layer at its first use),
    // so the list is a fixed array whose entries are published by a count, never reallocated
    // under the helper's feet.
    status add_poller(std::function<status(bool on_rank_thread)> f);
    // One pass over the transports that need polling. Cheap when they have nothing to do.
    status poll();
    // Start the helper thread. It polls without sleeping while work comes in and for
    // `spin_us` after the last work it saw, then sleeps `interval_us` between polls (0 = it
    // never sleeps).
    void start_helper(unsigned interval_us, unsigned spin_us, int rank);
    void stop_helper();
    bool helper_running() const { return helper_.joinable(); }
    uint64_t helper_polls() const { return helper_polls_.load(std::memory_order_relaxed); }
    uint64_t helper_sleeps() const { return helper_sleeps_.load(std::memory_order_relaxed); }
    // A poller that served a peer says so (from any thread), which keeps the helper awake.
    void note_work() { work_.fetch_add(1, std::memory_order_relaxed); }
    // Helper passes left to the rank's own thread because it was polling (hgas-info, tests).
    uint64_t helper_yields() const { return helper_yields_.load(std::memory_order_relaxed); }

private:
    std::vector<transport::transport *> polled_;  // only those with needs_target_progress
    static constexpr size_t max_pollers = 8;
    std::function<status(bool)> pollers_[max_pollers];
    std::atomic<size_t> n_pollers_{0};  // entries [0, n) are complete (release on add)
    std::thread helper_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> helper_polls_{0}, helper_sleeps_{0}, helper_yields_{0};
    // poll() calls of the rank's thread (written by it alone). While it polls -- a wait --
    // the helper leaves the transports to it: two threads progressing one UCX worker take
    // turns on its lock (4 MiB put over active messages, idle target: 970 us with the helper
    // on, 669 off, on one H100 machine).
    std::atomic<uint64_t> rank_polls_{0};
    std::atomic<uint64_t> work_{0};  // note_work() calls
    uint64_t activity() const;       // work_ plus the polled transports' events
    bool serving() const;            // a polled transport is in the middle of serving a peer
};

}  // namespace hgas::progress
