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

.PHONY: all deps configure build run test bench bench-deps plot-deps info clean

all: build

# UCX comes from the pinned PyPI wheel, installed into a virtual environment inside the
# build tree; nothing is installed on the machine itself.
$(VENV)/.ucx-installed: requirements-ucx.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-ucx.txt
	touch $@

deps: $(VENV)/.ucx-installed

# matplotlib (pinned) for the apps' sweep plots, into the same environment:
# make plot-deps, then $(VENV)/bin/python apps/episim/sweep ...
$(VENV)/.plot-installed: $(VENV)/.ucx-installed apps/episim/requirements-plot.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r apps/episim/requirements-plot.txt
	touch $@

plot-deps: $(VENV)/.plot-installed

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

bench: build
	$(BUILD)/tools/hgas-bench/hgas-bench --all

info: build
	$(BUILD)/tools/hgas-info/hgas-info

clean:
	rm -rf $(BUILD)
