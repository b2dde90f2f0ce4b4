#!/usr/bin/env bash
# correct.sh HGASRUN MATMUL P ARGS...: the product on P ranks matches the one-rank library
# product of the same inputs (the program's own check, whose line is read back here), and
# ranks fetched the tiles they do not own (more than one rank: bytes moved). HGASRUN_ARGS:
# more hgasrun options (--threads T: ranks as threads; then the report must say so).
set -u
HGASRUN=$1 MATMUL=$2 P=$3
shift 3
out=$("$HGASRUN" -n "$P" ${HGASRUN_ARGS:-} --timeout 120 "$MATMUL" --reps 1 "$@" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
line=$(grep 'verification: max relative error' <<<"$out") || { echo "FAIL: no verification line"; exit 1; }
python3 - "$line" <<'PY' || exit 1
import re, sys
m = re.search(r"max relative error (\S+) \(bound (\S+)\): (\w+)", sys.argv[1])
assert m, sys.argv[1]
err, bound, verdict = float(m[1]), float(m[2]), m[3]
assert verdict == "PASSED" and err <= bound and bound < 1e-9, (err, bound, verdict)
PY
fetched=$(sed -n 's/.*fetched \([0-9.]*\) MiB per rank.*/\1/p' <<<"$out")
if [ "$P" -gt 1 ]; then
    python3 -c "import sys; sys.exit(0 if float('$fetched') > 0 else 1)" || { echo "FAIL: $P ranks fetched nothing"; exit 1; }
fi
if [[ "${HGASRUN_ARGS:-}" =~ --threads\ ([0-9]+) ]]; then
    want="$P ranks in $((P / BASH_REMATCH[1])) processes"
    grep -q "$want" <<<"$out" || { echo "FAIL: ranks as threads: the report does not say '$want'"; exit 1; }
fi
echo "ok: $P ranks $*"
