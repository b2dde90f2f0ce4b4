#!/usr/bin/env bash
# gpu_heap.sh HGASRUN NAS_MG: class C's grids (3.6 GB on one rank) do not fit hgas's default
# 1 GB cuda heap; nas-mg must size HGAS_CUDA_HEAP_SIZE for them itself. One V-cycle only (so the
# run is short and, by design, does not verify: status 1 with the reference printed), and no
# allocation may fail.
set -u
HGASRUN=$1 MG=$2
unset HGAS_CUDA_HEAP_SIZE
out=$("$HGASRUN" -n 1 --timeout 170 "$MG" --class C --kind cuda --iterations 1 2>&1)
rc=$?
echo "$out"
grep -q 'hgas_malloc_kind' <<<"$out" && { echo "FAIL: an allocation failed (the cuda heap was not sized)"; exit 1; }
grep -Eq '^ Memory per rank: 3[0-9]{3}\.[0-9] MB' <<<"$out" || { echo "FAIL: no 'Memory per rank: 3... MB' line for class C"; exit 1; }
grep -q 'The correct L2 Norm is' <<<"$out" || { echo "FAIL: the one-V-cycle run did not finish with its norm"; exit 1; }
[ "$rc" = 1 ] || { echo "FAIL: status $rc, expected 1 (one V-cycle does not verify)"; exit 1; }
echo "ok: class C's grids in a cuda heap nas-mg sized itself"
