// The closing report in the NPB style ("FT Benchmark Completed.", class, size, iterations,
// time, Mop/s total and per rank, "Verification = SUCCESSFUL"), printed by rank 0.
#pragma once

#include <string>

namespace nas {

struct npb_summary {
    std::string name;        // "FT", "MG"
    char cls = 'S';          // class letter, 'U' when the size is not one of NPB's
    int nx = 0, ny = 0, nz = 0;
    int niter = 0;
    double seconds = 0;      // timed section, wall clock
    double mops = 0;         // Mop/s total
    int ranks = 1;
    int threads = 1;         // compute threads per rank
    std::string optype;      // "floating point"
    bool verified = false;
    bool verifiable = true;  // false: no reference values for this size
    std::string kind;        // hgas memory kind of the field: host, sim, cuda
    std::string variant;     // program specific (FT: slabs / packed); may be empty
};

/// Prints the NPB-style block to stdout.
void print_npb(const npb_summary &s);

}  // namespace nas
