#!/usr/bin/env bash
# hgasrun's command line as a new user meets it: --version, -np, -x, --help with the settings,
# settings checked once per job before any rank starts, HGAS_LOG_LEVEL=info and HGAS_DEBUG=all,
# and hosts (--host, --hostfile) started through an rsh command. The rsh here is a script that
# records its arguments and runs the command on this machine in a new session, as sshd would
# (so only the end of its stdin, not hgasrun's process group, can stop the rank).
#   launcher_args.sh <hgasrun> <hgas-ring> <boot_prog> [with-ucx: 1 (default) or 0]
# Ranks on other hosts reach each other only through UCX: in a build without it the host cases
# check that the job fails at init saying so, instead of running the ring.
set -u
HGASRUN=$1 RING=$2 BOOT=$3 WITH_UCX=${4:-1}
WORK=$(mktemp -d /tmp/hgas-launcher-args.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export TMPDIR=$WORK/tmp HGAS_TIMEOUT=60 HGAS_BOOT_TIMEOUT=60
mkdir -p "$TMPDIR"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID HGAS_RSH
FAILED=0
CASE=""
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }
# run NAME [env...] -- hgasrun-args...   (stdout in $OUT, stderr in $ERR, status in $RC)
run() {
    CASE=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    OUT=$WORK/$CASE.out ERR=$WORK/$CASE.err
    env "${envs[@]}" timeout -k 5 60 "$HGASRUN" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}
rc() { if [ "$RC" = "$1" ]; then pass "exit status $1"; else fail "exit status $RC, expected $1; stderr:"; head -20 "$ERR"; fi; }
has() {  # has FILE TEXT
    if grep -qF -- "$2" "$1"; then pass "has '$2'"; else fail "lacks '$2'; it holds:"; sed 's/^/      | /' "$1" | head -20; fi
}
count() {  # count FILE TEXT N: exactly N lines hold TEXT
    local n; n=$(grep -cF -- "$2" "$1")
    if [ "$n" = "$3" ]; then pass "$3 line(s) with '$2'"; else fail "$n line(s) with '$2', expected $3:"; sed 's/^/      | /' "$1" | head -20; fi
}

run version -- --version
rc 0; has "$OUT" "hgasrun (hgas) "

run np_alias -- -np 3 "$RING"
rc 0; has "$OUT" "rank 0 of 3 got 102 from rank 2"

run help_lists_settings -- --help
rc 0; has "$OUT" "HGAS_HEAP_SIZE"; has "$OUT" "HGAS_WARN_UNUSED_ENV"; has "$OUT" "--hostfile"

# unused_env_warned_once_per_job: a typo warns once, with the setting meant, and the job runs.
run unused_env_once HGAS_HEAPSIZE=1G -- -n 3 "$RING"
rc 0
count "$ERR" "unused environment variable: HGAS_HEAPSIZE (maybe: HGAS_HEAP_SIZE?)" 1
run unused_env_silenced HGAS_HEAPSIZE=1G HGAS_WARN_UNUSED_ENV=0 -- -n 2 "$RING"
rc 0; count "$ERR" "unused environment variable" 0

# setting_error_printed_once_per_job: hgasrun checks before it starts ranks.
run bad_setting_once HGAS_HEAP_SIZE=1Q -- -n 3 "$RING"
rc 2; count "$ERR" "HGAS_HEAP_SIZE='1Q' is not a size" 1; count "$OUT" "got" 0

