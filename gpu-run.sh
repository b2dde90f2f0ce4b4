#!/usr/bin/env bash
# untracked wrapper for device calls: runs its arguments, then packs $OUT into one tar.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
FINAL="$OUT"; export OUT=/tmp/gout; mkdir -p $OUT
( eval "$@" ) > $OUT/run.log 2>&1; rc=$?
echo "rc=$rc" >> $OUT/run.log
tail -c 6000 $OUT/run.log
tar czf "$FINAL/out.tgz" -C /tmp gout 2>/dev/null
exit $rc
