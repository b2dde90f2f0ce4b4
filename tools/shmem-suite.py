#!/usr/bin/env python3
"""Builds and runs an external OpenSHMEM test suite against hgas's OpenSHMEM front end.

The suite is not part of hgas: point this at a checkout laid out like Sandia OpenSHMEM's
tests (folders with an automake `Makefile.am` listing `check_PROGRAMS`, shared headers in
`<suite>/include`). Each C/C++ program of the chosen folders is built with the build tree's
`oshcc`/`oshc++` and run with `oshrun -np N` under a timeout; the pass rate per PE count is
printed and every result is written to `<work>/results.tsv`, every log to `<work>/logs/`.

  tools/shmem-suite.py /tmp/sos/test --bin build/bin --np 2 4 --work /tmp/suite
  tools/shmem-suite.py /tmp/sos/test --only unit/atomic_nbi --np 2   # one program

Which programs: `check_PROGRAMS` of each Makefile.am, with the conditional blocks a C/C++
build with threads, OpenMP and C11 enables (`HAVE_CXX`, `HAVE_PTHREADS`, `HAVE_OPENMP`,
`HAVE_C11`, and `!USE_PMI_MPI`); Fortran, profiling, MPI-hybrid and lengthy blocks are off.
Not part of CI: the suite is external and runs for minutes.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

ENABLED = {"HAVE_CXX", "HAVE_PTHREADS", "HAVE_OPENMP", "HAVE_C11"}
DISABLED_NEGATED = {"USE_PMI_MPI"}  # `if !USE_PMI_MPI` blocks are on
FLAG_MAP = {"$(PTHREAD_CFLAGS)": "-pthread", "$(AM_OPENMP_CFLAGS)": "-fopenmp"}


def parse_makefile(path):
    """Returns (programs, per-program variables) of a Makefile.am under ENABLED."""
    text = open(path).read().replace("\\\n", " ")
    progs, vars_ = [], {}
    stack = []  # one bool per open `if`: is this branch on?
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"if\s+(!?)(\w+)$", line)
        if m:
            neg, cond = m.group(1) == "!", m.group(2)
            on = (cond not in DISABLED_NEGATED) if neg else (cond in ENABLED)
            stack.append(on)
            continue
        if line == "else":
            stack[-1] = not stack[-1]
            continue
        if line == "endif":
            stack.pop()
            continue
        if not all(stack):
            continue
        m = re.match(r"(\w+)\s*(\+?=)\s*(.*)$", line)
        if not m:
            continue
        name, op, value = m.groups()
        if name == "check_PROGRAMS":
            if op == "=":
                progs = []
            progs += value.split()
        else:
            vars_[name] = value
    return progs, vars_


def collect(suite, dirs):
    tests = []
    for d in dirs:
        mk = os.path.join(suite, d, "Makefile.am")
        if not os.path.exists(mk):
            sys.exit(f"shmem-suite: {mk} does not exist (is {suite} the suite's test folder?)")
        progs, vars_ = parse_makefile(mk)
        for p in progs:
            key = re.sub(r"[^\w]", "_", p)
            srcs = vars_.get(key + "_SOURCES", p + ".c").split()
            srcs = [s for s in srcs if not s.endswith(".h")]
            if any(s.endswith((".f90", ".f")) for s in srcs):
                continue
            flags = vars_.get(key + "_CFLAGS", "")
            for k, v in FLAG_MAP.items():
                flags = flags.replace(k, v)
            tests.append((f"{d}/{p}", os.path.join(suite, d), srcs, flags.split()))
    return tests


def build(test, bindir, work, suite, extra):
    name, folder, srcs, flags = test
    exe = os.path.join(work, "bin", name.replace("/", "__"))
    cxx = any(s.endswith(".cpp") for s in srcs)
    cc = os.path.join(bindir, "oshc++" if cxx else "oshcc")
    cmd = [cc, "-O1", "-I", os.path.join(suite, "include"), "-o", exe] + extra + flags
    cmd += [os.path.join(folder, s) for s in srcs]
    if "-pthread" in flags:
        cmd.append("-pthread")
    r = subprocess.run(cmd, capture_output=True, text=True)
    return exe if r.returncode == 0 else None, " ".join(cmd) + "\n" + r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite", help="the suite's test folder (holds unit/, spec-example/, apps/, include/)")
    ap.add_argument("--bin", default="build/bin", help="folder with oshcc, oshc++, oshrun")
    ap.add_argument("--dirs", nargs="+", default=["unit", "spec-example", "apps"])
    ap.add_argument("--np", nargs="+", type=int, default=[2, 4])
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    ap.add_argument("--work", default="/tmp/hgas-shmem-suite")
    ap.add_argument("--cflags", default="", help="more compiler flags, e.g. -DENABLE_DEPRECATED_TESTS")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="programs built and run at once")
    ap.add_argument("--only", nargs="*", help="run only these (folder/program)")
    a = ap.parse_args()
    bindir = os.path.abspath(a.bin)
    os.makedirs(os.path.join(a.work, "bin"), exist_ok=True)
    os.makedirs(os.path.join(a.work, "logs"), exist_ok=True)
    tests = collect(a.suite, a.dirs)
    if a.only:
        tests = [t for t in tests if t[0] in a.only]
    def one(t):
        exe, log = build(t, bindir, a.work, a.suite, a.cflags.split())
        base = os.path.join(a.work, "logs", t[0].replace("/", "__"))
        open(base + ".build.log", "w").write(log)
        out = []
        for n in a.np:
            if exe is None:
                out.append((t[0], n, "BUILD", 0.0))
                print(f"{'BUILD':10} n{n} {0.0:6.1f}s {t[0]}", flush=True)
                continue
            start = time.time()
            try:
                r = subprocess.run([os.path.join(bindir, "oshrun"), "-np", str(n), exe],
                                   capture_output=True, text=True, timeout=a.timeout,
                                   stdin=subprocess.DEVNULL)
                status, log_text = ("PASS" if r.returncode == 0 else f"FAIL({r.returncode})"), r.stdout + r.stderr
            except subprocess.TimeoutExpired as e:
                status = "TIMEOUT"
                log_text = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
            secs = time.time() - start
            open(f"{base}.n{n}.log", "w").write(log_text)
            out.append((t[0], n, status, secs))
            print(f"{status:10} n{n} {secs:6.1f}s {t[0]}", flush=True)
        return out

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = [r for rs in pool.map(one, tests) for r in rs]
    with open(os.path.join(a.work, "results.tsv"), "w") as f:
        for r in results:
            f.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]:.1f}\n")
    for n in a.np:
        rs = [r for r in results if r[1] == n]
        ok = sum(r[2] == "PASS" for r in rs)
        print(f"n{n}: {ok}/{len(rs)} passed ({100.0 * ok / max(len(rs), 1):.1f}%)")
    ok = sum(r[2] == "PASS" for r in results)
    print(f"all: {ok}/{len(results)} passed ({100.0 * ok / max(len(results), 1):.1f}%)")
    for r in results:
        if r[2] != "PASS":
            print(f"  {r[2]:10} n{r[1]} {r[0]}")


if __name__ == "__main__":
    main()
