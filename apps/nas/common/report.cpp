#include "report.hpp"

#include <cstdio>

namespace nas {

void print_npb(const npb_summary &s) {
    std::printf("\n %s Benchmark Completed.\n", s.name.c_str());
    std::printf(" Class           = %24c\n", s.cls);
    char size[64];
    std::snprintf(size, sizeof size, "%4dx%4dx%4d", s.nx, s.ny, s.nz);
    std::printf(" Size            = %24s\n", size);
    std::printf(" Iterations      = %24d\n", s.niter);
    std::printf(" Time in seconds = %24.2f\n", s.seconds);
    std::printf(" Total processes = %24d\n", s.ranks);
    std::printf(" Threads/process = %24d\n", s.threads);
    std::printf(" Mop/s total     = %24.2f\n", s.mops);
    std::printf(" Mop/s/process   = %24.2f\n", s.mops / s.ranks);
    std::printf(" Operation type  = %24s\n", s.optype.c_str());
    if (!s.verifiable)
        std::printf(" Verification    = %24s\n", "NOT PERFORMED");
    else
        std::printf(" Verification    = %24s\n", s.verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
    std::printf(" Memory kind     = %24s\n", s.kind.c_str());
    if (!s.variant.empty()) std::printf(" Variant         = %24s\n", s.variant.c_str());
    std::printf(" Version         = %24s\n", "NPB 3.4 (hgas)");
    std::fflush(stdout);
}

}  // namespace nas
