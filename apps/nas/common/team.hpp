// A fixed team of compute threads for the NAS programs' loops: the caller is member 0, the
// others sleep on a barrier between jobs (no spinning, so oversubscribed machines stay usable;
// OpenMP's default active wait made a loaded 2-core machine 40x slower). Helpers never call hgas.
#pragma once

#include <barrier>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace nas {

class team {
public:
    explicit team(int n);
    ~team();
    team(const team &) = delete;
    team &operator=(const team &) = delete;

    int size() const { return n_; }
    /// Runs body(i) for i in [begin, end), split into one contiguous range per member.
    void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t, int64_t)> &range);

private:
    void serve(int t);

    int n_;
    std::barrier<> start_, done_;
    const std::function<void(int)> *job_ = nullptr;
    bool stop_ = false;  // written before a start barrier, read after it
    std::vector<std::thread> helpers_;
};

}  // namespace nas
