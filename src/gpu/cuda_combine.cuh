// The element operation of hgas's reductions on the GPU (cuda_reduce.cu, cuda_team_reduce.cu):
// a op b for one element of an hgas_dtype_t, the values of reduce_cpu.hpp bit for bit (16-bit
// floats widened to float, combined, rounded to nearest even; integers wrap around).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include <hgas/hgas.h>

namespace hgas::gpu {

template <class T>
__device__ __forceinline__ T combine(T a, T b, int op) {
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
        float x, y;
        if constexpr (std::is_same_v<T, __half>) {
            x = __half2float(a);
            y = __half2float(b);
        } else {
            x = __bfloat162float(a);
            y = __bfloat162float(b);
        }
        float r;
        switch (op) {
        case HGAS_OP_SUM: r = __fadd_rn(x, y); break;
        case HGAS_OP_PROD: r = __fmul_rn(x, y); break;
        case HGAS_OP_MIN: return y < x ? b : a;
        case HGAS_OP_MAX: return x < y ? b : a;
        default: return a;
        }
        if constexpr (std::is_same_v<T, __half>) return __float2half_rn(r);
        else return __float2bfloat16_rn(r);
    } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        switch (op) {
        case HGAS_OP_SUM: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        case HGAS_OP_PROD:
            return static_cast<T>(static_cast<U>(static_cast<unsigned long long>(static_cast<U>(a)) *
                                                 static_cast<unsigned long long>(static_cast<U>(b))));
        case HGAS_OP_MIN: return b < a ? b : a;
        case HGAS_OP_MAX: return a < b ? b : a;
        case HGAS_OP_AND: return static_cast<T>(a & b);
        case HGAS_OP_OR: return static_cast<T>(a | b);
        case HGAS_OP_XOR: return static_cast<T>(a ^ b);
        }
        return a;
    } else {
        switch (op) {
        case HGAS_OP_SUM:
            if constexpr (std::is_same_v<T, float>) return __fadd_rn(a, b);
            else return __dadd_rn(a, b);
        case HGAS_OP_PROD:
            if constexpr (std::is_same_v<T, float>) return __fmul_rn(a, b);
            else return __dmul_rn(a, b);
        case HGAS_OP_MIN: return b < a ? b : a;
        case HGAS_OP_MAX: return a < b ? b : a;
        }
        return a;
    }
}

}  // namespace hgas::gpu
