#!/usr/bin/env bash
# hgas-bench as a user meets it: --only with a wrong name, a target judged only at the size it
# names, and a crashing OpenSHMEM peer whose trace stays out of the table. The peer is a fake
# oshcc/oshrun pair on PATH that prints the peer's JSON lines, a backtrace on stderr, and then
# dies of SIGSEGV (as Open MPI 4.1's does at shmem_finalize).
#   bench_cli.sh <hgas-bench> <hgasrun> <bench dir>
set -u
BENCH=$1 HGASRUN=$2 DIR=$3
WORK=$(mktemp -d /tmp/hgas-bench-cli.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILED=0
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
has() { if grep -qF -- "$2" "$1"; then echo "ok   has '$2'"; else fail "lacks '$2':"; sed 's/^/      | /' "$1" | head -40; fi; }
hasnt() { if grep -qF -- "$2" "$1"; then fail "has '$2':"; sed 's/^/      | /' "$1" | head -40; else echo "ok   no '$2'"; fi; }

# bench_only_unknown_name: rejected, naming the valid benchmarks.
"$BENCH" --only foo,put_bw >"$WORK/only.out" 2>&1
rc=$?
[ $rc = 2 ] && echo "ok   --only foo: exit 2" || fail "--only foo: exit $rc, expected 2"
has "$WORK/only.out" "--only: 'foo' is no benchmark; the benchmarks are put_lat, put_signal_lat, get_lat"

# bench_batches_bounded: more batches than the programs keep samples for is an error, not a
# write past the sample array (hgas-bench-msg crashed with --batches 2000).
"$DIR/hgas-bench-msg" --batches 65 >"$WORK/batches.out" 2>&1
rc=$?
[ $rc = 2 ] && echo "ok   --batches 65: exit 2" || fail "--batches 65: exit $rc, expected 2"
has "$WORK/batches.out" "--batches wants 1 to 64, not '65'"

mkdir -p "$WORK/bin"
cat >"$WORK/bin/oshcc" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -o ] && { printf '#!/bin/sh\n' >"$2"; chmod +x "$2"; }; shift; done
SH
cat >"$WORK/bin/oshrun" <<'SH'
#!/bin/sh
echo '{"bench":"put_bw","impl":"oshmem","transport":"shm","bytes":65536,"gbps":0.001,"median_us":1.0,"verified":true}'
echo '[host:01234] *** Process received signal ***' >&2
echo '[host:01234] Signal: Segmentation fault (11)' >&2
kill -SEGV $$
SH
chmod +x "$WORK/bin/oshcc" "$WORK/bin/oshrun"

# bench_target_from_other_size: a 64 KiB sweep does not judge the 2 MiB target.
PATH=$WORK/bin:$PATH "$BENCH" --hgasrun "$HGASRUN" --bench-dir "$DIR" --transport shm --only put_bw \
    --sizes 64K:64K --quick --no-pin >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
echo "     (hgas-bench exit $rc)"
has "$WORK/run.out" "putmem_nbi + quiet 2 MiB >= 0.9x OpenSHMEM"
if grep -F "2 MiB >= 0.9x OpenSHMEM" "$WORK/run.out" | grep -qE "met|MISSED"; then
    fail "the 2 MiB target was judged from a 64K run:"; grep -F "2 MiB" "$WORK/run.out"
else echo "ok   the 2 MiB target is not judged"; fi
has "$WORK/run.out" "not measured: 2M is not among the sizes (--sizes 64K:64K)"
has "$WORK/run.out" "== targets (the project's performance goals, docs/bench.md)"
hasnt "$WORK/run.out" "from the issue"
# bench_peer_crash_trace_in_table: the trace is in a file, one line says so.
hasnt "$WORK/run.out" "Process received signal"
hasnt "$WORK/run.err" "Process received signal"
has "$WORK/run.err" "hgas-bench: peer oshmem (oshrun -np 2 peer_shmem) crashed (signal 11); its output in /tmp/hgas-bench-oshmem-"
log=$(sed -n 's/.*its output in \(\/tmp\/hgas-bench-oshmem-[0-9]*\.err\).*/\1/p' "$WORK/run.err" | head -1)
if [ -n "$log" ] && grep -q "Process received signal" "$log"; then echo "ok   the trace is in $log"; rm -f "$log"
else fail "no trace in '$log'"; fi
# The 64K row compares with the peer's 64K line.
has "$WORK/run.out" "0.001 GB/s"

