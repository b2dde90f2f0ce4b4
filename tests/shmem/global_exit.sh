#!/bin/sh
# shmem_global_exit(status) ends the job with exactly `status`, whatever the other PEs do.
#   usage: global_exit.sh <hgasrun> <global_exit program>
set -u
run=$1 prog=$2
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
check() {  # check RANKS STATUS PE HOW MAX_SECONDS
    t0=$(date +%s)
    "$run" -n "$1" --timeout 60 "$prog" "$2" "$3" "$4" >"$out" 2>&1
    rc=$? t=$(($(date +%s) - t0))
    what="-n $1 global_exit($2) on PE $3, others $4"
    if [ "$rc" -ne "$2" ]; then echo "FAIL $what: exit status $rc"; failed=1
    elif [ "$t" -gt "$5" ]; then echo "FAIL $what: took $t s (limit $5 s)"; failed=1
    elif grep -q "returned\|still running\|hgas_abort\|rank .* exited" "$out"; then
        echo "FAIL $what: unexpected output"; failed=1
    elif ! grep -q "PE $3: calling shmem_global_exit" "$out"; then
        echo "FAIL $what: the caller's output before the exit was lost"; failed=1
    else echo "ok   $what: status $rc in $t s"; continue_=1; fi
    [ "$failed" = 0 ] || sed 's/^/     | /' "$out"
}
check 1 0 0 barrier 10
check 3 0 1 barrier 10
check 3 7 0 wait 10
check 2 3 1 compute 10
check 4 0 2 compute 10
exit $failed
