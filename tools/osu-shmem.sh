#!/usr/bin/env bash
# Builds and runs the OSU micro-benchmarks' OpenSHMEM programs against hgas's OpenSHMEM front
# end and, when given, against another OpenSHMEM (the peer: Open MPI's oshcc/oshrun) in the same
# run, and prints each row of both side by side with the ratio.
#
# usage: tools/osu-shmem.sh OSU_DIR --out DIR [--bin BUILD/bin] [--np N] [--peer-bin DIR]
#                           [--only "put get ..."] [--timeout S]
#   OSU_DIR   the `openshmem` folder of an OSU micro-benchmarks source tree (5.x: osu_oshm_*.c and
#             osu_common.c). The benchmarks are not part of hgas: fetch them yourself.
#   --bin     where hgas's oshcc and oshrun are (default build/bin)
#   --peer-bin  where the peer's oshcc and oshrun are (e.g. /usr/bin); omitted: hgas only
#   --np      PEs per run (default 2); --timeout: seconds per program (default 120)
#   --only    benchmarks to run (default: put get put_mr atomics barrier broadcast collect fcollect reduce)
#
# Writes DIR/{hgas,peer}/<bench>.log, DIR/table.txt and DIR/results.json. Latency rows compare
# hgas/peer (below 1: hgas faster); message-rate rows (put_mr) compare hgas/peer too (above 1:
# hgas faster); `table.txt` says which. Benchmarks that take a heap|global argument use the heap.
# Exit status: 0 when every hgas program ran and exited 0 (a failing peer is reported, not fatal).
set -u
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
OSU=$1; shift
BIN=build/bin PEER= NP=2 OUT= TMO=120
ONLY="put get put_mr atomics barrier broadcast collect fcollect reduce"
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) BIN=$2; shift ;;
    --peer-bin) PEER=$2; shift ;;
    --np) NP=$2; shift ;;
    --out) OUT=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --timeout) TMO=$2; shift ;;
    *) echo "osu-shmem: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$OUT" ] || { echo "osu-shmem: --out DIR is required" >&2; exit 2; }
[ -f "$OSU/osu_common.c" ] || { echo "osu-shmem: $OSU has no osu_common.c: give the openshmem folder of an OSU micro-benchmarks tree" >&2; exit 2; }
[ -x "$BIN/oshcc" ] || { echo "osu-shmem: no $BIN/oshcc: build hgas first (make build) or pass --bin" >&2; exit 2; }
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)

# impl NAME OSHCC OSHRUN EXTRA_RUN_FLAGS...: builds and runs every benchmark; 1 if any failed.
impl() {
    local name=$1 cc=$2 run=$3; shift 3
    local dir=$OUT/$name bad=0
    mkdir -p "$dir"
    for b in $ONLY; do
        local src=$OSU/osu_oshm_$b.c
        [ -f "$src" ] || { echo "osu-shmem: $src does not exist" >&2; bad=1; continue; }
        if ! "$cc" -O2 -w -o "$dir/$b" "$src" "$OSU/osu_common.c" -lm >"$dir/$b.build.log" 2>&1; then
            echo "osu-shmem: $name: building $b failed ($dir/$b.build.log)" >&2; bad=1; continue
        fi
        local args=()
        grep -q '"heap"' "$src" && args=(heap)
        timeout -k 5 "$TMO" "$run" "$@" -np "$NP" "$dir/$b" "${args[@]}" >"$dir/$b.log" 2>&1
        local st=$?
        [ $st = 0 ] || { echo "osu-shmem: $name: $b failed or timed out (status $st; $dir/$b.log)" >&2; bad=1; }
    done
    return $bad
}

rc=0
impl hgas "$BIN/oshcc" "$BIN/oshrun" || rc=1
if [ -n "$PEER" ]; then
    extra=()
    # Open MPI refuses to start as root unless told; its oshrun is mpirun.
    [ "$(id -u)" = 0 ] && "$PEER/oshrun" --help 2>&1 | grep -q allow-run-as-root && extra=(--allow-run-as-root)
    # More PEs than cores: Open MPI refuses to start them unless told to oversubscribe.
    [ "$NP" -gt "$(nproc)" ] && extra+=(--oversubscribe)
    impl peer "$PEER/oshcc" "$PEER/oshrun" "${extra[@]}" || echo "osu-shmem: the peer had failures (see above)" >&2
fi

python3 - "$OUT" "$ONLY" "$NP" <<'PY'
import json, os, re, sys
out, only, np_ = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])

def rows(path):
    """(key, value) of an OSU log: `size value` rows, `name rate latency` rows (atomics: the
    latency, the last column), or one number (barrier)."""
    res = {}
    try:
        text = open(path).read()
    except OSError:
        return res
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^\s*(\S+)((?:\s+[0-9.]+)+)\s*$", line)
        if m:
            res[m.group(1)] = float(m.group(2).split()[-1])
        elif re.match(r"^\s*[0-9.]+\s*$", line):  # barrier: one number, no size
            res["latency"] = float(line)
    return res

results, lines = [], []
for b in only:
    h, p = rows(f"{out}/hgas/{b}.log"), rows(f"{out}/peer/{b}.log")
    rate = b.endswith("_mr")
    unit = "messages/s" if rate else "us"
    lines.append(f"== osu_oshm_{b}, {np_} PEs ({unit}; ratio hgas/peer: {'above 1 = hgas faster' if rate else 'below 1 = hgas faster'})")
    lines.append(f"{'row':>24} {'hgas':>12} {'peer':>12} {'ratio':>7}")
    for k, v in h.items():
        pv = p.get(k)
        ratio = v / pv if pv else None
        lines.append(f"{k:>24} {v:12.2f} {pv if pv is not None else float('nan'):12.2f} "
                     f"{ratio if ratio is not None else float('nan'):7.2f}")
        results.append({"bench": b, "row": k, "unit": unit, "hgas": v, "peer": pv, "ratio": ratio, "pes": np_})
    if not h:
        lines.append("   (no rows from hgas: see the log)")
open(f"{out}/table.txt", "w").write("\n".join(lines) + "\n")
json.dump(results, open(f"{out}/results.json", "w"), indent=1)
print("\n".join(lines))
PY
exit $rc