# kinds_budget_bounds_the_run: --budget cuts the points to fit and leaves out sizes past it,
# saying so, instead of running until an outside limit kills the run (and its table).
HGAS_SIM_HEAP_SIZE=64M timeout 100 "$HGASRUN" -n 1 "$DIR/hgas-bench-kinds" --kind sim --dirs h2d --sizes 8:8M:2 \
    --quick --no-pin --budget 0.5 --transport self >"$WORK/kinds.out" 2>&1
rc=$?
[ $rc = 0 ] && echo "ok   kinds --budget: exit 0" || { fail "kinds --budget: exit $rc"; sed 's/^/      | /' "$WORK/kinds.out" | head; }
has "$WORK/kinds.out" "the time budget (--budget 0.5 s) is spent"
n=$(grep -c '^{"bench":"put_lat","impl":"hgas"' "$WORK/kinds.out")
[ "$n" -ge 1 ] && echo "ok   $n put_lat records before the budget ran out" || fail "no put_lat record"
"$BENCH" --gpu --budget 0 >"$WORK/budget.out" 2>&1
[ $? = 2 ] && echo "ok   --budget 0: exit 2" || fail "--budget 0 accepted"
has "$WORK/budget.out" "--budget: '0' is not seconds > 0"

# bench_init_sweep: hgas-bench --init runs hgas-bench-init per rank count and prints the table
# with the growth exponents (the plot needs matplotlib, which this machine may lack).
"$BENCH" --init --hgasrun "$HGASRUN" --bench-dir "$DIR" --ranks 1,2,4 --repeat 1 --plot-dir "$WORK/plots" \
    --json "$WORK/init.jsonl" >"$WORK/init.out" 2>&1
rc=$?
[ $rc = 0 ] && echo "ok   --init: exit 0" || { fail "--init: exit $rc"; sed 's/^/      | /' "$WORK/init.out" | head -20; }
has "$WORK/init.out" "hgas-bench --init: ranks 1,2,4, 1 run(s) each"
has "$WORK/init.out" "k init"
n=$(grep -c '"bench":"init"' "$WORK/init.jsonl")
[ "$n" = 3 ] && echo "ok   3 init records" || fail "$n init records, expected 3"
for r in 1 2 4; do
    grep -q "\"ranks\":$r,\"init_s\":[0-9.]*,\"init_max_s\":[0-9.]*,\"cpu_s\":[0-9.]*" "$WORK/init.jsonl" \
        && echo "ok   record for $r ranks" || fail "no record for $r ranks"
done
"$BENCH" --init --ranks 2,x >"$WORK/ranks.out" 2>&1
[ $? = 2 ] && echo "ok   --ranks 2,x: exit 2" || fail "--ranks 2,x accepted"
has "$WORK/ranks.out" "--ranks: 'x' is not a rank count"
# --coll with its default sizes: they fit the default heap (the 64 MiB default of the
# point-to-point modes did not: bench-coll's heap holds ranks x the largest size).
"$BENCH" --coll --quick --transport shm --ranks 2 --json "$WORK/coll.jsonl" >"$WORK/coll.out" 2>&1
rc=$?
[ $rc = 0 ] && echo "ok   --coll: exit 0" || { fail "--coll: exit $rc"; sed 's/^/      | /' "$WORK/coll.out" | tail -5; }
grep -q '"verified":true' "$WORK/coll.jsonl" 2>/dev/null && echo "ok   --coll records" || fail "no verified --coll record"
# bench_busy: the busy-target table with its memcpy peer (host memory over shm), every record
# checked; tiny sizes and windows (the numbers are not judged here).
"$BENCH" --busy --quick --busy-ms 2 --transport shm --sizes 8:32K:64 --hgasrun "$HGASRUN" --bench-dir "$DIR" \
    --json "$WORK/busy.jsonl" >"$WORK/busy.out" 2>&1
rc=$?
[ $rc = 0 ] && echo "ok   --busy: exit 0" || { fail "--busy: exit $rc"; sed 's/^/      | /' "$WORK/busy.out" | tail -20; }
has "$WORK/busy.out" "cpy idle cpy b+help"
has "$WORK/busy.out" "points; strict: met at"
has "$WORK/busy.out" "bounded by the memcpy peer at"
n=$(grep -c '"impl":"memcpy".*"verified":true' "$WORK/busy.jsonl" 2>/dev/null)
# get and put x idle and busy x 3 sizes x helper off and on
[ "${n:-0}" = 24 ] && echo "ok   24 memcpy peer records" || fail "${n:-0} verified memcpy peer records, expected 24"
grep -q '"verified":false' "$WORK/busy.jsonl" && fail "a busy record failed its data check"
echo "$FAILED failed"
[ $FAILED = 0 ]
