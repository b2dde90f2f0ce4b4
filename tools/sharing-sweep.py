#!/usr/bin/env python3
"""Several ranks on one GPU, every sharing mode (docs/sharing.md): runs himeno and NAS FT/MG with
1, 2, 4, 8 ranks per GPU under each HGAS_GPU_SHARING mode, all ranks on the first GPU
(CUDA_VISIBLE_DEVICES), and records per run the time per iteration, the GPU's utilization
(nvidia-smi sampled every 100 ms during the run) and what sharing costs:

  sharing overhead  time per iteration with r ranks / with 1 rank (same app, same mode; for
                    threads and funneled, process's 1 rank) - 1:
                    the problem is the same (strong scaling), so the GPU has the same work; what
                    r ranks add is context switching between the processes' time slices (mode
                    process), the ranks' communication and their launches
  CPU switches/it   voluntary + involuntary context switches of all the job's processes
                    (getrusage of the waited-for children) per iteration

Writes results.jsonl, table.txt and one PNG per app (time per iteration against ranks per GPU,
one line per mode, the style of the seed figures on FT and MG), plus utilization.png.

  tools/sharing-sweep.py --bin build-gpu/bin --out gpu-out/sharing              # on a GPU machine
  tools/sharing-sweep.py --kind sim --ranks 1,2 --apps ft,mg --out build/sharing  # dry run, no GPU

Modes that this build cannot run (threads and funneled need ranks as threads; mps needs
nvidia-cuda-mps-control) are recorded as not run, with hgasrun's reason. --budget S stops
starting runs once S seconds have passed (the runs left are listed as not run).
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODES = ["process", "mps", "threads", "funneled"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build/bin"), help="folder of hgasrun, himeno, nas-ft, nas-mg")
    p.add_argument("--apps", default="himeno,ft,mg,matmul", help="comma list of himeno, ft, mg, matmul")
    p.add_argument("--ranks", default="1,2,4,8", help="ranks per GPU")
    p.add_argument("--modes", default=",".join(MODES), help="comma list of " + ", ".join(MODES))
    p.add_argument("--kind", default="cuda", help="cuda (the GPU; himeno in mode kernel) or sim (a dry run "
                   "without a GPU: himeno in mode cpu with sim halos, NAS with --kind sim)")
    p.add_argument("--himeno-size", default="M", help="himeno --size (default M)")
    p.add_argument("--himeno-iters", type=int, default=400, help="himeno --iters (default 400)")
    p.add_argument("--nas-class", default="B", help="NAS class for FT and MG (default B)")
    p.add_argument("--matmul-n", type=int, default=8192, help="matmul --n (default 8192)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per run")
    p.add_argument("--budget", type=float, default=0, help="seconds for the whole sweep (0: no limit)")
    p.add_argument("--out", default="sharing-sweep", help="output folder")
    return p.parse_args()


class Sampler:
    """Mean and peak GPU utilization (nvidia-smi, 100 ms) of GPU `gpu` while a run lasts."""

    def __init__(self, gpu):
        self.samples, self.proc = [], None
        if shutil.which("nvidia-smi"):
            self.proc = subprocess.Popen(["nvidia-smi", "-i", str(gpu), "--query-gpu=utilization.gpu",
                                          "--format=csv,noheader,nounits", "-lms", "100"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.t = threading.Thread(target=self._read, daemon=True)
            self.t.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.samples.append(float(line.strip()))
            except ValueError:
                pass

    def stop(self):
        if not self.proc:
            return None, None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.t.join(timeout=2)
        # The first samples cover the start-up (no kernels yet); keep the middle of the run.
        s = self.samples[len(self.samples) // 5:] or self.samples
        return (sum(s) / len(s), max(s)) if s else (None, None)


# Programs whose threads each call hgas_init when HGAS_THREADS is set (ranks as threads,
# docs/threads.md): only they can run the modes threads and funneled. The others call
# hgas_init once per process.
THREADED_APPS = {"matmul"}


def command(a, app, n):
    b = a.bin
    if app == "matmul":
        return [os.path.join(b, "matmul"), "--kind", a.kind, "--n", str(a.matmul_n), "--reps", "3"]
    if app == "himeno":
        cmd = [os.path.join(b, "himeno"), "--size", a.himeno_size, "--iters", str(a.himeno_iters)]
        # On the GPU: mode kernel (its halo buffers are its own choice); the dry run: the CPU
        # stencil with sim halo buffers.
        return cmd + (["--mode", "kernel"] if a.kind == "cuda" else ["--mode", "cpu", "--kind", a.kind])
    prog = os.path.join(b, "nas-ft" if app == "ft" else "nas-mg")
    return [prog, "--class", a.nas_class, "--kind", a.kind]


def per_iter(app, rec):
    if app == "matmul":
        return rec.get("time_s")  # one product
    if app == "himeno":
        return rec.get("time_per_iter_s")
    it = rec.get("niter") or rec.get("iterations")
    return rec["time_s"] / it if it and rec.get("time_s") else None


def hgasrun_has_threads(hgasrun):
    """Whether this hgasrun starts ranks as threads (else it refuses those modes, saying why)."""
    p = subprocess.run([hgasrun, "--help"], capture_output=True, text=True)
    return "--threads" in p.stdout + p.stderr


def run_one(a, app, mode, n):
    hgasrun = os.path.join(a.bin, "hgasrun")
    jsonl = os.path.join(a.out, f"{app}.records.jsonl")
    cmd = [hgasrun, "-n", str(n), "--timeout", str(a.timeout)]
    if mode in ("threads", "funneled"):
        why = ("one rank: the same as process" if n == 1 else
               f"{app} runs one rank per process (it calls hgas_init once); ranks as threads need a program "
               "whose threads each call hgas_init, as matmul's do" if app not in THREADED_APPS else "")
        if why:
            return {"app": app, "mode": mode, "ranks": n, "kind": a.kind, "rc": None, "not_run": why}
        if hgasrun_has_threads(hgasrun):
            cmd += ["--threads", str(n)]  # the n ranks as threads of one process
    cmd += command(a, app, n) + ["--json", jsonl]
    env = dict(os.environ, HGAS_GPU_SHARING=mode)
    if a.kind == "cuda":
        env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
        # nas-mg sizes its heap itself; nas-ft class B needs 4 GiB on one rank (its arrays and
        # the transposes' buffers), a share of that on more; matmul its three arrays' tiles.
        if app == "ft":
            env.setdefault("HGAS_CUDA_HEAP_SIZE", f"{max(1, 4 // n)}G")
        elif app == "matmul":
            env.setdefault("HGAS_CUDA_HEAP_SIZE", f"{max(1, (3 * 8 * a.matmul_n ** 2 // n) // 2 ** 30 + 1)}G")
        elif app != "mg":
            env.setdefault("HGAS_CUDA_HEAP_SIZE", "1G")
    else:
        env.setdefault("HGAS_SIM_HEAP_SIZE", "1G")
    print("sharing-sweep:", f"HGAS_GPU_SHARING={mode}", " ".join(cmd), file=sys.stderr, flush=True)
    sampler = Sampler(0) if a.kind == "cuda" else None
    size0 = os.path.getsize(jsonl) if os.path.exists(jsonl) else 0
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                           timeout=a.timeout + 30)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), 124
    wall = time.time() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    util, peak = sampler.stop() if sampler else (None, None)
    recs = [json.loads(l[5:]) for l in out.splitlines() if l.startswith("JSON ")]
    if not recs and rc == 0 and os.path.exists(jsonl):  # programs that write records only to --json
        with open(jsonl) as f:
            f.seek(size0)
            recs = [json.loads(l) for l in f.read().splitlines() if l.strip()]
    row = {"app": app, "mode": mode, "ranks": n, "kind": a.kind, "rc": rc, "wall_s": wall,
           "gpu_util_pct": util, "gpu_util_peak_pct": peak}
    if rc != 0 or not recs:
        lines = [l for l in out.strip().splitlines() if not l.startswith("JSON ")]
        row["not_run"] = (lines or ["no output"])[-1][:300]
        print(f"  {app} {mode} {n} ranks: not run (exit {rc}: {row['not_run']})", file=sys.stderr)
        return row
    rec = recs[-1]
    t = per_iter(app, rec)
    iters = (a.himeno_iters if app == "himeno" else rec.get("niter") or rec.get("iterations") or rec.get("reps")) or 1
    switches = (ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw)
    row.update({"time_per_iter_s": t, "verified": rec.get("verified"), "cpu_switches_per_iter": switches / iters,
                "record": rec})
    return row


def fmt(v, scale=1.0, f="{:.3f}"):
    return "-" if v is None else f.format(v * scale)


def table(rows):
    head = f"{'app':<7} {'mode':<9} {'ranks':>5} {'ms/iter':>9} {'overhead':>9} {'GPU util %':>10} {'peak %':>7} " \
           f"{'CPU sw/it':>9}  note"
    lines = [head, "-" * len(head)]
    base = {(r["app"], r["mode"]): r.get("time_per_iter_s") for r in rows if r["ranks"] == 1}
    for r in rows:
        t = r.get("time_per_iter_s")
        # one rank as threads is one process: the threads modes' base is process's 1-rank run
        b = base.get((r["app"], r["mode"])) or base.get((r["app"], "process"))
        over = f"{100 * (t / b - 1):+.1f}%" if t and b else "-"
        # hgasrun's reason, without its advice (the same on every row)
        note = "not run: " + r["not_run"].split("; use ")[0].replace("hgasrun: ", "") if "not_run" in r else \
            ("NOT VERIFIED" if r.get("verified") is False else "")
        lines.append(f"{r['app']:<7} {r['mode']:<9} {r['ranks']:>5} {fmt(t, 1e3):>9} {over:>9} "
                     f"{fmt(r.get('gpu_util_pct'), 1, '{:.0f}'):>10} {fmt(r.get('gpu_util_peak_pct'), 1, '{:.0f}'):>7} "
                     f"{fmt(r.get('cpu_switches_per_iter'), 1, '{:.1f}'):>9}  {note}")
    return "\n".join(lines)


def plots(rows, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plots: matplotlib is not importable here; skipped (table.txt and results.jsonl have the data)")
        return
    apps = list(dict.fromkeys(r["app"] for r in rows))
    for metric, ylabel, name in (("time_per_iter_s", "time per iteration (ms)", "time"),
                                 ("gpu_util_pct", "GPU utilization (%)", "utilization")):
        fig, axes = plt.subplots(1, len(apps), figsize=(5 * len(apps), 4), squeeze=False)
        drew = False
        for ax, app in zip(axes[0], apps):
            for mode in dict.fromkeys(r["mode"] for r in rows):
                pts = [(r["ranks"], r.get(metric)) for r in rows
                       if r["app"] == app and r["mode"] == mode and r.get(metric) is not None]
                if not pts:
                    continue
                xs, ys = zip(*pts)
                ax.plot(xs, [y * 1e3 if metric == "time_per_iter_s" else y for y in ys], marker="o", label=mode)
                drew = True
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted({r["ranks"] for r in rows}))
            ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.set_xlabel("ranks sharing one GPU")
            ax.set_ylabel(ylabel)
            ax.set_title(app)
            ax.legend(title="HGAS_GPU_SHARING")
        fig.tight_layout()
        if drew:
            fig.savefig(os.path.join(out, f"sharing-{name}.png"), dpi=110)
            print(f"plots: {os.path.join(out, f'sharing-{name}.png')}")
        plt.close(fig)


def main():
    a = parse_args()
    os.makedirs(a.out, exist_ok=True)
    a.out = os.path.abspath(a.out)
    for m in a.modes.split(","):
        if m not in MODES:
            sys.exit(f"sharing-sweep: --modes: '{m}' is not one of {', '.join(MODES)}")
    if not os.access(os.path.join(a.bin, "hgasrun"), os.X_OK):
        sys.exit(f"sharing-sweep: {a.bin}/hgasrun is missing; pass --bin (the build's bin folder)")
    t_start = time.time()
    rows = []
    for app in a.apps.split(","):
        for mode in a.modes.split(","):
            for n in [int(x) for x in a.ranks.split(",")]:
                if a.budget and time.time() - t_start > a.budget:
                    rows.append({"app": app, "mode": mode, "ranks": n, "kind": a.kind, "rc": None,
                                 "not_run": f"the time budget (--budget {a.budget:g} s) is spent"})
                    continue
                rows.append(run_one(a, app, mode, n))
                if rows[-1].get("not_run", "").find("needs ranks as threads") >= 0 or \
                        rows[-1].get("not_run", "").find("is not on the PATH") >= 0:
                    # The same refusal for every rank count: say it once per mode.
                    for m in [int(x) for x in a.ranks.split(",")]:
                        if m != n:
                            rows.append(dict(rows[-1], ranks=m))
                    break
    rows.sort(key=lambda r: (a.apps.split(",").index(r["app"]), MODES.index(r["mode"]), r["ranks"]))
    with open(os.path.join(a.out, "results.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    t = table(rows)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(t + "\n")
    print(t)
    plots(rows, a.out)
    bad = [r for r in rows if "not_run" not in r and r.get("verified") is False]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
