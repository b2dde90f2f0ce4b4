#!/usr/bin/env bash
# Launcher fault tests: hgasrun with boot_prog (a rank program that uses only the boot layer).
#   launcher.sh <hgasrun> <boot_prog>
# Every case checks exit status, messages and output, and that nothing is left behind: no
# $TMPDIR/hgas-* directory, no /dev/shm/hgas-<job>-* file, no rank process (by the pids the
# ranks wrote). Runs in a private TMPDIR so that concurrent jobs of others do not interfere.
set -u
HGASRUN=$1
PROG=$2
WORK=$(mktemp -d /tmp/hgas-launcher-test.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
export HGAS_TIMEOUT=60 HGAS_BOOT_TIMEOUT=60
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID CUDA_MODULE_LOADING
FAILED=0
CASE=""

# A process counts as alive unless gone or a zombie (an unreaped zombie has no code left to run,
# and a container's init may reap the orphans of a killed launcher late).
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }
check_rc() { if [ "$RC" = "$1" ]; then pass "exit status $1"; else fail "exit status $RC, expected $1"; fi; }
# check_has FILE TEXT / check_not FILE TEXT: fixed-string search, with the file shown on failure.
check_has() {
    if grep -qF -- "$2" "$1"; then pass "$(basename "$1") has '$2'"
    else fail "$(basename "$1") lacks '$2'; it holds:"; sed 's/^/      | /' "$1" | head -20; fi
}
check_not() { if grep -qF -- "$2" "$1"; then fail "$(basename "$1") unexpectedly has '$2'"; fi; }
check_fast() { if [ "$ELAPSED" -le "$1" ]; then pass "ended in ${ELAPSED} s (limit $1)"; else fail "took ${ELAPSED} s, limit $1"; fi; }

# run NAME [env...] -- hgasrun-args...   (output in $WORK/NAME.out / .err; RC, ELAPSED set)
run() {
    CASE=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    mkdir -p "$WORK/pids/$CASE"
    local t0=$SECONDS
    env "${envs[@]}" timeout -k 5 60 "$HGASRUN" "$@" >"$WORK/$CASE.out" 2>"$WORK/$CASE.err"
    RC=$?
    ELAPSED=$((SECONDS - t0))
}

