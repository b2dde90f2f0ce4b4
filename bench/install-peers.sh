#!/bin/sh
# Installs the peers that hgas-bench measures hgas against, at the versions its numbers were
# taken with (Debian 12 "bookworm"): Open MPI 4.1.4 with its OpenSHMEM (oshcc, oshrun; spml
# ucx over Debian's UCX 1.13). ucx_perftest needs nothing here: it ships in the pinned UCX
# wheel that `make deps` installs into build/venv. Needs root (or sudo) and apt.
set -eu
OMPI_VERSION=${OMPI_VERSION:-4.1.4-3+b1}
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if command -v oshcc >/dev/null 2>&1 && command -v oshrun >/dev/null 2>&1; then
    echo "install-peers: oshcc and oshrun are already installed ($(command -v oshcc))"
    exit 0
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
    "openmpi-bin=${OMPI_VERSION}" "libopenmpi-dev=${OMPI_VERSION}" \
    || { echo "install-peers: Open MPI ${OMPI_VERSION} is not available here (apt-cache policy openmpi-bin);" \
              "set OMPI_VERSION to the version it offers" >&2; exit 1; }
oshcc --version >/dev/null
echo "install-peers: $(oshrun --version 2>&1 | head -1)"
