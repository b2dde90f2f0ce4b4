// NPB 3.4 FT problem classes: grid, iterations and the published reference checksums.
#pragma once

#include <complex>
#include <string>
#include <vector>

namespace ft {

struct problem {
    char cls = 'S';
    int nx = 64, ny = 64, nz = 64;  // x fastest in memory
    int niter = 6;
    std::vector<std::complex<double>> ref;  // per iteration; empty: no reference values
};

/// The class with this letter (S, W, A, B, C, D, E); false for another letter.
bool lookup_class(char cls, problem *p);

constexpr double kSeed = 314159265.0;
constexpr double kMultiplier = 1220703125.0;  // 5^13
constexpr double kAlpha = 1.0e-6;
constexpr double kPi = 3.141592653589793238;
constexpr double kEpsilon = 1.0e-12;  // verification tolerance on |(chk - ref) / ref|

}  // namespace ft
