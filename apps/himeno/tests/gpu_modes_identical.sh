#!/usr/bin/env bash
# gpu_modes_identical.sh HGASRUN HIMENO [MODE...] (on a GPU machine): modes stream, kernel and
# device (or the MODEs given) give
# mode hybrid's gosa and field, bit for bit (the kernels call the same per-tile code, the plane
# sums are added in the same order), on 1, 2 and 4 ranks (ranks share the GPUs round-robin),
# for even and uneven splits and with one plane per rank; --no-exchange changes gosa in every
# mode (the comparison is not blind); --overhead runs; a --weak run on 2 ranks equals the strong
# run of its grid on 1 rank.
set -u
HGASRUN=$1 HIMENO=$2
shift 2
FAILED=0
MODES=${*:-stream kernel device}
# run N SIZE ITERS [ARGS...]: prints the gosa and checksum lines
run() {
    local n=$1 size=$2 iters=$3 out rc
    shift 3
    out=$("$HGASRUN" -n "$n" --timeout 100 "$HIMENO" --size "$size" --iters "$iters" --checksum "$@" 2>&1)
    rc=$?
    if [ "$rc" != 0 ]; then echo "FAIL: $n ranks $size $iters $* exited with $rc:" >&2; echo "$out" | tail -15 >&2; FAILED=1; fi
    grep -E '^(gosa|checksum):' <<<"$out"
}
# XS 64: many sweeps (the windows of modes stream and kernel, the device loop); 12x6x20 splits
# unevenly; 10x70x130 has tiles cut by the grid's edge in j and k.
for case in "XS 64" "S 3" "12x6x20 4" "10x70x130 2"; do
    set -- $case
    size=$1 iters=$2
    ref=$(run 1 "$size" "$iters" --mode hybrid)
    echo "$size, $iters sweeps, hybrid on 1 rank:"; echo "$ref" | sed 's/^/    /'
    grep -q '^checksum: sum [0-9]' <<<"$ref" || { echo "FAIL: no reference for $size"; FAILED=1; continue; }
    for mode in $MODES; do
        for n in 1 2 4; do
            got=$(run "$n" "$size" "$iters" --mode "$mode")
            if [ "$got" = "$ref" ]; then echo "ok: $size, mode $mode on $n ranks is identical to hybrid"
            else echo "FAIL: $size, mode $mode on $n ranks differs:"; echo "$got" | sed 's/^/    /'; FAILED=1; fi
        done
    done
done
# one plane per rank: the boundary kernel only, no interior tiles
ref=$(run 1 7x9x11 5 --mode hybrid)
for mode in $MODES; do
    got=$(run 5 7x9x11 5 --mode "$mode")
    if [ "$got" = "$ref" ]; then echo "ok: 7x9x11, mode $mode on 5 ranks (one plane each) is identical"
    else echo "FAIL: 7x9x11, mode $mode on 5 ranks differs"; FAILED=1; fi
done
for mode in $MODES; do
    # without the exchange the slabs do not see each other: gosa must change
    got=$("$HGASRUN" -n 2 "$HIMENO" --mode "$mode" --size XS --iters 3 --no-exchange 2>&1 | grep '^gosa:')
    if [ -n "$got" ] && [ "$got" != "$(run 1 XS 3 --mode hybrid | grep '^gosa:')" ]; then
        echo "ok: mode $mode: --no-exchange on 2 ranks changes gosa"
    else echo "FAIL: mode $mode: --no-exchange on 2 ranks: '$got'"; FAILED=1; fi
    out=$("$HGASRUN" -n 2 --timeout 100 "$HIMENO" --mode "$mode" --size XS --iters 3 --overhead --verify 2>&1)
    if [ $? = 0 ] && grep -q '^comm overhead: ' <<<"$out" && grep -q '^verify: ok' <<<"$out"; then
        echo "ok: mode $mode: --overhead on 2 ranks"
    else echo "FAIL: mode $mode: --overhead on 2 ranks:"; echo "$out" | tail -15; FAILED=1; fi
    # weak scaling: XS per rank on 2 ranks is the 62x32x64 grid
    got=$(run 2 XS 5 --mode "$mode" --weak)
    if [ "$got" = "$(run 1 62x32x64 5 --mode hybrid)" ]; then echo "ok: mode $mode: --weak on 2 ranks = its grid on 1 rank"
    else echo "FAIL: mode $mode: --weak on 2 ranks differs from 62x32x64 on 1 rank"; FAILED=1; fi
done
exit $FAILED
