#!/usr/bin/env bash
# bad_input.sh HGASRUN SEISMIC: bad options end with status 2 and a message naming the problem.
set -u
HGASRUN=$1 SEISMIC=$2
fails=0
expect() {  # expect N "message part" args...
    local n=$1 want=$2
    shift 2
    out=$("$HGASRUN" -n "$n" --timeout 60 "$SEISMIC" "$@" 2>&1)
    rc=$?
    if [ $rc = 2 ] && grep -qF -- "$want" <<<"$out"; then echo "ok: $* -> $want"
    else echo "FAIL: $* (status $rc) should say: $want"; echo "$out" | head -5; fails=$((fails + 1)); fi
}
expect 1 "Courant number" --grid 20x20x20 --dt 0.01
expect 2 "--decomp 2x2 is 4 ranks but the job has 2" --grid 20x20x20 --pml 4 --decomp 2x2
expect 1 "--style fast: wants basic, pipelined or integrated" --style fast
expect 1 "--grid 5x5x5: wants NXxNYxNZ" --grid 5x5x5
expect 1 "--src 50,1,1 lies outside the grid" --grid 20x20x20 --pml 4 --src 50,1,1
expect 1 "needs more than twice the PML points" --grid 20x20x20 --pml 10
expect 1 "set HGAS_SIM_HEAP_SIZE" --grid 20x20x20 --pml 4 --kind sim --steps 1
expect 1 "--bogus" --bogus 1
expect 1 "--overlap 2: wants 0 or 1" --overlap 2
expect 1 "layers must be given top down" --layer 0,3000,1500,2000 --layer 0,3000,1500,2000
[ $fails = 0 ] || exit 1
echo "ok: bad input"
