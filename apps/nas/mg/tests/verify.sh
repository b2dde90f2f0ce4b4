#!/usr/bin/env bash
# verify.sh HGASRUN NAS_MG N CLASS KIND [HGASRUN-OPTIONS...]: nas-mg on N ranks must print "Verification = SUCCESSFUL"
# with an L2 norm within NPB's tolerance (1e-8) of the class's reference, a JSON record saying
# the same, and exit 0.
set -u
HGASRUN=$1 MG=$2 N=$3 CLASS=$4 KIND=$5
shift 5
out=$("$HGASRUN" -n "$N" --timeout 100 "$@" "$MG" --class "$CLASS" --kind "$KIND" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -Eq '^ Verification += +SUCCESSFUL$' <<<"$out" || { echo "FAIL: no 'Verification = SUCCESSFUL' line"; exit 1; }
grep -Eq "^ Class += +$CLASS\$" <<<"$out" || { echo "FAIL: the report does not name class $CLASS"; exit 1; }
grep -Eq "^ Total processes += +$N\$" <<<"$out" || { echo "FAIL: the report does not say $N processes"; exit 1; }
err=$(sed -n 's/^ Error is *\([^ ]*\)$/\1/p' <<<"$out")
[ -n "$err" ] || { echo "FAIL: no 'Error is' line"; exit 1; }
awk -v e="$err" 'BEGIN { exit !(e + 0 <= 1e-8) }' || { echo "FAIL: relative error $err > 1e-8"; exit 1; }
grep -q "^JSON {\"app\":\"nas-mg\",\"class\":\"$CLASS\".*\"kind\":\"$KIND\".*\"verified\":true" <<<"$out" \
    || { echo "FAIL: no JSON record with verified true for class $CLASS, kind $KIND"; exit 1; }
# The memory per rank: class W on 2 ranks (blocks 128x128x64) is 3,895,136 doubles: u and r at
# levels 7..2 split and level 1 whole, v, the gathered level 2, twelve 130x130 halo faces.
mem=$(sed -n 's/^ Memory per rank: \([0-9.]*\) MB .*/\1/p' <<<"$out")
[ -n "$mem" ] || { echo "FAIL: no 'Memory per rank' line"; exit 1; }
if [ "$CLASS" = W ] && [ "$N" = 2 ] && [ "$mem" != 31.2 ]; then echo "FAIL: memory per rank $mem MB, expected 31.2"; exit 1; fi
# Ranks as threads (--threads T among the options): the norms are the bits of N processes'.
if [[ "$*" =~ --threads ]]; then
    field() { sed -n "s/^JSON .*\"$1\":\([^,}]*\).*/\1/p" <<<"$2"; }
    procs=$("$HGASRUN" -n "$N" --timeout 100 "$MG" --class "$CLASS" --kind "$KIND" 2>&1) || { echo "$procs"; echo "FAIL: $N processes"; exit 1; }
    a="$(field rnm2 "$out") $(field rnmu "$out")" b="$(field rnm2 "$procs") $(field rnmu "$procs")"
    [ -n "${a// }" ] && [ "$a" = "$b" ] || { echo "FAIL: rank threads give rnm2 rnmu '$a', $N processes '$b'"; exit 1; }
fi
echo "ok: class $CLASS, $N rank(s) $*, kind $KIND, relative error $err, $mem MB per rank"
