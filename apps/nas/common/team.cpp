#include "team.hpp"

namespace nas {

team::team(int n) : n_(n < 1 ? 1 : n), start_(n_), done_(n_) {
    for (int t = 1; t < n_; ++t) helpers_.emplace_back([this, t] { serve(t); });
}

team::~team() {
    if (n_ > 1) {
        stop_ = true;
        start_.arrive_and_wait();
        for (auto &h : helpers_) h.join();
    }
}

void team::serve(int t) {
    for (;;) {
        start_.arrive_and_wait();
        if (stop_) return;
        (*job_)(t);
        done_.arrive_and_wait();
    }
}

void team::parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t, int64_t)> &range) {
    const int64_t total = end - begin;
    if (total <= 0) return;
    const int parts = total < n_ ? int(total) : n_;
    if (parts <= 1) return range(begin, end);
    const std::function<void(int)> job = [&](int t) {
        if (t >= parts) return;
        const int64_t a = begin + total * t / parts, b = begin + total * (t + 1) / parts;
        range(a, b);
    };
    job_ = &job;
    start_.arrive_and_wait();  // the barrier orders job_ before the helpers read it
    job(0);
    done_.arrive_and_wait();
}

}  // namespace nas
