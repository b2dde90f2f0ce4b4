#!/usr/bin/env bash
# identical.sh HGASRUN EPISIM KIND [RANKS...]: the epidemic curve (the per-day table: new
# infections and S E I R) is identical for every rank count and every style with memory of
# KIND, to the one of 1 rank, kind host, style integrated. Small fragments (10 visits) make
# every stream many fragments, so buffers are reposted many times a day (basic, pipelined) and
# the integrated style's ring of slots wraps from day to day.
set -u
HGASRUN=$1 EPISIM=$2 KIND=$3
shift 3
RANKS=${*:-1 2 3 4}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ARGS=(--persons 3000 --grid 10x10 --sublocs 2 --days 20 --initial 6 --fragment 240 --fragments 2 --quiet --timeout 60)
FAILED=0
run() {  # run NAME N ARGS...: the table in $WORK/NAME
    local name=$1 n=$2
    shift 2
    if ! "$HGASRUN" -n "$n" --timeout 100 "$EPISIM" "${ARGS[@]}" --curve "$WORK/$name" "$@" >"$WORK/$name.out" 2>&1; then
        echo "FAIL: $n rank(s) $* exited with an error:"; sed 's/^/    /' "$WORK/$name.out"; FAILED=1; return 1
    fi
    # every stream was closed: no message left unreceived, no receive left posted at finalize
    if grep -qE "never (received|completed)" "$WORK/$name.out"; then
        echo "FAIL: $n rank(s) $*: hgas_finalize found messages or receives left over:"
        grep -E "never (received|completed)" "$WORK/$name.out" | head -5 | sed 's/^/    /'; FAILED=1
    fi
}
run ref 1 --kind host --style integrated || exit 1
echo "reference (1 rank, host, integrated):"; sed 's/^/    /' "$WORK/ref"
# the reference must be an epidemic: infections on many days, and thousands of visits
total=$(awk 'NR > 2 { s += $2 } END { print s + 0 }' "$WORK/ref")
if [ "$total" -lt 100 ]; then echo "FAIL: only $total infections in the reference run: the test would be blind"; FAILED=1; fi
for n in $RANKS; do
    for style in basic pipelined integrated; do
        name=$KIND.$style.n$n
        run "$name" "$n" --kind "$KIND" --style "$style" || continue
        if cmp -s "$WORK/ref" "$WORK/$name"; then echo "ok: $n rank(s), $KIND, $style: identical"
        else echo "FAIL: $n rank(s), $KIND, $style differs from the reference:"; diff "$WORK/ref" "$WORK/$name" | head -20; FAILED=1; fi
    done
done
# Styles integrated and pipelined sort each visit fragment as it arrives and merge the runs
# (the reference too); with one sort after the last fragment instead, the same table.
run nopipe 2 --kind "$KIND" --style integrated --sort-on-arrival 0 && if cmp -s "$WORK/ref" "$WORK/nopipe"; then
    echo "ok: 2 ranks, $KIND, integrated --sort-on-arrival 0: identical"
else echo "FAIL: 2 ranks, $KIND, integrated --sort-on-arrival 0 differs from the reference"; diff "$WORK/ref" "$WORK/nopipe" | head -20; FAILED=1; fi
run nopipe_p 2 --kind "$KIND" --style pipelined --sort-on-arrival 0 && if cmp -s "$WORK/ref" "$WORK/nopipe_p"; then
    echo "ok: 2 ranks, $KIND, pipelined --sort-on-arrival 0: identical"
else echo "FAIL: 2 ranks, $KIND, pipelined --sort-on-arrival 0 differs from the reference"; diff "$WORK/ref" "$WORK/nopipe_p" | head -20; FAILED=1; fi
# Another seed gives another curve (the comparison can fail).
run other 2 --kind "$KIND" --seed 2 && if cmp -s "$WORK/ref" "$WORK/other"; then
    echo "FAIL: seed 2 gives the same table as seed 1"; FAILED=1
else echo "ok: seed 2 gives another curve"; fi
exit $FAILED
