// Clocks and deadlines. Every wait in hgas has a deadline (docs/design.md, "Faults and bad input").
#pragma once
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstdint>

namespace hgas {

using steady = std::chrono::steady_clock;

inline double now_seconds() {
    return std::chrono::duration<double>(steady::now().time_since_epoch()).count();
}

inline uint64_t now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch()).count());
}

// A point in time after which a wait gives up. `seconds <= 0` means "already expired".
class deadline {
public:
    explicit deadline(double seconds) : end_ns_(now_ns() + static_cast<uint64_t>(seconds * 1e9)) {}
    bool expired() const { return now_ns() >= end_ns_; }
    double remaining() const {
        uint64_t n = now_ns();
        return n >= end_ns_ ? 0.0 : (end_ns_ - n) * 1e-9;
    }

private:
    uint64_t end_ns_;
};

// Spin-then-check helper for hot waits: the clock is read only every 1024 polls so that a
// wait on shared memory costs a load per iteration, not a clock read.
class poll_budget {
public:
    bool tick() { return (++n_ & 1023u) == 0; }

private:
    uint32_t n_ = 0;
};

// What a waiting rank does while nothing arrives. With more ranks than cores, a spinning rank
// takes the core from the very peer it waits for, so it yields after a short spin and, when
// that is not enough (the scheduler may hand the core straight back), sleeps a few
// microseconds: MPI's "yield when idle", graduated. With no more ranks than cores it spins
// longer (the lowest latency) but still yields after 1024 polls: two ranks may share a
// core anyway (other load, no binding), and a wait that never yields costs its peer a whole
// scheduler slice (milliseconds); a yield with nobody else runnable returns at once.
// Oversubscribed, the spin is 4 polls: with 64 (each poll runs the progress engine), OSU's
// barrier at 4 PEs on 2 cores took 6.6-15 us against Open MPI's 5-10; with 4, 2.9-7.4.
class spin_backoff {
public:
    explicit spin_backoff(bool oversubscribed) : oversubscribed_(oversubscribed) {}
    void idle() {
        ++idle_;
        if (!oversubscribed_) {
            if (idle_ >= 1024) sched_yield();
            return;
        }
        if (idle_ < 4) return;
        if (idle_ < 4096) {
            sched_yield();
        } else {
            struct timespec ts{0, 20000};
            nanosleep(&ts, nullptr);
        }
    }
    void reset() { idle_ = 0; }

private:
    bool oversubscribed_;
    uint32_t idle_ = 0;
};

}  // namespace hgas
