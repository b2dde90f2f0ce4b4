// float16.hpp — IEEE binary16 and bfloat16 <-> float, rounding to nearest even (as CUDA's
// __float2half_rn / __float2bfloat16_rn). One copy for the whole project: hgas::half and
// hgas::bfloat16 of hgas.hpp convert with it, and the reductions on the CPU (and the sim
// device) round with it after every step, so that a value a user converts and a value a
// reduction produces agree bit for bit.
#pragma once
#include <cstdint>
#include <cstring>

namespace hgas::detail {

inline uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float f32_from(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// IEEE binary16 <-> float, round to nearest even (as CUDA's __float2half_rn).
inline float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    if (exp == 0x1f) return f32_from(sign | 0x7f800000u | (man << 13));  // inf, nan
    if (exp == 0) {
        if (man == 0) return f32_from(sign);
        // subnormal: normalize
        int e = -1;
        do {
            ++e;
            man <<= 1;
        } while (!(man & 0x400u));
        return f32_from(sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man & 0x3ffu) << 13);
    }
    return f32_from(sign | (exp + 127 - 15) << 23 | man << 13);
}
inline uint16_t float_to_half(float f) {
    const uint32_t u = f32_bits(f);
    const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
    const uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
    if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
        // The value in units of 2^-24 is abs_float * 2^24; round to nearest even.
        const int e = static_cast<int>(abs >> 23);
        if (e < 102) return sign;  // < 2^-25: rounds to zero
        const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
        const int shift = 126 - e;  // 113 - e + 13
        uint32_t q = man >> shift;
        const uint32_t rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1))) ++q;
        return static_cast<uint16_t>(sign | q);
    }
    uint32_t v = abs - (112u << 23);  // rebias 127 -> 15
    const uint32_t rem = v & 0x1fffu;
    v >>= 13;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1))) ++v;  // may carry into the exponent: fine
    return static_cast<uint16_t>(sign | v);
}
inline float bf16_to_float(uint16_t b) { return f32_from(static_cast<uint32_t>(b) << 16); }
inline uint16_t float_to_bf16(float f) {
    const uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet nan
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

}  // namespace hgas::detail
