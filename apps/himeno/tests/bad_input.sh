#!/usr/bin/env bash
# bad_input.sh HGASRUN HIMENO: bad input ends with a clear message and a non-zero status.
set -u
HGASRUN=$1 HIMENO=$2
FAILED=0
# expect RC TEXT N ARGS...: runs himeno on N ranks, checks the exit status and stderr+stdout
expect() {
    local want=$1 text=$2 n=$3
    shift 3
    local out rc
    out=$("$HGASRUN" -n "$n" --timeout 60 "$HIMENO" "$@" 2>&1)
    rc=$?
    if [ "$rc" = "$want" ] && grep -qF -- "$text" <<<"$out"; then
        echo "ok: [$*] on $n rank(s): status $rc, '$text'"
    else
        echo "FAIL: [$*] on $n rank(s): status $rc (expected $want), output:"; echo "$out" | sed 's/^/    | /'
        FAILED=1
    fi
}
expect 2 "unknown size 'Q'" 1 --size Q
expect 2 "unknown size '2x8x8'" 1 --size 2x8x8
expect 2 "unknown mode 'fast'" 2 --size XS --mode fast
expect 2 "unknown kind 'gpu'" 1 --kind gpu
# weak scaling has no reference values beyond one rank
expect 2 "drop --verify or --weak" 2 --size XS --iters 3 --weak --verify
# the GPU modes keep the field and the halo buffers in GPU memory
expect 2 "mode hybrid computes on the GPU, so its halo buffers are cuda memory" 1 --mode hybrid --kind host
expect 2 "use --kind cuda (the default of the GPU modes), not --kind sim" 1 --mode hybrid --kind sim
expect 2 "bad --iters '0'" 1 --iters 0
expect 2 "unknown option '--bogus'" 1 --bogus
expect 2 "has 2 interior planes along i but 3 ranks" 3 --size 4x8x8 --iters 1
# verify must fail on a wrong result (no exchange on 2 ranks) and without a reference value.
expect 1 "verify: MISMATCH: expected 6.229796415e-03" 2 --size XS --iters 3 --no-exchange --verify
expect 1 "verify: no reference value" 1 --size XS --iters 2 --verify
# only rank 0 reports bad options
out=$("$HGASRUN" -n 3 "$HIMENO" --size Q 2>&1)
count=$(grep -c "unknown size" <<<"$out")
if [ "$count" = 1 ]; then echo "ok: one message from 3 ranks"; else echo "FAIL: $count messages"; FAILED=1; fi
exit $FAILED
