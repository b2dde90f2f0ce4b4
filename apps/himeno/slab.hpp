// One rank's slab of the Himeno grid: global interior planes [lo, hi) along i, with one halo
// (or fixed boundary) plane on each side, and the 19-point Jacobi sweep of the original
// himenoBMTxpa over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "team.hpp"

namespace himeno {

/// Interior planes [lo, hi) of rank r when mimax-2 interior planes are split over n ranks as
/// evenly as possible (the first (mimax-2) % n ranks get one more).
void split_planes(int mimax, int n, int r, int *lo, int *hi);

/// Called by team member 0 between rows while the interior is computed (progress polling).
struct poller {
    virtual void tick() = 0;
    virtual ~poller() = default;
};

class slab {
public:
    slab(int mimax, int mjmax, int mkmax, int lo, int hi);

    /// The initial state of the original: coefficients, p(i,j,k) = i^2/(mimax-1)^2, wrk2 = 0.
    void init();

    /// wrk2 and the row sums of gosa for local planes [l0, l1) (1 <= l0, l1 <= n+1) from p.
    void sweep(team &t, int l0, int l1, poller *poll = nullptr);
    /// p = wrk2 on the interior points of local planes 1..n (the original's copy loop).
    void commit(team &t);
    /// Copies the interior points (j, k not on the boundary) of a full plane into p plane l.
    void set_halo(int l, const float *plane);

    /// Sum of the row sums of local plane l in row order (rank-count independent).
    double plane_gosa(int l) const;
    const float *p_plane(int l) const { return &p_[l * plane_]; }
    float *wrk2_plane(int l) { return &wrk2_[l * plane_]; }
    size_t plane_floats() const { return plane_; }
    int planes() const { return n_; }  // interior planes owned
    int lo() const { return lo_; }

private:
    void sweep_row(int l, int j, double *rowsum, float *ss);

    int mi_, mj_, mk_, lo_, n_;
    size_t plane_;
    // The original's arrays a(4), b(3), c(3), bnd, wrk1, wrk2, p, each (n+2) planes: local
    // plane l is global plane lo-1+l. Kept as arrays (not constants) so that the memory traffic
    // per point, and so MFLOPS, compare with the original.
    std::vector<float> a_[4], b_[3], c_[3], bnd_, wrk1_, wrk2_, p_;
    std::vector<double> rowsum_;  // n * (mjmax-2): gosa of each row, summed in k order
};

}  // namespace himeno
