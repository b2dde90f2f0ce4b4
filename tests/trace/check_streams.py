"""check_streams.py <hgasrun> <program> <ranks> <dir> [cuda]: runs stream_prog.c (sim memory, or
stream_prog_cuda with `cuda`) with HGAS_TRACE and checks the stream tracks of the merged trace:
each rank has a named stream track; the put's copy is a span on it, named after the API call
that enqueued it, with its bytes, placed when the stream ran it (not before the call that
enqueued it started); the allreduce's combine is a `reduce` span of 512 doubles."""
import json
import os
import subprocess
import sys

hgasrun, prog, n, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cuda = len(sys.argv) > 5 and sys.argv[5] == "cuda"
path = os.path.join(tmp, "streams.json")
env = dict(os.environ, HGAS_TRACE=path)
if not cuda:
    env.update(HGAS_SIM_HEAP_SIZE="1M", HGAS_SIM_LATENCY_US="20")
out = subprocess.run([hgasrun, "-n", str(n), prog], env=env, capture_output=True, text=True, timeout=200)
print(out.stdout, out.stderr)
assert out.returncode == 0, f"the job failed ({out.returncode})"
with open(path) as f:
    events = json.load(f)["traceEvents"]

prefix = "cuda stream" if cuda else "sim stream"
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
stream_tracks = {k: v for k, v in tracks.items() if v.startswith(prefix)}
spans = [e for e in events if e["ph"] == "X"]
api_tid = {p: t for (p, t), v in tracks.items() if v == "api"}
for r in range(n):
    mine = {t for (p, t) in stream_tracks if p == r}
    assert mine, f"rank {r}: no '{prefix}' track among {sorted(v for (p, _), v in tracks.items() if p == r)}"
    assert all(t not in {tt for (p, tt) in tracks if p == r and not tracks[(p, tt)].startswith(prefix)} for t in mine)
    on_streams = [e for e in spans if e["pid"] == r and e["tid"] in mine]
    for e in on_streams:
        assert e["cat"] == "stream" and e["dur"] >= 0 and "op" in e["args"] and "bytes" in e["args"], e
    # The put: one API span on the api track, its copy on a stream track, after it started.
    put = "hgas_put_on_stream" if cuda else "hgas_put"
    puts = [e for e in spans if e["pid"] == r and e["name"] == put and e["tid"] == api_tid[r]]
    assert len(puts) == 1, puts
    if not cuda:
        assert puts[0]["args"]["bytes"] == 4096, puts
    copies = [e for e in on_streams if e["name"] == put]
    assert copies, f"rank {r}: no stream span for hgas_put among {[(e['name'], e['args']) for e in on_streams]}"
    assert sum(e["args"]["bytes"] for e in copies) == 4096, copies
    for c in copies:
        assert c["args"]["op"] in ("copy", "kernel"), c
        # Within 0.2 us: API spans are timed by the trace clock (the TSC), converted to the steady
        # clock that the stream spans use at finalize (a few tens of ns of error at most).
        assert c["ts"] >= puts[0]["ts"] - 0.2, (puts[0], c)
        if cuda:
            a = c["args"]
            assert a["peer"] == (r + 1) % n and a["kind"] == "cuda" and a["path"] in ("load/store", "transport"), a
    if not cuda:
        # The sim engine's timeline: each operation lasts at least its latency (20 us).
        assert all(c["dur"] >= 19.9 for c in copies), copies
        reduces = [e for e in on_streams if e["args"]["op"] == "reduce"]
        # The allreduce's combines: the whole vector (scratch algorithms), or this rank's part
        # of it once per other member (direct: every member's heap is mapped here).
        assert reduces and all(0 < e["args"]["bytes"] <= 512 * 8 and e["args"]["bytes"] % 8 == 0
                               for e in reduces), reduces
        assert sum(e["args"]["bytes"] for e in reduces) >= 512 * 8 // n, reduces
        ar = [e for e in spans if e["pid"] == r and e["name"] == "hgas_allreduce" and e["tid"] == api_tid[r]]
        assert len(ar) == 1, ar
        for e in reduces:
            assert e["name"] == "hgas_allreduce", e
            assert e["ts"] >= ar[0]["ts"] - 0.2, (ar[0], e)
print(f"ok: {len(stream_tracks)} stream tracks, {n} ranks")
