#!/usr/bin/env bash
# json.sh HGASRUN NAS_FT: --json appends one record per run with the fields the sweep script and
# the README promise, and the record agrees with the printed report.
set -u
HGASRUN=$1 FT=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
f=$dir/ft.jsonl
for v in slabs packed; do
    "$HGASRUN" -n 2 --timeout 100 "$FT" --class S --variant $v --threads 1 --json "$f" >"$dir/out.$v" 2>&1 ||
        { cat "$dir/out.$v"; echo "FAIL: run $v"; exit 1; }
done
[ "$(wc -l <"$f")" = 2 ] || { echo "FAIL: expected 2 records in $f"; cat "$f"; exit 1; }
python3 - "$f" "$dir/out.slabs" <<'PY'
import json, sys, re
recs = [json.loads(l) for l in open(sys.argv[1])]
need = ["app", "class", "nx", "ny", "nz", "niter", "ranks", "threads", "kind", "variant", "time_s", "mops",
        "mops_per_rank", "verified", "checksum_re", "checksum_im", "rel_err", "compute_s", "fft_s", "pack_s",
        "comm_s", "wait_s", "transpose_s", "cpu_s", "energy_j", "energy_note", "host"]
for r in recs:
    miss = [k for k in need if k not in r]
    assert not miss, f"missing fields {miss}"
    assert r["app"] == "nas-ft" and r["class"] == "S" and r["ranks"] == 2 and r["verified"] is True, r
    assert len(r["checksum_re"]) == 6 and len(r["compute_s"]) == 2, r
    assert r["energy_j"] is None and "kind host" in r["energy_note"], r
    for k in ("compute_s", "pack_s", "comm_s", "wait_s", "transpose_s", "cpu_s"):
        assert all(v >= 0 for v in r[k]), (k, r[k])
    t = [a + b + c for a, b, c in zip(r["pack_s"], r["comm_s"], r["wait_s"])]
    assert all(abs(a - b) < 1e-9 for a, b in zip(t, r["transpose_s"])), "transpose != pack + comm + wait"
assert [r["variant"] for r in recs] == ["slabs", "packed"]
out = open(sys.argv[2]).read()
m = re.search(r"Mop/s total\s+=\s+([0-9.]+)", out)
assert m and abs(float(m.group(1)) - recs[0]["mops"]) < 0.01, "report and record disagree on Mop/s"
m = re.search(r"T =\s+1\s+Checksum =\s+(\S+)", out)
assert abs(float(m.group(1)) - recs[0]["checksum_re"][0]) < 1e-9
print("ok: JSON records", len(recs))
PY
