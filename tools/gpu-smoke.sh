#!/bin/bash
# Temporary GPU run: build with CUDA, GPU tests on 2 GPUs and on one shared, kinds bench.
set -u
OUT=${OUT:-./gpu-out}; mkdir -p $OUT
export HGAS_TIMEOUT=60 NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
B=build-gpu
( cmake -G Ninja -S . -B $B -DHGAS_UCX=OFF -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j 16 ) > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "build ok"
( cd $B && timeout 150 ctest -L gpu --output-on-failure -j 1 --timeout 60 ) > $OUT/tests.log 2>&1; echo "gpu tests (2 GPUs) rc=$?"; grep -E 'tests passed|Failed' $OUT/tests.log
( cd $B && HGAS_GPU_AGENT=0 HGAS_SM_COPY_MAX=4M timeout 150 ctest -L gpu --output-on-failure -j 1 --timeout 60 ) > $OUT/tests-noagent.log 2>&1; echo "gpu tests no agent rc=$?"; grep -E 'tests passed|Failed' $OUT/tests-noagent.log
( cd $B && CUDA_VISIBLE_DEVICES=0 timeout 150 ctest -L gpu --output-on-failure -j 1 --timeout 60 ) > $OUT/tests1.log 2>&1; echo "gpu tests (1 GPU) rc=$?"; grep -E 'tests passed|Failed' $OUT/tests1.log
R="$B/tools/hgasrun/hgasrun"; K="$B/bench/hgas-bench-kinds"
S="--sizes 8:256M:8 --batches 7"
{
$R -n 2 $K --kind cuda $S --transport peer
HGAS_GPU_AGENT=0 $R -n 2 $K --kind cuda --sizes 8:32K:8 --dirs d2d --transport peer-ce
$R -n 1 $K --kind cuda --sizes 8:2M:8 --transport self
HGAS_PATH=staged HGAS_HEAP_SIZE=512M HGAS_STAGING_SLOTS=32 $R -n 2 $K --kind cuda $S --dirs d2d --transport staged256k
HGAS_PATH=staged HGAS_HEAP_SIZE=512M HGAS_STAGING_CHUNK=512K HGAS_STAGING_SLOTS=16 $R -n 2 $K --kind cuda $S --dirs d2d --transport staged512k
} > $OUT/bench.jsonl 2> $OUT/bench.err
grep '^#' $OUT/bench.jsonl | grep -E 'lat_d2d|bw_d2d' | awk '{print $2,$3,$4,$5,$6}' | grep -E ' (8|64|4K|32K|256K|2M|16M|128M|256M) '; tail -5 $OUT/bench.err
