#!/bin/sh
# pip_install.sh <python> <source dir> <build dir>: `pip install ./python` as users run it (into a
# scratch target, offline), then the example under the build's hgasrun found on PATH: the
# installed package must find libhgas beside the launcher and load its own C extension.
set -u
py=$1 src=$2 build=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cp -r "$src/python" "$dir/pkg" && rm -rf "$dir/pkg/build" "$dir/pkg/hgas.egg-info"
"$py" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps --target "$dir/site" \
    "$dir/pkg" || { echo "FAIL: pip install"; exit 1; }
ls "$dir"/site/hgas/_fast*.so >/dev/null 2>&1 || { echo "FAIL: pip did not build hgas._fast"; exit 1; }
out=$(cd "$dir" && env -u HGAS_LIBRARY PYTHONPATH="$dir/site" PATH="$build/bin:$PATH" \
      hgasrun -n 2 "$py" -c 'import hgas, hgas._fast; print("lib", hgas.library_path); exec(open("'"$src"'/examples/python/heat.py").read())' 2>&1)
echo "$out"
echo "$out" | grep -q "lib $build/src/api/libhgas.so.0" || { echo "FAIL: not the build's libhgas"; exit 1; }
echo "$out" | grep -q "heat: 2 ranks, .* matches the serial solution" || { echo "FAIL: the example"; exit 1; }
echo ok
