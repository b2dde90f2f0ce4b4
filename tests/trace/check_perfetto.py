"""check_perfetto.py <hgasrun> <program> <ranks> <trace_processor_shell> <dir>: runs stream_prog.c
with HGAS_TRACE and reads the merged trace with Perfetto's own trace processor (the `perfetto`
package, PyPI, over the given trace_processor_shell), checking by SQL what the Perfetto UI will
show: every rank a process; its `api` thread's spans of the calls with their bytes and path; the
sim engine's copies and combines on the rank's `sim stream 0` track, after the call that enqueued
them; one flow from every put_signal to the signal_wait_until of the rank it signalled."""
import os
import subprocess
import sys

from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

hgasrun, prog, n, shell, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
path = os.path.join(tmp, "perfetto.json")
env = dict(os.environ, HGAS_TRACE=path, HGAS_SIM_HEAP_SIZE="1M", HGAS_SIM_LATENCY_US="20")
out = subprocess.run([hgasrun, "-n", str(n), prog], env=env, capture_output=True, text=True, timeout=200)
print(out.stdout, out.stderr)
assert out.returncode == 0, f"the job failed ({out.returncode})"

tp = TraceProcessor(trace=path, config=TraceProcessorConfig(bin_path=shell))


def rows(sql):
    return list(tp.query(sql))


SPANS = """
SELECT s.id, s.name, s.ts, s.dur, t.name AS track, p.pid AS pid,
       EXTRACT_ARG(s.arg_set_id, 'args.bytes') AS bytes, EXTRACT_ARG(s.arg_set_id, 'args.path') AS path,
       EXTRACT_ARG(s.arg_set_id, 'args.op') AS op, EXTRACT_ARG(s.arg_set_id, 'args.peer') AS peer
FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) JOIN process p USING (upid)
"""
procs = {r.pid: r.name for r in rows("SELECT pid, name FROM process WHERE name LIKE 'rank %'")}
assert procs == {r: f"rank {r}" for r in range(n)}, procs
for r in range(n):
    def q(where):
        return rows(f"{SPANS} WHERE p.pid = {r} AND {where} ORDER BY s.ts")
    puts = q("s.name = 'hgas_put' AND t.name = 'api'")
    assert len(puts) == 1 and puts[0].bytes == 4096 and puts[0].peer == (r + 1) % n, [p.__dict__ for p in puts]
    assert puts[0].path in ("load/store", "transport"), puts[0].path
    copies = q("s.name = 'hgas_put' AND t.name = 'sim stream 0'")
    assert copies and sum(c.bytes for c in copies) == 4096 and all(c.op == "copy" for c in copies), copies
    # Within 200 ns: the API spans' TSC ticks become steady-clock ns at finalize (check_streams.py).
    assert all(c.ts >= puts[0].ts - 200 for c in copies), (puts[0].ts, [c.ts for c in copies])
    assert all(c.dur >= 19_900 for c in copies), [c.dur for c in copies]  # ns: the simulated 20 us
    reduces = q("t.name = 'sim stream 0' AND EXTRACT_ARG(s.arg_set_id, 'args.op') = 'reduce'")
    assert reduces and all(c.bytes == 4096 and c.name == "hgas_allreduce" for c in reduces), reduces

flows = rows("""
SELECT po.pid AS src_pid, so.name AS src, pi.pid AS dst_pid, si.name AS dst
FROM flow f
JOIN slice so ON f.slice_out = so.id JOIN thread_track o ON so.track_id = o.id
JOIN thread tho ON o.utid = tho.utid JOIN process po ON tho.upid = po.upid
JOIN slice si ON f.slice_in = si.id JOIN thread_track i ON si.track_id = i.id
JOIN thread thi ON i.utid = thi.utid JOIN process pi ON thi.upid = pi.upid
""")
assert len(flows) == n, [f.__dict__ for f in flows]
for f in flows:
    assert f.src == "hgas_put_signal" and f.dst == "hgas_signal_wait_until", f.__dict__
    assert f.dst_pid == (f.src_pid + 1) % n, f.__dict__
tp.close()
print(f"ok: trace processor read {n} ranks, their stream tracks and {len(flows)} flows")
