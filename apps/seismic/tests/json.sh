#!/usr/bin/env bash
# json.sh HGASRUN SEISMIC: --json appends one parseable record per run with the run's figures.
set -u
HGASRUN=$1 SEISMIC=$2
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
for s in basic integrated pipelined; do
    "$HGASRUN" -n 2 --timeout 100 "$SEISMIC" --grid 24x24x24 --pml 4 --steps 20 --style $s --json "$dir/r.jsonl" --quiet \
        >/dev/null || { echo "FAIL: run"; exit 1; }
done
python3 - "$dir/r.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 3, f"{len(recs)} records, want 3"
for r in recs:
    assert r["app"] == "seismic" and r["ranks"] == 2 and r["grid"] == [24, 24, 24] and r["steps"] == 20, r
    assert set(r["phases_s"]) == {"exchange_v", "stress", "exchange_s", "velocity", "record"}, r["phases_s"]
    # rank 0 of a z-slab pair sends vz up before the stress update, sxz and syz up before the velocity one
    assert r["time_s"] > 0 and r["halo_bytes_per_step"] == 3 * 24 * 24 * 4, r["halo_bytes_per_step"]
    assert r["energy_max"] > 0 and r["energy_final"] >= 0
assert recs[0]["style"] == "basic" and recs[1]["style"] == "integrated"
assert recs[0]["overlap"] is False and recs[1]["overlap"] is True and recs[2]["overlap"] is True, \
    "integrated and pipelined overlap by default, basic never"
assert recs[0]["host_buffer_bytes"] > 0 and recs[1]["host_buffer_bytes"] == 0
assert recs[2]["style"] == "pipelined" and recs[2]["host_buffer_bytes"] > 0
assert recs[0]["checksum"] == recs[1]["checksum"] == recs[2]["checksum"], "styles differ"
print("ok: json", [r["style"] for r in recs])
PY
