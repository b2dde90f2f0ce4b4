#!/usr/bin/env bash
# no_gpu.sh HGASRUN HIMENO: where no GPU is visible, the GPU modes and kind cuda end with a clear
# message and a non-zero status (no crash, no hang, no numbers). Exit 77 (skipped) where a GPU
# is visible.
set -u
HGASRUN=$1 HIMENO=$2
if [ -e /dev/nvidia0 ] || { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
    echo "a GPU is visible here: the no-GPU checks do not apply (skipped)"
    exit 77
fi
FAILED=0
# expect TEXT N ARGS...: non-zero (not a signal, not a timeout), TEXT in the output, no JSON
expect() {
    local text=$1 n=$2 out rc
    shift 2
    out=$(timeout 60 "$HGASRUN" -n "$n" --timeout 50 "$HIMENO" "$@" 2>&1)
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" -lt 124 ] && grep -qE -- "$text" <<<"$out" && ! grep -q '^JSON' <<<"$out"; then
        echo "ok: [$*] on $n rank(s): status $rc, '$text'"
    else
        echo "FAIL: [$*] on $n rank(s): status $rc, output:"; echo "$out" | sed 's/^/    | /'
        FAILED=1
    fi
}
expect "runs on a GPU, but|built without CUDA" 1 --mode hybrid --size XS --iters 1
expect "runs on a GPU, but|built without CUDA" 2 --mode hybrid --kind cuda --size XS --iters 1
for mode in stream kernel device; do
    expect "mode $mode runs on a GPU, but|built without CUDA" 1 --mode $mode --size XS --iters 1
    expect "mode $mode runs on a GPU, but|built without CUDA" 2 --mode $mode --size XS --iters 3 --weak
done
expect "kind cuda needs a GPU on every rank" 1 --kind cuda --size XS --iters 1
expect "kind cuda needs a GPU on every rank" 2 --kind cuda --size XS --iters 1
exit $FAILED
