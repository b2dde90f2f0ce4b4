#!/usr/bin/env bash
# json.sh HGASRUN EPISIM: --json appends one valid record per run with the curve printed,
# per-phase times that add up to no more than the total, and the pinned staging of each style.
set -u
HGASRUN=$1 EPISIM=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILED=0
for s in basic pipelined integrated; do
    HGAS_SIM_HEAP_SIZE=32M "$HGASRUN" -n 3 "$EPISIM" --persons 2000 --grid 10x10 --days 5 --kind sim --style $s \
        --fragment 800 --fragments 2 --quiet --json "$WORK/r.jsonl" >"$WORK/$s.out" 2>&1 || { cat "$WORK/$s.out"; FAILED=1; }
done
python3 - "$WORK" <<'PY' || FAILED=1
import json, sys
w = sys.argv[1]
recs = [json.loads(l) for l in open(f"{w}/r.jsonl")]
assert [r["style"] for r in recs] == ["basic", "pipelined", "integrated"], [r.get("style") for r in recs]
for r in recs:
    out = open(f"{w}/{r['style']}.out").read().splitlines()
    printed = [json.loads(l[5:]) for l in out if l.startswith("JSON ")]
    assert printed == [r], "the JSON line printed differs from the one appended"
    curve = [int(x) for x in [l for l in out if l.startswith("curve:")][0][6:].split(",")]
    assert r["curve"] == curve and len(curve) == 5, (r["curve"], curve)
    assert r["app"] == "episim" and r["ranks"] == 3 and r["kind"] == "sim" and r["persons"] == 2000, r
    assert sum(r["final"].values()) == 2000, r["final"]
    ph = r["phases_s"]
    assert set(ph) == {"visits", "visit_comm", "interact", "inf_comm", "update"}, ph
    assert all(v >= 0 for v in ph.values()) and r["time_s"] > 0
    assert abs(r["time_per_day_s"] - r["time_s"] / 5) < 1e-9 * r["time_s"] + 1e-12
    assert r["visit_messages"] > 2000, r["visit_messages"]
assert recs[0]["curve"] == recs[1]["curve"] == recs[2]["curve"]
b, p, i = recs
# pinned staging: none in basic and integrated; pipelined: per peer, 2 fragments of visits
# received and 2 of infections sent, each page-rounded (3 ranks: 3 * 2 * 800 -> 8192 + 6 pages)
assert b["pinned_bytes_max"] == 0 and i["pinned_bytes_max"] == 0, (b["pinned_bytes_max"], i["pinned_bytes_max"])
assert p["pinned_bytes_max"] == 8192 + 6 * 4096, p["pinned_bytes_max"]
# integrated receives in place: slots of 800 B for a day's visits (20 B each) of the busiest
# rank plus an end marker per rank, so at least the mean day's visits per rank and 3 slots
assert b["device_fragment_bytes"] == 0 and i["device_fragment_bytes"] % 800 == 0, i["device_fragment_bytes"]
assert i["device_fragment_bytes"] >= i["visit_messages"] / 5 / 3 * 20 + 3 * 800, i["device_fragment_bytes"]
# the sort on arrival is the integrated and pipelined styles' (on by default)
assert [r["sort_on_arrival"] for r in recs] == [False, True, True], [r["sort_on_arrival"] for r in recs]
print("ok: records", [(r["style"], r["time_per_day_s"], r["pinned_bytes_max"]) for r in recs])
PY
exit $FAILED
