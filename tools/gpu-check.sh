#!/usr/bin/env bash
# tools/gpu-check.sh — the one script run on a GPU machine: builds hgas with CUDA (and the
# NVSHMEM/NCCL peers the machine's python3 packages provide), runs the GPU tests (ctest label
# "gpu"), runs the GPU benchmarks and their peers, and plots them, and runs himeno's GPU tests
# and one L-size run per GPU mode that is built. Everything it writes is under $OUT (default
# ./gpu-out), in few files:
#   summary.txt   machine, steps, exit statuses, times, the hgas/peer ratio table (read first)
#   build.log     configure and build
#   tests.log     ctest -L gpu
#   bench.txt     every benchmark program's table lines and messages
#   bench.jsonl   every result record (one JSON object per line; docs/bench.md "GPU peers")
#   hgas-bench-gpu.json   hgas-bench --gpu --json, when hgas-bench has --gpu
#   plots.tar     PNG plots from tools/bench-plot.py, when matplotlib is importable
#   python-overhead.jsonl  Python call overhead vs C (python/bench/overhead.py)
#   python-vs-torch.txt    hgas vs torch.distributed on GPU tensors (python/bench/vs_torch.py)
#   himeno.txt    himeno: its GPU tests' summary and the L runs' result lines
#   himeno.jsonl  himeno: one JSON record per L run (apps/himeno/README.md, "Output")
#   himeno-tests.log  ctest -R '^himeno\.gpu\.'
#   himeno-sweep/ himeno's sweep on up to 2 GPUs: sizes M, L (XL when time allows) x modes
#                 hybrid/stream/kernel/device x ranks 1, 2, strong and weak (L per GPU):
#                 table.txt, results.jsonl, fig8/9/10 PNGs
#   nas.txt       NAS FT: its GPU tests' summary, class B and C on 1 rank with --kind cuda
#                 (FFT time / cuFFT's own 3-D transform), class B on the CPU for the speedup
#   nas.jsonl     NAS FT: one JSON record per run (apps/nas/README.md, "Output")
#                 NAS MG (in nas.txt too): class B on 1 rank with --kind cuda and on the CPU cores
#                 (--kind host, one rank per core), the NPB report lines, the host/cuda ratio;
#                 class C (512^3) on 1 rank with --kind cuda, verified, within 300 s
#   nas-mg.jsonl  NAS MG: one JSON record per run
#   episim.txt    episim: its GPU tests' summary and the benchmark table (three styles, kind
#                 cuda, 1 and 2 GPUs); episim-tests.log; episim-sweep/ (results.jsonl, PNGs)
#   seismic.txt   seismic: its GPU tests' summary and the three styles' benchmark table
#   seismic-tests.log  ctest -R '^seismic\.gpu\.'
#   seismic-sweep/     seismic's styles x ranks 1, 2 (GPUs shared when fewer): table.txt,
#                 results.jsonl (apps/seismic/README.md, "Output"), phases.png, scaling.png
#   sharing.txt   several ranks on one GPU (docs/sharing.md): hgas-bench --busy with device
#                 memory on the GPU (busy.jsonl), then tools/sharing-sweep.py: himeno and NAS
#                 FT/MG at 1, 2, 4, 8 ranks per GPU x HGAS_GPU_SHARING modes, within
#                 SHARING_BUDGET s (default 240): sharing-sweep/ (table.txt, results.jsonl, PNGs)
#   matmul.txt    matmul: its GPU tests' summary, n = 16384 on 1 rank and on 2 ranks sharing
#                 GPU 0 (GFLOP/s, single-GPU cuBLAS's own GFLOP/s, the ratio per GPU)
#   matmul.jsonl  matmul: one JSON record per run (apps/matmul/README.md, "Output");
#                 matmul-tests.log, matmul-n1.log, matmul-n2.log
#   coll-scratch.txt  which scratch device vectors' reductions crossed, per rank (device ->
#                 device through the device scratch, or through the host heap): the counters
#                 test_coll_devscratch_cuda prints (docs/collectives.md "Device-memory scratch")
#
#
# usage: tools/gpu-check.sh [--quick] [--no-build] [--only STEP] [-h]   (STEP: see ONLY_STEPS)
#   --quick     fewer sizes (8:256M:16), 5 batches
#   --no-build  use the build in $BUILD as it is
#   --only X    only the tests, only the benchmarks, or only the device API (issue 4: builds just
#               its targets, runs its GPU tests and examples, hgas-device-bench direct and with
#               the proxy forced, and NVSHMEM's device and stream measurements), or only himeno
#               (its GPU tests, L runs and sweep; about four minutes after the build), or only
#               the NAS programs (apps/nas: GPU tests, the FT class B and C runs, MG class B, C),
#               or only episim or only seismic (each: its GPU tests and the benchmark of its
#               three styles), or only matmul (its GPU tests and n = 16384 on 1 and 2 ranks)
#               three styles), or only the collectives on GPU memory (coll: their GPU tests and
#               hgas-bench-coll-gpu, hgas against NCCL, 2 ranks), or only the build (no step runs:
#               for measurements by hand in the same call; TARGETS="a b" builds only those)
# Environment: OUT (output folder), BUILD (build folder, default build-gpu), JOBS (default 16),
#   SIZES (benchmark sizes, default 8:256M:4), CUDA_ARCH (default 90), DEADLINE (seconds for
#   the whole script, default 470: steps that would pass it are cut short or skipped),
#   CTEST_JOBS (default 1), TESTS_LIMIT (seconds for the ctest step, default 300; one GPU
#   shared by the multi-rank tests needs about 250 at CTEST_JOBS=4).
# UCX: the machine cannot reach PyPI, so UCX is built in only from a carried build/venv (made by
#   make deps; its libucx folder is used) or a carried wheel (.whl/libucx*.whl, installed into
#   $BUILD/ucx-site); otherwise -DHGAS_UCX=OFF.
# GoogleTest: the system's if there is one, else a carried source tree at .deps/googletest
#   (cp -r /usr/src/googletest .deps/), built into $BUILD/gtest; else tests are not built.
# FFTW (nas-ft on the CPU): the system's, else Debian's packages unpacked into .deps/fftw
#   (apt-get download libfftw3-dev libfftw3-double3 libfftw3-single3; dpkg -x each into
#   .deps/fftw); without either nas-ft is not built.
# Exit status: 0 when every step that ran passed; 1 otherwise; 2 for bad options.
set -u -o pipefail

QUICK=0 DO_BUILD=1 ONLY=all
# The steps --only can pick (each section below says what it runs).
ONLY_STEPS="tests bench device himeno nas episim seismic osu sharing matmul coll build"
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --no-build) DO_BUILD=0 ;;
    --only)
        [ $# -ge 2 ] || { echo "gpu-check: --only wants one of: $ONLY_STEPS" >&2; exit 2; }
        ONLY=$2; shift
        case " $ONLY_STEPS " in *" $ONLY "*) ;; *) echo "gpu-check: --only wants one of: $ONLY_STEPS; not '$ONLY'" >&2; exit 2 ;; esac ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown option '$1' (tools/gpu-check.sh --help)" >&2; exit 2 ;;
    esac
    shift
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-16}
CUDA_ARCH=${CUDA_ARCH:-90}
DEADLINE=${DEADLINE:-470}
CTEST_JOBS=${CTEST_JOBS:-1}
if [ $QUICK = 1 ]; then SIZES=${SIZES:-8:256M:16}; QFLAG=(--quick); else SIZES=${SIZES:-8:256M:4}; QFLAG=(); fi

# NVLink multicast stays off: it can take a shared host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PYTHONUNBUFFERED=1

SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
FAILED=()
START=$SECONDS
say() { echo "gpu-check: $*" | tee -a "$SUMMARY"; }
left() { echo $((DEADLINE - (SECONDS - START))); }
# limit WANT: the seconds a step may take, WANT or what is left before the deadline minus a reserve.
limit() {
    local l=$(($(left) - 25))
    [ "$l" -gt "$1" ] && l=$1
    [ "$l" -lt 1 ] && l=1
    echo "$l"
}

say "started $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) CPUs; OUT=$OUT BUILD=$BUILD quick=$QUICK only=$ONLY sizes=$SIZES"
{
    echo "== nvidia-smi -L"; nvidia-smi -L 2>&1
    echo "== nvidia-smi topo -m"; nvidia-smi topo -m 2>&1
    echo "== driver, GPU memory"; nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used --format=csv 2>&1
    echo "== nvcc"; nvcc --version 2>&1 | tail -2
    echo "== cmake / ninja / python3"; cmake --version 2>&1 | head -1; ninja --version 2>&1; python3 --version 2>&1
    echo "== python packages"
    for m in nvidia.nvshmem nvidia.nccl matplotlib; do
        printf '%s: ' "$m"; python3 -c "import $m as x; print(list(getattr(x, '__path__', [getattr(x, '__file__', '?')]))[0])" 2>&1 | tail -1
    done
    echo "== source"; git -C "$ROOT" log --oneline -1 2>/dev/null || echo "(no git history in this copy)"
    echo "== environment"; env | grep -E '^(NCCL_NVLS_ENABLE|NVSHMEM_DISABLE_NVLS|TORCH_SYMM_MEM_DISABLE_MULTICAST|CUDA_VISIBLE_DEVICES)=' | sort
} 2>&1 | tee -a "$SUMMARY"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
say "$NGPU GPU(s) visible"

# ---- build ------------------------------------------------------------------------------
find_gtest() {
    local d
    for d in /usr/lib/x86_64-linux-gnu/cmake/GTest /usr/lib/cmake/GTest /usr/lib64/cmake/GTest \
             /usr/local/lib/cmake/GTest /usr/local/lib64/cmake/GTest; do
        [ -f "$d/GTestConfig.cmake" ] && return 0
    done
    [ -f /usr/include/gtest/gtest.h ] && ls /usr/lib*/libgtest* /usr/lib/x86_64-linux-gnu/libgtest* >/dev/null 2>&1
}

