// A fixed team of compute threads: the calling thread is member 0, T-1 helpers wait on a
// barrier between jobs. Helpers never call hgas (its calls must not overlap, docs/model.md),
// so member 0 is the one that polls progress while the team computes.
#pragma once

#include <barrier>
#include <functional>
#include <thread>
#include <vector>

namespace himeno {

class team {
public:
    explicit team(int n) : n_(n < 1 ? 1 : n), start_(n_), done_(n_) {
        for (int t = 1; t < n_; ++t) helpers_.emplace_back([this, t] { serve(t); });
    }
    ~team() {
        if (n_ > 1) {
            stop_ = true;
            start_.arrive_and_wait();
            for (auto &h : helpers_) h.join();
        }
    }
    team(const team &) = delete;
    team &operator=(const team &) = delete;

    int size() const { return n_; }

    /// Runs job(member) on every member; returns when all have finished.
    void run(const std::function<void(int)> &job) {
        if (n_ == 1) return job(0);
        job_ = &job;
        start_.arrive_and_wait();  // the barrier orders job_ before the helpers read it
        job(0);
        done_.arrive_and_wait();
    }

private:
    void serve(int t) {
        for (;;) {
            start_.arrive_and_wait();
            if (stop_) return;
            (*job_)(t);
            done_.arrive_and_wait();
        }
    }

    int n_;
    std::barrier<> start_, done_;
    const std::function<void(int)> *job_ = nullptr;
    bool stop_ = false;  // written before a start barrier, read after it
    std::vector<std::thread> helpers_;
};

}  // namespace himeno
