#!/usr/bin/env bash
# physics.sh HGASRUN SEISMIC CHECK N [seismic options...]: the checks of check.py on N ranks.
#   explosive: homogeneous model, explosive source, receivers on the +x axis (README.md)
#   energy:    energy decays once the waves left through the PML
#   energy-no-pml: the same without PML must FAIL the energy check (the check can fail)
set -u
HGASRUN=$1 SEISMIC=$2 CHECK=$3 N=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
case "$CHECK" in
explosive)
    "$HGASRUN" -n "$N" --timeout 200 "$SEISMIC" --grid 71x40x40 --f0 20 --steps 190 --src 16,20,20 \
        --rec-offsets 10,20,40 --energy-every 0 --seismograms "$dir/s.txt" --quiet "$@" || { echo "FAIL: run"; exit 1; }
    python3 "$here/check.py" explosive "$dir/s.txt" --src-i 16 --h 10 --cp 3300 --cs "$(python3 -c 'print(3300/1.732)')" \
        --f0 20 --arrival-max-r 400 ;;
energy)
    "$HGASRUN" -n "$N" --timeout 200 "$SEISMIC" --grid 40x40x40 --f0 20 --steps 250 --energy "$dir/e.txt" --quiet "$@" \
        || { echo "FAIL: run"; exit 1; }
    python3 "$here/check.py" energy "$dir/e.txt" --t-quiet 0.25 ;;
energy-no-pml)
    "$HGASRUN" -n "$N" --timeout 200 "$SEISMIC" --grid 40x40x40 --f0 20 --steps 250 --pml 0 --energy "$dir/e.txt" \
        --quiet "$@" || { echo "FAIL: run"; exit 1; }
    out=$(python3 "$here/check.py" energy "$dir/e.txt" --t-quiet 0.25)
    echo "$out"
    grep -qE '^FAIL: (final energy|energy grows)' <<<"$out" || { echo "FAIL: without PML the energy check should fail (waves stay in)"; exit 1; }
    echo "ok: without PML the energy stays (the check fails as it should)" ;;
*) echo "physics.sh: unknown check $CHECK"; exit 2 ;;
esac
