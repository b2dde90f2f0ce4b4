#include "progress/engine.hpp"

#include <chrono>

#include "base/log.hpp"
#include "base/trace.hpp"

namespace hgas::progress {

void engine::set_transports(std::vector<transport::transport *> ts) {
    polled_.clear();
    for (auto *t : ts)
        if (t->capabilities().needs_target_progress) polled_.push_back(t);
}

status engine::poll() {
    for (auto *t : polled_) HGAS_TRY(t->progress());
    for (auto &f : pollers_) HGAS_TRY(f(true));
    return status::ok;
}

void engine::start_helper(unsigned interval_us, int rank) {
    if (helper_.joinable() || (polled_.empty() && pollers_.empty())) return;  // nothing needs the target's CPU
    stop_.store(false);
    helper_ = std::thread([this, interval_us, rank] {
        log_set_rank(rank);
        trace::thread_name("progress helper");
        while (!stop_.load(std::memory_order_acquire)) {
            for (auto *t : polled_) {
                status s = t->progress();
                if (s != status::ok) HGASI_WARN("progress", "helper thread: %s", last_error().c_str());
            }
            for (auto &f : pollers_) {
                status s = f(false);
                if (s != status::ok) HGASI_WARN("progress", "helper thread: %s", last_error().c_str());
            }
            helper_polls_.fetch_add(1, std::memory_order_relaxed);
            if (interval_us) std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
        }
    });
}

void engine::stop_helper() {
    if (!helper_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    helper_.join();
}

}  // namespace hgas::progress
