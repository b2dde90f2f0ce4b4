// What every mode of himeno shares: error checks, clocks, the deterministic gosa combination,
// the field checksum, energy agreement across ranks, and the record a mode hands to the report.
#pragma once

#include <hgas/hgas.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "energy.hpp"
#include "options.hpp"

namespace himeno {

/// Ends the job with "himeno: what: hgas's last error" unless s is HGAS_OK.
void check(hgas_status_t s, const char *what);
/// Ends the job (every rank) with a message: for failures found by one rank alone.
[[noreturn]] void die(const std::string &msg);

double now();          // steady clock, seconds
double cpu_seconds();  // user + system time of this process (all its threads); of the calling thread with rank threads
/// Whether every rank has hgas memory of kind `k` for its halo buffers; rank 0 says what is
/// missing otherwise. Collective, so that no rank goes on into a collective the others left.
bool all_ranks_have(kind k);
/// Deadline of himeno's own waits (GPU events, halo signals): HGAS_TIMEOUT, as hgas's waits.
double wait_timeout_s();

/// gosa of the whole grid from this rank's plane sums (global interior planes lo..lo+n-1,
/// `sums[l-1]` for local plane l): a vector of all interior planes, zeros elsewhere, added
/// over the ranks (exact zeros change nothing, whatever the reduction tree) and summed in plane
/// order on every rank, so the result does not depend on the number of ranks. Collective.
double combine_gosa(int mimax, int lo, int n, const double *sums);

/// Digests of one plane (all points): double sum and FNV-1a of the float bits.
double plane_sum(const float *plane, size_t floats);
uint64_t plane_hash(const float *plane, size_t floats);
/// Sum and hash of the whole field on rank 0, every plane (boundaries included) in global
/// order; `plane(l)` returns local plane l (0..n+1) as host memory. Collective.
void field_checksum(int mimax, int lo, int n, size_t plane_floats, const std::function<const float *(int)> &plane,
                    double *sum, uint64_t *hash);

/// One timed run of `iters` sweeps.
struct result {
    double gosa = 0, seconds = 0, cpu_per_iter = 0, energy_j = NAN;
};

/// Energy over the ranks: available only if every rank could read its counter (or has no
/// GPU of its own to count). Collective.
struct energy_state {
    bool have = false;
    std::string note;
};
energy_state agree_energy(const gpu_energy &e);
/// This rank's energy delta for the sum over ranks (0 where another rank counts the GPU).
double energy_delta(const gpu_energy &e, double e0, double e1);

/// GPU measurements of a run in a GPU mode (empty in mode cpu).
struct gpu_report {
    bool present = false;
    std::vector<std::string> device;    // per rank: "cuda:0 NVIDIA H200 (0000:19:00.0)"
    std::vector<double> copy_gbps;      // per rank: device-to-device copy, bytes read + written
    std::vector<double> kernel_gbps;    // per rank: one sweep over all its planes, compulsory bytes
    std::vector<double> kernel_s;       // per rank: that sweep's time (median)
    std::vector<double> kernel_bytes;   // per rank: its compulsory bytes per sweep
    double peak_gbps = 0;               // rank 0's GPU: memory clock x bus width (0 if unknown)
};

/// What a mode hands to the report.
struct run_output {
    result main, bare;  // bare: without exchange (--overhead only)
    double sum = 0;     // checksum (--checksum)
    uint64_t hash = 0;
    int threads = 1;
    energy_state energy;
    gpu_report gpu;
};

}  // namespace himeno
