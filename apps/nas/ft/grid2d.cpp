#include "grid2d.hpp"

#include <algorithm>

#include "layout.hpp"

namespace ft {

grid2d::grid2d(int nx_, int ny_, int nz_, int p1_, int p2_, int rank)
    : nx(nx_), ny(ny_), nz(nz_), p1(p1_), p2(p2_), i(rank / p2_), j(rank % p2_) {
    zA0.resize(p1);
    zA.resize(p1);
    yC0.resize(p1);
    yC.resize(p1);
    yA0.resize(p2);
    yA.resize(p2);
    xB0.resize(p2);
    xB.resize(p2);
    for (int r = 0; r < p1; ++r) {
        split(nz, p1, r, &zA0[r], &zA[r]);
        split(ny, p1, r, &yC0[r], &yC[r]);
    }
    for (int c = 0; c < p2; ++c) {
        split(ny, p2, c, &yA0[c], &yA[c]);
        split(nx, p2, c, &xB0[c], &xB[c]);
    }
}

bool choose_grid(int nx, int ny, int nz, int n, int want_p1, int want_p2, int *p1, int *p2, std::string *why) {
    // Every rank needs a plane of A (p1 <= nz), a row of C (p1 <= ny), a row of A (p2 <= ny) and a
    // column of B (p2 <= nx).
    const int max1 = std::min(nz, ny), max2 = std::min(nx, ny);
    const std::string size = std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
    const std::string rule = "a grid p1 x p2 needs p1 <= min(nz, ny) = " + std::to_string(max1) +
                             " and p2 <= min(nx, ny) = " + std::to_string(max2) + ", so at most " +
                             std::to_string(long(max1) * max2) + " ranks";
    if (want_p1 > 0) {
        if (long(want_p1) * want_p2 != n) {
            *why = "--grid " + std::to_string(want_p1) + "x" + std::to_string(want_p2) + " has " +
                   std::to_string(long(want_p1) * want_p2) + " ranks, but the job has " + std::to_string(n);
            return false;
        }
        if (want_p1 > max1 || want_p2 > max2) {
            *why = "--grid " + std::to_string(want_p1) + "x" + std::to_string(want_p2) + " does not fit " + size +
                   ": " + rule;
            return false;
        }
        *p1 = want_p1;
        *p2 = want_p2;
        return true;
    }
    for (int c = 1; c <= n && c <= max2; ++c)
        if (n % c == 0 && n / c <= max1) {
            *p1 = n / c;
            *p2 = c;
            return true;
        }
    *why = "the job has " + std::to_string(n) + " ranks, and no grid p1 x p2 = " + std::to_string(n) + " fits " +
           size + ": " + rule + " (and p1 * p2 must be the rank count)";
    return false;
}

}  // namespace ft
