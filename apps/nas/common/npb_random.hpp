// The NPB pseudo-random generator (randlc / vranlc of the NPB 3.4 specification):
// x_{k+1} = a * x_k mod 2^46, returned as x_{k+1} * 2^-46 in (0, 1).
// NPB spells the product out in doubles split into 23-bit halves so that it is exact; here it is
// taken in 64-bit unsigned integers: the product wraps modulo 2^64, and since 2^46 divides 2^64
// its low 46 bits are those of the exact product, so the values are bit-identical to NPB's.
// The same function compiles for the GPU (NAS_HD), so device code draws the same numbers.
#pragma once

#include <cstdint>

namespace nas {

constexpr uint64_t kMask46 = (uint64_t(1) << 46) - 1;
constexpr double kR46 = 1.0 / double(uint64_t(1) << 46);  // 2^-46, exact

#if defined(__CUDACC__)
#define NAS_HD __host__ __device__
#else
#define NAS_HD
#endif

/// a * x mod 2^46 for a, x < 2^46.
NAS_HD inline uint64_t mul46(uint64_t a, uint64_t x) { return (a * x) & kMask46; }

/// A seed or multiplier given as NPB gives it (a double holding an integer < 2^46).
inline uint64_t to46(double v) { return uint64_t(v) & kMask46; }

/// NPB's randlc: advances *x by one step (x = a*x mod 2^46) and returns the new x * 2^-46.
double randlc(double *x, double a);

/// NPB's vranlc: n successive values of the sequence into y[0..n-1], advancing *x n steps.
void vranlc(int64_t n, double *x, double a, double *y);

/// a^n mod 2^46 (square and multiply): the multiplier that jumps the sequence n steps ahead,
/// which lets each rank start its part of the field where a single generator would be.
NAS_HD inline uint64_t pow46(uint64_t a, uint64_t n) {
    uint64_t r = 1, b = a & kMask46;
    for (; n; n >>= 1) {
        if (n & 1) r = mul46(r, b);
        b = mul46(b, b);
    }
    return r;
}

}  // namespace nas
