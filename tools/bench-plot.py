#!/usr/bin/env python3
"""bench-plot: plots of hgas benchmark results and their peers, and the hgas/peer ratio table.

usage: tools/bench-plot.py [--out DIR] [--no-plots] [--csv FILE] FILE [FILE ...]

Reads JSON lines (what bench/ and bench/gpu/ programs print; lines that are not JSON objects,
such as the "# " table, are skipped) and hgas-bench --json documents (their "results").
Draws one PNG per (bench, direction), log-log over message size: latency (median_us) or
bandwidth (gbps), one line per (peer, path, host memory). Records without a direction (the CPU
benchmarks) are grouped by transport. Prints, when hgas (impl "hgas") and a peer measured the
same (bench, direction, bytes), the ratio hgas / best peer: for latency lower is better, for
bandwidth higher is better. Without matplotlib it prints the table, says so and exits 0.
docs/bench.md describes the records.
"""
import argparse
import json
import math
import os
import re
import sys
from collections import defaultdict


def load(paths):
    """All result records of the files, each a dict with at least bench and bytes."""
    out = []
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            print(f"bench-plot: cannot read {p}: {e}", file=sys.stderr)
            continue
        recs = None
        stripped = text.lstrip()
        if stripped.startswith("{") or stripped.startswith("["):
            try:
                doc = json.loads(text)
                if isinstance(doc, dict) and isinstance(doc.get("results"), list):
                    recs = doc["results"]
                elif isinstance(doc, list):
                    recs = doc
                elif isinstance(doc, dict):
                    recs = [doc]
            except json.JSONDecodeError:
                recs = None
        if recs is None:
            recs = []
            for line in text.splitlines():
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        n = 0
        for r in recs:
            if isinstance(r, dict) and "bench" in r and "bytes" in r:
                r["_file"] = p
                out.append(r)
                n += 1
        print(f"bench-plot: {p}: {n} records", file=sys.stderr)
    return out


def is_bw(r):
    return "gbps" in r


def value(r):
    return float(r["gbps"] if is_bw(r) else r["median_us"])


def direction(r):
    """The records' direction; device-initiated operations (kernels) apart from host-initiated."""
    d = r.get("direction") or ("host/" + str(r.get("transport", "?")))
    return d + "/device" if r.get("initiator") == "device" else d


def is_hgas(r):
    return r.get("impl") == "hgas"


def is_limit(r):
    """A hardware limit measured in the same run (raw stores, a raw flag): drawn, never a peer."""
    path = r.get("path", "")
    return r.get("impl") == "cuda" and ("raw limit" in path or "peak" in path)


def line_label(r):
    who = r.get("peer") or r.get("impl", "?")
    if is_hgas(r):
        who = "hgas"
    what = r.get("path") or r.get("transport", "")
    label = f"{who}: {what}" if what else who
    # A run of the same program over another path (--transport staged, say) is a line of its own:
    # its records must not replace the default run's in the ratio table.
    t = r.get("transport")
    if r.get("path") and t and t not in ("gpu", r.get("path")):
        label += f" [{t}]"
    if r.get("host_mem"):
        label += f" [{r['host_mem']}]"
    return label


def size_str(b):
    b = int(b)
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return f"{b >> 20}M"
    if b >= 1024 and b % 1024 == 0:
        return f"{b >> 10}K"
    return str(b)


def groups(recs):
    """(bench, direction, metric) -> {label: {bytes: record}}; the last record of a point wins."""
    g = defaultdict(lambda: defaultdict(dict))
    for r in recs:
        try:
            value(r)
        except (KeyError, TypeError, ValueError):
            continue
        key = (r["bench"], direction(r), "bw" if is_bw(r) else "lat")
        g[key][line_label(r)][int(r["bytes"])] = r
    return g


