// The MG solver of one rank: the grids of every level, the right-hand side of NPB's zran3, the
// V-cycle (NPB's mg3P) and the residual norm (norm2u3).
#pragma once

#include <vector>

#include "backend.hpp"
#include "comm.hpp"
#include "geometry.hpp"

namespace mg {

class solver {
public:
    /// Collective (the grids may live in the symmetric cuda heap). a, c: NPB's operator and
    /// smoother coefficients.
    solver(backend &be, const decomp &d, kind k, const double a[4], const double c[4]);
    ~solver();
    solver(const solver &) = delete;
    solver &operator=(const solver &) = delete;

    /// u = 0 at the finest level and v = NPB's right-hand side: zero except +1 at the 10 largest
    /// and -1 at the 10 smallest of the NPB random field (seed 314159265, a = 5^13). Collective.
    void init_rhs(phases &ph);
    /// u = 0 at the finest level (the restart before the timed iterations).
    void zero_u();
    /// r = v - A u at the finest level, with comm3 (NPB's resid in the main loop).
    void residual(phases &ph);
    /// One V-cycle (NPB's mg3P): u += the multigrid correction from r.
    void vcycle(phases &ph);
    /// NPB's norm2u3 of r at the finest level: sqrt(sum r^2 / n^3), and max |r| in *rnmu.
    /// Collective.
    double norm2(double *rnmu, phases &ph);

private:
    void comm(int k, box b, phases &ph);
    box make_box(int k, bool whole);

    backend &be_;
    decomp d_;
    double a_[4], c_[4];
    exchange ex_;
    std::vector<box> u_, r_;  // [k] for k = 1..lt (index 0 unused)
    box v_, whole_;           // whole_: the gathered level kd (when kd > 1)
};

}  // namespace mg
