// The reduction combine on the CPU: inout[i] = inout[i] op in[i] (or in[i] op inout[i] with
// `rev`) for every element type and operator of hgas_dtype_t / hgas_op_t. Used by the
// collectives on host memory and by the sim device (which runs it on its engine, as a GPU
// runs its kernel: gpu::device::reduce). The CUDA kernel (cuda_reduce.cu) computes the same
// values bit for bit: integers wrap around, 16-bit floats are widened to float, combined and
// rounded to nearest even after each step, MIN/MAX pick `b < a ? b : a` / `a < b ? b : a`.
#pragma once
#include <hgas/hgas.h>
#include <hgas/impl/float16.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hgas::gpu {

// Size in bytes of one element, 0 for a value that is not an hgas_dtype_t.
inline size_t reduce_dtype_size(int t) {
    switch (t) {
    case HGAS_INT8:
    case HGAS_UINT8: return 1;
    case HGAS_INT16:
    case HGAS_UINT16:
    case HGAS_FLOAT16:
    case HGAS_BFLOAT16: return 2;
    case HGAS_INT32:
    case HGAS_UINT32:
    case HGAS_FLOAT: return 4;
    case HGAS_INT64:
    case HGAS_UINT64:
    case HGAS_DOUBLE: return 8;
    }
    return 0;
}
inline bool reduce_dtype_is_float(int t) {
    return t == HGAS_FLOAT || t == HGAS_DOUBLE || t == HGAS_FLOAT16 || t == HGAS_BFLOAT16;
}

namespace cpu {

// The conversions live in the public header, shared with hgas::half / hgas::bfloat16.
using hgas::detail::bf16_to_float;
using hgas::detail::f32_bits;
using hgas::detail::f32_from;
using hgas::detail::float_to_bf16;
using hgas::detail::float_to_half;
using hgas::detail::half_to_float;

struct half_t {
    uint16_t v;
};
struct bf16_t {
    uint16_t v;
};

template <class T>
T combine(T a, T b, int op) {
    if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
        constexpr bool h = std::is_same_v<T, half_t>;
        const float x = h ? half_to_float(a.v) : bf16_to_float(a.v);
        const float y = h ? half_to_float(b.v) : bf16_to_float(b.v);
        float r = x;
        switch (op) {
        case HGAS_OP_SUM: r = x + y; break;
        case HGAS_OP_PROD: r = x * y; break;
        case HGAS_OP_MIN: return y < x ? b : a;
        case HGAS_OP_MAX: return x < y ? b : a;
        default: return a;
        }
        return T{h ? float_to_half(r) : float_to_bf16(r)};
    } else if constexpr (std::is_integral_v<T>) {
        // Wrap around instead of signed overflow (undefined behavior).
        using U = std::make_unsigned_t<T>;
        switch (op) {
        case HGAS_OP_SUM: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        case HGAS_OP_PROD: return static_cast<T>(static_cast<U>(static_cast<unsigned long long>(static_cast<U>(a)) *
                                                                static_cast<unsigned long long>(static_cast<U>(b))));
        case HGAS_OP_MIN: return b < a ? b : a;
        case HGAS_OP_MAX: return a < b ? b : a;
        case HGAS_OP_AND: return static_cast<T>(a & b);
        case HGAS_OP_OR: return static_cast<T>(a | b);
        case HGAS_OP_XOR: return static_cast<T>(a ^ b);
        }
    } else {
        switch (op) {
        case HGAS_OP_SUM: return a + b;
        case HGAS_OP_PROD: return a * b;
        case HGAS_OP_MIN: return b < a ? b : a;
        case HGAS_OP_MAX: return a < b ? b : a;
        default: break;  // bitwise ops: integers only (the callers check)
        }
    }
    return a;
}

