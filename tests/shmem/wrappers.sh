#!/bin/sh
# The compiler wrappers as a user runs them: a test program built with oshcc (compile and link
# in one step, and -c then link), a C++ one with oshc++, both started with oshrun.
#   usage: wrappers.sh <dir of oshcc/oshc++/oshrun> <tests/shmem source dir>
set -eu
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin/oshcc" -O1 -I"$src" "$src/put.c" -o "$tmp/put"
"$bin/oshrun" -n 2 "$tmp/put"

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
echo "wrappers: all built and ran"
