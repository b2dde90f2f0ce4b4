// One run of NPB FT on hgas: allocation, the transposes (Slabs or Packed Slabs), the timed
// iterations and the per-iteration checksums.
#pragma once

#include <string>
#include <vector>

#include "layout.hpp"
#include "options.hpp"

namespace ft {

/// Wall seconds per phase on this rank (the timed section only).
struct phases {
    double compute = 0;  // transforms, evolve, checksum terms, initial field
    double pack = 0;     // local copies of the transpose (pack, unpack; sim: fetch from sim memory)
    double comm = 0;     // time inside hgas calls that move data (puts, all-to-all, checksum sum)
    double wait = 0;     // waiting for the transposed data to arrive (signals, quiet)
    double transpose() const { return pack + comm + wait; }
};

struct run_result {
    std::vector<cplx> sums;  // checksum per iteration (same on every rank)
    double seconds = 0;      // timed section, slowest rank
    phases ph;               // this rank's
    double cpu_seconds = 0;  // this rank's CPU time in the timed section
    double fft_seconds = 0;  // this rank's time in local transforms (a subset of compute)
    double peer_3d_seconds = -1;  // cuda: cuFFT's own 3-D transform of the grid (rank 0; < 0: none)
    int threads = 1;
    std::string backend;
    double energy_j = 0;     // filled by main
};

/// Runs FT as `o` says on all ranks (collective). Errors end the job with a message.
run_result run_ft(const options &o);
/// The same on a 2-D process grid o.p1 x o.p2 (ft_run2d.cpp; kinds host and sim).
run_result run_ft_2d(const options &o, int threads);

}  // namespace ft
