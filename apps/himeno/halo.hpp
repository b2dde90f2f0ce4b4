// Receive halo buffers and their signals, shared by every mode.
//
// Buffers [side][slot][plane]: side 0 comes from the lower rank (me-1), side 1 from the upper
// one. Two slots, used by sweep parity: a neighbour can be at most one sweep ahead (it needs my
// halo of sweep it to start sweep it+1), so slot it%2 is never overwritten before I have read
// it. Signal words are host memory, one cache line each; the value after sweep it is it+1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "options.hpp"

namespace himeno {

class halo {
public:
    /// Collective: allocates 4 planes of kind `k` (host: hgas_malloc; sim, cuda:
    /// hgas_malloc_kind, so that neighbours can put into them) and the signal words.
    halo(kind k, size_t plane_floats, int me);
    ~halo();
    halo(const halo &) = delete;
    halo &operator=(const halo &) = delete;

    /// Puts my boundary plane (host or device memory) into neighbour `to`'s buffer for side
    /// `side` with its signal; complete at hgas_quiet.
    void send(int to, int side, int it, const float *plane);
    /// Waits for side `side` of sweep `it` and returns the plane as host memory (mode cpu).
    const float *receive(int side, int it);
    /// Waits for side `side` of sweep `it`, sleeping `poll_us` between tests (GPU modes: the
    /// CPU sleeps while it waits); ends the job after HGAS_TIMEOUT.
    void wait(int side, int it, int poll_us);
    /// The buffer that side `side` of sweep `it` arrives in (device memory for kind cuda).
    float *slot(int side, int it) { return recv_ + (size_t(side) * 2 + (it & 1)) * floats_; }

private:
    kind kind_;
    size_t floats_;
    int me_;
    float *recv_ = nullptr;
    uint64_t *sig_ = nullptr;
    std::vector<float> staging_;
};

}  // namespace himeno
