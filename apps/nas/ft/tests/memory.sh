#!/usr/bin/env bash
# memory.sh HGASRUN NAS_FT: a run whose arrays cannot fit is refused before anything is allocated,
# with status 1 and a message giving the need per rank and what is available (here a ulimit -v,
# so that the test means the same on any machine; the node-wide check compares MemAvailable).
set -u
HGASRUN=$1 FT=$2
fail=0
expect() {  # expect WHAT PATTERN COMMAND...
    local what=$1 pat=$2
    shift 2
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" != 1 ] || ! grep -Eq -- "$pat" <<<"$out" || grep -q 'Verification' <<<"$out"; then
        echo "FAIL: $what: status $rc, output:"
        echo "$out"
        fail=1
    else
        echo "ok: $what: $(grep -E -- "$pat" <<<"$out" | head -1)"
    fi
}
lim=4194304  # KiB: 4 GiB
expect "class C on 1 rank under ulimit -v 4 GiB" \
    "class C on 1 rank\(s\) \(slabs, kind host\) needs about 6\.[0-9] GiB of host memory per rank, but a process may map 4\.0 GiB \(ulimit -v\); use more ranks" \
    bash -c "ulimit -v $lim; HGAS_SIZE=1 HGAS_RANK=0 exec \"$FT\" --class C"
expect "class D on 2 ranks, packed, through hgasrun" \
    "class D on 2 rank\(s\) \(packed, kind host\) needs about [0-9.]+ GiB of host memory per rank, but a process may map 4\.0 GiB" \
    bash -c "ulimit -v $lim; exec \"$HGASRUN\" -n 2 --timeout 60 \"$FT\" --class D --variant packed --threads 1"
expect "class D on 4 ranks, 2-D grid, kind sim" \
    "class D on 4 rank\(s\) \(slabs, kind sim\) needs about [0-9.]+ GiB of host memory per rank" \
    bash -c "ulimit -v $lim; HGAS_SIZE=4 HGAS_RANK=0 exec \"$FT\" --class D --kind sim --grid 2x2"
exit $fail
