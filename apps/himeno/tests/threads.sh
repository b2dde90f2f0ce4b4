#!/usr/bin/env bash
# threads.sh HGASRUN HIMENO N T KIND SIZE ITERS: himeno on N ranks as threads (hgasrun --threads
# T: N/T processes of T rank threads) must verify against REFERENCE.md's gosa and give the same
# bits of gosa and of the final field as N ranks that are processes.
set -u
HGASRUN=$1 HIMENO=$2 N=$3 T=$4 KIND=$5 SIZE=$6 ITERS=$7
run() {  # hgasrun options... -> the whole output; fails the test on a non-zero exit
    local out rc
    out=$("$HGASRUN" -n "$N" --timeout 100 "$@" "$HIMENO" --size "$SIZE" --iters "$ITERS" --kind "$KIND" \
          --threads 1 --verify --checksum 2>&1); rc=$?
    echo "$out"
    [ "$rc" = 0 ] || { echo "FAIL: hgasrun -n $N $* exited with $rc"; return 1; }
}
threads=$(run --threads "$T") || { echo "$threads"; exit 1; }
procs=$(run) || { echo "$procs"; exit 1; }
echo "$threads"
grep -q '^verify: ok: expected' <<<"$threads" || { echo "FAIL: rank threads: no 'verify: ok' line"; exit 1; }
grep -q "^himeno: .*, $N rank(s) " <<<"$threads" || { echo "FAIL: rank threads: the report does not say $N ranks"; exit 1; }
a=$(grep -E '^(gosa|checksum):' <<<"$threads") b=$(grep -E '^(gosa|checksum):' <<<"$procs")
[ "$(wc -l <<<"$a")" = 2 ] || { echo "FAIL: rank threads: no gosa and checksum lines"; exit 1; }
[ "$a" = "$b" ] || { echo "FAIL: $N rank threads ($T per process) differ from $N processes:"; echo "$a"; echo "$b"; exit 1; }
echo "ok: $SIZE, $ITERS sweeps, kind $KIND: $N ranks as threads ($T per process) verify and are bitwise those of $N processes"
