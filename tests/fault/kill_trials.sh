#!/usr/bin/env bash
# kill -9 trials: how long the surviving ranks take to end after one rank dies, and whether
# what they print names the dead rank. Not in CI (it is a measurement); rerun with
#   tests/fault/kill_trials.sh [options] <hgasrun> <fault_prog>
# options:
#   --mode hgasrun|srun   started by hgasrun, or launcher-less as srun/mpirun would (each rank
#                         started here with HGAS_RANK/HGAS_SIZE, HGAS_BOOT_ADDR=tcp:127.0.0.1:<port>
#                         and HGAS_BOOT_SECRET; rank 0 serves the store)      (default hgasrun)
#   --transport shm|ucx   HGAS_TRANSPORTS=self,shm or ucx                      (default shm)
#   --where W             where the survivors wait: barrier quiet wait signal coll finalize
#                         (fault_prog's list; "all" cycles through them)      (default all)
#   --victim R            the rank that kills itself with SIGKILL; "cycle" = trial % n (default 2)
#   -n N, --trials T, --timeout S (HGAS_TIMEOUT, default 300: a wait that is not ended by the
#                         abort shows as a long exit time)
# Prints one line per trial and a summary: survivors' exit time after the kill (median, max:
# the last survivor of each trial) and how many trials had every survivor name the dead rank.
set -u
MODE=hgasrun TRANSPORT=shm WHERE=all VICTIM=2 N=4 TRIALS=10 TMO=300
while [ $# -gt 2 ]; do
    case $1 in
    --mode) MODE=$2; shift 2 ;;
    --transport) TRANSPORT=$2; shift 2 ;;
    --where) WHERE=$2; shift 2 ;;
    --victim) VICTIM=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    --trials) TRIALS=$2; shift 2 ;;
    --timeout) TMO=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
HGASRUN=$(realpath "$1")
PROG=$(realpath "$2")
WORK=$(mktemp -d /tmp/hgas-kill-trials.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID
case $TRANSPORT in shm) export HGAS_TRANSPORTS=self,shm ;; ucx) export HGAS_TRANSPORTS=ucx ;; *) echo "transport?" >&2; exit 2 ;; esac
export HGAS_TIMEOUT=$TMO
WAITS=(barrier quiet wait signal coll finalize)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

times=() named=0
for ((t = 0; t < TRIALS; t++)); do
    w=$WHERE; [ "$w" = all ] && w=${WAITS[$((t % ${#WAITS[@]}))]}
    v=$VICTIM; [ "$v" = cycle ] && v=$((t % N))
    log=$WORK/trial$t.log
    if [ "$MODE" = hgasrun ]; then
        timeout -k 5 $((TMO + 60)) "$HGASRUN" -n "$N" "$PROG" die "$v" "$w" >"$log" 2>&1
        echo "exit $(date +%s.%N)" >>"$log"  # the whole job ended
    else
        port=$(free_port) secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
        pids=()
        for ((r = 0; r < N; r++)); do
            ( env HGAS_RANK=$r HGAS_SIZE=$N HGAS_BOOT_ADDR=tcp:127.0.0.1:$port HGAS_BOOT_SECRET=$secret \
                  timeout -k 5 $((TMO + 60)) "$PROG" die "$v" "$w" >"$log.$r" 2>&1
              echo "exit $(date +%s.%N)" >>"$log.$r" ) 2>/dev/null &
            pids+=($!)
        done
        wait "${pids[@]}"
        cat "$log".* >"$log"
    fi
    t_kill=$(sed -n "s/^rank $v: pid [0-9]*, at \([0-9.]*\)$/\1/p" "$log" | head -1)
    if [ -z "$t_kill" ]; then echo "trial $t ($w, victim $v): the victim did not get to die; log:"; sed 's/^/  | /' "$log"; continue; fi
    # The last survivor's end: its report, else the process's (or the job's) exit.
    t_end=$(sed -n 's/^exit \([0-9.]*\)$/\1/p' "$log" | sort -n | tail -1)
    secs=$(echo "$t_end - $t_kill" | bc -l)
    survivors=$((N - 1))
    # Each survivor's failure report (from whichever call met the death) must name the victim.
    naming=$(grep -E "^rank [0-9]+: [a-z_ ]+: HGAS_ERR_" "$log" | grep -v "^rank $v:" | grep -cE "rank $v\b" || true)
    ok=no; [ "$naming" -ge "$survivors" ] && ok=yes && named=$((named + 1))
    printf 'trial %2d  %-8s victim %d  survivors ended %6.2f s after the kill  named the dead rank: %s (%d of %d)\n' \
        "$t" "$w" "$v" "$secs" "$ok" "$naming" "$survivors"
    [ "$ok" = no ] && sed 's/^/  | /' "$log" | grep -v "ended at" | head -12
    times+=("$secs")
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
k=${#sorted[@]}
if [ "$k" -gt 0 ]; then
    if ((k % 2)); then med=${sorted[$((k / 2))]}; else med=$(echo "(${sorted[$((k / 2 - 1))]} + ${sorted[$((k / 2))]}) / 2" | bc -l); fi
    printf 'summary: mode %s, transport %s, %d ranks, %d trials: exit after the kill median %.2f s, max %.2f s; dead rank named in %d of %d\n' \
        "$MODE" "$TRANSPORT" "$N" "$k" "$med" "${sorted[$((k - 1))]}" "$named" "$k"
fi
rm -rf "$WORK"
