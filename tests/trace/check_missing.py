"""check_missing.py <hgasrun> <fault_prog> <dir>: rank 1 dies (SIGKILL) after init while rank 0
waits in hgas_finalize. Rank 0 still writes its part; hgasrun merges what there is and names
the rank that wrote none, in the file (hgas_missing_ranks) and on stderr."""
import json
import os
import subprocess
import sys

hgasrun, prog, tmp = sys.argv[1:4]
path = os.path.join(tmp, "die-trace.json")
out = subprocess.run([hgasrun, "-n", "2", prog, "die", "1", "finalize"], env=dict(os.environ, HGAS_TRACE=path),
                     capture_output=True, text=True, timeout=200)
print(out.stdout, out.stderr)
assert out.returncode != 0, "the job with a dead rank exited 0"
assert f"hgasrun: HGAS_TRACE: {path} lacks rank(s) 1" in out.stderr, "hgasrun did not name the missing rank"
with open(path) as f:
    trace = json.load(f)
assert trace["otherData"] == {"hgas_ranks": 2, "hgas_missing_ranks": [1]}, trace["otherData"]
pids = {e["pid"] for e in trace["traceEvents"] if e["ph"] == "X"}
assert pids == {0}, pids
assert not [f for f in os.listdir(tmp) if ".rank" in f], "parts left behind"
print("ok")
