#!/usr/bin/env bash
# json.sh HGASRUN MATMUL: --json appends one record per run, with the figures of the run and
# the bytes fetched, which must equal the count of A and B tiles each rank does not own.
set -u
HGASRUN=$1 MATMUL=$2
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
for p in 1 3; do
    "$HGASRUN" -n $p --timeout 100 "$MATMUL" --n 128 --block 32 --reps 2 --json "$dir/r.jsonl" --quiet >/dev/null ||
        { echo "FAIL: run on $p ranks"; exit 1; }
done
python3 - "$dir/r.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 2, f"{len(recs)} records, want 2"
for r, p in zip(recs, (1, 3)):
    assert r["app"] == "matmul" and r["kind"] == "host" and r["n"] == 128 and r["block"] == 32, r
    assert r["ranks"] == p and r["processes"] == p and r["threads"] == 1 and r["reps"] == 2, r
    assert r["library"] == "openblas" and r["verified"] is True and r["max_rel_err"] <= r["bound"], r
    assert r["time_s"] > 0 and r["time_s"] <= r["time_mean_s"], r
    assert abs(r["gflops"] - 2 * 128**3 / r["time_s"] * 1e-9) < 1e-3 * r["gflops"], r
    assert r["ref_gflops"] > 0 and abs(r["ratio"] - r["gflops"] / r["ref_gflops"]) < 1e-3 * r["ratio"] + 1e-4, r
    # owner computes: rank q fetches A(I,K) and B(K,J) for each of its C tiles (I,J) where
    # the owner of that tile is not q
    nb, tile = 4, 32 * 32 * 8
    want = []
    for q in range(p):
        n = 0
        for t in range(q, nb * nb, p):
            I, J = divmod(t, nb)
            n += sum(((I * nb + K) % p != q) + ((K * nb + J) % p != q) for K in range(nb))
        want.append(n * tile)
    assert r["fetched_bytes_max"] == max(want) and r["fetched_bytes_total"] == sum(want), (r, want)
print("ok: json", [(r["ranks"], r["fetched_bytes_total"]) for r in recs])
PY
