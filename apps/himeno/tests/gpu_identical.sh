#!/usr/bin/env bash
# gpu_identical.sh HGASRUN HIMENO_GPU HIMENO_CPU [--quick]: mode hybrid gives the same gosa and field,
# bit for bit, on 1, 2, 3, 4 ranks (even and uneven splits) and with one plane per rank; its
# field is bitwise the CPU version's (the kernel rounds every operation as the original does);
# --no-exchange changes gosa (the comparison is not blind); --overhead runs. HIMENO_GPU may be
# the real himeno (on a GPU machine; ranks share GPUs round-robin) or himeno-emu. --quick: XS
# on 1 and 3 ranks and the one-plane case only (himeno-emu under more stream schedules).
set -u
HGASRUN=$1 GPU=$2 CPU=$3 QUICK=${4:-}
FAILED=0
CASES=("XS 3" "7x9x11 5" "12x6x20 4" "10x70x130 2") RANKS="2 3 4"
[ "$QUICK" = --quick ] && CASES=("XS 3") RANKS=3
# run PROG N SIZE ITERS [ARGS...]: prints the gosa and checksum lines
run() {
    local prog=$1 n=$2 size=$3 iters=$4 out rc
    shift 4
    out=$("$HGASRUN" -n "$n" --timeout 100 "$prog" --size "$size" --iters "$iters" --checksum "$@" 2>&1)
    rc=$?
    if [ "$rc" != 0 ]; then echo "FAIL: $(basename "$prog") $n ranks $size $iters $* exited with $rc:" >&2; echo "$out" >&2; FAILED=1; fi
    grep -E '^(gosa|checksum):' <<<"$out"
}
for case in "${CASES[@]}"; do
    set -- $case
    size=$1 iters=$2
    vfy=(); [ "$size" = XS ] && vfy=(--verify)  # gosa against REFERENCE.md too (exit 1 if off)
    ref=$(run "$GPU" 1 "$size" "$iters" --mode hybrid ${vfy[@]+"${vfy[@]}"})
    echo "$size, $iters sweeps, hybrid on 1 rank:"; echo "$ref" | sed 's/^/    /'
    grep -q '^checksum: sum [0-9]' <<<"$ref" || { echo "FAIL: no checksum for $size"; FAILED=1; continue; }
    cpu=$(run "$CPU" 1 "$size" "$iters" --mode cpu | grep '^checksum:')
    if [ "$cpu" = "$(grep '^checksum:' <<<"$ref")" ]; then echo "ok: $size: the GPU field is bitwise the CPU version's"
    else echo "FAIL: $size: GPU field differs from the CPU version's: $cpu"; FAILED=1; fi
    for n in $RANKS; do
        got=$(run "$GPU" "$n" "$size" "$iters" --mode hybrid)
        if [ "$got" = "$ref" ]; then echo "ok: $size on $n ranks is identical"
        else echo "FAIL: $size on $n ranks differs:"; echo "$got" | sed 's/^/    /'; FAILED=1; fi
    done
done
# 5 interior planes on 5 ranks: every rank has one plane (boundary kernel only, no interior).
got=$(run "$GPU" 5 7x9x11 5 --mode hybrid)
if [ "$got" = "$(run "$GPU" 1 7x9x11 5 --mode hybrid)" ]; then echo "ok: 7x9x11 on 5 ranks (one plane each) is identical"
else echo "FAIL: 7x9x11 on 5 ranks differs"; FAILED=1; fi
[ "$QUICK" = --quick ] && exit $FAILED
# Without the exchange the slabs do not see each other: the result must change.
got=$("$HGASRUN" -n 2 "$GPU" --mode hybrid --size XS --iters 3 --no-exchange 2>&1 | grep '^gosa:')
if [ -n "$got" ] && [ "$got" != "$(run "$GPU" 1 XS 3 --mode hybrid | grep '^gosa:')" ]; then
    echo "ok: --no-exchange on 2 ranks changes gosa"
else echo "FAIL: --no-exchange on 2 ranks: '$got'"; FAILED=1; fi
out=$("$HGASRUN" -n 2 --timeout 100 "$GPU" --mode hybrid --size XS --iters 3 --overhead --verify 2>&1)
if [ $? = 0 ] && grep -q '^comm overhead: ' <<<"$out" && grep -q '^verify: ok' <<<"$out"; then
    echo "ok: --overhead on 2 ranks"
else echo "FAIL: --overhead on 2 ranks:"; echo "$out"; FAILED=1; fi
exit $FAILED
