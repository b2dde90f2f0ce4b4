#!/usr/bin/env bash
# The bootstrap store under a flood of idle connections:
#   store_flood.sh <hgasrun> <fault_prog> [COUNT] [--measure]
# Rank 0 first opens COUNT (default 1100) idle connections to the store (flood_store.py, a
# separate process holding them) and only then joins; the job must still complete. It used
# to fail: accept hit EMFILE, hgasrun spun at a full core logging ~0.5 MB/s and blamed rank 1.
# hgasrun runs under `ulimit -Sn 96`, below the store's cap on unauthenticated connections, so
# both limits are met: the cap (oldest stranger closed) and EMFILE (stranger freed, or the
# newcomer accepted and closed with the spare descriptor, the listener resting meanwhile).
# Checks: exit status 0, every rank passed, the store closed the flood's connections, and its
# warnings stayed few (rate-limited). --measure also prints hgasrun's CPU time and wall time.
set -u
HGASRUN=$1
PROG=$2
COUNT=${3:-1100}
MEASURE=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/hgas-store-flood.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID
FAILED=0
CASE=flood
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }
show() { sed 's/^/      | /' "$1" | head -30; }

# Rank 0's command: flood, wait until the flood is in place, then run the rank. The flood
# holds its connections 8 s (the job takes less), then reports what the store closed.
cat >"$WORK/rank.sh" <<EOF
#!/usr/bin/env bash
if [ "\$HGAS_RANK" = 0 ]; then
    python3 "$HERE/flood_store.py" "\$HGAS_BOOT_ADDR" $COUNT 8 >"$WORK/flood.out" 2>&1 &
    for _ in \$(seq 600); do grep -q "flood: opened" "$WORK/flood.out" 2>/dev/null && break; sleep 0.05; done
fi
exec "$PROG" ok -
EOF
chmod +x "$WORK/rank.sh"

TIMEFMT="hgasrun: user %U s, system %S s, wall %e s, max rss %M KiB"
t0=$(date +%s%N)
( ulimit -Sn "${NOFILE:-96}"
  /usr/bin/time -f "$TIMEFMT" -o "$WORK/time.out" env HGAS_TRANSPORTS=self,shm HGAS_TIMEOUT=60 \
      timeout -k 5 90 "$HGASRUN" -n 4 "$WORK/rank.sh" >"$WORK/job.out" 2>"$WORK/job.err" )
RC=$?
MS=$((($(date +%s%N) - t0) / 1000000))
for _ in $(seq 200); do grep -q "closed by the store" "$WORK/flood.out" 2>/dev/null && break; sleep 0.1; done

if [ "$RC" -eq 0 ]; then pass "exit status 0"; else fail "exit status $RC"; show "$WORK/job.out"; show "$WORK/job.err"; fi
c=$(grep -c "passed barrier" "$WORK/job.out")
if [ "$c" -eq 4 ]; then pass "4 ranks passed the barrier"; else fail "$c ranks passed the barrier"; show "$WORK/job.out"; fi
opened=$(sed -n 's/^flood: opened \([0-9]*\),.*/\1/p' "$WORK/flood.out")
closed=$(sed -n 's/.*closed by the store \([0-9]*\),.*/\1/p' "$WORK/flood.out")
if [ -n "$opened" ] && [ "$opened" -ge 1000 ]; then pass "the flood opened $opened connections"
else fail "the flood opened '${opened}' connections, expected >= 1000"; show "$WORK/flood.out"; fi
# Every stranger is closed: pushed out by the cap or by EMFILE, or when the last rank joined.
if [ -n "$closed" ] && [ "$closed" -eq "$opened" ]; then pass "the store closed all $closed of them"
else fail "the store closed '${closed}' of $opened"; show "$WORK/flood.out"; fi
lines=$(grep -c "bootstrap store" "$WORK/job.err")
if [ "$lines" -le 20 ]; then pass "$lines store warnings (rate-limited)"
else fail "$lines store warnings: not rate-limited"; show "$WORK/job.err"; fi
if grep -q "hgasrun: rank" "$WORK/job.err"; then fail "hgasrun blamed a rank"; show "$WORK/job.err"; fi
if [ "$MEASURE" = --measure ]; then
    echo "measure: $COUNT idle connections: job $([ "$RC" -eq 0 ] && echo completed || echo FAILED) in $MS ms;" \
        "$(cat "$WORK/time.out"); $(cat "$WORK/flood.out" | tail -1); stderr $(wc -c <"$WORK/job.err") bytes"
fi
[ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
echo "$FAILED failed"
[ "$FAILED" -eq 0 ]
