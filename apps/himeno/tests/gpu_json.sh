#!/usr/bin/env bash
# gpu_json.sh HGASRUN HIMENO_GPU SWEEP: the JSON record of a GPU run carries the GPU fields
# (devices, device copy and kernel bandwidth per rank, bytes, sweep bandwidth) with sane values,
# and the printed bandwidth lines; energy is measured or says why not; the sweep script runs
# the GPU mode and shows its bandwidth.
set -u
HGASRUN=$1 HIMENO=$2 SWEEP=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILED=0
"$HGASRUN" -n 2 --timeout 100 "$HIMENO" --mode hybrid --size XS --iters 3 --overhead --checksum --verify \
    --json "$WORK/r.jsonl" >"$WORK/1.out" 2>&1 || FAILED=1
cat "$WORK/1.out"
python3 - "$WORK/r.jsonl" "$WORK/1.out" <<'PY' || FAILED=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 1, f"{len(recs)} records"
r = recs[0]
printed = [json.loads(l[5:]) for l in open(sys.argv[2]) if l.startswith("JSON ")]
assert printed == recs, "the JSON line printed differs from the one appended"
assert r["mode"] == "hybrid" and r["kind"] == "cuda" and r["ranks"] == 2 and r["threads"] == 1, r
assert r["verified"] is True and abs(r["gosa"] - 6.229796415e-03) <= 1e-5 * 6.229796415e-03
assert len(r["gpu"]) == 2 and all(d.startswith("cuda:") for d in r["gpu"]), r["gpu"]
for key in ("copy_gbps", "kernel_gbps", "kernel_s", "kernel_bytes"):
    assert len(r[key]) == 2 and all(v is not None and v > 0 for v in r[key]), (key, r[key])
# planes 15 + 15 of 32x64 points: 12 coefficient reads + 1 write per interior point, p once
for b, planes in zip(r["kernel_bytes"], r["planes"]):
    assert b == 4 * (13 * planes * 30 * 62 + (planes + 2) * 32 * 64), (b, planes)
assert abs(r["sweep_gbps"] - sum(r["kernel_bytes"]) / r["time_per_iter_s"] * 1e-9) <= 1e-9 * r["sweep_gbps"]
assert r["peak_gbps"] is None or r["peak_gbps"] > 0
assert r["time_per_iter_noexchange_s"] > 0 and r["comm_overhead_per_iter_s"] is not None
assert len(r["cpu_time_per_iter_s"]) == 2
assert (r["energy_j"] is None) == r["energy_note"].startswith("unavailable"), r
assert (r["mflop_per_j"] is None) == (r["energy_j"] is None) == (r["energy_per_iter_j"] is None)
assert r["energy_j"] is None or abs(r["energy_per_iter_j"] * r["iters"] - r["energy_j"]) <= 1e-9 * r["energy_j"]
print("ok: record", {k: r[k] for k in ("gpu", "copy_gbps", "kernel_gbps", "sweep_gbps", "energy_note")})
PY
for line in '^gpu: r0 cuda:' '^bandwidth r0: sweep kernel .* of the device copy measured now' '^bandwidth r1: ' \
            '^bandwidth: whole sweep ' '^comm overhead: ' '^energy: '; do
    grep -qE "$line" "$WORK/1.out" || { echo "FAIL: no line matching '$line'"; FAILED=1; }
done
out=$(python3 "$SWEEP" --hgasrun "$HGASRUN" --himeno "$HIMENO" --sizes XS --modes hybrid --ranks 1,2 --iters 3 \
      --out "$WORK/sweep" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: sweep exited with $rc"; FAILED=1; }
[ "$(wc -l <"$WORK/sweep/results.jsonl")" = 2 ] || { echo "FAIL: sweep did not record 2 runs"; FAILED=1; }
grep -qE '^XS +hybrid +2 .* [0-9]+ +[0-9]+  [0-9.]+e-0' <<<"$out" || { echo "FAIL: the sweep table lacks the XS hybrid 2-rank row with GB/s"; FAILED=1; }
exit $FAILED
