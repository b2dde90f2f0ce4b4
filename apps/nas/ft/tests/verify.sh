#!/usr/bin/env bash
# verify.sh HGASRUN NAS_FT N CLASS VARIANT KIND [HGASRUN-OPTIONS...]: nas-ft on N ranks must print every iteration's
# checksum, report "Verification = SUCCESSFUL" with every relative error within NPB's 1e-12, and
# exit 0. FT_GRID=P1xP2 in the environment: run on that process grid (--grid) and check that the
# report names it.
set -u
HGASRUN=$1 FT=$2 N=$3 CLASS=$4 VARIANT=$5 KIND=$6
shift 6
grid=()
[ -n "${FT_GRID:-}" ] && grid=(--grid "$FT_GRID")
out=$("$HGASRUN" -n "$N" --timeout 100 "$@" "$FT" --class "$CLASS" --variant "$VARIANT" --kind "$KIND" --threads 1 "${grid[@]}" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -Eq '^ Verification += +SUCCESSFUL$' <<<"$out" || { echo "FAIL: no 'Verification = SUCCESSFUL' line"; exit 1; }
grep -Eq "^ Class += +$CLASS\$" <<<"$out" || { echo "FAIL: the report does not name class $CLASS"; exit 1; }
grep -Eq "^ Total processes += +$N\$" <<<"$out" || { echo "FAIL: the report does not say $N processes"; exit 1; }
if [ -n "${FT_GRID:-}" ]; then
    grep -Eq "^ Process grid +: $FT_GRID \(2-D, pencils\)\$" <<<"$out" || { echo "FAIL: the report does not name grid $FT_GRID (2-D)"; exit 1; }
fi
iters=$(grep -Ec '^ T = +[0-9]+ +Checksum = ' <<<"$out")
[ "$iters" = 6 ] || { echo "FAIL: $iters checksum lines, expected 6"; exit 1; }
# The JSON record's relative errors, each within the tolerance (and the record says verified).
json=$(sed -n 's/^JSON //p' <<<"$out")
grep -q '"verified":true' <<<"$json" || { echo "FAIL: JSON record does not say verified"; exit 1; }
errs=$(sed -n 's/.*"rel_err":\[\([^]]*\)\].*/\1/p' <<<"$json" | tr ',' ' ')
[ -n "$errs" ] || { echo "FAIL: no rel_err in the JSON record"; exit 1; }
for e in $errs; do
    awk -v e="$e" 'BEGIN { exit !(e + 0 <= 1e-12) }' || { echo "FAIL: relative error $e > 1e-12"; exit 1; }
done
# Ranks as threads (--threads T among the hgasrun options): every checksum is the one N
# processes print.
if [[ "$*" =~ --threads ]]; then
    procs=$("$HGASRUN" -n "$N" --timeout 100 "$FT" --class "$CLASS" --variant "$VARIANT" --kind "$KIND" --threads 1 "${grid[@]}" 2>&1) \
        || { echo "$procs"; echo "FAIL: $N processes"; exit 1; }
    a=$(grep -E '^ T = +[0-9]+ +Checksum = ' <<<"$out") b=$(grep -E '^ T = +[0-9]+ +Checksum = ' <<<"$procs")
    [ "$a" = "$b" ] || { echo "FAIL: rank threads' checksums differ from $N processes':"; echo "$b"; exit 1; }
fi
echo "ok: FT class $CLASS, $N rank(s), $VARIANT, kind $KIND, relative errors $errs"
