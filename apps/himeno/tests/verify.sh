#!/usr/bin/env bash
# verify.sh HGASRUN HIMENO N SIZE ITERS [HGASRUN-OPTIONS...]: gosa after ITERS sweeps on N
# ranks must match REFERENCE.md (himeno --verify: relative error <= 1e-5) and the run must exit 0.
# HIMENO_KIND (default host) is the kind of the halo buffers.
set -u
HGASRUN=$1 HIMENO=$2 N=$3 SIZE=$4 ITERS=$5
shift 5
out=$("$HGASRUN" -n "$N" --timeout 100 "$@" "$HIMENO" --size "$SIZE" --iters "$ITERS" --kind "${HIMENO_KIND:-host}" --verify 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -q '^verify: ok: expected' <<<"$out" || { echo "FAIL: no 'verify: ok' line"; exit 1; }
# The CPU computes every point as the reference does; only the order of the gosa sum differs.
rel=$(sed -n 's/^verify: ok: .*relative error \([^ ]*\) .*/\1/p' <<<"$out")
awk -v r="$rel" 'BEGIN { exit !(r + 0 <= 1e-9) }' || { echo "FAIL: relative error $rel > 1e-9"; exit 1; }
echo "ok: $SIZE, $ITERS sweeps, $N rank(s), relative error $rel"
