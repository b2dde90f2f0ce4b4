// The progress engine of one rank: polls every transport, and optionally runs a helper thread
// that keeps doing so while the rank computes, so that peers' requests that need this rank's
// CPU (UCX active messages, software RMA over TCP) are served without the rank calling hgas.
#pragma once
#include <atomic>
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
    // Extra work done on every poll (the staging agent). `on_rank_thread` is false on the helper.
    void add_poller(std::function<status(bool on_rank_thread)> f) { pollers_.push_back(std::move(f)); }
    // One pass over the transports that need polling. Cheap when they have nothing to do.
    status poll();
    // Start the helper thread; it sleeps `interval_us` between polls (0 = spin).
    void start_helper(unsigned interval_us, int rank);
    void stop_helper();
    bool helper_running() const { return helper_.joinable(); }
    uint64_t helper_polls() const { return helper_polls_.load(std::memory_order_relaxed); }

private:
    std::vector<transport::transport *> polled_;  // only those with needs_target_progress
    std::vector<std::function<status(bool)>> pollers_;
    std::thread helper_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> helper_polls_{0};
};

}  // namespace hgas::progress