# --bind core: each local rank runs on one CPU, the i-th one hgasrun may use (round robin);
# --bind none leaves the affinity as it was; a bad value is a usage error.
ALLOWED=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //')
CPUS=()  # the allowed list expanded: "0-2,5" -> 0 1 2 5
for part in ${ALLOWED//,/ }; do
    if [[ $part == *-* ]]; then for ((c = ${part%-*}; c <= ${part#*-}; ++c)); do CPUS+=("$c"); done
    else CPUS+=("$part"); fi
done
run bind_core -- -n 3 --bind core sh -c 'echo "rank $HGAS_RANK cpus $(taskset -pc $$ | sed "s/.*: //")"'
rc 0
for r in 0 1 2; do has "$OUT" "rank $r cpus ${CPUS[$(( r % ${#CPUS[@]} ))]}"; done
run bind_none -- -n 2 --bind none sh -c 'echo "rank $HGAS_RANK cpus $(taskset -pc $$ | sed "s/.*: //")"'
rc 0; count "$OUT" "cpus $ALLOWED" 2
run bind_bad -- -n 2 --bind socket "$RING"
rc 2; has "$ERR" "--bind is 'core' or 'none', not 'socket'"

# Without hgasrun (srun, mpirun: rank variables set by hand) rank 0 warns, alone.
CASE=unused_env_srun_style ERR=$WORK/$CASE.err
PORT=$((21000 + $$ % 20000))
for r in 0 1; do
    env HGAS_RANK=$r HGAS_SIZE=2 HGAS_BOOT_ADDR=tcp:127.0.0.1:$PORT HGAS_BOOT_SECRET=s3cr3t HGAS_HEAPSIZE=1G \
        timeout 60 "$RING" >"$WORK/$CASE.$r.out" 2>"$WORK/$CASE.$r.err" &
done
wait
cat "$WORK/$CASE".*.err >"$ERR"
count "$ERR" "unused environment variable: HGAS_HEAPSIZE (maybe: HGAS_HEAP_SIZE?)" 1
has "$WORK/$CASE.0.err" "hgas[rank 0] base warning: unused environment variable"

run log_level_info HGAS_LOG_LEVEL=info -- -n 2 "$RING"
rc 0; count "$ERR" "core info: transports by peer rank: " 2; has "$ERR" "hgas[rank 1] core info: rank 1 of 2: node 0 of 1"

run debug_all HGAS_DEBUG=all -- -n 2 "$RING"
rc 0; has "$ERR" "hgas[rank 0] core debug: rank 0 of 2"

# -x VAR=value and -x VAR reach the ranks; a variable that is not set is an error.
run export_value -- -n 2 -x HGAS_T1=one -x LANG_T2=two sh -c 'echo "rank $HGAS_RANK: $HGAS_T1 $LANG_T2"'
rc 0; has "$OUT" "rank 1: one two"
run export_unset -- -n 2 -x NOT_SET_ANYWHERE_X sh -c true
rc 2; has "$ERR" "-x NOT_SET_ANYWHERE_X: NOT_SET_ANYWHERE_X is not set"

# ---- hosts, through a recording rsh --------------------------------------------------------
RSH=$WORK/fake-rsh
cat >"$RSH" <<'SH'
#!/bin/sh
# fake-rsh <host> <command>: records the call, runs the command here in a new session.
printf '%s\n' "$1" >>"$RSH_LOG.hosts"
printf '%s\n' "$2" >>"$RSH_LOG.cmds"
exec setsid -w /bin/sh -c "$2"
SH
chmod +x "$RSH"
export RSH_LOG=$WORK/rsh

rm -f "$RSH_LOG".*
run hosts_remote HGAS_TEST_MARK=1 HGAS_HEAP_SIZE=32M -- --host hostA:2,hostB --rsh "$RSH" --boot tcp:127.0.0.1 \
    -x LANG_T3=three "$RING"
if [ "$WITH_UCX" = 1 ]; then
    rc 0
    has "$OUT" "rank 0 of 3 got 102 from rank 2"; has "$OUT" "rank 2 of 3 got 101 from rank 1"
else
    rc 1; has "$ERR" "which needs 'ucx' in HGAS_TRANSPORTS and a build with UCX"
fi
count "$RSH_LOG.hosts" "hostA" 2; count "$RSH_LOG.hosts" "hostB" 1
has "$RSH_LOG.cmds" "'HGAS_RANK=2'"; has "$RSH_LOG.cmds" "'HGAS_NODE_NAME=hostB'"
has "$RSH_LOG.cmds" "'HGAS_BOOT_ADDR=tcp:127.0.0.1:"; has "$RSH_LOG.cmds" "'HGAS_HEAP_SIZE=32M'"
has "$RSH_LOG.cmds" "'LANG_T3=three'"
if grep -qE "HGAS_BOOT_SECRET=[0-9a-f]{8}" "$RSH_LOG.cmds"; then fail "the secret is on the command line"; else pass "no secret on the command line"; fi

# This machine's ranks are forked; only the other host goes through rsh. A hostfile, HGAS_RSH.
rm -f "$RSH_LOG".*
printf '# two hosts\nlocalhost slots=2\nhostB:1   # the remote one\n' >"$WORK/hosts"
run hostfile HGAS_RSH="$RSH" -- -f "$WORK/hosts" --boot tcp:127.0.0.1 "$RING"
if [ "$WITH_UCX" = 1 ]; then
    rc 0; has "$OUT" "rank 0 of 3 got 102 from rank 2"
else
    rc 1; has "$ERR" "which needs 'ucx' in HGAS_TRANSPORTS and a build with UCX"
fi
count "$RSH_LOG.hosts" "host" 1; has "$RSH_LOG.hosts" "hostB"

run too_few_slots -- -n 4 --host a,b:2 --rsh "$RSH" "$RING"
rc 2; has "$ERR" "4 ranks do not fit the 3 slot(s) of the hosts"
run rsh_without_hosts -- -n 2 --rsh "$RSH" "$RING"
rc 2; has "$ERR" "--rsh starts ranks on other hosts"
run unknown_host_no_route -- --host no-such-host.invalid --rsh "$RSH" "$RING"
rc 1; has "$ERR" "cannot find this machine's address on the route to host 'no-such-host.invalid'"

# rsh_cannot_reach_host: ssh's 255 is named as such, and the job ends (rank 0 waits for rank 1).
cat >"$WORK/down-rsh" <<'SH'
#!/bin/sh
echo "ssh: connect to host $1 port 22: Connection refused" >&2
exit 255
SH
chmod +x "$WORK/down-rsh"
run rsh_unreachable -- --host localhost,down --rsh "$WORK/down-rsh" --boot tcp:127.0.0.1 "$RING"
rc 255
has "$ERR" "ssh: connect to host down port 22: Connection refused"
has "$ERR" "hgasrun: rank 1 (on host down, through rsh pid"
has "$ERR" "exited with status 255 (ssh's status when it cannot reach or log in to the host); ending the job"

# A remote rank that hangs: --timeout ends the job; the rank (in its own session, out of reach
# of hgasrun's signals) gets SIGTERM when its rsh stdin closes.
mkdir -p "$WORK/pids"
run remote_hang_ends -- --host hostA:2 --rsh "$RSH" --boot tcp:127.0.0.1 --timeout 2 "$BOOT" --hang all --pids "$WORK/pids"
rc 124
left=""
for f in "$WORK"/pids/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then left="$left $pid"; kill -9 "$pid"; fi
done
if [ -z "$(ls "$WORK"/pids)" ]; then fail "no rank wrote its pid"
elif [ -n "$left" ]; then fail "remote ranks survived:$left"; else pass "remote ranks ended"; fi

echo "$FAILED failed"
[ "$FAILED" = 0 ]
