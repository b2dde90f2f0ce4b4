# hgas: two commands on a fresh machine.
#   make run   - installs the pinned UCX, builds everything, runs a 4-rank demo
#   make test  - the same build, then every test (unit, multi-rank, faults, two hosts)
# Other targets: deps, build, bench, info, clean. BUILD=dir picks the build tree.

BUILD   ?= build
PYTHON  ?= python3
JOBS    ?= $(shell nproc)
VENV    := $(BUILD)/venv
UCX_PREFIX = $(shell $(VENV)/bin/python -c 'import libucx, os; print(os.path.dirname(libucx.__file__))' 2>/dev/null)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test bench bench-deps plot-deps bench-python bench-init info clean tsan

all: build

# UCX comes from the pinned PyPI wheel, installed into a virtual environment inside the
# build tree; nothing is installed on the machine itself.
$(VENV)/.ucx-installed: requirements-ucx.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-ucx.txt
	touch $@

# The Python package's tests run with the same venv: numpy and pytest, pinned.
$(VENV)/.python-installed: requirements-python.txt $(VENV)/.ucx-installed
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-python.txt
	touch $@

deps: $(VENV)/.ucx-installed $(VENV)/.python-installed

$(BUILD)/build.ninja: deps CMakeLists.txt
	cmake -G Ninja -S . -B $(BUILD) -DHGAS_UCX_ROOT=$(UCX_PREFIX) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/tools/hgasrun/hgasrun -n 4 --prefix $(BUILD)/examples/hgas-demo

# The GPU tests (label gpu) need a GPU: say how many were left out and how to run them.
test: build
	@rc=0; ctest --test-dir $(BUILD) --output-on-failure -j 2 --timeout 600 -LE gpu || rc=$$?; \
	n=$$(ctest --test-dir $(BUILD) -N -L gpu | sed -n 's/^Total Tests: *//p'); \
	echo "make test: left out $${n:-0} GPU tests (label gpu); on a machine with a GPU run them with: bash tools/gpu-check.sh"; \
	exit $$rc

# The OpenSHMEM peer of hgas-bench (Debian's Open MPI, pinned); needs root.
bench-deps:
	sh bench/install-peers.sh

# matplotlib (pinned) for the sweep scripts' and benchmarks' PNG plots, into the same venv.
$(VENV)/.plot-installed: requirements-plot.txt $(VENV)/.ucx-installed
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-plot.txt
	touch $@

plot-deps: $(VENV)/.plot-installed

bench: build
	$(BUILD)/tools/hgas-bench/hgas-bench --all

# Python call overhead (python/bench/overhead.py): hgas from Python, the same loops in C, mpi4py
# (pinned, built against the machine's Open MPI: make bench-deps installs it).
bench-python: build
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-binary mpi4py -r requirements-bench-python.txt
	$(BUILD)/bin/hgasrun -n 2 $(BUILD)/python/hgas-py-overhead-c
	PYTHONPATH=$(BUILD)/python $(BUILD)/bin/hgasrun -n 2 $(VENV)/bin/python python/bench/overhead.py
	mpirun --allow-run-as-root --oversubscribe -n 2 $(VENV)/bin/python python/bench/overhead.py --mpi

# Start-up time against the number of ranks: table and $(BUILD)/init.png (docs/bench.md).
bench-init: build $(VENV)/.plot-installed
	PATH=$(abspath $(VENV))/bin:$$PATH $(BUILD)/tools/hgas-bench/hgas-bench --init --json $(BUILD)/init.jsonl \
	    --plot-dir $(BUILD)

info: build
	$(BUILD)/tools/hgas-info/hgas-info

clean:
	rm -rf $(BUILD)

# The thread-multiple tests under ThreadSanitizer, in a tree of their own ($(BUILD)-tsan): only
# their targets are built (a few minutes on 2 cores), over shared memory (UCX's own code is not
# instrumented; its mmap hooks, which hgas's registration cache uses, crash TSan's own mutex
# bookkeeping at thread exit, so they are off for the run). Not part of `make test`: it rebuilds
# the library.
tsan: deps
	cmake -G Ninja -S . -B $(BUILD)-tsan -DHGAS_UCX_ROOT=$(UCX_PREFIX) -DHGAS_TSAN=ON -DHGAS_CUDA=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)-tsan -j $(JOBS) --target hgasrun test_thread_multiple shmem_thread_multiple shmem_ctx_private
	UCX_MEM_MMAP_HOOK_MODE=none TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir $(BUILD)-tsan --output-on-failure \
	  -R '^(test_thread_multiple|shmem\.thread_multiple|shmem\.ctx_private)\.shm\.'

