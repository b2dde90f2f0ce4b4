#include "npb_random.hpp"

namespace nas {

double randlc(double *x, double a) {
    const uint64_t next = mul46(to46(a), to46(*x));
    *x = double(next);  // < 2^46: exact in a double
    return double(next) * kR46;
}

void vranlc(int64_t n, double *x, double a, double *y) {
    const uint64_t m = to46(a);
    uint64_t v = to46(*x);
    for (int64_t i = 0; i < n; ++i) {
        v = mul46(m, v);
        y[i] = double(v) * kR46;
    }
    *x = double(v);
}

}  // namespace nas
