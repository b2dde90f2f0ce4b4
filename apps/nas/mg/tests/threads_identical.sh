#!/usr/bin/env bash
# threads_identical.sh HGASRUN NAS_MG: the planes are shared out over the threads, but every
# point and the norm's order of summation are fixed, so class W's rnm2 and rnmu must be the
# same bits with 1 and 3 threads (3 does not divide the 128 planes evenly), and with 2 ranks of
# 2 threads the same bits as 2 ranks of 1 thread.
set -u
HGASRUN=$1 MG=$2
field() { sed -n "s/^JSON .*\"$1\":\\([^,}]*\\).*/\\1/p" <<<"$2"; }
run() {  # ranks threads -> "rnm2 rnmu"
    local out rc
    out=$("$HGASRUN" -n "$1" --timeout 100 "$MG" --class W --threads "$2" 2>&1); rc=$?
    [ "$rc" = 0 ] || { echo "$out" >&2; echo "FAIL: $1 rank(s), $2 thread(s): exit status $rc" >&2; return 1; }
    grep -Eq "^ Threads/process += +$2\$" <<<"$out" || { echo "FAIL: the report does not say $2 threads" >&2; return 1; }
    echo "$(field rnm2 "$out") $(field rnmu "$out")"
}
a=$(run 1 1) && b=$(run 1 3) && c=$(run 2 1) && d=$(run 2 2) || exit 1
echo "1 rank: 1 thread $a, 3 threads $b; 2 ranks: 1 thread $c, 2 threads $d"
[ -n "${a% }" ] || { echo "FAIL: no rnm2 in the JSON record"; exit 1; }
[ "$a" = "$b" ] || { echo "FAIL: 1 rank: 3 threads give $b, 1 thread $a"; exit 1; }
[ "$c" = "$d" ] || { echo "FAIL: 2 ranks: 2 threads give $d, 1 thread $c"; exit 1; }
echo "ok: the same bits on any number of threads"
