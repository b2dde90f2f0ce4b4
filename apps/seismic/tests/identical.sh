#!/usr/bin/env bash
# identical.sh HGASRUN SEISMIC KIND [TOL]: seismograms of a layered model with a force source
# on 1 rank (kind host, style integrated) are the reference; every other rank count,
# decomposition and style of kind KIND (integrated and pipelined: the interior updated while the
# halos are in flight, and also without that overlap) must give the same seismograms: byte for byte
# (TOL unset: host, sim), or within relative tolerance TOL of the largest value (cuda).
set -u
HGASRUN=$1 SEISMIC=$2 KIND=$3 TOL=${4:-}
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
args=(--grid 32x28x28 --steps 60 --f0 20 --model layered --source force-z --src 12,13,14 --pml 6
      --rec 20,13,14 --rec 14,6,22 --rec 6,22,4 --rec 12,13,3 --quiet)
"$HGASRUN" -n 1 --timeout 100 "$SEISMIC" "${args[@]}" --seismograms "$dir/ref.txt" >/dev/null || { echo "FAIL: reference run"; exit 1; }
[ "$(grep -vc '^#' "$dir/ref.txt")" = 60 ] || { echo "FAIL: reference has not 60 samples"; exit 1; }
fails=0
for cfg in "1 integrated 1x1" "2 integrated 1x2" "3 basic 1x3" "4 pipelined 1x4" "4 integrated 2x2" \
           "2 basic 2x1" "3 pipelined 1x3" "4 basic 2x2" "2 pipelined 1x2 --overlap 0" \
           "3 integrated 1x3 --overlap 0" "2 integrated 2x1" "4 pipelined 2x2"; do
    set -- $cfg
    out=$("$HGASRUN" -n "$1" --timeout 100 "$SEISMIC" "${args[@]}" --kind "$KIND" --style "$2" --decomp "$3" \
          "${@:4}" --chunks 3 --seismograms "$dir/s.txt" 2>&1)
    rc=$?
    if [ $rc != 0 ]; then echo "FAIL: $cfg: exit $rc"; echo "$out" | tail -5; fails=$((fails + 1)); continue; fi
    if [ -z "$TOL" ]; then
        if cmp -s "$dir/ref.txt" "$dir/s.txt"; then echo "ok: $KIND, $cfg: identical"
        else echo "FAIL: $KIND, $cfg: seismograms differ from 1 rank host"; diff "$dir/ref.txt" "$dir/s.txt" | head -4; fails=$((fails + 1)); fi
    else
        if python3 - "$dir/ref.txt" "$dir/s.txt" "$TOL" <<'PY'
import sys
rd = lambda p: [[float(x) for x in l.split()] for l in open(p) if not l.startswith("#")]
a, b, tol = rd(sys.argv[1]), rd(sys.argv[2]), float(sys.argv[3])
m = max(abs(x) for r in a for x in r[1:])
d = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra[1:], rb[1:]))
print(f"max difference {d:.3e} of max {m:.3e}")
sys.exit(0 if len(a) == len(b) and m > 0 and d <= tol * m else 1)
PY
        then echo "ok: $KIND, $cfg: within $TOL"; else echo "FAIL: $KIND, $cfg: beyond $TOL"; fails=$((fails + 1)); fi
    fi
done
[ $fails = 0 ] || { echo "FAIL: $fails configuration(s)"; exit 1; }
echo "ok: all configurations"
