#!/bin/sh
# uncaught.sh <hgasrun> <python> <uncaught.py>: an uncaught exception ends the whole job with
# its message and the rank's number, well before the barrier's timeout (HGAS_TIMEOUT=60).
out=$(HGAS_TIMEOUT=60 "$1" -n 2 --timeout 100 "$2" "$3" 2>&1); rc=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc -ne 0 ] || fail "the job exited 0"
echo "$out" | grep -q "RuntimeError: rank one gives up" || fail "no traceback with the exception"
echo "$out" | grep -q "rank 1.*uncaught Python exception RuntimeError: rank one gives up" \
    || fail "the abort does not name rank 1 and the exception"
echo "$out" | grep -qi "timed out\|HGAS_ERR_TIMEOUT" && fail "the job ended by a timeout"
echo "ok"
