#!/bin/sh
# hgas.hpp at compile time: what must compile (C++17 and C++20) and what must not, with the
# message a user then reads.   cxx_compile.sh <c++ compiler> <include dir>
set -u
CXX=$1 INC=$2
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
rejects allreduce_short 'short a = 0, b = 0; (void)hgas::allreduce(&a, &b, 1, HGAS_OP_SUM);' \
    "hgas atomics take 32- and 64-bit integers, reductions also float and double"
rejects atomic_on_double 'hgas::global_ptr<double> p; double old; (void)hgas::fetch_add(p, 1.0, &old);' \
    "hgas atomics take 32- and 64-bit integers"
# An ignored status is a warning (an error under -Werror): the checked style is the other way.
rejects unchecked_result 'hgas::global_ptr<long> p; long v = 0; hgas::put(p, &v);' "nodiscard"
echo "$FAILED failed"
[ "$FAILED" = 0 ]
