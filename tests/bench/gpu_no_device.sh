#!/usr/bin/env bash
# gpu_no_device.sh HGASRUN RANKPROGS PROG... — every GPU benchmark program, run where no GPU is
# visible, loads, prints "no CUDA device" and exits non-zero (and 2 for a bad option, 0 for
# --help). Exit 77 (skipped) when this machine has a GPU. RANKPROGS: the programs started under
# hgasrun -n 2, separated by colons.
set -u
HGASRUN=$1 STAGING=$2
shift 2
if [ -e /dev/nvidia0 ] || { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
    echo "a GPU is visible here: the no-device checks do not apply (skipped)"
    exit 77
fi
FAILED=0
expect_no_device() {  # NAME RC OUTPUT
    if [ "$2" -ne 0 ] && [ "$2" -ne 124 ] && grep -q "no CUDA device" <<<"$3" && ! grep -q '^{"bench"' <<<"$3"; then
        echo "ok   $1: exit $2, says 'no CUDA device'"
    else
        echo "FAIL $1: exit $2, output:"; echo "$3" | head -20; FAILED=$((FAILED + 1))
    fi
}
for p in "$@"; do
    name=$(basename "$p")
    out=$(timeout 60 "$p" --quick --sizes 8:64 2>&1); rc=$?
    expect_no_device "$name" $rc "$out"
    out=$(timeout 20 "$p" --help 2>&1); rc=$?
    if [ $rc -eq 0 ] && grep -q "^usage:" <<<"$out"; then echo "ok   $name --help"; else echo "FAIL $name --help: exit $rc"; FAILED=$((FAILED + 1)); fi
    out=$(timeout 20 "$p" --sizes 64:8 2>&1); rc=$?
    if [ $rc -eq 2 ]; then echo "ok   $name bad --sizes: exit 2"; else echo "FAIL $name bad --sizes: exit $rc: $out"; FAILED=$((FAILED + 1)); fi
done
IFS=: read -r -a RANKPROGS <<<"$STAGING"
for p in "${RANKPROGS[@]}"; do
    out=$(timeout 60 "$HGASRUN" -n 2 --timeout 50 "$p" --quick --sizes 8:64 2>&1); rc=$?
    expect_no_device "hgasrun -n 2 $(basename "$p")" $rc "$out"
done
echo "$FAILED failed"
[ $FAILED -eq 0 ]
