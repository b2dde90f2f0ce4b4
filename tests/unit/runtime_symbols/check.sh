#!/bin/sh
# runtime_symbols: hgas's shared libraries export none of the C++ runtime's own code.
#   check.sh NM LIBSTDCXX_SO OPEN_PROBE HIDDEN_PROBE LIB...
# A strong symbol (T, D, B, R) that libstdc++.so also defines is a copy of the runtime; template
# instances from headers are weak (W, V) and harmless. OPEN_PROBE and HIDDEN_PROBE are one source
# linked with -static-libstdc++, without and with hgas_hide_cxx_runtime
# (cmake/HgasRuntimeSymbols.cmake): the first must export such copies (so the check can see a
# leak at all), the second none. Each LIB (libhgas, libhgas_shmem) must export none.
set -u
nm=$1; stdcxx=$2; open=$3; hidden=$4; shift 4
fail=0
runtime=$(mktemp); trap 'rm -f "$runtime"' EXIT
defined() { "$nm" -D --defined-only "$1" | awk '$2 ~ /^[TDBR]$/ {sub(/@.*/, "", $3); print $3}' | sort -u; }  # without @VERSION
copies() { defined "$1" | comm -12 - "$runtime"; }
defined "$stdcxx" > "$runtime"
if [ ! -s "$runtime" ]; then
    echo "runtime_symbols: $nm lists no symbols of $stdcxx"; exit 1
fi
if [ "$open" != none ]; then
    n=$(copies "$open" | wc -l)
    if [ "$n" -eq 0 ]; then
        echo "runtime_symbols: the probe linked with -static-libstdc++ exports no runtime symbol: the check is blind here"; fail=1
    else
        echo "runtime_symbols: the open probe exports $n runtime symbols (as expected)"
    fi
    n=$(copies "$hidden" | wc -l)
    if [ "$n" -ne 0 ]; then
        copies "$hidden" | head -5
        echo "runtime_symbols: hgas_hide_cxx_runtime left $n runtime symbols exported from $hidden"; fail=1
    fi
else
    echo "runtime_symbols: no static libstdc++ here; probes not built (libraries still checked)"
fi
for lib in "$@"; do
    n=$(copies "$lib" | wc -l)
    if [ "$n" -ne 0 ]; then
        copies "$lib" | head -10
        echo "runtime_symbols: $lib exports $n strong symbols of the C++ runtime (first 10 above)"; fail=1
    else
        echo "runtime_symbols: $lib exports none of the C++ runtime's own symbols"
    fi
done
exit $fail
