#!/usr/bin/env bash
# bad_input.sh HGASRUN NAS_FT: bad command lines and rank counts end with status 2 and a message
# that says what is wrong.
set -u
HGASRUN=$1 FT=$2
fail=0
expect() {  # expect WHAT PATTERN COMMAND...
    local what=$1 pat=$2
    shift 2
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" != 2 ] || ! grep -q -- "$pat" <<<"$out"; then
        echo "FAIL: $what: status $rc, output:"
        echo "$out"
        fail=1
    else
        echo "ok: $what"
    fi
}
expect "unknown class" "unknown class 'Q' (NPB FT classes: S, W, A, B, C, D, E)" "$FT" --class Q
expect "unknown kind" "unknown kind 'gpu' (host, sim or cuda)" "$FT" --kind gpu
expect "unknown variant" "unknown variant 'slab' (slabs or packed)" "$FT" --variant slab
expect "bad threads" "--threads wants a number from 1 to 1024, not '0'" "$FT" --threads 0
expect "missing value" "option --class needs a value" "$FT" --class
expect "unknown option" "unknown option '--iters'" "$FT" --iters 3
# Class S has 64 planes along z: 65 ranks cannot each have one (the check runs before the job
# forms, so no rank starts hgas: HGAS_SIZE is what hgasrun would set).
expect "too many ranks" "the job has 65 ranks: the slab decomposition needs at most 64 ranks" \
    env HGAS_SIZE=65 HGAS_RANK=0 "$FT" --class S
# Through hgasrun the job ends with that status too.
out=$("$HGASRUN" -n 3 --timeout 60 "$FT" --class S --kind cuda --threads 1 2>&1)
rc=$?
if [ "$rc" = 0 ] || ! grep -Eq -- "--kind cuda (needs hgas cuda memory on every rank|: this nas-ft was built without CUDA)" <<<"$out"; then
    # A machine with a GPU and a CUDA build runs it: then it must verify.
    grep -Eq '^ Verification += +SUCCESSFUL$' <<<"$out" || { echo "FAIL: --kind cuda without a GPU: status $rc:"; echo "$out"; fail=1; }
fi
"$FT" --help | grep -q '^usage: nas-ft' || { echo "FAIL: --help"; fail=1; }
exit $fail