def ratio_rows(g):
    rows = []
    for (bench, d, metric), lines in sorted(g.items()):
        hg = {lab: pts for lab, pts in lines.items() if any(is_hgas(r) for r in pts.values())}
        peers = {lab: pts for lab, pts in lines.items()
                 if lab not in hg and not any(is_limit(r) for r in pts.values())}
        if not hg or not peers:
            continue
        for hlab, hpts in sorted(hg.items()):
            for b, hr in sorted(hpts.items()):
                cands = [(value(p[b]), lab) for lab, p in peers.items() if b in p]
                if not cands:
                    continue
                best = max(cands) if metric == "bw" else min(cands)
                hv = value(hr)
                ratio = hv / best[0] if best[0] > 0 else math.nan
                rows.append(dict(bench=bench, direction=d, bytes=b, metric=metric, hgas=hlab, hgas_value=hv,
                                 peer=best[1], peer_value=best[0], ratio=ratio,
                                 better="higher" if metric == "bw" else "lower",
                                 verified=bool(hr.get("verified", True))))
    return rows


def print_ratios(rows, csv_path=None):
    if not rows:
        print("bench-plot: no (bench, direction, size) measured by both hgas and a peer: no ratio table")
        return
    print("\nhgas / best peer (latency: lower is better; bandwidth: higher is better)")
    print(f"{'bench':<15} {'direction':<9} {'bytes':>6} {'hgas':>12} {'best peer':>12} {'ratio':>7}  peer / hgas line")
    for r in rows:
        unit = "GB/s" if r["metric"] == "bw" else "us"
        print(f"{r['bench']:<15} {r['direction']:<9} {size_str(r['bytes']):>6} "
              f"{r['hgas_value']:>8.3f} {unit:<4}{r['peer_value']:>8.3f} {unit:<4}{r['ratio']:>7.2f}  "
              f"{r['peer']} / {r['hgas']}{'' if r['verified'] else '  (hgas data check FAILED)'}")
    if csv_path:
        with open(csv_path, "w", encoding="utf-8") as f:
            f.write("bench,direction,bytes,metric,hgas,hgas_value,peer,peer_value,ratio,better\n")
            for r in rows:
                f.write(",".join(str(r[k]).replace(",", ";") for k in
                                 ("bench", "direction", "bytes", "metric", "hgas", "hgas_value", "peer",
                                  "peer_value", "ratio", "better")) + "\n")


def plot(g, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench-plot: matplotlib is not installed (python3 -m pip install matplotlib): no plots drawn",
              file=sys.stderr)
        return 0
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for (bench, d, metric), lines in sorted(g.items()):
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for lab, pts in sorted(lines.items(), key=lambda kv: (not kv[0].startswith("hgas"), kv[0])):
            xs = sorted(pts)
            ys = [value(pts[x]) for x in xs]
            style = dict(linewidth=2.4) if lab.startswith("hgas") else dict(linewidth=1.3)
            bad = [x for x in xs if not pts[x].get("verified", True)]
            ax.plot(xs, ys, marker="o", markersize=3.5, label=lab + (" (CHECK FAILED)" if bad else ""), **style)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bandwidth (GB/s, 1e9 B/s)" if metric == "bw" else "latency (µs)")
        ax.set_title(f"{bench}, {d}")
        ax.grid(True, which="both", alpha=0.3)
        ticks = sorted({b for pts in lines.values() for b in pts})
        if len(ticks) > 12:
            step = math.ceil(len(ticks) / 12)
            ticks = ticks[::step]
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_str(t) for t in ticks], rotation=45)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{bench}_{d}") + ".png"
        fig.savefig(os.path.join(outdir, name), dpi=110)
        plt.close(fig)
        n += 1
    print(f"bench-plot: {n} plot(s) in {outdir}", file=sys.stderr)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="JSON-lines files or hgas-bench --json documents")
    ap.add_argument("--out", default="plots", help="folder for the PNG files (default: plots)")
    ap.add_argument("--no-plots", action="store_true", help="only the ratio table")
    ap.add_argument("--csv", help="also write the ratio table as CSV")
    a = ap.parse_args()
    recs = load(a.files)
    if not recs:
        print("bench-plot: no result records in the files given", file=sys.stderr)
        return 1
    g = groups(recs)
    print_ratios(ratio_rows(g), a.csv)
    if not a.no_plots:
        plot(g, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
