#include "geometry.hpp"

namespace mg {

bool decomp::make(int lt, int ranks, int me, decomp *out, std::string *why) {
    decomp d;
    d.ranks = ranks;
    d.me = me;
    d.lt = lt;
    if (ranks < 1 || (ranks & (ranks - 1)) != 0) {
        int lo = 1;
        while (lo * 2 <= ranks) lo *= 2;
        *why = "MG splits its 2^k-point grid evenly over a 3-D grid of ranks, so the rank count must be a power of "
               "two; " + std::to_string(ranks) + " is not: use " + std::to_string(lo) + " or " +
               std::to_string(lo * 2) + " ranks";
        return false;
    }
    // Each factor 2 goes to the dimension whose blocks are longest (ties: i3, then i2, then i1,
    // so that the first splits cut contiguous planes).
    for (int r = ranks; r > 1; r /= 2) {
        int best = 2;
        for (int dim = 1; dim >= 0; --dim)
            if (d.p[dim] < d.p[best]) best = dim;
        d.p[best] *= 2;
    }
    const int n = 1 << lt;
    for (int dim = 0; dim < 3; ++dim)
        if (n / d.p[dim] < 2) {
            *why = "the " + std::to_string(n) + "^3 grid on " + std::to_string(ranks) +
                   " ranks would leave fewer than 2 points per dimension on a rank; use at most " +
                   std::to_string(n * n * n / 8) + " ranks or a larger class";
            return false;
        }
    d.c[0] = me % d.p[0];
    d.c[1] = (me / d.p[0]) % d.p[1];
    d.c[2] = me / (d.p[0] * d.p[1]);
    int maxp = 1;
    for (int dim = 0; dim < 3; ++dim) maxp = d.p[dim] > maxp ? d.p[dim] : maxp;
    d.kd = 1;
    while ((1 << d.kd) < 2 * maxp) ++d.kd;
    *out = d;
    return true;
}

int decomp::neighbor(int d, int dir) const {
    int cc[3] = {c[0], c[1], c[2]};
    cc[d] = (cc[d] + dir + p[d]) % p[d];
    return cc[0] + p[0] * (cc[1] + p[1] * cc[2]);
}

}  // namespace mg
