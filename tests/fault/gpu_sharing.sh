#!/usr/bin/env bash
# HGAS_GPU_SHARING as hgasrun handles it, with a recording stand-in for nvidia-cuda-mps-control
# on the PATH (the real one needs a GPU): with mps the job's own daemon is started with its
# pipe and log directories in the job's directory, the ranks are pointed at it, and it is told
# to quit at the end -- also when a rank fails; its directories go with the job's. A missing
# control program, a daemon that does not start, and the modes that need ranks as threads are
# refused with a message before any rank starts.
# hgas-info prints the mode.
#   gpu_sharing.sh <hgasrun> <hgas-info>
set -u
HGASRUN=$1 INFO=$2
WORK=$(mktemp -d)  # mktemp's own template, under TMPDIR or /tmp
DAEMON_PID=""
trap '[ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
export TMPDIR=$WORK/tmp HGAS_TIMEOUT=60
mkdir -p "$TMPDIR" "$WORK/bin"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID HGAS_GPU_SHARING \
      CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
FAILED=0
CASE=""
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }
run() {  # run NAME [env...] -- hgasrun-args...
    CASE=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    OUT=$WORK/$CASE.out ERR=$WORK/$CASE.err
    env "${envs[@]}" timeout -k 5 60 "$HGASRUN" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}
# A process that runs (a zombie its new parent has not reaped yet counts as gone).
alive() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" | grep -q '^Z'; }
rc() { if [ "$RC" = "$1" ]; then pass "exit status $1"; else fail "exit status $RC, expected $1; stderr:"; head -20 "$ERR"; fi; }
lacks() {
    if grep -qF -- "$2" "$1"; then fail "has '$2':"; sed 's/^/      | /' "$1" | head -20; else pass "lacks '$2'"; fi
}
has() {
    if grep -qF -- "$2" "$1"; then pass "has '$2'"; else fail "lacks '$2'; it holds:"; sed 's/^/      | /' "$1" | head -20; fi
}

# The stand-in: `-d` records its directories, starts a "daemon" (a sleep) and writes its pid
# where the real daemon does; with "quit" on stdin it records that and ends the daemon.
LOG=$WORK/mps.log
cat >"$WORK/bin/nvidia-cuda-mps-control" <<EOF
#!/usr/bin/env bash
if [ "\${1:-}" = "-d" ]; then
    [ -n "\${FAKE_MPS_FAIL:-}" ] && { echo "fake: cannot start" >&2; exit 3; }
    [ -d "\$CUDA_MPS_PIPE_DIRECTORY" ] && [ -d "\$CUDA_MPS_LOG_DIRECTORY" ] || { echo "start without directories" >>"$LOG"; exit 4; }
    setsid sleep 300 </dev/null >/dev/null 2>&1 &
    echo \$! >"\$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"
    echo "start pipe=\$CUDA_MPS_PIPE_DIRECTORY log=\$CUDA_MPS_LOG_DIRECTORY pid=\$!" >>"$LOG"
    exit 0
fi
read -r cmd
echo "\$cmd pipe=\$CUDA_MPS_PIPE_DIRECTORY" >>"$LOG"
[ "\$cmd" = quit ] && kill "\$(cat "\$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")"
exit 0
EOF
chmod +x "$WORK/bin/nvidia-cuda-mps-control"
FAKE_PATH=$WORK/bin:$PATH

# mps: the ranks see the job's daemon; it is stopped at the end, its directories removed.
run mps HGAS_GPU_SHARING=mps PATH="$FAKE_PATH" -- -n 2 sh -c 'echo "rank $HGAS_RANK pipe=$CUDA_MPS_PIPE_DIRECTORY"'
rc 0
has "$LOG" "start pipe=$TMPDIR/hgas-"
PIPE=$(sed -n 's/^start pipe=\([^ ]*\) .*/\1/p' "$LOG" | head -1)
DAEMON_PID=$(sed -n 's/^start .* pid=\([0-9]*\)$/\1/p' "$LOG" | head -1)
case "$PIPE" in "$TMPDIR"/hgas-*/mps-pipe) pass "pipe directory $PIPE in the job's directory" ;;
    *) fail "pipe directory '$PIPE' is not the job's" ;; esac
