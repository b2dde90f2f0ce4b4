// How nas-ft distributes the nx x ny x nz grid (x fastest) over the ranks.
//
// Before the transpose a rank owns z-planes [z0, z0+zc): the "slab" array, [zl][y][x], where the
// x-y 2-D transforms run. After it a rank owns y-rows [y0, y0+yc) of every plane: the "pencil"
// array, [z][yl][x], where the z transforms, evolve and the frequency-space field live. A
// plane's part for destination d, rows [y0_d, y0_d+yc_d), is contiguous in the slab and lands
// contiguously in d's pencil, so the transpose moves whole blocks of yc_d * nx points.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace ft {

using cplx = std::complex<double>;

struct layout {
    int nx = 0, ny = 0, nz = 0, n = 1, me = 0;
    std::vector<int> z0, zc;  // z-planes of each rank (the slab)
    std::vector<int> y0, yc;  // y-rows of each rank (the pencil)
    int zc_max = 0, yc_max = 0;

    layout(int nx_, int ny_, int nz_, int ranks, int rank);
    size_t plane() const { return size_t(nx) * ny; }
    size_t slab_elems() const { return size_t(zc_max) * ny * nx; }     // symmetric size
    size_t pencil_elems() const { return size_t(nz) * yc_max * nx; }   // symmetric size
    size_t block_elems() const { return size_t(zc_max) * yc_max * nx; } // packed: one per peer
    int my_zc() const { return zc[me]; }
    int my_yc() const { return yc[me]; }
};

/// Items [*first, *first + *count) of `total` split over `parts` as evenly as possible.
void split(int total, int parts, int part, int *first, int *count);

}  // namespace ft
