// nas-ft's 2-D (pencil) decomposition: N = p1 x p2 ranks, rank = i * p2 + j, for rank counts
// that exceed nz or ny (README.md, "Design"). x stays fastest in every layout:
//   A [zA][yA][x]  z split over p1 (by i), y over p2 (by j): x transforms, the checksum
//   B [zA][y][xB]  x split over p2 (by j): y transforms (stride xB)
//   C [z][yC][xB]  y split over p1 (by i): z transforms (stride yC * xB), evolve
// A <-> B is an all-to-all within the row team (same i, p2 ranks), B <-> C within the column
// team (same j, p1 ranks). With p2 = 1 this is the 1-D slab layout (A = B = slab, C = pencil).
#pragma once

#include <string>
#include <vector>

namespace ft {

struct grid2d {
    int nx = 0, ny = 0, nz = 0;
    int p1 = 1, p2 = 1, i = 0, j = 0;
    std::vector<int> zA0, zA;  // per row index i' (p1): z-planes of A and B
    std::vector<int> yC0, yC;  // per i': y-rows of C
    std::vector<int> yA0, yA;  // per column index j' (p2): y-rows of A
    std::vector<int> xB0, xB;  // per j': x-columns of B and C

    grid2d(int nx_, int ny_, int nz_, int p1_, int p2_, int rank);
    // This rank's counts and the symmetric (largest) block sizes, in elements.
    int zc() const { return zA[i]; }
    int ya() const { return yA[j]; }
    int xb() const { return xB[j]; }
    int yc() const { return yC[i]; }
    size_t a_elems() const { return size_t(zA[0]) * yA[0] * nx; }
    size_t b_elems() const { return size_t(zA[0]) * ny * xB[0]; }
    size_t c_elems() const { return size_t(nz) * yC[0] * xB[0]; }
    size_t row_block() const { return size_t(zA[0]) * yA[0] * xB[0]; }  // A <-> B, per row-team peer
    size_t col_block() const { return size_t(zA[0]) * yC[0] * xB[0]; }  // B <-> C, per column-team peer
};

/// The process grid for `n` ranks. want_p1/want_p2 > 0: the --grid the user asked for. Else
/// 1-D (n x 1) when n <= min(nz, ny), otherwise the smallest p2 dividing n that fits. Returns
/// false with *why (a whole sentence) when no grid fits or the asked one does not.
bool choose_grid(int nx, int ny, int nz, int n, int want_p1, int want_p2, int *p1, int *p2, std::string *why);

}  // namespace ft
