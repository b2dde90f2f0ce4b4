#!/usr/bin/env bash
# Shared-memory names another local user could block:
#   shm_squat.sh <hgasrun> <fault_prog>
# - squatted-names: the job's id is known (here set with HGAS_JOB_ID, as anyone can read it from
#   $TMPDIR/hgas-<id> or the environment); every name the segments used to get,
#   /dev/shm/hgas-<id>-<rank>-<segment> (and -sim<segment>), exists before the job starts. The
#   job must run: segment names carry a random part and are never derived from the job id
#   (it failed with "File exists"). The squatted files are left alone.
# - job-dir-mode: hgasrun's job directory is 0700.
set -u
HGASRUN=$1
PROG=$2
WORK=$(mktemp -d /tmp/hgas-shm-squat.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID
FAILED=0
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }

CASE=squatted-names
ID=squat$$
squatted=()
for r in 0 1; do
    for s in 0 1 2 3 4 5 6 7 sim0 sim1 sim2 sim3; do
        f=/dev/shm/hgas-$ID-$r-$s
        : >"$f" && chmod 0644 "$f" && squatted+=("$f")
    done
done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pids=()
for r in 0 1; do
    env HGAS_RANK=$r HGAS_SIZE=2 HGAS_JOB_ID=$ID HGAS_BOOT_ADDR=tcp:127.0.0.1:$port HGAS_BOOT_SECRET=s$$ \
        HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=60 timeout -k 5 60 "$PROG" ok - >"$WORK/rank$r.log" 2>&1 &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
if [ "$rc" -eq 0 ]; then pass "both ranks exited 0"; else fail "exit status $rc"; cat "$WORK"/rank*.log | sed 's/^/      | /'; fi
c=$(cat "$WORK"/rank*.log | grep -c "passed barrier")
if [ "$c" -eq 2 ]; then pass "both ranks passed the barrier"; else fail "$c ranks passed the barrier"; fi
left=0
for f in "${squatted[@]}"; do [ -e "$f" ] && left=$((left + 1)); rm -f "$f"; done
if [ "$left" -eq "${#squatted[@]}" ]; then pass "the squatted files were left alone"; else fail "only $left of ${#squatted[@]} squatted files remain"; fi
if compgen -G "/dev/shm/hgas-$ID-*" >/dev/null; then fail "left behind: $(ls /dev/shm/hgas-$ID-*)"; rm -f /dev/shm/hgas-$ID-*; fi

CASE=job-dir-mode
out=$(timeout -k 5 30 "$HGASRUN" -n 1 sh -c 'stat -c "%a %U" "$TMPDIR/hgas-$HGAS_JOB_ID"' 2>&1)
if [ "$out" = "700 $(id -un)" ]; then pass "job directory: $out"; else fail "job directory: '$out', expected '700 $(id -un)'"; fi

rm -rf "$WORK"
echo "$FAILED failed"
[ "$FAILED" -eq 0 ]
