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

status engine::add_poller(std::function<status(bool)> f) {
    const size_t n = n_pollers_.load(std::memory_order_relaxed);  // added from the rank's thread only
    if (n == max_pollers)
        return fail(status::internal, "progress engine: more than %zu pollers were added", max_pollers);
    pollers_[n] = std::move(f);
    n_pollers_.store(n + 1, std::memory_order_release);
    return status::ok;
}

status engine::poll() {
    rank_polls_.store(rank_polls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    for (auto *t : polled_) HGAS_TRY(t->progress());
    const size_t n = n_pollers_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) HGAS_TRY(pollers_[i](true));
    return status::ok;
}

void engine::start_helper(unsigned interval_us, unsigned spin_us, int rank) {
    if (helper_.joinable() || (polled_.empty() && !n_pollers_.load(std::memory_order_relaxed))) return;  // nothing needs the target's CPU
    stop_.store(false);
    helper_ = std::thread([this, interval_us, spin_us, rank] {
        log_set_rank(rank);
        trace::thread_name("progress helper");
        using clock = std::chrono::steady_clock;
        const auto spin = std::chrono::microseconds(spin_us);
        uint64_t seen = activity();
        auto last_work = clock::now();
        uint64_t rank_seen = rank_polls_.load(std::memory_order_relaxed);
        while (!stop_.load(std::memory_order_acquire)) {
            // The rank's thread polled since the last pass: it is waiting and progresses
            // everything itself. Stay awake (it may go back to computing any moment) but out
            // of its way.
            const uint64_t rp = rank_polls_.load(std::memory_order_relaxed);
            if (rp != rank_seen) {
                rank_seen = rp;
                helper_yields_.fetch_add(1, std::memory_order_relaxed);
                last_work = clock::now();
                std::this_thread::yield();
                continue;
            }
            for (auto *t : polled_) {
                status s = t->progress();
                if (s != status::ok) HGASI_WARN("progress", "helper thread: %s", last_error().c_str());
            }
            const size_t n = n_pollers_.load(std::memory_order_acquire);
            for (size_t i = 0; i < n; ++i) {
                status s = pollers_[i](false);
                if (s != status::ok) HGASI_WARN("progress", "helper thread: %s", last_error().c_str());
            }
            helper_polls_.fetch_add(1, std::memory_order_relaxed);
            if (!interval_us) continue;
            if (!spin_us) {  // the spin window off (HGAS_PROGRESS_SPIN_US=0): a sleep after every poll
                std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
                continue;
            }
            // A peer that sent one request usually sends the next within microseconds (a
            // loop of gets, the fragments of a large message): after work the helper polls
            // without sleeping for spin_us, and sleeps only once the peers have gone quiet.
            const uint64_t now_seen = activity();
            const auto now = clock::now();
            if (now_seen != seen || serving()) {  // work came in, or a transfer for a peer is under way
                seen = now_seen;
                last_work = now;
            } else if (now - last_work >= spin) {
                helper_sleeps_.fetch_add(1, std::memory_order_relaxed);
                std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
            }
        }
    });
}

bool engine::serving() const {
    for (auto *t : polled_)
        if (t->serving()) return true;
    return false;
}

uint64_t engine::activity() const {
    uint64_t n = work_.load(std::memory_order_relaxed);
    for (auto *t : polled_) n += t->progressed();
    return n;
}

void engine::stop_helper() {
    if (!helper_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    helper_.join();
}

}  // namespace hgas::progress
