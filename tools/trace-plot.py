#!/usr/bin/env python3
"""trace-plot.py TRACE.json [-o out.png] [--from US] [--to US] [--min-us US]: draws the timeline
of an HGAS_TRACE file (docs/trace.md) as a PNG, for when the Perfetto UI is not at hand: one row
per track (rank / thread), a bar per span coloured by call, the put_signal -> wait arrows.
Needs matplotlib."""
import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", default=None, help="PNG to write (default: TRACE with .png)")
    ap.add_argument("--from", dest="t0", type=float, default=None, help="start of the window, us")
    ap.add_argument("--to", dest="t1", type=float, default=None, help="end of the window, us")
    ap.add_argument("--min-us", type=float, default=0.0, help="leave out spans shorter than this")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("trace-plot: needs matplotlib (pip install -r requirements-bench-python.txt)", file=sys.stderr)
        return 2
    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X" and e["dur"] >= a.min_us
             and (a.t0 is None or e["ts"] + e["dur"] >= a.t0) and (a.t1 is None or e["ts"] <= a.t1)]
    if not spans:
        print(f"trace-plot: no spans in {a.trace} (window or --min-us too narrow?)", file=sys.stderr)
        return 1
    tracks = sorted({(e["pid"], e["tid"]) for e in spans})
    row = {t: i for i, t in enumerate(tracks)}
    names = sorted({e["name"] for e in spans})
    cmap = plt.get_cmap("tab20")
    colour = {n: cmap(i % 20) for i, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(14, 1.0 + 0.5 * len(tracks)))
    for n in names:
        mine = [e for e in spans if e["name"] == n]
        for e in mine:
            ax.broken_barh([(e["ts"], max(e["dur"], 1e-3))], (row[(e["pid"], e["tid"])] - 0.4, 0.8),
                           facecolors=colour[n])
        ax.plot([], [], color=colour[n], linewidth=6, label=n.replace("hgas_", ""))
    # flow arrows (start and finish share an id): from the put's start to the end of the wait
    # that saw its signal, the spans the flow events fall in
    def enclosing(e):
        inside = [s for s in spans if s["pid"] == e["pid"] and s["tid"] == e["tid"]
                  and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
        return min(inside, key=lambda s: s["dur"]) if inside else None
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    for e in events:
        s = starts.get(e.get("id")) if e["ph"] == "f" else None
        if not s or (s["pid"], s["tid"]) not in row or (e["pid"], e["tid"]) not in row:
            continue
        put, wait = enclosing(s), enclosing(e)
        x0 = put["ts"] if put else s["ts"]
        x1 = wait["ts"] + wait["dur"] if wait else e["ts"]
        if (a.t0 is None or x0 >= a.t0) and (a.t1 is None or x1 <= a.t1):
            ax.annotate("", xy=(x1, row[(e["pid"], e["tid"])]), xytext=(x0, row[(s["pid"], s["tid"])]),
                        arrowprops=dict(arrowstyle="->", color="black", linewidth=0.6, alpha=0.6))
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([f"rank {p} {tname.get((p, t), t)}" for p, t in tracks])
    ax.invert_yaxis()
    ax.set_xlabel("time since the end of init (us)")
    if a.t0 is not None or a.t1 is not None:
        ax.set_xlim(a.t0, a.t1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, ncol=1 + len(names) // 25)
    ax.set_title(a.trace.rsplit("/", 1)[-1])
    fig.tight_layout()
    out = a.output or a.trace.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=110)
    print(f"trace-plot: {len(spans)} spans on {len(tracks)} tracks -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
