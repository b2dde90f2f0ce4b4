// Grids of MG and how they are split over the ranks.
//
// A grid at level k has 2^k points per dimension (the finest level lt: the class's n). A rank
// stores a block of n1 x n2 x n3 points with one ghost layer on each side: local index 0 and
// n+1 are ghosts, 1..n the rank's own points; i1 varies fastest (NPB's Fortran order).
#pragma once

#include <cstddef>
#include <string>

namespace mg {

/// A block with its ghost layer: (n1+2) x (n2+2) x (n3+2) doubles at p (host or device memory).
struct box {
    double *p = nullptr;
    int n1 = 0, n2 = 0, n3 = 0;
    int n(int d) const { return d == 0 ? n1 : d == 1 ? n2 : n3; }
    size_t count() const { return size_t(n1 + 2) * size_t(n2 + 2) * size_t(n3 + 2); }
};

/// An inclusive index range [lo, hi] per dimension of a box (ghosts included).
struct region {
    int lo[3], hi[3];
    size_t count() const {
        return size_t(hi[0] - lo[0] + 1) * size_t(hi[1] - lo[1] + 1) * size_t(hi[2] - lo[2] + 1);
    }
};

/// The ranks as a p[0] x p[1] x p[2] grid (rank = c0 + p0*(c1 + p1*c2)) and the levels that
/// are split over them: levels kd..lt are split, each rank holding 2^k / p[d] points per
/// dimension (at least 2); levels below kd are replicated on every rank (the "gathered"
/// coarse levels: a rank would hold fewer than 2 points there).
struct decomp {
    int ranks = 1, me = 0;
    int p[3] = {1, 1, 1}, c[3] = {0, 0, 0};
    int lt = 1;  // finest level
    int kd = 1;  // coarsest split level

    /// The decomposition of a 2^lt grid over `ranks`; false, with the reason and what to do
    /// in *why, when the rank count does not fit.
    static bool make(int lt, int ranks, int me, decomp *out, std::string *why);

    int local(int k, int d) const { return (1 << k) / p[d]; }
    int offset(int k, int d) const { return c[d] * local(k, d); }  // of my first point, 0-based
    bool split(int k) const { return k >= kd; }
    /// The rank next to me along d in direction dir (-1 or +1), periodic.
    int neighbor(int d, int dir) const;
};

}  // namespace mg
