#!/bin/sh
# An installed hgas as its users meet it: `cmake --install` into a fresh prefix, then
#  1. the installed wrappers (oshcc, hgas-cc, oshc++) build programs that run under the
#     installed oshrun/hgasrun, also after the prefix has been moved elsewhere (programs built
#     before the move start when they moved with it: $ORIGIN-relative run paths); every
#     public header is installed;
#  2. pkg-config (hgas-shmem.pc) gives the flags for a plain compiler;
#  3. find_package(hgas) in another CMake project gives hgas::shmem and hgas::hgas;
#  4. an autoconf package (examples/shmem-heat1d) builds with CC=oshcc ./configure && make;
#  5. nothing installed refers to the build tree.
# Parts 2 and 4 are skipped (and say so) where pkg-config or autoconf is missing.
#   usage: install.sh <build dir> <source dir> <cmake> <generator>
set -eu
build=$1 src=$2 cmake=$3 generator=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HGAS_TIMEOUT=60
ex=$src/examples
step() { echo "--- $*"; }

step "cmake --install into $tmp/prefix"
"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
p=$tmp/prefix

step "installed wrappers"
"$p/bin/oshcc" -O1 "$ex/shmem-heat1d/heat1d.c" -o "$tmp/heat1d"
"$p/bin/oshrun" -n 3 "$tmp/heat1d" 200 | grep "equal to the serial run"
"$p/bin/hgas-cc" "$ex/ring.c" -o "$tmp/ring"
"$p/bin/hgasrun" -n 2 "$tmp/ring" | grep -q "rank 0 of 2 got 101 from rank 1"
"$p/bin/oshc++" -std=c++17 -x c++ - -o "$tmp/count" <<'CPP'
#include <shmem.h>
#include <cstdio>
long hits; // a global: symmetric
int main() {
    shmem_init();
    shmem_long_atomic_inc(&hits, 0);
    shmem_barrier_all();
    const int ok = shmem_my_pe() != 0 || hits == shmem_n_pes();
    if (shmem_my_pe() == 0) std::printf("count: %ld of %d\n", hits, shmem_n_pes());
    shmem_finalize();
    return ok ? 0 : 1;
}
CPP
"$p/bin/oshrun" -n 2 "$tmp/count"
"$p/bin/hgas-info" | grep -q "^hgas "

step "pkg-config"
if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs hgas-shmem)
  # shellcheck disable=SC2086
  cc "$ex/shmem-heat1d/heat1d.c" $flags -o "$tmp/heat1d_pc"
  "$p/bin/oshrun" -n 2 "$tmp/heat1d_pc" 100 | grep "equal to the serial run"
  [ "$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --modversion hgas)" = "$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --modversion hgas-shmem)" ]
else
  echo "skipped: pkg-config is not installed"
fi

step "find_package(hgas)"
"$cmake" -S "$src/tests/install/consumer" -B "$tmp/consumer" -G "$generator" -DCMAKE_PREFIX_PATH="$p" \
  -DHGAS_EXAMPLES="$ex" >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; exit 1; }
"$cmake" --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; exit 1; }
"$p/bin/oshrun" -n 4 "$tmp/consumer/heat1d" 100 | grep "equal to the serial run"
"$p/bin/hgasrun" -n 3 "$tmp/consumer/ring" | grep -q "rank 0 of 3 got 102 from rank 2"
"$p/bin/hgasrun" -n 2 "$tmp/consumer/demo" >/dev/null

step "every public header is installed"
# installed_headers: hgas_device.cuh and impl/ were left out once.
missing=""
for f in $(cd "$src/include" && find . -type f); do [ -f "$p/include/$f" ] || missing="$missing $f"; done
if [ -n "$missing" ]; then echo "FAIL: not installed:$missing"; exit 1; fi

step "moved prefix"
# moved_prefix_programs_start: a program built against the prefix, inside a tree that moves
# with it (a project directory with its own hgas, a copied image), starts after the move; so
# does one built after the move.
mkdir -p "$tmp/tree/app"
mv "$p" "$tmp/tree/hgas"
p=$tmp/tree/hgas
"$p/bin/hgas-cc" "$ex/ring.c" -o "$tmp/tree/app/ring"
(cd "$tmp/tree/app" && "$p/bin/oshcc" "$ex/shmem-heat1d/heat1d.c" -oheat1d)
mv "$tmp/tree" "$tmp/moved-tree"
p=$tmp/moved-tree/hgas
"$p/bin/hgasrun" -n 2 "$tmp/moved-tree/app/ring" | grep "rank 0 of 2 got 101 from rank 1"
"$p/bin/oshrun" -n 2 "$tmp/moved-tree/app/heat1d" 100 | grep "equal to the serial run"
"$p/bin/oshcc" "$ex/shmem-heat1d/heat1d.c" -o "$tmp/heat1d_moved"
"$p/bin/oshrun" -n 2 "$tmp/heat1d_moved" 100 | grep "equal to the serial run"

step "CC=oshcc ./configure && make (autoconf package)"
if command -v autoconf >/dev/null; then
  cp -r "$ex/shmem-heat1d" "$tmp/pkg"
  (cd "$tmp/pkg" && autoconf && PATH="$p/bin:$PATH" CC=oshcc ./configure >configure.out &&
   PATH="$p/bin:$PATH" make >/dev/null && PATH="$p/bin:$PATH" make check NPES=2) | grep "equal to the serial run"
else
  echo "skipped: autoconf is not installed"
fi

step "nothing installed refers to the build tree"
# Text files (scripts, .pc, CMake files) and the binaries' run paths; debug information may
# name the build directory, which changes nothing at run time.
bad=$(grep -rlI -- "$build" "$p" || true)
for f in "$p"/bin/* "$p"/lib/*.so.*; do
  if readelf -d "$f" 2>/dev/null | grep -E "RUNPATH|RPATH" | grep -q -- "$build"; then bad="$bad $f(runpath)"; fi
done
if [ -n "$bad" ]; then echo "FAIL: these name the build tree $build: $bad"; exit 1; fi
echo "install: all passed"
