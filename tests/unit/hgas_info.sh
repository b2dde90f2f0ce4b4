#!/usr/bin/env bash
# hgas-info prints every setting with its value and source, the transports and the paths, and
# rejects a bad setting naming it.   hgas_info.sh <hgas-info>
set -u
INFO=$1
FAILED=0
expect() {  # expect NAME REGEX OUTPUT
    if grep -qE -- "$2" <<<"$3"; then echo "ok   $1"; else echo "FAIL $1: no /$2/ in:"; echo "$3" | head -40; FAILED=$((FAILED + 1)); fi
}
out=$(env HGAS_HEAPSIZE=1G "$INFO" --settings-only)
expect "a typo is named with the setting meant" "unused environment variable: HGAS_HEAPSIZE \(maybe: HGAS_HEAP_SIZE\?\)" "$out"
out=$(env HGAS_HEAP_SIZE=128M "$INFO")
expect "value and source of a set variable" "HGAS_HEAP_SIZE +134217728 +environment" "$out"
expect "value and source of a default" "HGAS_TIMEOUT +300 +default" "$out"
expect "secret never printed" "HGAS_BOOT_SECRET +\"\"" "$out"
expect "same-node path" "host -> host, same node +shm" "$out"
expect "own-rank path" "host -> host, same process +self" "$out"
n=$(grep -c "^  HGAS_" <<<"$out")
expect "every setting listed ($n)" "^  HGAS_DEBUG" "$out"
expect "cuda IPC method printed" "cuda +IPC: .*HGAS_CUDA_IPC=auto" "$out"
expect "staging rings whole at 8 ranks" "^ +8 ranks: 8 slots x 256 KiB per peer" "$out"
expect "staging rings shrunk at 64 ranks" "^ +64 ranks: 5 slots x 64 KiB per peer = 20824 KiB$" "$out"
out=$(env HGAS_STAGING_CHUNK=1M HGAS_STAGING_SLOTS=4 "$INFO")
expect "staging chunk and slots as set are kept" "^ +64 ranks: 4 slots x 1024 KiB per peer .*over the budget" "$out"
out=$(env HGAS_CUDA_IPC=legacy "$INFO")
expect "cuda IPC method follows the setting" "cuda +IPC: .*legacy" "$out"
out=$(env HGAS_TRANSPORTS=ucx "$INFO")
expect "forced ucx" "host -> host, same process +(ucx|unreachable)" "$out"
out=$(env HGAS_BOOT_SECRET=topsecret "$INFO")
if grep -q topsecret <<<"$out"; then echo "FAIL the secret was printed"; FAILED=$((FAILED + 1)); else echo "ok   secret hidden"; fi
out=$(env HGAS_TRANSPORTS=shm,rdma "$INFO" 2>&1); rc=$?
expect "bad setting named" "HGAS_TRANSPORTS='shm,rdma': 'rdma' is not one of: self,shm,ucx" "$out"
[ $rc -ne 0 ] && echo "ok   bad setting exits $rc" || { echo "FAIL bad setting exits 0"; FAILED=$((FAILED + 1)); }
out=$(env HGAS_CUDA_IPC=fd "$INFO" 2>&1)
expect "bad HGAS_CUDA_IPC named" "HGAS_CUDA_IPC='fd'.*auto,vmm,legacy" "$out"
echo "$FAILED failed"
[ $FAILED -eq 0 ]
