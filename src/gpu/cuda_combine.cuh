// The element operation of hgas's reductions on the GPU (cuda_reduce.cu, cuda_team_reduce.cu):
// a op b for one element of an hgas_dtype_t, the values of reduce_cpu.hpp bit for bit (16-bit
// floats widened to float, combined, rounded to nearest even; integers wrap around); and the
// one switch from an hgas_dtype_t to the element type that both files' launches go through.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

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

// The element type of a reduction as a value: f(dtype_tag<T>{}) runs f for type T.
template <class T>
struct dtype_tag {
    using type = T;
};

// f(dtype_tag<T>{}) for the element type T of `type` (an hgas_dtype_t); cudaErrorInvalidValue
// for a type that is none of them.
template <class F>
cudaError_t with_dtype(int type, F &&f) {
    switch (type) {
    case HGAS_INT8: return f(dtype_tag<int8_t>{});
    case HGAS_INT16: return f(dtype_tag<int16_t>{});
    case HGAS_INT32: return f(dtype_tag<int32_t>{});
    case HGAS_INT64: return f(dtype_tag<int64_t>{});
    case HGAS_UINT8: return f(dtype_tag<uint8_t>{});
    case HGAS_UINT16: return f(dtype_tag<uint16_t>{});
    case HGAS_UINT32: return f(dtype_tag<uint32_t>{});
    case HGAS_UINT64: return f(dtype_tag<uint64_t>{});
    case HGAS_FLOAT: return f(dtype_tag<float>{});
    case HGAS_DOUBLE: return f(dtype_tag<double>{});
    case HGAS_FLOAT16: return f(dtype_tag<__half>{});
    case HGAS_BFLOAT16: return f(dtype_tag<__nv_bfloat16>{});
    }
    return cudaErrorInvalidValue;
}

// f for every element type, in hgas_dtype_t order; the first error (preloading kernels).
template <class F>
cudaError_t for_each_dtype(F &&f) {
    cudaError_t first = cudaSuccess;
    for (int type : {HGAS_INT8, HGAS_INT16, HGAS_INT32, HGAS_INT64, HGAS_UINT8, HGAS_UINT16, HGAS_UINT32,
                     HGAS_UINT64, HGAS_FLOAT, HGAS_DOUBLE, HGAS_FLOAT16, HGAS_BFLOAT16}) {
        const cudaError_t e = with_dtype(type, f);
        if (e != cudaSuccess && first == cudaSuccess) first = e;
    }
    return first;
}

}  // namespace hgas::gpu
