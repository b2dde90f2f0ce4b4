"""check_trace.py <hgasrun> <program> <ranks> <dir>: runs the program with HGAS_TRACE and checks
the merged trace the way a viewer reads it (Chrome trace-event rules, as Perfetto's JSON importer
applies them): one process per rank, named; the API thread's track; spans of the calls with their
arguments; every flow arrow from a put_signal on rank r ends inside the signal_wait_until of the
rank it signalled; the ranks' parts are gone; the ranks' time axes agree (time 0: the end of
the init barrier). The program is examples/ring.c: each rank put_signals its right neighbour."""
import json
import os
import subprocess
import sys

hgasrun, prog, n, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
path = os.path.join(tmp, "ring-trace.json")
env = dict(os.environ, HGAS_TRACE=path)
out = subprocess.run([hgasrun, "-n", str(n), prog], env=env, capture_output=True, text=True, timeout=200)
print(out.stdout, out.stderr)
assert out.returncode == 0, f"the job failed ({out.returncode})"
leftover = [f for f in os.listdir(tmp) if ".rank" in f]
assert not leftover, f"hgasrun left the ranks' parts: {leftover}"
with open(path) as f:
    trace = json.load(f)  # one valid JSON document
events = trace["traceEvents"]
assert trace["otherData"] == {"hgas_ranks": n, "hgas_missing_ranks": []}, trace["otherData"]

names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {r: f"rank {r}" for r in range(n)}, names
api_tid = {e["pid"]: e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"
           and e["args"]["name"] == "api"}
assert sorted(api_tid) == list(range(n)), api_tid

spans = [e for e in events if e["ph"] == "X"]
for e in spans:
    assert e["dur"] >= 0 and e["cat"] and e["name"].startswith("hgas_"), e


def calls(rank, name):
    return [e for e in spans if e["pid"] == rank and e["name"] == name]


for r in range(n):
    ps = calls(r, "hgas_put_signal")
    assert len(ps) == 1, f"rank {r}: {len(ps)} put_signal spans"
    a = ps[0]["args"]
    assert a["bytes"] == 8 and a["peer"] == (r + 1) % n and a["signal"] == 1 and a["kind"] == "host", a
    assert a["path"] in ("load/store", "transport"), a
    assert ps[0]["tid"] == api_tid[r]
    assert len(calls(r, "hgas_signal_wait_until")) == 1 and calls(r, "hgas_signal_wait_until")[0]["args"]["value"] == 1
    for c in ("hgas_calloc", "hgas_ptr", "hgas_free"):
        assert calls(r, c), f"rank {r}: no {c} span"


def enclosing(e):
    """The span on e's track that contains e's time stamp (how a flow event binds)."""
    inside = [s for s in spans if s["pid"] == e["pid"] and s["tid"] == e["tid"]
              and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
    assert inside, f"flow event {e} is outside every span of its track"
    return min(inside, key=lambda s: s["dur"])


starts = {e["id"]: e for e in events if e["ph"] == "s"}
ends = {e["id"]: e for e in events if e["ph"] == "f"}
assert len(starts) == n and set(starts) == set(ends), (starts, ends)
for fid, s in starts.items():
    f = ends[fid]
    src, dst = enclosing(s), enclosing(f)
    assert src["name"] == "hgas_put_signal" and dst["name"] == "hgas_signal_wait_until", (src, dst)
    assert f["pid"] == (s["pid"] + 1) % n, f"arrow from rank {s['pid']} ends on rank {f['pid']}"
    assert f.get("bp") == "e"

# One time axis: every rank's first call after init starts within a few seconds of time 0, and
# no rank's wait ends before the put that satisfied it started.
for r in range(n):
    first = min(e["ts"] for e in spans if e["pid"] == r)
    assert -1e3 < first < 5e6, f"rank {r}'s first span at {first} us"
for s in starts.values():
    f = ends[s["id"]]
    put, wait = enclosing(s), enclosing(f)
    assert wait["ts"] + wait["dur"] >= put["ts"] - 1e3, (put, wait)
print(f"ok: {len(spans)} spans, {len(starts)} flows, {n} ranks")
