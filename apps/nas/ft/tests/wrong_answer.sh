#!/usr/bin/env bash
# wrong_answer.sh HGASRUN NAS_FT: a run whose initial field is disturbed by 1e-6 in one value
# (--perturb) must fail verification: exit 1, "Verification = UNSUCCESSFUL", and a line naming
# the first failing iteration with the expected values. Proves that the check can fail.
set -u
HGASRUN=$1 FT=$2
set --
# Both transposes on 2 ranks (slabs), and the 2-D decomposition (--grid 2x2) on 4.
for run in "slabs 2" "packed 2" "slabs 4 --grid 2x2" "packed 4 --grid 2x2"; do
    set -- $run
    variant=$1 n=$2
    shift 2
    out=$("$HGASRUN" -n "$n" --timeout 100 "$FT" --class S --variant "$variant" --threads 1 --perturb "$@" 2>&1)
    rc=$?
    echo "$out"
    [ "$rc" = 1 ] || { echo "FAIL ($variant): exit status $rc, expected 1"; exit 1; }
    grep -Eq '^ Verification += +UNSUCCESSFUL$' <<<"$out" || { echo "FAIL ($variant): no UNSUCCESSFUL line"; exit 1; }
    grep -q '^ Verification FAILED at T = 1: expected 5.546087004964e+02 4.845363331978e+02, relative error' <<<"$out" ||
        { echo "FAIL ($variant): no line naming iteration 1 and its expected checksum"; exit 1; }
    grep -q '"verified":false' <<<"$out" || { echo "FAIL ($variant): JSON record does not say verified false"; exit 1; }
done
echo "ok: a disturbed run fails verification"
