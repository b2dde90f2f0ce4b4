#!/usr/bin/env python3
"""init-plot: hgas start-up time against the number of ranks (hgas-bench --init).

usage: tools/init-plot.py [--out DIR] [--no-plots] FILE [FILE ...]

Reads the "init" records of hgas-bench-init (JSON lines; other lines are skipped): per rank
count N, init_s (first rank into hgas_init to last rank out), cpu_s (CPU time of hgas_init
summed over the ranks) and spawn_s (the launcher starting the processes). Prints a table with
the growth exponent between successive points, k in t ~ N^k (1 is linear; N log N gives a bit
over 1; 2 is quadratic), and draws DIR/init.png: both times log-log against N with N and
N log N reference lines through the first point. Without matplotlib it prints the table and
exits 0. docs/bench.md describes the records.
"""
import argparse
import json
import math
import os
import sys


def load(paths):
    recs = {}
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                for line in f:
                    line = line.strip()
                    if not line.startswith("{"):
                        continue
                    try:
                        r = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if r.get("bench") == "init" and "ranks" in r:
                        recs[int(r["ranks"])] = r  # the last record of a rank count wins
        except OSError as e:
            print(f"init-plot: cannot read {p}: {e}", file=sys.stderr)
    return [recs[n] for n in sorted(recs)]


def exponent(n0, t0, n1, t1):
    if n1 == n0 or t0 <= 0 or t1 <= 0:
        return math.nan
    return math.log(t1 / t0) / math.log(n1 / n0)


def table(recs):
    print(f"{'ranks':>6} {'init s':>9} {'k init':>7} {'cpu s':>9} {'k cpu':>7} {'cpu/rank ms':>12} {'spawn s':>9}")
    prev = None
    for r in recs:
        n, t, c = int(r["ranks"]), float(r["init_s"]), float(r.get("cpu_s", math.nan))
        ki = exponent(prev[0], prev[1], n, t) if prev else math.nan
        kc = exponent(prev[0], prev[2], n, c) if prev else math.nan
        print(f"{n:>6} {t:>9.3f} {ki:>7.2f} {c:>9.3f} {kc:>7.2f} {1e3 * c / n:>12.2f} "
              f"{float(r.get('spawn_s', math.nan)):>9.3f}")
        prev = (n, t, c)
    print("k: growth exponent from the previous row (t ~ N^k); cores on this machine: "
          f"{recs[-1].get('cores', '?') if recs else '?'}")


def plot(recs, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("init-plot: matplotlib is not installed (make bench-init installs it into the build's venv): no plot",
              file=sys.stderr)
        return 0
    os.makedirs(outdir, exist_ok=True)
    ns = [int(r["ranks"]) for r in recs]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for key, label in (("init_s", "init wall time (first rank in to last out)"),
                       ("cpu_s", "init CPU time, all ranks"), ("spawn_s", "launcher start-up (ranks entering init)")):
        ys = [float(r.get(key, math.nan)) for r in recs]
        ax.plot(ns, ys, marker="o", linewidth=2.2 if key == "init_s" else 1.3, label=label)
    t0 = float(recs[0]["init_s"])
    n0 = ns[0]
    ax.plot(ns, [t0 * n / n0 for n in ns], ":", color="gray", label="∝ N (through the first point)")
    ax.plot(ns, [t0 * (n * math.log2(max(n, 2))) / (n0 * math.log2(max(n0, 2))) for n in ns], "--", color="gray",
            label="∝ N log N")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("ranks (one machine, oversubscribed)")
    ax.set_ylabel("seconds")
    ax.set_title(f"hgas start-up against N ({recs[-1].get('cores', '?')} cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    path = os.path.join(outdir, "init.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"init-plot: {path}", file=sys.stderr)
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default=".", help="folder for init.png (default: the current folder)")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args()
    recs = load(a.files)
    if not recs:
        print("init-plot: no init records in the files given", file=sys.stderr)
        return 1
    table(recs)
    if not a.no_plots:
        plot(recs, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
