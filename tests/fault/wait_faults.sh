#!/usr/bin/env bash
# Every wait ends with the job's abort, naming the rank at fault:
#   wait_faults.sh <hgasrun> <fault_prog> <with-ucx: 0|1>
# - waits_end_with_the_abort_over_ucx: rank 2 is killed while the others wait in quiet / a
#   handle / a signal / a collective / finalize over UCX (AM mode: operations to a dead
#   same-node peer never complete and UCX does not report it), under hgasrun: each survivor
#   reports HGAS_ERR_PEER_FAILED naming rank 2 before hgasrun's SIGTERM (they used to be silent
#   until it, and wait for HGAS_TIMEOUT without hgasrun);
# - the same without a launcher (srun/mpirun style: ranks started here, rank 0 serves the
#   store), with rank 2 dying in quiet, and with rank 0 (the store's host) dying in a barrier;
# - hung_rank_is_named: rank 2 stays alive without calling hgas while the others finalize (and
#   exit 0 whatever hgas_finalize says) or wait in hgas_barrier: the job ends, and both the
#   ranks and hgasrun name rank 2; when the others exit 0 without finalizing, hgasrun names it.
# HGAS_TIMEOUT is 120 s where a wait should be ended by the abort, so only the abort can end
# it within the limits checked here.
set -u
HGASRUN=$1
PROG=$2
WITH_UCX=${3:-1}
WORK=$(mktemp -d /tmp/hgas-wait-faults.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID
FAILED=0
fail() {  # the case's output goes with the failure: WORK is removed at exit
    echo "FAIL [$CASE]: $*"
    FAILED=$((FAILED + 1))
    for f in "$WORK/$CASE".log "$WORK/$CASE".*.log; do
        [ -f "$f" ] && { echo "   --- ${f##*/} (last 15 lines)"; tail -15 "$f" | sed 's/^/   | /'; }
    done
}
pass() { echo "ok   [$CASE]: $*"; }
show() { sed 's/^/      | /' "$1" | grep -v "ended at" | head -30; }
count() {  # count FILE REGEX N: at least N lines match
    local c; c=$(grep -cE -- "$2" "$1")
    if [ "$c" -ge "$3" ]; then pass "$c lines match /$2/"; else fail "$c lines match /$2/, expected >= $3"; show "$1"; fi
}
within() {  # within LIMIT_S: the case's elapsed time
    if [ "$MS" -le $(($1 * 1000)) ]; then pass "ended in $MS ms (limit $1 s)"; else fail "took $MS ms, limit $1 s"; fi
}
run_hgasrun() {  # run_hgasrun CASE env... -- args...
    CASE=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local t0; t0=$(date +%s%N)
    env "${envs[@]}" timeout -k 5 150 "$HGASRUN" "$@" >"$WORK/$CASE.log" 2>&1
    RC=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
run_srun() {  # run_srun CASE N env... -- args...: ranks started as srun would, no hgasrun
    CASE=$1; local n=$2; shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local port secret pids=() r t0
    port=$(free_port); secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    t0=$(date +%s%N)
    for ((r = 0; r < n; r++)); do
        env "${envs[@]}" HGAS_RANK=$r HGAS_SIZE=$n HGAS_BOOT_ADDR=tcp:127.0.0.1:$port HGAS_BOOT_SECRET=$secret \
            timeout -k 5 150 "$PROG" "$@" >"$WORK/$CASE.$r.log" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}" 2>/dev/null
    MS=$((($(date +%s%N) - t0) / 1000000))
    cat "$WORK/$CASE".*.log >"$WORK/$CASE.log"
}

if [ "$WITH_UCX" = 1 ]; then
    UCX=(HGAS_TRANSPORTS=ucx HGAS_UCX_MODE=am HGAS_TIMEOUT=120)
    for w in quiet wait signal coll finalize; do
        run_hgasrun "ucx-$w" "${UCX[@]}" -- -n 4 "$PROG" die 2 "$w"
        within 20
        count "$WORK/$CASE.log" "hgasrun: rank 2 \(pid [0-9]+\) was killed by signal 9" 1
        # A survivor whose operations all completed before the death passes the wait and
        # meets it in hgas_finalize instead.
        count "$WORK/$CASE.log" "^rank [013]: ($w|hgas_finalize): HGAS_ERR_PEER_FAILED: .*rank 2" 3
    done
    run_srun srun-ucx-quiet 4 "${UCX[@]}" -- die 2 quiet
    within 20
    count "$WORK/$CASE.log" "^rank [013]: (quiet|hgas_finalize): HGAS_ERR_PEER_FAILED: .*rank 2 (lost its connection|.*probably died)" 3
fi

# Rank 0 serves the store without hgasrun: its death is the store's, and still names it.
run_srun srun-store-host-dies 3 HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=120 -- die 0 barrier
within 20
count "$WORK/$CASE.log" "^rank [12]: second barrier: HGAS_ERR_PEER_FAILED: .*rank 0 died" 2

# A hung rank: the others' finalize times out naming it, they exit 0 anyway (ignore), and
# hgasrun must still end the job (it used to wait forever) and say which rank hung.
run_hgasrun hang-finalize HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=2 -- -n 3 "$PROG" hang 2 finalize ignore
within 40
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC"; fi
count "$WORK/$CASE.log" "^rank [01]: finalize: HGAS_ERR_(TIMEOUT|PEER_FAILED): .*finalize.*rank 2 has not arrived" 2
count "$WORK/$CASE.log" "^hgasrun: .*rank 2 has not arrived; ending the job" 1

# The same in hgas_barrier (docs/launcher.md: the others time out on it, naming it).
run_hgasrun hang-barrier HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=2 -- -n 3 "$PROG" hang 1 barrier
within 40
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC"; fi
count "$WORK/$CASE.log" "^rank [02]: second barrier: HGAS_ERR_(TIMEOUT|PEER_FAILED): .*hgas_barrier .*rank 1 has not arrived" 2
count "$WORK/$CASE.log" "^hgasrun: .*rank 1 has not arrived .*; ending the job" 1

# A signal that never comes: the wait times out and says what the word last held, so that a
# reader can tell a lost update from one never sent.
run_hgasrun hang-signal HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=2 -- -n 3 "$PROG" hang 1 signal
within 40
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC"; fi
# (The first to time out exits 1 and hgasrun ends the job: the other may see that first.)
count "$WORK/$CASE.log" "^rank [02]: signal: HGAS_ERR_TIMEOUT: hgas_signal_wait_until did not complete .*; the signal word at 0x[0-9a-f]+ last read 0 \(waiting for >= 1\)" 1

# The same where the ranks reach each other only through UCX's active messages (a peer's
# barrier word cannot be read without its CPU): the ranks whose barrier timed out report it
# through the store, and the one that did not report is named.
if [ "$WITH_UCX" = 1 ]; then
    run_hgasrun hang-barrier-ucx HGAS_TRANSPORTS=self,ucx HGAS_UCX_MODE=am HGAS_TIMEOUT=2 -- -n 3 "$PROG" hang 1 barrier
    within 40
    if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC"; fi
    count "$WORK/$CASE.log" "^rank [02]: second barrier: HGAS_ERR_TIMEOUT: .*hgas_barrier .*rank 1 has not arrived \\(rank 1 did not report" 1
    count "$WORK/$CASE.log" "^hgasrun: .*rank 1 has not arrived .*; ending the job" 1
fi

# The others exit 0 without hgas_finalize: nobody times out on the hung rank, so hgasrun must
# name it itself once it outlives them by HGAS_TIMEOUT + 5 s (it used to wait forever).
run_hgasrun hang-others-exit HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=2 -- -n 3 "$PROG" hang 2 exit
within 40
if [ "$RC" -eq 1 ]; then pass "exit status 1"; else fail "exit status $RC, expected 1"; fi
count "$WORK/$CASE.log" "^hgasrun: rank 2 \(pid [0-9]+\) still running [0-9.]+ s after rank [01] finished .*; ending the job" 1

# Without hgasrun: the survivors' finalize names the hung rank, and rank 0, which serves the
# store, does not keep it up for the hung rank's goodbye (it waited the whole boot timeout).
CASE=srun-hang-finalize
port=$(free_port); secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
pids=()
t0=$(date +%s%N)
for r in 0 1 2; do
    env HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=2 HGAS_BOOT_TIMEOUT=60 HGAS_RANK=$r HGAS_SIZE=3 \
        HGAS_BOOT_ADDR=tcp:127.0.0.1:$port HGAS_BOOT_SECRET=$secret \
        timeout -k 5 150 "$PROG" hang 2 finalize >"$WORK/$CASE.$r.log" 2>&1 &
    pids+=($!)
done
wait "${pids[0]}" "${pids[1]}"
MS=$((($(date +%s%N) - t0) / 1000000))
kill "${pids[2]}" 2>/dev/null; wait "${pids[2]}" 2>/dev/null
cat "$WORK/$CASE".*.log >"$WORK/$CASE.log"
within 30
count "$WORK/$CASE.log" "^rank [01]: finalize: HGAS_ERR_(TIMEOUT|PEER_FAILED): .*rank 2 has not arrived" 2

rm -rf "$WORK"
echo "$FAILED failed"
[ "$FAILED" -eq 0 ]
