#!/usr/bin/env bash
# fails.sh HGASRUN NAS_MG: runs that must fail, each with its message and exit status.
#  1. class S with 3 V-cycles instead of 4 (NPB's iteration override): the L2 norm is not the
#     reference; "Verification = UNSUCCESSFUL", the correct value printed, exit status 1.
#  2. 3 ranks: not a power of two; exit 2 naming the rank counts that work.
#  3. kind sim without a sim heap: exit 1 naming HGAS_SIM_HEAP_SIZE.
#  4. an unknown class: exit 2 naming the classes.
set -u
HGASRUN=$1 MG=$2
fail() { echo "FAIL: $*"; exit 1; }

out=$("$HGASRUN" -n 2 --timeout 100 "$MG" --class S --iterations 3 2>&1); rc=$?
echo "$out"
[ "$rc" = 1 ] || fail "3 iterations: exit status $rc, expected 1"
grep -Eq '^ Verification += +UNSUCCESSFUL$' <<<"$out" || fail "3 iterations: no 'Verification = UNSUCCESSFUL'"
grep -q '^ The correct L2 Norm is  5.3077070057340e-05 (class S, 4 iterations)$' <<<"$out" \
    || fail "3 iterations: the reference value is not printed"
grep -Eq '^ Relative error .* exceeds 1e-08$' <<<"$out" || fail "3 iterations: no relative error line"
grep -q '"verified":false' <<<"$out" || fail "3 iterations: the JSON record does not say verified false"

out=$("$HGASRUN" -n 3 --timeout 100 "$MG" --class S 2>&1); rc=$?
echo "$out"
[ "$rc" = 2 ] || fail "3 ranks: exit status $rc, expected 2"
grep -q 'nas-mg: class S on 3 ranks: .*must be a power of two; 3 is not: use 2 or 4 ranks' <<<"$out" \
    || fail "3 ranks: no message naming the rank counts that work"

out=$(env -u HGAS_SIM_HEAP_SIZE "$HGASRUN" -n 1 --timeout 100 "$MG" --class S --kind sim 2>&1); rc=$?
echo "$out"
[ "$rc" = 1 ] || fail "sim without heap: exit status $rc, expected 1"
grep -q 'nas-mg: kind sim needs .* set HGAS_SIM_HEAP_SIZE' <<<"$out" || fail "sim without heap: no message"

out=$("$MG" --class Q 2>&1); rc=$?
echo "$out"
[ "$rc" = 2 ] || fail "class Q: exit status $rc, expected 2"
grep -q "nas-mg: --class wants S, W, A, B, C or D, not 'Q'" <<<"$out" || fail "class Q: no message"
echo "ok: every bad run failed with its message"
