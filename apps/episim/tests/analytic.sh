#!/usr/bin/env bash
# analytic.sh HGASRUN EPISIM [RANKS [EXTRA ARGS]]: N persons all day at one location, I of them
# infectious, every modifier 1: the expected new infections of the day are
#   contact probability 1:   S * (1 - exp(-tau * I))
#   contact probability 0.5: S * (1 - ((1 + exp(-tau)) / 2)^I)
# Each susceptible is infected independently (probability p), so over M seeds the mean count
# has standard deviation sqrt(S p (1 - p) / M): the mean must lie within 3 of them. The
# formula of the other case must be rejected (the check can fail).
set -u
HGASRUN=$1 EPISIM=$2 RANKS=${3:-2}
shift 3 2>/dev/null
EXTRA=("$@")
M=200 N=200 I=5 TAU=0.1
FAILED=0
for c in 1 0.5; do
    out=$("$HGASRUN" -n "$RANKS" --timeout 200 "$EPISIM" --scenario one-location --persons $N --infectious $I \
          --tau $TAU --contact-p $c --days 1 --runs $M --quiet --timeout 60 "${EXTRA[@]}" 2>&1)
    rc=$?
    if [ $rc != 0 ]; then echo "FAIL: contact probability $c: episim exited with $rc:"; echo "$out" | tail -20; FAILED=1; continue; fi
    python3 - "$c" $M $N $I $TAU <<PY || FAILED=1
import math, sys
c, M, N, I, tau = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
counts = [int(l.split("curve:")[1]) for l in """$out""".splitlines() if l.startswith("run ")]
assert len(counts) == M, f"{len(counts)} runs reported, expected {M}"
S = N - I
def p_of(c):
    return 1 - math.exp(-tau * I) if c == 1 else 1 - ((1 + math.exp(-tau)) / 2) ** I
p = p_of(c)
mean, sd = sum(counts) / M, math.sqrt(S * p * (1 - p) / M)
z = (mean - S * p) / sd
print(f"contact probability {c}: mean {mean:.3f} over {M} seeds, expected {S * p:.3f}, sd of the mean {sd:.3f}, z {z:+.2f}")
assert abs(z) <= 3, f"FAIL: mean {mean} is {z:+.2f} standard deviations from {S * p}"
other = p_of(0.5 if c == 1 else 1)
zo = (mean - S * other) / math.sqrt(S * other * (1 - other) / M)
assert abs(zo) > 3, f"FAIL: the other case's expectation {S * other} fits too (z {zo:+.2f}): the check is blind"
print(f"ok: contact probability {c} (the other case's expectation is {zo:+.1f} sd away)")
PY
done
exit $FAILED
