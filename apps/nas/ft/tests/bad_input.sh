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
expect "bad grid" "--grid wants P1xP2 (two positive numbers, e.g. 2x2), not '2x'" "$FT" --grid 2x
# The rank count is checked before the job forms, so no rank starts hgas: HGAS_SIZE is what
# hgasrun would set. Class S (64^3) fits any p1 x p2 with p1, p2 <= 64; 4097 = 17 x 241 does not.
expect "too many ranks" "the job has 4097 ranks, and no grid p1 x p2 = 4097 fits 64x64x64: a grid p1 x p2 needs p1 <= min(nz, ny) = 64 and p2 <= min(nx, ny) = 64, so at most 4096 ranks" \
    env HGAS_SIZE=4097 HGAS_RANK=0 "$FT" --class S
expect "grid not the rank count" "--grid 3x2 has 6 ranks, but the job has 4" env HGAS_SIZE=4 HGAS_RANK=0 "$FT" --grid 3x2
expect "grid too tall" "--grid 64x2 does not fit 128x128x32: a grid p1 x p2 needs p1 <= min(nz, ny) = 32" \
    env HGAS_SIZE=128 HGAS_RANK=0 "$FT" --class W --grid 64x2
expect "2-D on cuda" "class S on 128 ranks needs the 2-D decomposition (grid 64x2), which runs with --kind host or sim" \
    env HGAS_SIZE=128 HGAS_RANK=0 "$FT" --class S --kind cuda
# Through hgasrun the job ends with that status too.
out=$("$HGASRUN" -n 3 --timeout 60 "$FT" --class S --kind cuda --threads 1 2>&1)
rc=$?
if [ "$rc" = 0 ] || ! grep -Eq -- "--kind cuda (needs hgas cuda memory on every rank|: this nas-ft was built without CUDA)" <<<"$out"; then
    # A machine with a GPU and a CUDA build runs it: then it must verify.
    grep -Eq '^ Verification += +SUCCESSFUL$' <<<"$out" || { echo "FAIL: --kind cuda without a GPU: status $rc:"; echo "$out"; fail=1; }
fi
"$FT" --help | grep -q '^usage: nas-ft' || { echo "FAIL: --help"; fail=1; }
exit $fail
