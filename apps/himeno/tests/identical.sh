#!/usr/bin/env bash
# identical.sh HGASRUN HIMENO: gosa and the final field must be bitwise identical whatever the
# number of ranks (even and uneven splits, one plane per rank) and threads.
set -u
HGASRUN=$1 HIMENO=$2
FAILED=0
# run N THREADS SIZE ITERS: prints the gosa and checksum lines
run() {
    local out rc
    out=$("$HGASRUN" -n "$1" --timeout 100 "$HIMENO" --size "$3" --iters "$4" --threads "$2" --checksum 2>&1)
    rc=$?
    if [ "$rc" != 0 ]; then echo "FAIL: $* exited with $rc:" >&2; echo "$out" >&2; FAILED=1; fi
    grep -E '^(gosa|checksum):' <<<"$out"
}
for case in "XS 3" "7x9x11 5" "12x6x20 4"; do
    set -- $case
    size=$1 iters=$2
    ref=$(run 1 1 "$size" "$iters")
    echo "$size, $iters sweeps, 1 rank:"; echo "$ref" | sed 's/^/    /'
    grep -q '^checksum: sum [0-9]' <<<"$ref" || { echo "FAIL: no checksum for $size"; FAILED=1; }
    for nt in "2 1" "3 1" "4 1" "1 2" "3 2"; do
        set -- $nt
        got=$(run "$1" "$2" "$size" "$iters")
        if [ "$got" = "$ref" ]; then echo "ok: $size on $1 ranks x $2 threads is identical"
        else echo "FAIL: $size on $1 ranks x $2 threads differs:"; echo "$got" | sed 's/^/    /'; FAILED=1; fi
    done
done
# 5 interior planes on 5 ranks: every rank has exactly one plane (boundary = whole slab).
got=$(run 5 1 7x9x11 5)
ref=$(run 1 1 7x9x11 5)
if [ "$got" = "$ref" ]; then echo "ok: 7x9x11 on 5 ranks (one plane each) is identical"
else echo "FAIL: 7x9x11 on 5 ranks differs"; FAILED=1; fi
# Without the exchange the slabs do not see each other: the result must change (the test
# would be blind if it did not).
got=$("$HGASRUN" -n 2 "$HIMENO" --size XS --iters 3 --no-exchange 2>&1 | grep '^gosa:')
if [ "$got" != "$(run 1 1 XS 3 | grep '^gosa:')" ]; then echo "ok: --no-exchange on 2 ranks changes gosa"
else echo "FAIL: --no-exchange on 2 ranks gives the exchanged gosa"; FAILED=1; fi
exit $FAILED