if [ $DO_BUILD = 1 ]; then
    say "build: configuring $BUILD (CUDA on, architectures $CUDA_ARCH) ..."
    args=(-G Ninja -S . -B "$BUILD" -DHGAS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH")
    prefixes=()   # CMAKE_PREFIX_PATH: carried GoogleTest and FFTW
    : >"$OUT/build.log"
    whl=$(ls .whl/libucx*.whl 2>/dev/null | head -1)
    venv_ucx=$(ls -d build/venv/lib/python3*/site-packages/libucx 2>/dev/null | head -1)
    if [ -n "$venv_ucx" ] && [ -d "$venv_ucx/lib/cmake/ucx" ]; then
        args+=(-DHGAS_UCX=ON -DHGAS_UCX_ROOT="$ROOT/$venv_ucx")
        say "build: UCX from the carried virtual environment ($venv_ucx)"
    elif [ -n "$whl" ]; then
        if python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$BUILD/ucx-site" "$whl" >>"$OUT/build.log" 2>&1 \
            && [ -d "$BUILD/ucx-site/libucx/lib/cmake/ucx" ]; then
            args+=(-DHGAS_UCX=ON -DHGAS_UCX_ROOT="$ROOT/$BUILD/ucx-site/libucx")
            say "build: UCX from the carried wheel $whl"
        else
            args+=(-DHGAS_UCX=OFF)
            say "build: the carried UCX wheel $whl did not install (see build.log); building without UCX"
        fi
    else
        args+=(-DHGAS_UCX=OFF)
        say "build: no carried UCX (build/venv or .whl/libucx*.whl); building without UCX (self and shm transports)"
    fi
    if find_gtest; then
        say "build: GoogleTest from the system"
    elif [ -f .deps/googletest/CMakeLists.txt ]; then
        say "build: GoogleTest from the carried source .deps/googletest"
        if cmake -G Ninja -S .deps/googletest -B "$BUILD/gtest-build" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DCMAKE_INSTALL_PREFIX="$ROOT/$BUILD/gtest" >>"$OUT/build.log" 2>&1 \
            && cmake --build "$BUILD/gtest-build" -j "$JOBS" >>"$OUT/build.log" 2>&1 \
            && cmake --install "$BUILD/gtest-build" >>"$OUT/build.log" 2>&1; then
            prefixes+=("$ROOT/$BUILD/gtest")
        else
            args+=(-DHGAS_TESTS=OFF -DHIMENO_TESTS=ON -DNAS_TESTS=ON -DEPISIM_TESTS=ON -DSEISMIC_TESTS=ON)
            say "build: building the carried GoogleTest failed (build.log); tests are not built"
            FAILED+=("gtest")
        fi
    else
        args+=(-DHGAS_TESTS=OFF -DHIMENO_TESTS=ON -DNAS_TESTS=ON -DEPISIM_TESTS=ON -DSEISMIC_TESTS=ON)
        say "build: NO GoogleTest here (carry .deps/googletest: docs/bench.md); tests are not built (himeno's are: they need none)"
    fi
    # FFTW (nas-ft's CPU transforms): the system's, else a carried copy of Debian's packages in
    # .deps/fftw (dpkg -x of libfftw3-dev and its libraries; docs/bench.md says how).
    if [ ! -f /usr/include/fftw3.h ] && [ -f .deps/fftw/usr/include/fftw3.h ]; then
        prefixes+=("$ROOT/.deps/fftw/usr")
        say "build: FFTW from the carried .deps/fftw"
    fi
    # OpenBLAS (matmul's CPU products): the system's, else Debian's libopenblas0-pthread (the
    # library, cblas.h, libgfortran5, libquadmath0) carried as .deps/openblas.tar.xz (5 MB;
    # docs/bench.md says how), unpacked into the build tree and named to CMake.
    if ! ls /usr/include/cblas.h /usr/include/*/cblas.h /usr/include/*/*/cblas.h >/dev/null 2>&1 \
        && [ -f .deps/openblas.tar.xz ]; then
        ob=$BUILD/openblas
        mkdir -p "$ob" && tar xJf .deps/openblas.tar.xz -C "$ob"
        obl=$ob/usr/lib/x86_64-linux-gnu
        args+=(-DOPENBLAS_LIB="$obl/openblas-pthread/libopenblas.so"
               -DOPENBLAS_INCLUDE="$ob/usr/include/x86_64-linux-gnu/openblas-pthread")
        export LD_LIBRARY_PATH="$obl:$obl/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        say "build: OpenBLAS from the carried .deps/openblas.tar.xz"
    fi
    [ ${#prefixes[@]} -gt 0 ] && args+=(-DCMAKE_PREFIX_PATH="$(IFS=';'; echo "${prefixes[*]}")")
    t=$SECONDS
    if timeout "$(limit 120)" cmake "${args[@]}" >>"$OUT/build.log" 2>&1; then
        grep -E '^-- hgas:' "$OUT/build.log" | tee -a "$SUMMARY"
        targets=()
        if [ "$ONLY" = device ]; then
            # The device API's programs only (and what they need): hgas, hgasrun, the GPU tests
            # and examples, the device benchmark and the NVSHMEM peer where it is configured.
            targets=(--target hgas hgasrun test_device test_device_coll test_device_coll_threads hgas-mode-kernel hgas-mode-stream hgas-mode-control hgas-device-bench)
            grep -q '^build hgas-nvshmem-peer\b\|bench/gpu/hgas-nvshmem-peer:' "$BUILD/build.ninja" 2>/dev/null \
                && targets+=(hgas-nvshmem-peer)
        fi
        [ "$ONLY" = himeno ] && targets=(--target himeno hgasrun)  # what its step runs, no more
        [ "$ONLY" = nas ] && targets=(--target nas-ft nas-mg hgasrun)
        [ "$ONLY" = episim ] && targets=(--target episim hgasrun)
        [ "$ONLY" = seismic ] && targets=(--target seismic hgasrun)
        [ "$ONLY" = osu ] && targets=(--target hgas hgas_shmem hgasrun)
        [ "$ONLY" = sharing ] && targets=(--target hgasrun hgas-bench hgas-bench-busy himeno nas-ft nas-mg) \
            && grep -q '^build bin/matmul:' "$BUILD/build.ninja" 2>/dev/null && targets+=(matmul)
        [ "$ONLY" = matmul ] && targets=(--target matmul hgasrun)
        [ "$ONLY" = build ] && [ -n "${TARGETS:-}" ] && read -r -a targets <<<"--target $TARGETS"  # TARGETS: a subset
        [ "$ONLY" = coll ] && targets=(--target hgas hgasrun test_coll_gpu test_coll_kinds test_coll_choice test_coll_choice_threads test_device_coll test_device_coll_threads) \
            && grep -q 'hgas-bench-coll-gpu' "$BUILD/build.ninja" 2>/dev/null && targets+=(hgas-bench-coll-gpu)
        say "build: cmake --build -j $JOBS ${targets[*]} ..."
        timeout "$(limit 300)" cmake --build "$BUILD" -j "$JOBS" ${targets[@]+"${targets[@]}"} -- -k 0 >>"$OUT/build.log" 2>&1
        rc=$?
        say "build: status $rc after $((SECONDS - t)) s$([ $rc = 124 ] && echo ' (timed out)')"
        if [ $rc != 0 ]; then
            FAILED+=("build")
            grep -E 'error|FAILED' "$OUT/build.log" | head -20 | tee -a "$SUMMARY"
        fi
    else
        say "build: cmake configure FAILED (build.log):"
        tail -20 "$OUT/build.log" | tee -a "$SUMMARY"
        FAILED+=("configure")
    fi
else
    say "build: skipped (--no-build); using $BUILD"
fi

# ---- tests ------------------------------------------------------------------------------
if [ "$ONLY" = all ] || [ "$ONLY" = tests ] || [ "$ONLY" = device ]; then
    # himeno's GPU tests run in the himeno step below when it runs too
    EXCL=(); [ "$ONLY" = all ] && EXCL=(-E '^(himeno|episim|seismic|matmul)\.gpu\.')
    : >"$OUT/tests.log"
    if [ ! -f "$BUILD/CTestTestfile.cmake" ]; then
        say "tests: no test tree in $BUILD; not run"
        FAILED+=("tests")
    else
        l=$(limit "${TESTS_LIMIT:-300}")
        sel=()
        jobs=$CTEST_JOBS
        if [ "$ONLY" = device ]; then sel=(-R 'test_device|example\.mode_'); jobs=${CTEST_JOBS_DEVICE:-3}; fi
        say "tests: ctest -L '^gpu\$' ${sel[*]} -j $jobs (up to $l s) ..."
        t=$SECONDS
        timeout "$l" ctest --test-dir "$BUILD" -L '^gpu$' ${sel[@]+"${sel[@]}"} ${EXCL[@]+"${EXCL[@]}"} --output-on-failure --timeout 120 -j "$jobs" >"$OUT/tests.log" 2>&1
        rc=$?
        if grep -q "No tests were found" "$OUT/tests.log"; then
            say "tests: no test has the label gpu yet"
        else
            grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run' "$OUT/tests.log" | tee -a "$SUMMARY"
            say "tests: status $rc after $((SECONDS - t)) s"
            [ $rc = 0 ] || FAILED+=("tests")
        fi
        # The Python package's GPU tests exist only where cmake's python3 has numpy and pytest
        # (and CuPy / torch for python.gpu.*): say how many there were.
        npy=$(ctest --test-dir "$BUILD" -N -R '^python\.(cuda|gpu)\.' 2>/dev/null | sed -n 's/^Total Tests: *//p')
        say "tests: ${npy:-0} Python GPU tests (python.cuda, python.gpu.cupy, python.gpu.torch; python/README.md)"
    fi
    # Python call overhead against C (python/bench/overhead.py), JSON lines in python-overhead.jsonl
    if [ "$ONLY" = all ] && [ -x "$BUILD/python/hgas-py-overhead-c" ] && python3 -c 'import numpy' 2>/dev/null; then
        { timeout 60 "$BUILD/bin/hgasrun" -n 2 "$BUILD/python/hgas-py-overhead-c" 20000
          PYTHONPATH=$BUILD/python timeout 60 "$BUILD/bin/hgasrun" -n 2 python3 python/bench/overhead.py 20000
        } >"$OUT/python-overhead.jsonl" 2>&1
        say "python overhead: $(grep -c us_per_call "$OUT/python-overhead.jsonl") figures in python-overhead.jsonl"
    fi
    # hgas against torch.distributed on the same GPU tensors (python/bench/vs_torch.py)
    if [ "$ONLY" = all ] && python3 -c 'import numpy, torch' 2>/dev/null; then
        for n in 1 2; do
            PYTHONPATH=$BUILD/python timeout 120 "$BUILD/bin/hgasrun" -n $n python3 python/bench/vs_torch.py 2000
        done >"$OUT/python-vs-torch.txt" 2>&1
        say "python vs torch.distributed: $(grep -c us_per_call "$OUT/python-vs-torch.txt") figures in python-vs-torch.txt"
        grep '^#' "$OUT/python-vs-torch.txt" | tee -a "$SUMMARY"
    fi
fi

# ---- benchmarks -------------------------------------------------------------------------
find_prog() {  # the first executable of the candidates
    local p
    for p in "$@"; do [ -x "$p" ] && { echo "$p"; return 0; }; done
    return 1
}

# bench NAME WANT_SECONDS COMMAND...: runs it, table and messages into bench.txt, records into
# bench.jsonl, a status line into summary.txt.
bench() {
    local name=$1 want=$2 l rc n bad t
    shift 2
    l=$(limit "$want")
    if [ "$l" -lt 15 ]; then
        say "bench: $name NOT RUN: the deadline ($DEADLINE s) is near"
        FAILED+=("$name (not run)")
        return
    fi
    echo "### $name: $* (limit $l s)" >>"$OUT/bench.txt"
    t=$SECONDS
    timeout -k 5 "$l" "$@" 2>&1 | tee -a "$OUT/bench.txt" >"$OUT/.run"
    rc=${PIPESTATUS[0]}
    grep '^{' "$OUT/.run" >>"$OUT/bench.jsonl"
    n=$(grep -c '^{' "$OUT/.run")
    bad=$(grep -c '"verified":false' "$OUT/.run")
    say "bench: $name: status $rc$([ "$rc" = 124 ] && echo ' (timed out)'), $n records, $bad failed checks, $((SECONDS - t)) s"
    if [ "$rc" != 0 ] || [ "$bad" != 0 ]; then
        grep -v '^{' "$OUT/.run" | grep -E 'FAILED|DATA CHECK|rror|timed out|hgasrun:' | head -8 | sed 's/^/    /' | tee -a "$SUMMARY"
        FAILED+=("$name")
    fi
    rm -f "$OUT/.run"
    grep -h '^# skipped' "$OUT/bench.txt" | sort -u | sed 's/^# /  /' >"$OUT/.skips"
}

if [ "$ONLY" = device ]; then
    : >"$OUT/bench.txt"
    : >"$OUT/bench.jsonl"
    B="$BUILD/bench/gpu"
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    common=(--sizes "$SIZES" "${QFLAG[@]}")
    if [ -x "$B/hgas-device-bench" ] && [ -n "$HGASRUN" ]; then
        if [ "$NGPU" -ge 2 ]; then
            bench "hgas-device-bench (hgasrun -n 2)" 150 "$HGASRUN" -n 2 --timeout 140 "$B/hgas-device-bench" "${common[@]}"
        else
            # One GPU: NVSHMEM runs one PE putting into its own memory, so hgas's stream-ordered
            # put is measured the same way (one rank, its own heap) for the pair; the rest by
            # two ranks sharing the GPU as before, and the stream-ordered put between the two
            # processes too (its data check), as a line of its own ([shared-gpu]).
            bench "hgas-device-bench (hgasrun -n 2)" 150 "$HGASRUN" -n 2 --timeout 140 "$B/hgas-device-bench" \
                "${common[@]}" --only dev_g,dev_fadd,dev_put_block,raw_store
            bench "hgas-device-bench (hgasrun -n 1, own heap)" 90 "$HGASRUN" -n 1 --timeout 80 "$B/hgas-device-bench" \
                "${common[@]}" --only stream_put
            bench "hgas-device-bench (hgasrun -n 2, stream_put)" 90 "$HGASRUN" -n 2 --timeout 80 "$B/hgas-device-bench" \
                "${common[@]}" --only stream_put --transport shared-gpu
        fi
        HGAS_DEVICE_PROXY=force HGAS_DEVICE_PROXY_IDLE_US=0 bench "hgas-device-bench, proxy forced" 60 "$HGASRUN" -n 2 \
            --timeout 55 "$B/hgas-device-bench" --quick --sizes 8:1M:16 --transport proxy \
            --only dev_p,dev_put_signal,dev_g,dev_fadd,dev_put_block
    else say "bench: hgas-device-bench or hgasrun was not built"; FAILED+=("hgas-device-bench (not built)"); fi
    if [ -x "$B/hgas-nvshmem-peer" ]; then
        bench "hgas-nvshmem-peer (device, stream)" 120 "$B/hgas-nvshmem-peer" "${common[@]}" --only device,host_put_stream --timeout 110
    else say "bench: hgas-nvshmem-peer not built (no NVSHMEM found at configure: build.log)"; fi
    if [ -s "$OUT/.skips" ]; then say "bench: skipped measurements:"; tee -a "$SUMMARY" <"$OUT/.skips"; fi
    rm -f "$OUT/.skips"
    if [ -s "$OUT/bench.jsonl" ]; then
        rm -rf "$OUT/plots"
        timeout 60 python3 tools/bench-plot.py --out "$OUT/plots" "$OUT/bench.jsonl" 2>&1 | tee -a "$SUMMARY"
        grep -h '^# ratios to the raw limit\|^#   hgas::device\|^# put<block> against\|^#  .* B  hgas ' "$OUT/bench.txt" | tee -a "$SUMMARY"
        if [ -d "$OUT/plots" ] && ls "$OUT/plots"/*.png >/dev/null 2>&1; then
            tar -cf "$OUT/plots.tar" -C "$OUT" plots && rm -rf "$OUT/plots"
            say "plots: $OUT/plots.tar ($(tar -tf "$OUT/plots.tar" | grep -c '\.png$') PNG files)"
        fi
    fi
elif [ "$ONLY" = all ] || [ "$ONLY" = bench ]; then
    : >"$OUT/bench.txt"
    : >"$OUT/bench.jsonl"
    B="$BUILD/bench/gpu"
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    common=(--sizes "$SIZES" "${QFLAG[@]}")
    # hgas-device-bench runs inside hgas-bench --gpu below (or alone: --only device).
    if [ -x "$B/hgas-gpu-peers" ]; then bench hgas-gpu-peers 150 "$B/hgas-gpu-peers" "${common[@]}"
    else say "bench: hgas-gpu-peers was not built"; FAILED+=("hgas-gpu-peers (not built)"); fi
    if [ -x "$B/hgas-gpu-limits" ]; then bench hgas-gpu-limits 90 "$B/hgas-gpu-limits" --sizes 1M:256M:2 "${QFLAG[@]}"
    else say "bench: hgas-gpu-limits was not built"; FAILED+=("hgas-gpu-limits (not built)"); fi
    if [ -x "$B/hgas-nvshmem-peer" ]; then bench hgas-nvshmem-peer 150 "$B/hgas-nvshmem-peer" "${common[@]}" --timeout 140
    else say "bench: hgas-nvshmem-peer not built (no NVSHMEM found at configure: build.log)"; fi
    if [ -x "$B/hgas-nccl-peer" ]; then bench hgas-nccl-peer 120 "$B/hgas-nccl-peer" "${common[@]}" --timeout 110
    else say "bench: hgas-nccl-peer not built (no NCCL found at configure: build.log)"; fi
    if [ -x "$B/hgas-gpu-staging" ] && [ -n "$HGASRUN" ]; then
        bench "hgas-gpu-staging (hgasrun -n 2)" 150 "$HGASRUN" -n 2 --timeout 140 "$B/hgas-gpu-staging" "${common[@]}"
    else say "bench: hgas-gpu-staging or hgasrun was not built"; FAILED+=("hgas-gpu-staging (not built)"); fi
    # Tagged messages between GPU buffers, the hand-written baselines and the halo face
    # (docs/messaging.md); the pinned pool on its own with HGAS_PATH=staged.
    if [ -x "$B/hgas-bench-msg-gpu" ] && [ -n "$HGASRUN" ]; then
        bench "hgas-bench-msg-gpu (hgasrun -n 2)" 150 "$HGASRUN" -n 2 --timeout 140 "$B/hgas-bench-msg-gpu" "${common[@]}"
        bench "hgas-bench-msg-gpu staged (hgasrun -n 2)" 150 env HGAS_PATH=staged "$HGASRUN" -n 2 --timeout 140 \
            "$B/hgas-bench-msg-gpu" "${common[@]}" --only hgas,copy-send,pipelined --transport staged
    else say "bench: hgas-bench-msg-gpu or hgasrun was not built"; FAILED+=("hgas-bench-msg-gpu (not built)"); fi
    # UCX's tag API on CUDA memory, the peer of D->D messages (ucx_perftest of the carried UCX;
    # text output into bench.txt).
    UP=$(ls "$ROOT"/build/venv/lib/python3*/site-packages/libucx/bin/ucx_perftest \
        "$BUILD"/ucx-site/libucx/bin/ucx_perftest 2>/dev/null | head -1)
    if [ -n "$UP" ]; then
        # Its own libraries first: a UCX of the machine's on the library path (another version)
        # lacks symbols this ucx_perftest needs.
        UPENV=(env LD_LIBRARY_PATH="$(cd "$(dirname "$UP")/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
        for t in tag_lat:8 tag_bw:4194304 tag_bw:67108864; do
            port=$((13337 + RANDOM % 1000))
            timeout 60 "${UPENV[@]}" "$UP" -p "$port" -t "${t%%:*}" -m cuda -s "${t##*:}" -n 1000 >/dev/null 2>&1 &
            sleep 2
            bench "ucx_perftest ${t%%:*} -m cuda ${t##*:} B" 60 "${UPENV[@]}" "$UP" localhost -p "$port" -t "${t%%:*}" -m cuda -s "${t##*:}" -n 1000
            wait
        done
    else say "bench: no ucx_perftest in the carried UCX: the UCX tag peer of D->D messages is not measured"; fi
    HB=$(find_prog "$BUILD/tools/hgas-bench/hgas-bench" "$BUILD/bin/hgas-bench")
    if [ -n "$HB" ] && "$HB" --help 2>&1 | grep -q -- '--gpu'; then
        rm -f "$OUT/hgas-bench-gpu.json"
        # hgas's own paths only: the peers ran above, each under its own time limit
        # --budget: every phase gets its share of the limit, so a slow one (registration cache
        # off) cannot lose the whole table
        bench "hgas-bench --gpu" 240 "$HB" --gpu --no-peers --budget 200 --sizes "$SIZES" "${QFLAG[@]}" \
            --json "$OUT/hgas-bench-gpu.json"
    else
        say "bench: hgas-bench has no --gpu option yet: hgas's own GPU numbers are not measured"
    fi
    if [ -s "$OUT/.skips" ]; then say "bench: skipped measurements:"; tee -a "$SUMMARY" <"$OUT/.skips"; fi
    rm -f "$OUT/.skips"

    # ---- plots and ratios ---------------------------------------------------------------
    inputs=("$OUT/bench.jsonl")
    [ -s "$OUT/hgas-bench-gpu.json" ] && inputs+=("$OUT/hgas-bench-gpu.json")
    if [ -s "$OUT/bench.jsonl" ] || [ ${#inputs[@]} -gt 1 ]; then
        rm -rf "$OUT/plots"
        timeout 60 python3 tools/bench-plot.py --out "$OUT/plots" "${inputs[@]}" 2>&1 | tee -a "$SUMMARY"
        if [ -d "$OUT/plots" ] && ls "$OUT/plots"/*.png >/dev/null 2>&1; then
            tar -cf "$OUT/plots.tar" -C "$OUT" plots && rm -rf "$OUT/plots"
            say "plots: $OUT/plots.tar ($(tar -tf "$OUT/plots.tar" | grep -c '\.png$') PNG files)"
        fi
    fi
fi

# ---- coll --------------------------------------------------------------------------------
# Collectives on GPU memory: their GPU tests (--only coll; the tests step runs them otherwise),
# then hgas-bench-coll-gpu under hgasrun -n 2: hgas (blocking and stream-ordered) against NCCL
# in the same run, allreduce / broadcast / allgather / reduce_scatter / alltoall from 64 B to
# 64 MiB, JSON in bench.jsonl and the hgas/NCCL ratios in coll.txt. NCCL needs one GPU per rank:
# with one GPU it is not measured (the program says so) and hgas is measured alone.
if [ "$ONLY" = all ] || [ "$ONLY" = coll ]; then
    touch "$OUT/bench.txt" "$OUT/bench.jsonl"
    if [ "$ONLY" = coll ]; then
        t=$SECONDS
        timeout "$(limit 240)" ctest --test-dir "$BUILD" -L gpu -R 'test_coll_gpu|test_coll_kinds_cuda|test_coll_devscratch_cuda|test_coll_kernel_cuda|test_coll_direct_cuda|test_device_coll' \
            --output-on-failure >"$OUT/coll-tests.log" 2>&1
        rc=$?
        say "coll tests: status $rc, $(grep -c ' Passed ' "$OUT/coll-tests.log") passed, $((SECONDS - t)) s (coll-tests.log)"
        [ "$rc" != 0 ] && FAILED+=("coll tests")
    fi
    B="$BUILD/bench/gpu"
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ -x "$B/hgas-bench-coll-gpu" ] && [ -n "$HGASRUN" ]; then
        HGAS_CUDA_HEAP_SIZE=512M bench "hgas-bench-coll-gpu (hgasrun -n 2)" 240 "$HGASRUN" -n 2 --timeout 230 \
            "$B/hgas-bench-coll-gpu" --max 64M
        # The same two ranks as threads of one process on one GPU: their stream-ordered
        # collectives meet on the host and run as one kernel (docs/threads.md), against the
        # two processes above (which time-slice the GPU and take the queue).
        if [ "$NGPU" -lt 2 ]; then
            HGAS_CUDA_HEAP_SIZE=512M HGAS_GPU_SHARING=threads bench "hgas-bench-coll-gpu (hgasrun -n 2 --threads 2)" 120 \
                "$HGASRUN" -n 2 --threads 2 --timeout 110 "$B/hgas-bench-coll-gpu" --max 16M
        fi
        grep -E '^# (ratio|NCCL)' "$OUT/bench.txt" >"$OUT/coll.txt"; sed 's/^/  /' "$OUT/coll.txt" | tee -a "$SUMMARY"
    else say "bench: hgas-bench-coll-gpu not built (it needs NCCL's headers at configure: build.log)"; fi
    # Which scratch device vectors' reductions crossed (the device scratch: device -> device,
    # nothing through the host heap), per rank, from the counters test_coll_devscratch_cuda prints.
    timeout "$(limit 120)" ctest --test-dir "$BUILD" -L gpu -R '^test_coll_devscratch_cuda\.shm\.n2$' -V \
        >"$OUT/coll-scratch.log" 2>&1
    grep -o 'devscratch: .*' "$OUT/coll-scratch.log" | sort -u >"$OUT/coll-scratch.txt"
    if [ -s "$OUT/coll-scratch.txt" ]; then sed 's/^/  /' "$OUT/coll-scratch.txt" | tee -a "$SUMMARY"
    else say "coll: no device-scratch figures (test_coll_devscratch_cuda not built or failed: coll-scratch.log)"; fi
fi

# ---- himeno -----------------------------------------------------------------------------
# Its GPU tests (label gpu, names himeno.gpu.*: verification, bitwise identity over rank counts
# and with the CPU version, staged halos, the JSON record; modes stream, kernel, device: the same
# verification, forced proxy, identity with hybrid), then size L on 1 GPU (the kernel's
# roofline) and on 2 GPUs (overlap of the halo exchange), per GPU mode that is built, then the
# sweep (sizes x modes x ranks, strong and weak) with its table and plots.
if [ "$ONLY" = all ] || [ "$ONLY" = himeno ]; then
    : >"$OUT/himeno.txt"
    rm -rf "$OUT/himeno-sweep"; mkdir -p "$OUT/himeno-sweep"
    HIMENO=$BUILD/bin/himeno
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ ! -x "$HIMENO" ] || [ -z "$HGASRUN" ]; then
        say "himeno: $HIMENO or hgasrun was not built"
        FAILED+=("himeno (not built)")
    elif [ "$(left)" -lt 40 ]; then
        say "himeno: NOT RUN: the deadline ($DEADLINE s) is near"
        FAILED+=("himeno (not run)")
    else
        t=$SECONDS
        l=$(limit 120)
        timeout "$l" ctest --test-dir "$BUILD" -L '^gpu$' -R '^himeno\.gpu\.' --output-on-failure --timeout 60 -j 6 \
            >"$OUT/himeno-tests.log" 2>&1
        rc=$?
        if grep -q "No tests were found" "$OUT/himeno-tests.log"; then
            say "himeno: tests: none registered (a build without tests: GoogleTest missing makes HGAS_TESTS=OFF)"
            FAILED+=("himeno tests (not built)")
        else
            grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run' "$OUT/himeno-tests.log" \
                | sed 's/^/himeno tests: /' | tee -a "$OUT/himeno.txt" | tee -a "$SUMMARY"
            say "himeno: tests: status $rc after $((SECONDS - t)) s"
            [ $rc = 0 ] || FAILED+=("himeno tests")
        fi
        ranks=(1); [ "$NGPU" -ge 2 ] && ranks+=(2)
        for mode in hybrid stream kernel device; do
            for n in "${ranks[@]}"; do
                l=$(limit 25)
                if [ "$l" -lt 10 ]; then say "himeno: L $mode on $n rank(s) NOT RUN: the deadline is near"; FAILED+=("himeno L (not run)"); break 2; fi
                out=$(timeout -k 5 "$l" "$HGASRUN" -n "$n" --timeout "$l" "$HIMENO" --mode "$mode" --size L --iters 2000 \
                      --overhead --json "$OUT/himeno.jsonl" 2>&1)
                rc=$?
                if [ $rc = 2 ] && grep -q "is not built yet" <<<"$out"; then
                    say "himeno: mode $mode is not built yet (skipped)"
                    break
                fi
                { echo "== L, mode $mode, $n rank(s): status $rc"
                  grep -E '^(himeno: size|time:|MFLOPS:|gpu:|bandwidth|comm overhead:|cpu time|energy:)' <<<"$out"; } \
                    | tee -a "$OUT/himeno.txt" | tee -a "$SUMMARY"
                if [ $rc != 0 ]; then
                    grep -vE '^JSON' <<<"$out" | tail -8 | sed 's/^/    /' | tee -a "$OUT/himeno.txt" | tee -a "$SUMMARY"
                    FAILED+=("himeno L $mode n$n")
                fi
            done
        done
        # The sweep: M and L (XL only when the deadline leaves room: 8 runs of ~4 s), every GPU
        # mode, 1 and 2 GPUs, strong and weak (L per GPU). Iterations so that each timed run
        # lasts ~0.3-0.5 s (NVML's energy counter moves) and the sweep ~2 minutes.
        sizes=M,L iters=M=5000,L=1000
        [ "$(left)" -gt 260 ] && sizes=M,L,XL iters=M=5000,L=1000,XL=150
        sranks=1; [ "$NGPU" -ge 2 ] && sranks=1,2
        l=$(limit 150)
        if [ "$l" -lt 30 ]; then
            say "himeno: sweep NOT RUN: the deadline is near"; FAILED+=("himeno sweep (not run)")
        else
            ts=$SECONDS
            timeout -k 5 "$l" python3 apps/himeno/sweep --hgasrun "$HGASRUN" --himeno "$HIMENO" --sizes "$sizes" \
                --weak-sizes L --modes hybrid,stream,kernel,device --ranks "$sranks" --iters "$iters" --timeout 60 \
                --out "$OUT/himeno-sweep" >"$OUT/himeno-sweep/table.txt" 2>"$OUT/himeno-sweep/sweep.log" \
                || FAILED+=("himeno sweep")
            { echo "== sweep ($sizes, weak L; ranks $sranks): $((SECONDS - ts)) s"; cat "$OUT/himeno-sweep/table.txt"
              grep -E 'skipped' "$OUT/himeno-sweep/sweep.log"; } | tee -a "$OUT/himeno.txt" | tee -a "$SUMMARY"
        fi
        say "himeno: done after $((SECONDS - t)) s"
    fi
fi

# ---- NAS FT ------------------------------------------------------------------------------
# Its GPU tests (label gpu, names nas.*.gpu.*; in the tests step when everything runs), then FT
# classes B and C on 1 rank with --kind cuda (the report's "FFT time / cuFFT time" compares the
# transforms with cuFFT's own 3-D transform of the grid, timed in the same run), and class B on
# the CPU with every core, for the GPU/CPU speedup per iteration.
if [ "$ONLY" = all ] || [ "$ONLY" = nas ]; then
    : >"$OUT/nas.txt"
    FT=$BUILD/bin/nas-ft
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ ! -x "$FT" ] || [ ! -x "$HGASRUN" ]; then
        say "nas: $FT or hgasrun was not built"
        FAILED+=("nas (not built)")
    else
        t=$SECONDS
        if [ "$ONLY" = nas ]; then
            timeout "$(limit 150)" ctest --test-dir "$BUILD" -L '^gpu$' -R '^nas\.' --output-on-failure --timeout 90 -j 2 \
                >"$OUT/nas-tests.log" 2>&1
            rc=$?
            grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|No tests were found' "$OUT/nas-tests.log" \
                | sed 's/^/nas tests: /' | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
            [ $rc = 0 ] || FAILED+=("nas tests")
        fi
        for run in "B cuda" "C cuda" "B host"; do
            set -- $run
            l=$(limit 120)
            if [ "$l" -lt 20 ]; then say "nas: FT class $1 --kind $2 NOT RUN: the deadline is near"; FAILED+=("nas FT $1 $2 (not run)"); continue; fi
            out=$(timeout "$l" "$HGASRUN" -n 1 --timeout "$l" "$FT" --class "$1" --kind "$2" --json "$OUT/nas.jsonl" 2>&1)
            rc=$?
            { echo "== nas-ft --class $1 --kind $2 on 1 rank: status $rc"
              grep -E '^ (Variant|Time in seconds|Mop/s total|Verification|Phases|FFT time|GPU energy)' <<<"$out"; } \
                | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
            if [ $rc != 0 ]; then
                grep -vE '^JSON' <<<"$out" | tail -8 | sed 's/^/    /' | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
                FAILED+=("nas FT $1 $2")
            fi
        done
        # Seconds per iteration, GPU against CPU, for class B (the records just written).
        python3 - "$OUT/nas.jsonl" <<'PY' 2>&1 | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
b = {r["kind"]: r for r in recs if r.get("class") == "B" and r.get("ranks") == 1}
if "cuda" in b and "host" in b:
    print("nas: FT class B, time per run: GPU %.3f s, CPU (%d threads) %.3f s: GPU %.2fx faster"
          % (b["cuda"]["time_s"], b["host"]["threads"], b["host"]["time_s"], b["host"]["time_s"] / b["cuda"]["time_s"]))
PY
        say "nas: done after $((SECONDS - t)) s"
    fi
fi

# ---- NAS MG (apps/nas/mg) ------------------------------------------------------------------
# Its GPU tests (nas.mg.gpu.*: class S verified with --kind cuda on 1 and 2 ranks, and its norm
# bitwise --kind host's) run in the tests step or the NAS step above. Then class B on 1 rank
# with --kind cuda (grids and kernels on the GPU) and on the machine's cores with --kind host
# (one rank per core: the largest power of two that fits), each verified, with the ratio.
if [ "$ONLY" = all ] || [ "$ONLY" = nas ]; then
    MG=$BUILD/bin/nas-mg
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ ! -x "$MG" ] || [ -z "$HGASRUN" ]; then
        say "nas-mg: $MG or hgasrun was not built"
        FAILED+=("nas-mg (not built)")
    else
        t=$SECONDS
        cores=$(nproc) hr=1
        while [ $((hr * 2)) -le "$cores" ]; do hr=$((hr * 2)); done
        declare -A mg_time=()
        # Class C (512^3, 3.6 GB of grids on one GPU; nas-mg sizes HGAS_CUDA_HEAP_SIZE for them)
        # last, with its own time budget of 300 s.
        for run in "1 cuda B 150" "$hr host B 150" "1 cuda C 300"; do
            set -- $run
            l=$(limit "$4")
            if [ "$l" -lt 20 ]; then say "nas-mg: class $3 $2 NOT RUN: the deadline is near"; FAILED+=("nas-mg $3 $2 (not run)"); continue; fi
            out=$(timeout -k 5 "$l" "$HGASRUN" -n "$1" --timeout "$l" "$MG" --class "$3" --kind "$2" \
                  --json "$OUT/nas-mg.jsonl" 2>&1)
            rc=$?
            { echo "== nas-mg --class $3 --kind $2 on $1 rank(s): status $rc"
              grep -E '^ (Kind|Time in seconds|Mop/s total|Verification|Phases|GPU energy|Number of processes|Memory per rank)' <<<"$out"; } \
                | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
            if [ $rc != 0 ]; then
                grep -vE '^JSON' <<<"$out" | tail -8 | sed 's/^/    /' | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
                FAILED+=("nas-mg $3 $2")
            elif [ "$3" = B ]; then
                mg_time[$2]=$(sed -n 's/^JSON .*"time_s":\([0-9.e+-]*\).*/\1/p' <<<"$out")
            fi
        done
        if [ -n "${mg_time[cuda]:-}" ] && [ -n "${mg_time[host]:-}" ]; then
            awk -v h="${mg_time[host]}" -v c="${mg_time[cuda]}" -v n="$hr" \
                'BEGIN { if (c > 0) printf "nas-mg: class B: 1 GPU %.3f s, %d CPU ranks %.3f s: GPU %.2fx faster\n", c, n, h, h / c }' \
                | tee -a "$OUT/nas.txt" | tee -a "$SUMMARY"
        fi
        say "nas-mg: done after $((SECONDS - t)) s"
    fi
fi

# ---- episim -----------------------------------------------------------------------------
# Its GPU tests (label gpu, names episim.gpu.*: the curve identical to the CPU's for the three
# styles on 1 and 2 ranks, the analytic one-location check with kind cuda), then the benchmark:
# the three styles with kind cuda on 1 and 2 GPUs, one JSON record each (episim-sweep/).
if [ "$ONLY" = all ] || [ "$ONLY" = episim ]; then
    : >"$OUT/episim.txt"
    EPISIM=$BUILD/bin/episim
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ ! -x "$EPISIM" ] || [ -z "$HGASRUN" ]; then
        say "episim: $EPISIM or hgasrun was not built"
        FAILED+=("episim (not built)")
    elif [ "$(left)" -lt 40 ]; then
        say "episim: NOT RUN: the deadline ($DEADLINE s) is near"
        FAILED+=("episim (not run)")
    else
        t=$SECONDS
        timeout "$(limit 150)" ctest --test-dir "$BUILD" -L '^gpu$' -R '^episim\.gpu\.' --output-on-failure --timeout 140 -j 2 \
            >"$OUT/episim-tests.log" 2>&1
        rc=$?
        grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|No tests were found' "$OUT/episim-tests.log" \
            | sed 's/^/episim tests: /' | tee -a "$OUT/episim.txt" | tee -a "$SUMMARY"
        [ $rc = 0 ] || FAILED+=("episim tests")
        sranks=1; [ "$NGPU" -ge 2 ] && sranks=1,2
        l=$(limit 120)
        if [ "$l" -lt 30 ]; then
            say "episim: benchmark NOT RUN: the deadline is near"; FAILED+=("episim bench (not run)")
        else
            rm -rf "$OUT/episim-sweep"; mkdir -p "$OUT/episim-sweep"
            timeout -k 5 "$l" python3 apps/episim/sweep --hgasrun "$HGASRUN" --episim "$EPISIM" --kind cuda \
                --ranks "$sranks" --args "--persons 400000 --grid 200x200 --days 30 --fragment 16000" \
                --env HGAS_CUDA_HEAP_SIZE=256M --timeout 100 --repeat 3 --budget $((l - 10)) --out "$OUT/episim-sweep" \
                >"$OUT/episim-sweep/table.txt" 2>"$OUT/episim-sweep/sweep.log" || FAILED+=("episim bench")
            { echo "== episim benchmark (kind cuda, ranks $sranks)"; cat "$OUT/episim-sweep/table.txt"
              grep -E 'failed|skipped' "$OUT/episim-sweep/sweep.log"; } | tee -a "$OUT/episim.txt" | tee -a "$SUMMARY"
        fi
        say "episim: done after $((SECONDS - t)) s"
    fi
fi

# ---- seismic ----------------------------------------------------------------------------
# Its GPU tests (label gpu, names seismic.gpu.*: the three styles on kind cuda against the CPU's
# seismograms, the explosive source's physics, energy decay), then the three styles on 1 and 2
# ranks (one GPU each where there are two) at 256^3 and its table and plots.
if [ "$ONLY" = all ] || [ "$ONLY" = seismic ]; then
    : >"$OUT/seismic.txt"
    rm -rf "$OUT/seismic-sweep"; mkdir -p "$OUT/seismic-sweep"
    SEISMIC=$BUILD/bin/seismic
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ ! -x "$SEISMIC" ] || [ -z "$HGASRUN" ]; then
        say "seismic: $SEISMIC or hgasrun was not built"
        FAILED+=("seismic (not built)")
    elif [ "$(left)" -lt 40 ]; then
        say "seismic: NOT RUN: the deadline ($DEADLINE s) is near"
        FAILED+=("seismic (not run)")
    else
        t=$SECONDS
        timeout "$(limit 150)" ctest --test-dir "$BUILD" -L '^gpu$' -R '^seismic\.gpu\.' --output-on-failure --timeout 140 \
            -j 3 >"$OUT/seismic-tests.log" 2>&1
        rc=$?
        if grep -q "No tests were found" "$OUT/seismic-tests.log"; then
            say "seismic: tests: none registered (configure with -DSEISMIC_TESTS=ON)"
            FAILED+=("seismic tests (not built)")
        else
            grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run' "$OUT/seismic-tests.log" \
                | sed 's/^/seismic tests: /' | tee -a "$OUT/seismic.txt" | tee -a "$SUMMARY"
            say "seismic: tests: status $rc after $((SECONDS - t)) s"
            [ $rc = 0 ] || FAILED+=("seismic tests")
        fi
        l=$(limit 150)
        if [ "$l" -lt 30 ]; then
            say "seismic: benchmark NOT RUN: the deadline is near"; FAILED+=("seismic bench (not run)")
        else
            timeout -k 5 "$l" python3 apps/seismic/sweep --hgasrun "$HGASRUN" --seismic "$SEISMIC" --kind cuda \
                --grid 256x256x256 --steps 200 --ranks 1,2 --timeout 60 --repeat 3 --budget $((l - 10)) \
                --out "$OUT/seismic-sweep" \
                >"$OUT/seismic-sweep/table.txt" 2>"$OUT/seismic-sweep/sweep.log" || FAILED+=("seismic bench")
            { echo "== seismic, kind cuda, 256^3, 200 steps, styles x ranks 1,2"; cat "$OUT/seismic-sweep/table.txt"
              grep -E 'skipped' "$OUT/seismic-sweep/sweep.log"; } | tee -a "$OUT/seismic.txt" | tee -a "$SUMMARY"
            cp "$OUT/seismic-sweep/results.jsonl" "$OUT/seismic.jsonl" 2>/dev/null
        fi
        say "seismic: done after $((SECONDS - t)) s"
    fi
fi

# ---- OSU OpenSHMEM benchmarks (host memory, the machine's quiet cores) --------------------
# The OSU micro-benchmarks' OpenSHMEM programs, carried as .deps/osu/openshmem (not part of
# hgas), built with hgas's oshcc and with the machine's own OpenSHMEM (Open MPI's, when
# /usr/bin/oshcc exists) and run side by side at 2 PEs by tools/osu-shmem.sh: put/get latency,
# put message rate, atomics, barrier, broadcast, collect, fcollect, reduce.
if [ "$ONLY" = all ] || [ "$ONLY" = osu ]; then
    OSU_SRC=${OSU_SRC:-$ROOT/.deps/osu/openshmem}
    if [ ! -f "$OSU_SRC/osu_common.c" ]; then
        say "osu: NOT RUN: no OSU OpenSHMEM sources at $OSU_SRC (carry .deps/osu)"
    elif [ "$(left)" -lt 60 ]; then
        say "osu: NOT RUN: the deadline ($DEADLINE s) is near"; FAILED+=("osu (not run)")
    else
        t=$SECONDS
        peer=(); [ -x /usr/bin/oshcc ] && [ -x /usr/bin/oshrun ] && peer=(--peer-bin /usr/bin)
        timeout -k 5 "$(limit 240)" bash tools/osu-shmem.sh "$OSU_SRC" --bin "$BUILD/bin" --np 2 --timeout 60 \
            ${peer[@]+"${peer[@]}"} --out "$OUT/osu" >"$OUT/osu.txt" 2>&1 || FAILED+=("osu")
        grep -E '^(==|osu-shmem:)' "$OUT/osu.txt" | tee -a "$SUMMARY"
        say "osu: done after $((SECONDS - t)) s (table: osu.txt)"
    fi
fi

# ---- several ranks on one GPU (docs/sharing.md) ------------------------------------------
# The busy-target benchmark with the device memory on the GPU (helper thread off and on, shm
# and UCX where built), then the sharing sweep: himeno (M, mode kernel) and NAS FT/MG class B
# at 1, 2, 4, 8 ranks on GPU 0 under each HGAS_GPU_SHARING mode (the ones this build cannot run
# are listed as not run), time per iteration, GPU utilization, sharing overhead.
if [ "$ONLY" = all ] || [ "$ONLY" = sharing ]; then
    : >"$OUT/sharing.txt"
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    HB=$(find_prog "$BUILD/tools/hgas-bench/hgas-bench" "$BUILD/bin/hgas-bench")
    t=$SECONDS
    if [ -z "$HB" ] || [ ! -x "$BUILD/bench/hgas-bench-busy" ]; then
        say "sharing: hgas-bench or hgas-bench-busy was not built"; FAILED+=("busy bench (not built)")
    elif [ "$(limit 150)" -lt 40 ]; then
        say "sharing: busy bench NOT RUN: the deadline is near"; FAILED+=("busy bench (not run)")
    else
        # shm, and UCX (RMA) where it is built: hgas-bench's default transports
        timeout -k 5 "$(limit 150)" "$HB" --busy --quick --json "$OUT/busy.jsonl" >"$OUT/busy.log" 2>&1 \
            || FAILED+=("busy bench")
        { echo "== hgas-bench --busy --quick (device memory: cuda)"; sed -n '/^busy target/,$p' "$OUT/busy.log"
          grep -E 'FAILED' "$OUT/busy.log"; } | tee -a "$OUT/sharing.txt" | tee -a "$SUMMARY"
    fi
    SB=${SHARING_BUDGET:-240}
    l=$(limit $((SB + 30)))
    if [ -z "$HGASRUN" ]; then
        say "sharing: hgasrun was not built"; FAILED+=("sharing sweep (not built)")
    elif [ "$l" -lt 60 ]; then
        say "sharing: sweep NOT RUN: the deadline is near"; FAILED+=("sharing sweep (not run)")
    else
        mkdir -p "$OUT/sharing-sweep"
        timeout -k 5 "$l" python3 tools/sharing-sweep.py --bin "$BUILD/bin" --out "$OUT/sharing-sweep" \
            --budget $((l - 40)) --timeout 90 >"$OUT/sharing-sweep/table.txt" 2>"$OUT/sharing-sweep/sweep.log" \
            || FAILED+=("sharing sweep")
        { echo "== sharing sweep (himeno M, NAS FT/MG B; 1,2,4,8 ranks on GPU 0 x modes)"; cat "$OUT/sharing-sweep/table.txt"; } \
            | tee -a "$OUT/sharing.txt" | tee -a "$SUMMARY"
    fi
    say "sharing: done after $((SECONDS - t)) s"
fi

# ---- matmul -----------------------------------------------------------------------------
# Its GPU tests (label gpu, names matmul.gpu.*: cuBLAS tiles through hgas gets, checked against
# one cuBLAS product), then n = 16384 on 1 rank and on 2 ranks sharing GPU 0, each printing
# single-GPU cuBLAS's GFLOP/s for the same n and the ratio. At most 120 s for the step.
if [ "$ONLY" = all ] || [ "$ONLY" = matmul ]; then
    : >"$OUT/matmul.txt"; rm -f "$OUT/matmul.jsonl"
    MATMUL=$BUILD/bin/matmul
    HGASRUN=$(find_prog "$BUILD/bin/hgasrun" "$BUILD/tools/hgasrun/hgasrun")
    if [ ! -x "$MATMUL" ] || [ -z "$HGASRUN" ]; then
        say "matmul: $MATMUL or hgasrun was not built (it needs OpenBLAS: libopenblas-dev)"
        FAILED+=("matmul (not built)")
    elif [ "$(left)" -lt 40 ]; then
        say "matmul: NOT RUN: the deadline ($DEADLINE s) is near"
        FAILED+=("matmul (not run)")
    else
        t=$SECONDS
        timeout "$(limit 40)" ctest --test-dir "$BUILD" -L '^gpu$' -R '^matmul\.gpu\.' --output-on-failure --timeout 35 \
            -j 1 >"$OUT/matmul-tests.log" 2>&1
        rc=$?
        if grep -q "No tests were found" "$OUT/matmul-tests.log"; then
            say "matmul: tests: none registered (configure with -DMATMUL_TESTS=ON)"
            FAILED+=("matmul tests (not built)")
        else
            grep -E 'tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run' "$OUT/matmul-tests.log" \
                | sed 's/^/matmul tests: /' | tee -a "$OUT/matmul.txt" | tee -a "$SUMMARY"
            say "matmul: tests: status $rc after $((SECONDS - t)) s"
            [ $rc = 0 ] || FAILED+=("matmul tests")
        fi
        # A, B, C of order 16384 are 6 GiB: the symmetric cuda heap of one rank holds them all
        for p in 1 2; do
            rest=$((t + 120 - SECONDS)); [ $rest -gt 60 ] && rest=60   # each run at most 60 s
            l=$(limit $rest)
            if [ "$l" -lt 20 ]; then
                say "matmul: n 16384 on $p ranks NOT RUN: its 120 s are spent"; FAILED+=("matmul n$p (not run)"); continue
            fi
            HGAS_CUDA_HEAP_SIZE=7G HGAS_TIMEOUT=60 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} timeout -k 5 "$l" \
                "$HGASRUN" -n $p --timeout "$l" "$MATMUL" --kind cuda --n 16384 --reps 3 --json "$OUT/matmul.jsonl" \
                >"$OUT/matmul-n$p.log" 2>&1 || FAILED+=("matmul n$p")
            { echo "== matmul, kind cuda, n 16384, $p rank(s) on one GPU"
              grep -E '^matmul: (n 16384 on|one-rank|verification)|hgas_abort|rank [0-9]+:|^hgasrun:' "$OUT/matmul-n$p.log"; } \
                | tee -a "$OUT/matmul.txt" | tee -a "$SUMMARY"
        done
        say "matmul: done after $((SECONDS - t)) s"
    fi
fi

say "finished after $((SECONDS - START)) s"
if [ ${#FAILED[@]} -gt 0 ]; then
    say "FAILED: ${FAILED[*]}"
    exit 1
fi
say "all steps passed"
exit 0
