#!/usr/bin/env bash
# bad_input.sh HGASRUN EPISIM: bad options and missing memory kinds give a clear message
# (what, and how to fix it) and a non-zero status.
set -u
HGASRUN=$1 EPISIM=$2
FAILED=0
expect() {  # expect PATTERN COMMAND...: fails unless COMMAND fails and prints PATTERN
    local pat=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc != 0 ] && grep -qE -- "$pat" <<<"$out"; then echo "ok: ${*:2}: $(grep -E -- "$pat" <<<"$out" | head -1)"
    else echo "FAIL: ${*:2} (status $rc) should fail saying /$pat/:"; echo "$out" | tail -5 | sed 's/^/    /'; FAILED=1; fi
}
expect "--style wants basic, pipelined or integrated, not 'fast'" "$EPISIM" --style fast
expect "--kind wants host, sim or cuda" "$EPISIM" --kind gpu
expect "--fragment wants a multiple of 80 bytes .* \(e.g. 160\)" "$EPISIM" --fragment 100
expect "--grid wants WxH" "$EPISIM" --grid 40
expect "--sort-on-arrival wants 0 or 1, not '2'" "$EPISIM" --sort-on-arrival 2
expect "--persons wants a number" "$EPISIM" --persons -3
expect "--persons wants a whole number" "$EPISIM" --persons 2.5
expect "--contact-p wants a number in \[0" "$EPISIM" --contact-p 1.5
expect "--infectious \(300\) exceeds --persons \(200\)" "$EPISIM" --scenario one-location --persons 200 --infectious 300
expect "unknown option '--bogus'" "$EPISIM" --bogus 1
expect "--days wants a value" "$EPISIM" --days
expect "kind sim needs sim memory: set HGAS_SIM_HEAP_SIZE" env -u HGAS_SIM_HEAP_SIZE "$HGASRUN" -n 2 "$EPISIM" --kind sim --days 1
expect "HGAS_SIM_HEAP_SIZE" env HGAS_SIM_HEAP_SIZE=64K "$HGASRUN" -n 2 "$EPISIM" --kind sim --days 1
if ! "$EPISIM" --help | grep -q -- "--style basic|pipelined|integrated"; then echo "FAIL: --help"; FAILED=1; fi
exit $FAILED
