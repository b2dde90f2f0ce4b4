#include "layout.hpp"

#include <algorithm>

namespace ft {

void split(int total, int parts, int part, int *first, int *count) {
    const int base = total / parts, extra = total % parts;
    *count = base + (part < extra ? 1 : 0);
    *first = part * base + std::min(part, extra);
}

layout::layout(int nx_, int ny_, int nz_, int ranks, int rank) : nx(nx_), ny(ny_), nz(nz_), n(ranks), me(rank) {
    z0.resize(n);
    zc.resize(n);
    y0.resize(n);
    yc.resize(n);
    for (int r = 0; r < n; ++r) {
        split(nz, n, r, &z0[r], &zc[r]);
        split(ny, n, r, &y0[r], &yc[r]);
    }
    zc_max = *std::max_element(zc.begin(), zc.end());
    yc_max = *std::max_element(yc.begin(), yc.end());
}

}  // namespace ft
