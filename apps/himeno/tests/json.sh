#!/usr/bin/env bash
# json.sh HGASRUN HIMENO SWEEP: --json appends one valid record per run, with the fields the
# sweep script reads; --overhead reports both times; the sweep script runs and prints a table.
set -u
HGASRUN=$1 HIMENO=$2 SWEEP=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILED=0
"$HGASRUN" -n 2 "$HIMENO" --size XS --iters 3 --json "$WORK/r.jsonl" >"$WORK/1.out" 2>&1 || FAILED=1
"$HGASRUN" -n 2 "$HIMENO" --size XS --iters 3 --overhead --checksum --json "$WORK/r.jsonl" >"$WORK/2.out" 2>&1 || FAILED=1
cat "$WORK/1.out" "$WORK/2.out"
python3 - "$WORK/r.jsonl" "$WORK/2.out" <<'PY' || FAILED=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 2, f"{len(recs)} records, expected 2"
printed = [json.loads(l[5:]) for l in open(sys.argv[2]) if l.startswith("JSON ")]
assert printed == [recs[1]], "the JSON line printed differs from the one appended"
for r in recs:
    assert r["app"] == "himeno" and r["size"] == "XS" and r["ranks"] == 2 and r["iters"] == 3, r
    assert r["planes"] == [15, 15], r["planes"]
    assert r["weak"] is False and r["mimax"] == 32, r
    assert abs(r["gosa"] - 6.229796415e-03) <= 1e-5 * 6.229796415e-03, r["gosa"]
    assert r["mflops"] > 0 and r["time_per_iter_s"] > 0
    assert abs(r["mflops"] - 34 * 29 * 29 * 61 * 3 / r["time_s"] / 1e6) <= 1e-6 * r["mflops"]
    assert len(r["cpu_time_per_iter_s"]) == 2 and all(c >= 0 for c in r["cpu_time_per_iter_s"])
    # energy is measured or absent, never invented
    assert (r["energy_j"] is None) == r["energy_note"].startswith("unavailable"), r
a, b = recs
assert a["comm_overhead_per_iter_s"] is None and a["checksum_hash"] is None
assert b["time_per_iter_noexchange_s"] > 0
assert abs(b["comm_overhead_per_iter_s"] - (b["time_per_iter_s"] - b["time_per_iter_noexchange_s"])) < 1e-9
assert len(b["checksum_hash"]) == 16 and a["gosa_bits"] == b["gosa_bits"]
print("ok: records", recs[1])
PY
# --weak: XS per rank on 2 ranks is a 62x32x64 grid with 30 planes per rank
"$HGASRUN" -n 2 "$HIMENO" --size XS --iters 3 --weak --json "$WORK/w.jsonl" >"$WORK/3.out" 2>&1 || FAILED=1
python3 - "$WORK/w.jsonl" <<'PY' || FAILED=1
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["weak"] is True and r["size"] == "XS" and (r["mimax"], r["mjmax"], r["mkmax"]) == (62, 32, 64), r
assert r["planes"] == [30, 30] and r["reference_gosa"] is None, r
print("ok: weak record", {k: r[k] for k in ("weak", "size", "mimax", "planes")})
PY
grep -q '^energy: ' "$WORK/1.out" || { echo "FAIL: no energy line"; FAILED=1; }
out=$(python3 "$SWEEP" --hgasrun "$HGASRUN" --himeno "$HIMENO" --sizes XS --modes cpu --ranks 1,2 --iters 3 \
      --out "$WORK/sweep" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: sweep exited with $rc"; FAILED=1; }
[ "$(wc -l <"$WORK/sweep/results.jsonl")" = 2 ] || { echo "FAIL: sweep did not record 2 runs"; FAILED=1; }
grep -qE '^XS +cpu +2 ' <<<"$out" || { echo "FAIL: sweep table lacks the XS cpu 2-rank row"; FAILED=1; }
exit $FAILED
