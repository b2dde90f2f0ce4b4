#!/usr/bin/env bash
# verify.sh HGASRUN HIMENO N SIZE ITERS [HGASRUN-OPTIONS...]: gosa after ITERS sweeps on N
# ranks must match REFERENCE.md (himeno --verify: relative error <= 1e-5) and the run must exit 0.
# HIMENO_KIND (default: himeno's) is the kind of the halo buffers, HIMENO_MODE (default cpu)
# the mode; HIMENO_REL_MAX (default 1e-9) the relative error this test accepts.
set -u
HGASRUN=$1 HIMENO=$2 N=$3 SIZE=$4 ITERS=$5
shift 5
args=(--size "$SIZE" --iters "$ITERS" --mode "${HIMENO_MODE:-cpu}" --verify)
[ -n "${HIMENO_KIND:-}" ] && args+=(--kind "$HIMENO_KIND")
out=$("$HGASRUN" -n "$N" --timeout 100 "$@" "$HIMENO" "${args[@]}" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -q '^verify: ok: expected' <<<"$out" || { echo "FAIL: no 'verify: ok' line"; exit 1; }
# Every point is computed as the reference computes it (CPU, and the GPU kernel's explicit
# roundings); only the order of the gosa sum differs, which costs about 1e-11.
rel=$(sed -n 's/^verify: ok: .*relative error \([^ ]*\) .*/\1/p' <<<"$out")
max=${HIMENO_REL_MAX:-1e-9}
awk -v r="$rel" -v m="$max" 'BEGIN { exit !(r + 0 <= m + 0) }' || { echo "FAIL: relative error $rel > $max"; exit 1; }
echo "ok: $SIZE, $ITERS sweeps, $N rank(s), mode ${HIMENO_MODE:-cpu}, relative error $rel"
