#!/bin/sh
# hgas.hpp at compile time: what must compile (C++17 and C++20) and what must not, with the
# message a user then reads.   cxx_compile.sh <c++ compiler> <include dir> [<CUDA include dir>]
# With the CUDA include dir (a CUDA build), CUDA's __half and __nv_bfloat16 must map too.
set -u
CXX=$1 INC=$2 CUDA_INC=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
FAILED=0
compiles() {  # compiles NAME STD CODE
    printf '#include <hgas/hgas.hpp>\nvoid f() {\n%s\n}\n' "$3" >"$tmp/$1.cpp"
    if "$CXX" -std="$2" -fsyntax-only -I"$INC" "$tmp/$1.cpp" 2>"$tmp/$1.err"; then echo "ok   $1 ($2) compiles"
    else echo "FAIL $1 ($2) does not compile:"; head -20 "$tmp/$1.err"; FAILED=$((FAILED + 1)); fi
}
rejects() {  # rejects NAME CODE MESSAGE
    printf '#include <hgas/hgas.hpp>\nvoid f() {\n%s\n}\n' "$2" >"$tmp/$1.cpp"
    if "$CXX" -std=c++17 -fsyntax-only -Werror -I"$INC" "$tmp/$1.cpp" 2>"$tmp/$1.err"; then
        echo "FAIL $1 compiles"; FAILED=$((FAILED + 1))
    elif grep -qF -- "$3" "$tmp/$1.err"; then echo "ok   $1 is rejected with '$3'"
    else echo "FAIL $1 is rejected without '$3':"; head -20 "$tmp/$1.err"; FAILED=$((FAILED + 1)); fi
}
for std in c++17 c++20; do
    # cxx_fetch_add_int_operand: the operand converts to the pointer's type.
    compiles fetch_add_int_operand $std 'hgas::global_ptr<long> p; long old; (void)hgas::fetch_add(p, 1, &old);
        (void)hgas::compare_swap(p, 0, 1, &old); (void)hgas::put_value(p, 3);'
    # cxx_allreduce_long_long: every 32/64-bit integer type has a dtype.
    compiles allreduce_every_integer $std 'long long a = 0, b = 0; unsigned long c = 0, d = 0; unsigned e = 0, g = 0;
        (void)hgas::allreduce(&a, &b, 1, HGAS_OP_SUM); (void)hgas::allreduce(&c, &d, 1, HGAS_OP_MAX);
        (void)hgas::allreduce(&e, &g, 1, HGAS_OP_MIN); (void)hgas::reduce(&a, &b, 1, HGAS_OP_SUM, 0);'
    compiles checked_style $std 'namespace hx = hgas::checked; hgas::global_ptr<long> p;
        long v = hx::fetch_add(p, 1) + hx::get(p) + hx::allreduce(v, HGAS_OP_SUM); hx::put_value(p, v); hx::barrier();'
done
# cxx_reduce_small_types: 8/16-bit integers and the 16-bit floats are reduction types.
compiles reduce_small_types c++17 'int8_t a = 0, b = 0; uint16_t c = 0, d = 0; hgas::half h{}, k{};
    hgas::bfloat16 x{}, y{}; (void)hgas::allreduce(&a, &b, 1, HGAS_OP_SUM); (void)hgas::allreduce(&c, &d, 1, HGAS_OP_AND);
    (void)hgas::reduce(&h, &k, 1, HGAS_OP_MAX, 0); (void)hgas::allreduce(hgas::team(), &x, &y, 1, HGAS_OP_SUM);
    hgas::half v = hgas::checked::allreduce(hgas::half(1.5f), HGAS_OP_SUM); (void)float(v);
    static_assert(hgas::detail::dtype_of<short>() == HGAS_INT16 && hgas::detail::dtype_of<unsigned char>() == HGAS_UINT8);
    static_assert(hgas::detail::dtype_of<signed char>() == HGAS_INT8 && hgas::detail::dtype_of<uint16_t>() == HGAS_UINT16);
    static_assert(hgas::detail::dtype_of<hgas::half>() == HGAS_FLOAT16 && hgas::detail::dtype_of<const hgas::bfloat16>() == HGAS_BFLOAT16);'
rejects allreduce_bool 'bool a = false, b = false; (void)hgas::allreduce(&a, &b, 1, HGAS_OP_OR);' \
    "hgas reductions take integers of 8 to 64 bits, float, double, hgas::half and hgas::bfloat16"
rejects allreduce_long_double 'long double a = 0, b = 0; (void)hgas::allreduce(&a, &b, 1, HGAS_OP_SUM);' \
    "hgas reductions take integers of 8 to 64 bits"
rejects half_from_float_implicitly 'hgas::half h = 1.0f; (void)h;' "conversion from"
rejects atomic_on_short 'hgas::global_ptr<short> p; short old; (void)hgas::fetch_add(p, 1, &old);' \
    "hgas atomics take 32- and 64-bit integers"
if [ -n "$CUDA_INC" ]; then
    # cxx_cuda_half_types: with cuda_fp16.h / cuda_bf16.h first, CUDA's 16-bit floats map.
    printf '#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <hgas/hgas.hpp>\n%s\n' \
        'static_assert(hgas::detail::dtype_of<__half>() == HGAS_FLOAT16 && hgas::detail::dtype_of<__nv_bfloat16>() == HGAS_BFLOAT16);
        void f(__half *a, const __half *b, __nv_bfloat16 *c) { (void)hgas::allreduce(a, b, 4, HGAS_OP_SUM); (void)hgas::allreduce(c, c, 4, HGAS_OP_MAX); }' \
        >"$tmp/cuda.cpp"
    if "$CXX" -std=c++17 -fsyntax-only -I"$INC" -I"$CUDA_INC" "$tmp/cuda.cpp" 2>"$tmp/cuda.err"; then
        echo "ok   cuda_half_types compiles"
    else echo "FAIL cuda_half_types does not compile:"; head -20 "$tmp/cuda.err"; FAILED=$((FAILED + 1)); fi
fi
rejects atomic_on_double 'hgas::global_ptr<double> p; double old; (void)hgas::fetch_add(p, 1.0, &old);' \
    "hgas atomics take 32- and 64-bit integers"
# An ignored status is a warning (an error under -Werror): the checked style is the other way.
rejects unchecked_result 'hgas::global_ptr<long> p; long v = 0; hgas::put(p, &v);' "nodiscard"
echo "$FAILED failed"
[ "$FAILED" = 0 ]