has "$LOG" "log=${PIPE%/mps-pipe}/mps-log"
has "$OUT" "rank 0 pipe=$PIPE"
has "$OUT" "rank 1 pipe=$PIPE"
has "$LOG" "quit pipe=$PIPE"
lacks "$ERR" "did not quit"
if alive "$DAEMON_PID"; then fail "the daemon (pid $DAEMON_PID) still runs"
else pass "the daemon is gone"; fi
if [ -e "${PIPE%/mps-pipe}" ]; then fail "the job directory ${PIPE%/mps-pipe} is left"; else pass "job directory removed"; fi

# A failing rank ends the job; the daemon is stopped all the same.
: >"$LOG"
run mps-rank-fails HGAS_GPU_SHARING=mps PATH="$FAKE_PATH" -- -n 2 sh -c 'exit $((HGAS_RANK + 3))'
if [ "$RC" != 0 ]; then pass "exit status $RC"; else fail "exit status 0 though ranks failed"; fi
has "$LOG" "quit pipe=$TMPDIR/hgas-"
DAEMON_PID=$(sed -n 's/^start .* pid=\([0-9]*\)$/\1/p' "$LOG" | head -1)
if alive "$DAEMON_PID"; then fail "the daemon still runs"; else pass "the daemon is gone"; fi

# A daemon that does not start: no rank runs, the message names the program and its status.
: >"$LOG"
run mps-start-fails HGAS_GPU_SHARING=mps FAKE_MPS_FAIL=1 PATH="$FAKE_PATH" -- -n 2 sh -c 'echo ran'
rc 1
has "$ERR" "nvidia-cuda-mps-control -d (the job's MPS daemon"
has "$ERR" "with status 3"
if grep -q ran "$OUT"; then fail "ranks ran without the daemon"; else pass "no rank ran"; fi

# No control program on the PATH: refused before anything starts.
mkdir -p "$WORK/empty"
run mps-missing HGAS_GPU_SHARING=mps PATH="$WORK/empty:/usr/bin:/bin" -- -n 2 sh -c 'echo ran'
rc 2
has "$ERR" "HGAS_GPU_SHARING=mps: nvidia-cuda-mps-control is not on the PATH"

# Ranks as threads are needed for threads and funneled.
for m in threads funneled; do
    run "mode-$m" HGAS_GPU_SHARING=$m -- -n 2 sh -c 'echo ran'
    rc 2
    has "$ERR" "HGAS_GPU_SHARING=$m needs ranks as threads: start the job with hgasrun --threads T"
    # With ranks as threads the launcher takes the mode and passes it on.
    run "mode-$m-threads" HGAS_GPU_SHARING=$m -- -n 2 --threads 2 sh -c 'echo "sharing=$HGAS_GPU_SHARING threads=$HGAS_THREADS"'
    rc 0
    has "$OUT" "sharing=$m threads=2"
done

# A bad value is the settings check's.
run mode-bad HGAS_GPU_SHARING=mpss -- -n 1 sh -c 'echo ran'
rc 2
has "$ERR" "HGAS_GPU_SHARING"

# process and auto start no daemon and leave the environment alone.
: >"$LOG"
run mode-process HGAS_GPU_SHARING=process PATH="$FAKE_PATH" -- -n 1 sh -c 'echo "pipe=${CUDA_MPS_PIPE_DIRECTORY:-none}"'
rc 0
has "$OUT" "pipe=none"
if [ -s "$LOG" ]; then fail "a daemon was started"; else pass "no daemon"; fi

# hgas-info names the mode and what it means.
CASE=hgas-info
HGAS_GPU_SHARING=mps "$INFO" >"$WORK/info.out" 2>&1
has "$WORK/info.out" "GPU sharing (HGAS_GPU_SHARING=mps): processes under the job's own MPS daemon"
CUDA_MPS_PIPE_DIRECTORY=/somewhere "$INFO" >"$WORK/info.out" 2>&1
has "$WORK/info.out" "auto: processes under the MPS daemon at CUDA_MPS_PIPE_DIRECTORY=/somewhere"

echo "$FAILED failed"
[ "$FAILED" = 0 ]