// inout[i] = inout[i] OP in[i] (in[i] OP inout[i] with REV) for i < count. The operator and the
// order are template arguments, so the loop body is one operation without branches, and the
// body runs on blocks of a fixed number of elements: GCC at -O2 vectorizes only loops whose trip
// count needs no remainder, so the blocks are vector code and only the tail is scalar. Each
// element is combined on its own, as before, so the values are the same bit for bit (no
// reassociation). memcpy in and out: the buffers are user memory of any alignment. They do not
// overlap (every caller combines a peer's or a scratch vector into its own accumulator), which
// `__restrict` tells the compiler: without it, GCC at -O2 would not vectorize.
// One 4-byte float sum took 0.7 ns an element when combined one by one on the 2-core machine
// (a switch on the operator and a test of the order for each), a sixth of that in blocks.
template <class T, int OP, bool REV>
void apply_op(unsigned char *__restrict io, const unsigned char *__restrict ip, size_t count) {
    constexpr size_t block = 128 / sizeof(T);  // elements: 128 bytes, eight SSE or four AVX vectors
    size_t i = 0;
    for (; i + block <= count; i += block) {
        unsigned char *o = io + i * sizeof(T);
        const unsigned char *q = ip + i * sizeof(T);
        for (size_t k = 0; k < block; ++k) {
            T a, b;
            std::memcpy(&a, o + k * sizeof(T), sizeof(T));
            std::memcpy(&b, q + k * sizeof(T), sizeof(T));
            const T c = REV ? combine<T>(b, a, OP) : combine<T>(a, b, OP);
            std::memcpy(o + k * sizeof(T), &c, sizeof(T));
        }
    }
    for (; i < count; ++i) {
        T a, b;
        std::memcpy(&a, io + i * sizeof(T), sizeof(T));
        std::memcpy(&b, ip + i * sizeof(T), sizeof(T));
        const T c = REV ? combine<T>(b, a, OP) : combine<T>(a, b, OP);
        std::memcpy(io + i * sizeof(T), &c, sizeof(T));
    }
}

template <class T, int OP>
void apply_dir(void *inout, const void *in, size_t count, bool rev) {
    auto *io = static_cast<unsigned char *>(inout);
    auto *ip = static_cast<const unsigned char *>(in);
    if (rev) apply_op<T, OP, true>(io, ip, count);
    else apply_op<T, OP, false>(io, ip, count);
}

template <class T>
void apply(void *inout, const void *in, size_t count, int op, bool rev) {
    switch (op) {
    case HGAS_OP_SUM: return apply_dir<T, HGAS_OP_SUM>(inout, in, count, rev);
    case HGAS_OP_PROD: return apply_dir<T, HGAS_OP_PROD>(inout, in, count, rev);
    case HGAS_OP_MIN: return apply_dir<T, HGAS_OP_MIN>(inout, in, count, rev);
    case HGAS_OP_MAX: return apply_dir<T, HGAS_OP_MAX>(inout, in, count, rev);
    }
    // Bitwise ops: integers only (the callers check; combine leaves other types unchanged).
    if constexpr (std::is_integral_v<T>) {
        switch (op) {
        case HGAS_OP_AND: return apply_dir<T, HGAS_OP_AND>(inout, in, count, rev);
        case HGAS_OP_OR: return apply_dir<T, HGAS_OP_OR>(inout, in, count, rev);
        case HGAS_OP_XOR: return apply_dir<T, HGAS_OP_XOR>(inout, in, count, rev);
        }
    }
}

}  // namespace cpu

// False for an unknown type (nothing done). The caller has checked the op against the type.
inline bool reduce_cpu(void *inout, const void *in, size_t count, int type, int op, bool rev) {
    using namespace cpu;
    switch (type) {
    case HGAS_INT8: apply<int8_t>(inout, in, count, op, rev); return true;
    case HGAS_INT16: apply<int16_t>(inout, in, count, op, rev); return true;
    case HGAS_INT32: apply<int32_t>(inout, in, count, op, rev); return true;
    case HGAS_INT64: apply<int64_t>(inout, in, count, op, rev); return true;
    case HGAS_UINT8: apply<uint8_t>(inout, in, count, op, rev); return true;
    case HGAS_UINT16: apply<uint16_t>(inout, in, count, op, rev); return true;
    case HGAS_UINT32: apply<uint32_t>(inout, in, count, op, rev); return true;
    case HGAS_UINT64: apply<uint64_t>(inout, in, count, op, rev); return true;
    case HGAS_FLOAT: apply<float>(inout, in, count, op, rev); return true;
    case HGAS_DOUBLE: apply<double>(inout, in, count, op, rev); return true;
    case HGAS_FLOAT16: apply<half_t>(inout, in, count, op, rev); return true;
    case HGAS_BFLOAT16: apply<bf16_t>(inout, in, count, op, rev); return true;
    }
    return false;
}

}  // namespace hgas::gpu
