// The check: rank 0 computes the whole product of the same inputs in one library call
// (OpenBLAS or cuBLAS on one rank: the reference and, for the benchmark, the figure to beat)
// and compares C with it, tile by tile through hgas gets (any kind).
#include <cfloat>
#include <cmath>
#include <vector>

#include "multiply.hpp"

namespace matmul {

check verify(engine &e, const arrays &m, int reps, bool inject_error) {
    check c;
    std::vector<double> r;
    c.ref_s = e.reference(m.n, reps, r, &c.error);
    if (c.ref_s < 0) return c;
    const uint64_t b = m.b_order, bytes = b * b * sizeof(double);
    std::vector<double> tile(b * b);
    double max_ref = 0, max_diff = 0;
    for (double v : r) max_ref = std::fmax(max_ref, std::fabs(v));
    for (uint64_t t = 0; t < m.nb * m.nb; ++t) {
        hgas_gptr_t g;
        if (hgas_array_ptr(&m.c, t * bytes, &g) != HGAS_OK || hgas_get(tile.data(), g, bytes) != HGAS_OK) {
            c.error = std::string("fetching C for the check: ") + hgas_last_error();
            return c;
        }
        if (inject_error && t == m.nb * m.nb / 2) tile[b * b / 2] += 1e-6;
        const uint64_t I = t / m.nb, J = t % m.nb;
        for (uint64_t i = 0; i < b; ++i)
            for (uint64_t j = 0; j < b; ++j) {
                const double d = std::fabs(tile[i * b + j] - r[(I * b + i) * m.n + J * b + j]);
                // NaN compares false: counted as an infinite error
                max_diff = d <= max_diff ? max_diff : (std::isnan(d) ? INFINITY : d);
            }
    }
    c.max_rel_err = max_ref > 0 ? max_diff / max_ref : max_diff;
    // Both sides sum n products of values in [-1, 1) in different orders (tiles of K, the
    // libraries' own blocking and FMAs): each element may differ by a few n * eps * |terms|,
    // which relative to max |R| (about sqrt(n)) stays far below n * eps. A wrong tile or a
    // missed step is off by O(1) relative; --inject-error's 1e-6 by about 1e-6 / sqrt(n).
    c.bound = static_cast<double>(m.n) * DBL_EPSILON;
    c.ok = c.max_rel_err <= c.bound;
    return c;
}

}  // namespace matmul
