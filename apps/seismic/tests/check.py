#!/usr/bin/env python3
"""Checks of seismic's output (README.md, "Verification"); pure Python, no packages.

check.py explosive SEISMOGRAMS --src-i I --h H --cp CP --cs CS --f0 F0 [--t0 T0] [--arrival-max-r R]
    Receivers on the +x axis through an explosive source in a homogeneous medium record the
    radial velocity vx. The whole-space solution (Aki & Richards) for a moment rate R(t) (the
    Ricker wavelet injected) is v_r = C [R(tau) / (cp^2 r^2) + R'(tau) / (cp^3 r)],
    tau = t - t0 - r/cp. Checks, per receiver at r = (i - I - 1/2) h (vx sits half a cell
    from the stresses): the lag that best aligns the trace with that waveform is at most one
    time step (P arrival at r/cp; for r <= R: the 2nd-order scheme's dispersion delays the
    wavelet by about a time step per 400 m at 20 Hz and 10 m cells); peak |v| r is the same within 10% for two receivers a
    factor >= 4 apart (far-field 1/r decay); and around t0 + r/cs the trace stays below 5% of
    its P peak (no S arrival) where the two arrivals are apart.
check.py energy ENERGYFILE --t-quiet T
    Energy outside the PML rises while the source acts and, after time T (waves gone into
    the PML), decays: below 1e-3 of its maximum at the end, never growing by more than 1% from
    one sample to the next, and max |v| stays bounded (finite, last <= max).
"""
import math
import sys


def opt(args, name, default=None):
    if name in args:
        return float(args[args.index(name) + 1])
    if default is None:
        sys.exit(f"check.py: {name} is required")
    return default


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def read_seismograms(path):
    recs, rows = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("# seismic seismograms"):
                recs = [tuple(int(x) for x in r.split(",")) for r in line.split("(i,j,k):")[1].split()]
            elif not line.startswith("#"):
                rows.append([float(x) for x in line.split()])
    return recs, rows


def explosive(path, args):
    si, h = opt(args, "--src-i"), opt(args, "--h")
    cp, cs, f0 = opt(args, "--cp"), opt(args, "--cs"), opt(args, "--f0")
    t0 = opt(args, "--t0", 1.2 / f0)
    r_arrival = opt(args, "--arrival-max-r", float("inf"))
    recs, rows = read_seismograms(path)
    if not recs or not rows:
        fail(f"{path}: no receivers or no samples")
    dt = rows[1][0] - rows[0][0]
    a = math.pi ** 2 * f0 ** 2
    ok = True
    amp = {}
    for q, (i, j, k) in enumerate(recs):
        r = (i - si - 0.5) * h
        if r <= 0:
            continue
        trace = [row[1 + 3 * q] for row in rows]
        times = [row[0] for row in rows]

        def g(t):
            tau = t - t0 - r / cp
            e = math.exp(-a * tau * tau)
            return (1 - 2 * a * tau * tau) * e / (cp * cp * r * r) + (-6 * a * tau + 4 * a * a * tau ** 3) * e / (cp ** 3 * r)

        best, best_lag = -1.0, 0.0
        for n in range(-100, 101):  # lags of dt/20 within +-5 dt
            lag = n * dt / 20
            c = sum(v * g(t - lag) for v, t in zip(trace, times))
            if abs(c) > best:
                best, best_lag = abs(c), lag
        peak = max(abs(v) for v in trace)
        amp[i] = (r, peak)
        ts = t0 + r / cs
        window = [abs(v) for v, t in zip(trace, times) if abs(t - ts) <= 0.5 / f0]
        s_rel = max(window) / peak if window else float("nan")
        separated = r / cs - r / cp > 1.5 / f0
        line = f"r = {r:7.1f} m: P lag {best_lag / dt:+.3f} dt, peak {peak:.4e}, peak*r {peak * r:.4e}"
        if best_lag == 0 and peak == 0:
            fail(f"receiver at r = {r} m recorded nothing")
        if abs(best_lag) > dt and r <= r_arrival:
            ok = False
            line += "  <- P arrival more than one time step from r/cp"
        if separated:
            if not window:
                ok = False
                line += "  <- the run ends before t0 + r/cs"
            else:
                line += f", |v| around r/cs {s_rel:.4f} of the P peak"
                if s_rel > 0.05:
                    ok = False
                    line += "  <- S arrival"
        print(line)
    rs = sorted(amp.values())
    pairs = [(x, y) for x in rs for y in rs if y[0] >= 4 * x[0]]
    if not pairs:
        fail("no two receivers a factor 4 apart")
    for (r1, p1), (r2, p2) in pairs:
        ratio = (p2 * r2) / (p1 * r1)
        print(f"1/r: peak*r at {r2:.1f} m / at {r1:.1f} m = {ratio:.4f}")
        if abs(ratio - 1) > 0.10:
            ok = False
            print("  <- not 1/r within 10%")
    if not ok:
        fail("explosive source checks")
    print("ok: explosive source: P arrival, 1/r decay, no S")


def energy(path, args):
    t_quiet = opt(args, "--t-quiet")
    rows = []
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                rows.append([float(x) for x in line.split()])
    if len(rows) < 3:
        fail(f"{path}: fewer than 3 samples")
    es = [r[2] for r in rows]
    vs = [r[3] for r in rows]
    emax = max(es)
    if not all(math.isfinite(x) for x in es + vs) or emax <= 0:
        fail("energy not finite or never positive")
    late = [r for r in rows if r[1] >= t_quiet]
    if len(late) < 2:
        fail(f"the run ends before t = {t_quiet} s")
    for p, q in zip(late, late[1:]):
        if q[2] > p[2] * 1.01:
            fail(f"energy grows after t = {t_quiet} s: {p[2]:.4e} at step {p[0]:.0f}, {q[2]:.4e} at step {q[0]:.0f}")
    if es[-1] > 1e-3 * emax:
        fail(f"final energy {es[-1]:.4e} is more than 1e-3 of the maximum {emax:.4e}")
    if vs[-1] > max(vs):
        fail("max |v| grows")
    print(f"ok: energy max {emax:.4e}, final {es[-1]:.4e} ({es[-1] / emax:.2e} of max), decaying after t = {t_quiet} s")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("explosive", "energy"):
        sys.exit(__doc__)
    (explosive if sys.argv[1] == "explosive" else energy)(sys.argv[2], sys.argv[3:])


main()