# No directory, shared-memory file or rank process of the case may remain.
check_clean() {
    local job
    job=$(sed -n 's/.*job=\([0-9a-z]*\).*/\1/p' "$WORK/$CASE.out" "$WORK/$CASE.err" 2>/dev/null | head -1)
    if compgen -G "$TMPDIR/hgas-*" >/dev/null; then fail "left behind: $(ls -d "$TMPDIR"/hgas-*)"; rm -rf "$TMPDIR"/hgas-*; fi
    if [ -n "$job" ] && compgen -G "/dev/shm/hgas-$job-*" >/dev/null; then
        fail "left behind: $(ls /dev/shm/hgas-"$job"-*)"; rm -f /dev/shm/hgas-"$job"-*
    fi
    local f pid left=""
    for f in "$WORK/pids/$CASE"/*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f")
        for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
        if alive "$pid"; then left="$left $pid"; kill -9 "$pid"; fi
    done
    if [ -n "$left" ]; then fail "rank processes survived:$left"; else pass "no leftovers"; fi
}

# wait_pids CASE N: until N ranks have written their pid files (at most 10 s).
wait_pids() {
    for _ in $(seq 100); do
        [ "$(ls "$WORK/pids/$1" 2>/dev/null | wc -l)" -ge "$2" ] && return 0
        sleep 0.1
    done
    fail "ranks did not start"
    return 1
}

# ---- exit status -----------------------------------------------------------------------------
run all-ok -- -n 3 "$PROG" --pids "$WORK/pids/all-ok" --shm
check_rc 0
check_has "$WORK/$CASE.out" "launcher=hgasrun size=3"
check_clean

# Ranks start with CUDA_MODULE_LOADING=EAGER (lazy loading can deadlock kernels that wait on
# hgas: docs/device.md), unless the user set the variable.
run module-loading -- -n 2 sh -c 'echo "loading=$CUDA_MODULE_LOADING"'
check_rc 0
if [ "$(grep -c '^loading=EAGER$' "$WORK/$CASE.out")" = 2 ]; then pass "both ranks got EAGER"; else fail "ranks' CUDA_MODULE_LOADING: $(cat "$WORK/$CASE.out")"; fi
run module-loading-user CUDA_MODULE_LOADING=LAZY -- -n 1 sh -c 'echo "loading=$CUDA_MODULE_LOADING"'
check_rc 0
check_has "$WORK/$CASE.out" "loading=LAZY"

run exit-code -- -n 3 "$PROG" --exit 1:7 --pids "$WORK/pids/exit-code"
check_rc 7
check_has "$WORK/$CASE.err" "hgasrun: rank 1 (pid"
check_has "$WORK/$CASE.err" "exited with status 7"
check_clean

run cannot-exec -- -n 2 /nonexistent/prog
check_rc 127
check_has "$WORK/$CASE.err" "hgasrun: rank 0: cannot run '/nonexistent/prog': No such file or directory"
check_clean

# ---- output forwarding -------------------------------------------------------------------
run output -- -n 3 "$PROG" --lines 4 --tail --pids "$WORK/pids/output"
check_rc 0
for r in 0 1 2; do
    for i in 0 1 2 3; do grep -qx "rank $r line $i" "$WORK/$CASE.out" || fail "line 'rank $r line $i' missing"; done
    grep -qx "rank $r tail without newline" "$WORK/$CASE.out" || fail "unterminated last line of rank $r lost"
    grep -qx "rank $r to stderr" "$WORK/$CASE.err" || fail "stderr line of rank $r missing"
done
check_not "$WORK/$CASE.out" "to stderr"
check_not "$WORK/$CASE.out" "["
check_clean

run prefix -- -n 3 --prefix "$PROG" --lines 4 --tail --pids "$WORK/pids/prefix"
check_rc 0
check_has "$WORK/$CASE.out" "[2] rank 2 line 3"
check_has "$WORK/$CASE.out" "[1] rank 1 tail without newline"
check_has "$WORK/$CASE.err" "[0] rank 0 to stderr"
bad=$(grep -vE '^\[([0-9]+)\] (rank \1 |launcher=)' "$WORK/$CASE.out" | head -3)
[ -z "$bad" ] && pass "every line carries its own rank's prefix" || fail "lines with a wrong prefix: $bad"
check_clean

# A lot of output written just before exit: nothing may be lost, no line may be torn.
run much-output -- -n 4 "$PROG" --lines 20000 --pids "$WORK/pids/much-output"
check_rc 0
n=$(grep -cE '^rank [0-3] line [0-9]+$' "$WORK/$CASE.out")
[ "$n" = 80000 ] && pass "80000 whole lines" || fail "$n whole lines of 80000"
check_clean

run nodes -- -n 5 --nodes 2 "$PROG" --topology --pids "$WORK/pids/nodes"
check_rc 0
check_has "$WORK/$CASE.out" "rank 2 node node0 (0 of 2) local 2 of 3"
check_has "$WORK/$CASE.out" "rank 3 node node1 (1 of 2) local 0 of 2"
check_clean

run tcp -- -n 3 --boot tcp "$PROG" --lines 1 --pids "$WORK/pids/tcp"
check_rc 0
check_has "$WORK/$CASE.out" "rank 2 line 0"
check_clean

# ---- dying ranks -------------------------------------------------------------------------
run rank-kills-itself -- -n 4 "$PROG" --kill 2 --pids "$WORK/pids/rank-kills-itself"
check_rc 137
check_fast 10
check_has "$WORK/$CASE.err" "was killed by signal 9 (SIGKILL); ending the job"
check_has "$WORK/$CASE.err" "hgasrun: rank 2 (pid $(cat "$WORK/pids/$CASE/rank2.pid"))"
check_has "$WORK/$CASE.err" "boot_prog rank 0: barrier 'end' failed: HGAS_ERR_PEER_FAILED: hgasrun: rank 2 (pid"
check_clean

# kill -9 from outside while every rank waits: the others are ended within 10 s.
CASE=kill-rank
mkdir -p "$WORK/pids/$CASE"
t0=$SECONDS
"$HGASRUN" -n 3 "$PROG" --hang all --pids "$WORK/pids/$CASE" >"$WORK/$CASE.out" 2>"$WORK/$CASE.err" &
HPID=$!
if wait_pids "$CASE" 3; then
    sleep 0.3
    # All ranks joined, so the store's socket file is gone already.
    compgen -G "$TMPDIR/hgas-*/store.sock" >/dev/null && fail "socket file still there after every rank joined"
    kill -9 "$(cat "$WORK/pids/$CASE/rank1.pid")"
fi
wait "$HPID"; RC=$?; ELAPSED=$((SECONDS - t0))
check_rc 137
check_fast 10
check_has "$WORK/$CASE.err" "hgasrun: rank 1 (pid $(cat "$WORK/pids/$CASE/rank1.pid")) was killed by signal 9 (SIGKILL); ending the job"
check_clean

# A rank that exits 0 without finalize while the others wait for it.
run quit-early HGAS_TIMEOUT=2 -- -n 3 "$PROG" --quit 1 --pids "$WORK/pids/quit-early"
check_rc 1
check_has "$WORK/$CASE.err" "hgasrun: note: rank 1 exited with status 0 without finalizing"
check_has "$WORK/$CASE.err" "barrier 'end' timed out after 2 s on rank"
check_has "$WORK/$CASE.err" "rank 1 has not arrived (rank 1 lost the connection to it (died?))"
check_clean

# ---- a rank that never joins ----------------------------------------------------------------
run never-joins HGAS_BOOT_TIMEOUT=2 -- -n 3 "$PROG" --no-connect 1 --pids "$WORK/pids/never-joins"
check_rc 1
check_fast 10
check_has "$WORK/$CASE.err" "barrier 'start' timed out after 2 s"
check_has "$WORK/$CASE.err" "rank 1 has not arrived (rank 1 never connected to the store)"
check_has "$WORK/$CASE.err" "exited with status 1; ending the job"
check_clean

# ---- --timeout, signals -------------------------------------------------------------------
run timeout -- -n 2 --timeout 1 "$PROG" --hang all --pids "$WORK/pids/timeout"
check_rc 124
check_fast 8
check_has "$WORK/$CASE.err" "hgasrun: job exceeded --timeout of 1 s; ending it"
check_clean

CASE=sigint
mkdir -p "$WORK/pids/$CASE"
"$HGASRUN" -n 2 "$PROG" --hang all --pids "$WORK/pids/$CASE" >"$WORK/$CASE.out" 2>"$WORK/$CASE.err" &
HPID=$!
wait_pids "$CASE" 2 && kill -INT "$HPID"
wait "$HPID"; RC=$?
check_rc 130
check_has "$WORK/$CASE.err" "hgasrun: received signal 2 (SIGINT); forwarding it to the ranks and ending the job"
check_clean

# kill -9 of hgasrun: the kernel kills the ranks; the next hgasrun removes the leftovers.
CASE=kill-launcher
mkdir -p "$WORK/pids/$CASE"
"$HGASRUN" -n 3 "$PROG" --hang all --shm --pids "$WORK/pids/$CASE" >"$WORK/$CASE.out" 2>"$WORK/$CASE.err" &
HPID=$!
if wait_pids "$CASE" 3; then
    sleep 0.3
    kill -9 "$HPID"
    wait "$HPID" 2>/dev/null
    sleep 0.5
    left=""
    for f in "$WORK/pids/$CASE"/*.pid; do alive "$(cat "$f")" && left="$left $(cat "$f")"; done
    [ -z "$left" ] && pass "no rank outlived the launcher" || fail "ranks outlived the launcher:$left"
    job=$(sed -n 's/.*job=\([0-9a-z]*\).*/\1/p' "$WORK/$CASE.out" | head -1)
    compgen -G "/dev/shm/hgas-$job-*" >/dev/null || fail "expected the killed job's shm files to remain (test setup)"
    "$HGASRUN" -n 1 "$PROG" >/dev/null 2>&1 || fail "the next job failed"
    compgen -G "/dev/shm/hgas-$job-*" >/dev/null && fail "the next hgasrun did not remove /dev/shm/hgas-$job-*"
fi
check_clean

# ---- bad options ----------------------------------------------------------------------------
CASE=options
"$HGASRUN" --help >"$WORK/help.out" 2>&1; RC=$?
check_rc 0
check_has "$WORK/help.out" "usage: hgasrun -n N"
check_has "$WORK/help.out" "--timeout SEC"
# Each item is "arguments|expected message"; the quotes inside belong to the message.
# shellcheck disable=SC2089,SC2090
for bad in "-n 0 x|-n needs an integer in 1..65536, not '0'" "--bogus|unknown option '--bogus'" \
           "-n 2|no program to run given" "x|say how many ranks" "-n 2 --timeout -1 x|--timeout needs a positive" \
           "-n 2 --boot udp x|--boot is 'unix' or 'tcp', not 'udp'" "-n 2 --nodes 3 x|--nodes 3 is more than the 2 ranks" \
           "-n 3 --threads 2 x|-n 3 is not a multiple of --threads 2" \
           "-n 4 --threads 2 --nodes 3 x|--nodes 3 is more than the 2 processes"; do
    # shellcheck disable=SC2086,SC2090
    "$HGASRUN" ${bad%%|*} >"$WORK/bad.out" 2>&1; RC=$?
    check_rc 2
    check_has "$WORK/bad.out" "${bad#*|}"
done

# ---- without a launcher: a singleton -------------------------------------------------------
CASE=singleton
"$PROG" >"$WORK/$CASE.out" 2>&1; RC=$?
check_rc 0
check_has "$WORK/$CASE.out" "launcher=singleton size=1"

rm -rf "$WORK"
if [ "$FAILED" -ne 0 ]; then echo "$FAILED check(s) failed"; exit 1; fi
echo "all launcher checks passed"
