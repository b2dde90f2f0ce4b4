#!/usr/bin/env bash
# Faults seen through the full runtime (hgas_init, barriers):
#   runtime_faults.sh <hgasrun> <fault_prog>
# - kill -9 of one rank mid-job: the launcher and every other rank end within 10 s, the
#   launcher names the dead rank, the waiting ranks report that the job is ending;
# - the same while the others wait in a blocking hgas_recv from the dead rank (or any rank);
# - the same where most ranks first reach the dead rank after its death (peers are mapped at
#   their first use): the put fails naming it;
# - a rank that crashes (SIGSEGV): it prints its crash report, the launcher names it;
# - hgas_abort on one rank: the same, with the rank's reason;
# - a rank that never joins: the others' hgas_init fails with the bootstrap timeout naming it.
# Each case also checks that no /dev/shm/hgas-* file and no job directory is left.
set -u
HGASRUN=$1
PROG=$2
WORK=$(mktemp -d /tmp/hgas-fault-test.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID
FAILED=0
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }
has() {
    if grep -qE -- "$2" "$1"; then pass "output has /$2/"
    else fail "output lacks /$2/; it holds:"; sed 's/^/      | /' "$1" | head -30; fi
}
count() {  # count FILE REGEX N: at least N lines match
    local c; c=$(grep -cE -- "$2" "$1")
    if [ "$c" -ge "$3" ]; then pass "$c lines match /$2/"; else fail "$c lines match /$2/, expected >= $3"; sed 's/^/      | /' "$1" | head -30; fi
}
run() {  # run CASE LIMIT_S env... -- args...
    CASE=$1; local limit=$2; shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local t0; t0=$(date +%s%N)
    env HGAS_TIMEOUT=60 "${envs[@]}" timeout -k 5 60 "$HGASRUN" "$@" >"$WORK/$CASE.log" 2>&1
    RC=$?
    local ms=$((($(date +%s%N) - t0) / 1000000))
    if [ "$ms" -le $((limit * 1000)) ]; then pass "ended in $ms ms (limit $limit s)"; else fail "took $ms ms, limit $limit s"; fi
    if [ "$RC" -ne 0 ]; then pass "exit status $RC"; else fail "exit status 0 for a failed job"; fi
    # This job's files only (fault_prog prints the job id): other jobs on the machine come and go.
    local job; job=$(sed -n 's/^rank 0: job \([0-9a-z]*\)$/\1/p' "$WORK/$CASE.log" | head -1)
    if [ -z "$job" ]; then fail "the job id was not printed"
    elif compgen -G "/dev/shm/hgas-$job-*" >/dev/null; then fail "shared memory left: $(ls /dev/shm | grep "^hgas-$job-")"
    else pass "no shared memory left"; fi
    if compgen -G "$TMPDIR/hgas-*" >/dev/null; then fail "job directory left"; fi
}

run kill9 10 -- -n 4 "$PROG" die 2
has "$WORK/$CASE.log" "rank 2 \(pid [0-9]+\) was killed by signal 9"
count "$WORK/$CASE.log" "rank [013]: second barrier: HGAS_ERR_PEER_FAILED: the job is ending: .*rank 2" 1

run kill9_recv 10 -- -n 4 "$PROG" die_recv 2
has "$WORK/$CASE.log" "rank 2 \(pid [0-9]+\) was killed by signal 9"
count "$WORK/$CASE.log" "rank [013]: recv: HGAS_ERR_PEER_FAILED: the job is ending: .*rank 2" 1

# Peers are mapped at their first use (HGAS_PEER_ATTACH=lazy): of 8 ranks, the barrier has
# made at most 3 reach rank 7 before it dies; the others' first put to it must name it.
run kill9_unmapped 10 -- -n 8 "$PROG" die_unmapped 7 quiet
has "$WORK/$CASE.log" "rank 7 \(pid [0-9]+\) was killed by signal 9"
count "$WORK/$CASE.log" "rank [0-6]: quiet: HGAS_ERR_PEER_FAILED: rank [0-6] cannot reach rank 7 at its first use .*exited" 1

run abort 10 -- -n 3 "$PROG" abort 1
has "$WORK/$CASE.log" "rank 1 called hgas_abort\(3\): the test asked for it"
count "$WORK/$CASE.log" "rank [02]: second barrier: HGAS_ERR_PEER_FAILED: .*hgas_abort" 1

# A crashing rank says where before it dies (HGAS_CRASH_REPORT, on by default).
run segv 10 -- -n 3 "$PROG" segv 1
has "$WORK/$CASE.log" "hgas: rank 1 \(pid [0-9]+\) received SIGSEGV \(invalid memory access\) at address 0x10; backtrace"
has "$WORK/$CASE.log" "fault_prog\\(.*\\)\\[0x[0-9a-f]+\\]"
has "$WORK/$CASE.log" "rank 1 \(pid [0-9]+\) was killed by signal 11"
count "$WORK/$CASE.log" "rank [02]: second barrier: HGAS_ERR_PEER_FAILED: the job is ending: .*rank 1" 1

run late 20 HGAS_BOOT_TIMEOUT=2 -- -n 3 "$PROG" late 1 30
has "$WORK/$CASE.log" "rank [02]: hgas_init: HGAS_ERR_TIMEOUT: .*rank.* 1"

rm -rf "$WORK"
echo "$FAILED failed"
[ "$FAILED" -eq 0 ]
