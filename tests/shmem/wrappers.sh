#!/bin/sh
# The build tree's compiler wrappers as a user runs them: test programs built with oshcc
# (compile and link in one step, and -c then link), a C++ one with oshc++, the OpenSHMEM
# example (globals, pSync collectives, old names) with oshcc, all started with oshrun; the C
# API ring example built with hgas-cc and started with oshrun and hgasrun. (tests/install/install.sh does
# the same with the installed wrappers.)
#   usage: wrappers.sh <dir of the wrappers> <tests/shmem source dir>
set -eu
bin=$1 src=$2
examples=$src/../../examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin/oshcc" -O1 -I"$src" "$src/put.c" -o "$tmp/put"
"$bin/oshrun" -n 2 "$tmp/put"
# -np N as OpenSHMEM and MPI launchers take it (--np, -np=N too); the program's own -np stays.
"$bin/oshrun" -np 2 "$tmp/put" | grep -q "all checks passed"
"$bin/oshrun" --np=3 --timeout 60 sh -c 'echo "$OSHRUN_TEST_ARGS $*"' x -np 5 | grep -c "^ -np 5$" | grep -qx 3
# A program that needs the math library links without naming -lm.
printf '#include <shmem.h>\n#include <math.h>\nint main(int c, char **v) { (void)v; shmem_init(); double x = sqrt((double)c + 3); shmem_finalize(); return x == 2.0 ? 0 : 1; }\n' >"$tmp/m.c"
"$bin/oshcc" "$tmp/m.c" -o "$tmp/m"
"$bin/oshrun" -np 1 "$tmp/m"

"$bin/oshcc" -I"$src" -c "$src/atomic.c" -o "$tmp/atomic.o"
"$bin/oshcc" "$tmp/atomic.o" -o "$tmp/atomic"
"$bin/oshrun" -n 3 "$tmp/atomic"

cat >"$tmp/count.cpp" <<'CPP'
#include <shmem.h>
#include <cstdio>
int main() {
    shmem_init();
    long *x = static_cast<long *>(shmem_calloc(1, sizeof(long)));
    shmem_long_atomic_inc(x, 0);
    shmem_barrier_all();
    const bool ok = shmem_my_pe() != 0 || *x == shmem_n_pes();
    if (shmem_my_pe() == 0) std::printf("count.cpp: %ld of %d\n", *x, shmem_n_pes());
    shmem_free(x);
    shmem_finalize();
    return ok ? 0 : 1;
}
CPP
"$bin/oshc++" -std=c++17 "$tmp/count.cpp" -o "$tmp/count"
"$bin/oshrun" -n 3 "$tmp/count"
"$bin/oshcc" --showme -c x.c | grep -q -- "-I.*include -c x.c$"
"$bin/hgas-cc" --showme x.c | grep -q -- "-lhgas$"

"$bin/oshcc" -O2 "$examples/shmem-heat1d/heat1d.c" -o "$tmp/heat1d"
"$bin/oshrun" -n 4 "$tmp/heat1d" 300 | grep "equal to the serial run"
"$bin/hgas-cc" "$examples/ring.c" -o "$tmp/ring"
"$bin/oshrun" -n 3 "$tmp/ring" | grep "rank 0 of 3 got 102 from rank 2"
# hgasrun_in_build_bin: the launcher lies beside the wrappers, as in an installed tree.
"$bin/hgasrun" -n 2 "$tmp/ring" | grep "rank 0 of 2 got 101 from rank 1"
"$bin/hgas-c++" -std=c++20 "$examples/demo.cpp" -o "$tmp/demo"
"$bin/oshrun" -n 2 "$tmp/demo" >/dev/null
echo "wrappers: all built and ran"
