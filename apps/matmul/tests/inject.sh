#!/usr/bin/env bash
# inject.sh HGASRUN MATMUL [ARGS...]: the check rejects a result with one element off by 1e-6
# (--inject-error): exit status 1 on every rank, FAILED, and an error above the bound.
set -u
HGASRUN=$1 MATMUL=$2
shift 2
[ $# -gt 0 ] || set -- --n 96 --block 32
out=$("$HGASRUN" -n 2 --timeout 120 "$MATMUL" --reps 1 --inject-error "$@" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 1 ] || { echo "FAIL: exit status $rc, want 1"; exit 1; }
line=$(grep 'verification: max relative error' <<<"$out") || { echo "FAIL: no verification line"; exit 1; }
python3 - "$line" <<'PY' || exit 1
import re, sys
m = re.search(r"max relative error (\S+) \(bound (\S+)\): (\w+)", sys.argv[1])
assert m, sys.argv[1]
err, bound, verdict = float(m[1]), float(m[2]), m[3]
assert verdict == "FAILED" and err > bound and 1e-9 < err < 1e-5, (err, bound, verdict)
PY
echo "ok: the spoiled result was rejected"
