#!/usr/bin/env bash
# A small /dev/shm (a private tmpfs in a mount namespace: needs root and unshare):
#   shm_full.sh <hgasrun> <shm_full_prog>
# - lazy: 8 ranks at the default heap sizes (80 MiB of heaps each, 640 MiB in all) start in a
#   32 MiB /dev/shm, each holding little of it (heaps took every page at init before, so
#   this failed with "cannot reserve");
# - full: an hgas_malloc that /dev/shm cannot hold fails on the rank with a message that names
#   /dev/shm and what is free there, instead of a SIGBUS at first touch.
set -u
HGASRUN=$1
PROG=$2
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    echo "shm_full: skipped: needs root and unshare to mount a small private /dev/shm"
    exit 77
fi
if ! unshare -m true 2>/dev/null; then
    echo "shm_full: skipped: this machine does not allow mount namespaces"
    exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset HGAS_RANK HGAS_SIZE HGAS_BOOT_ADDR HGAS_BOOT_SECRET HGAS_JOB_ID HGAS_NODE_NAME HGASRUN_PID HGAS_HEAP_SIZE \
      HGAS_LOCAL_HEAP_SIZE
FAILED=0
fail() { echo "FAIL [$CASE]: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok   [$CASE]: $*"; }
has() {
    if grep -qE -- "$2" "$1"; then pass "output has /$2/"
    else fail "output lacks /$2/; it holds:"; sed 's/^/      | /' "$1" | head -30; fi
}
in_small_shm() {  # in_small_shm SIZE LOG command...: runs the command with a SIZE tmpfs on /dev/shm
    local size=$1 log=$2; shift 2
    unshare -m bash -c 'mount --make-rprivate / 2>/dev/null; mount -t tmpfs -o size='"$size"' tmpfs /dev/shm && exec "$@"' \
        bash timeout -k 5 120 "$@" >"$log" 2>&1
}

CASE=lazy
in_small_shm 32m "$WORK/lazy.log" env HGAS_TIMEOUT=60 "$HGASRUN" -n 8 "$PROG"
rc=$?
if [ $rc -eq 0 ]; then pass "8 ranks at the default heap sizes started in a 32 MiB /dev/shm"
else fail "exit status $rc"; sed 's/^/      | /' "$WORK/lazy.log" | head -20; fi
per_rank=$(sed -n 's/.*(\([0-9]*\) per rank)$/\1/p' "$WORK/lazy.log")
if [ -n "$per_rank" ] && [ "$per_rank" -le $((4 << 20)) ]; then pass "$per_rank bytes of /dev/shm per rank (<= 4 MiB)"
else fail "per rank: '${per_rank}' bytes of /dev/shm, expected <= 4 MiB"; fi

CASE=full
in_small_shm 32m "$WORK/full.log" env HGAS_TIMEOUT=60 HGAS_HEAP_SIZE=256M "$HGASRUN" -n 2 "$PROG" $((48 << 20))
rc=$?
if [ $rc -ne 0 ]; then pass "exit status $rc"; else fail "exit status 0: 2 x 48 MiB fit in a 32 MiB /dev/shm?"; fi
has "$WORK/full.log" 'hgas_malloc\([0-9]+\) failed: cannot reserve [0-9]+ bytes of /dev/shm for /hgas-'
has "$WORK/full.log" '/dev/shm has [0-9]+ MiB free of 32 MiB\); enlarge /dev/shm'
if grep -q "SIGBUS\|signal 7\|Bus error" "$WORK/full.log"; then fail "a SIGBUS instead of the error"; else pass "no SIGBUS"; fi

[ $FAILED -eq 0 ] && echo "shm_full: all passed" || echo "shm_full: $FAILED failed"
exit $((FAILED > 0))
