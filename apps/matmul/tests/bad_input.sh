#!/usr/bin/env bash
# bad_input.sh HGASRUN MATMUL: each bad command line ends with status 2 (or 1 for a job that
# lacks what it asks for) and a message naming the problem.
set -u
HGASRUN=$1 MATMUL=$2
fails=0
expect() {  # expect STATUS MESSAGE ARGS...
    local want=$1 msg=$2
    shift 2
    local out rc
    out=$("$HGASRUN" -n 1 --timeout 60 "$MATMUL" "$@" 2>&1)
    rc=$?
    if [ $rc -ne "$want" ] || ! grep -qF -- "$msg" <<<"$out"; then
        echo "FAIL: matmul $* gave status $rc (want $want) and:"; echo "$out"; fails=$((fails + 1))
    fi
}
expect 2 "--n 100 is not a multiple of --block 32" --n 100 --block 32
expect 2 "--n 16 is not a multiple of --block 32" --n 16 --block 32
expect 2 "--kind needs host, sim or cuda (got 'gpu')" --kind gpu
expect 2 "--n needs a matrix order in 1..1048576 (got '-5')" --n -5
expect 2 "--reps needs a count in 1..1000 (got '0')" --reps 0
expect 2 "unknown option '--size'" --size 10
expect 2 "--inject-error needs the check" --inject-error --no-verify
HGAS_SIM_HEAP_SIZE=0 expect 1 "--kind sim: hgas has no sim memory (set HGAS_SIM_HEAP_SIZE" --kind sim --n 64
# arrays larger than the heap: hgas's own message naming the setting
HGAS_HEAP_SIZE=4M expect 1 "HGAS_HEAP_SIZE" --n 1024 --block 256
[ $fails -eq 0 ] && echo "ok: bad input"
exit $((fails > 0))
