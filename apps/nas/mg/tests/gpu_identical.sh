#!/usr/bin/env bash
# gpu_identical.sh HGASRUN NAS_MG: on 1 and 2 ranks, class S with --kind cuda must give the
# same rnm2 and rnmu, to the last bit, as --kind host on the same decomposition: the kernels
# compute every point with NPB's expression and rounding, and the norm in the CPU's order.
set -u
HGASRUN=$1 MG=$2
field() { sed -n "s/^JSON .*\"$1\":\\([^,}]*\\).*/\\1/p" <<<"$2"; }
for n in 1 2; do
    declare -A v=()
    for kind in host cuda; do
        out=$("$HGASRUN" -n "$n" --timeout 100 "$MG" --class S --kind "$kind" 2>&1)
        rc=$?
        [ "$rc" = 0 ] || { echo "$out"; echo "FAIL: kind $kind on $n rank(s): exit status $rc"; exit 1; }
        v[$kind]="$(field rnm2 "$out") $(field rnmu "$out")"
        echo "kind $kind, $n rank(s): rnm2 rnmu = ${v[$kind]}"
    done
    [ -n "${v[host]% }" ] || { echo "FAIL: no rnm2 in the JSON record"; exit 1; }
    [ "${v[host]}" = "${v[cuda]}" ] || { echo "FAIL: $n rank(s): cuda ${v[cuda]} differs from host ${v[host]}"; exit 1; }
done
echo "ok: kind cuda's rnm2 and rnmu are bitwise kind host's on 1 and 2 ranks"
