// The distributed product (multiply.cpp) and its check (verify.cpp).
#pragma once

#include "engine.hpp"

namespace matmul {

struct arrays {
    hgas_array_t a{}, b{}, c{};
    uint64_t n = 0, b_order = 0, nb = 0;  // matrix order, tile order, tiles per row
    hgas_kind_t kind = HGAS_KIND_HOST;
};

struct step_stats {
    double wait_s = 0;           // time blocked on gets (communication not hidden by products)
    uint64_t fetched_bytes = 0;  // bytes this rank fetched from other ranks
    uint64_t local_bytes = 0;    // bytes of its own tiles it copied (kind sim)
};

// Allocates A, B, C (collective) and fills this rank's tiles of A and B. "" or what failed.
std::string setup(const options &o, engine &e, arrays &m);
void release(arrays &m);
// C = A·B: every rank computes its own tiles of C (owner computes), fetching the A and B tiles
// of other ranks with non-blocking gets one step ahead of the product (double buffering).
// Returns "" or what failed.
std::string multiply(engine &e, const arrays &m, step_stats &st);

struct check {
    double max_rel_err = 0;  // max |C - R| / max |R|
    double bound = 0;        // the largest error accepted
    double ref_s = 0;        // best time of the one-rank library product
    bool ok = false;
    std::string error;       // a failure that is not a wrong value (memory, a get)
};
// Rank 0: the one-rank reference product and the comparison with C (fetched tile by tile).
// inject_error adds 1e-6 to one element of C first (the check must then fail).
check verify(engine &e, const arrays &m, int reps, bool inject_error);

}  // namespace matmul
