#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair, one rank in each,
# started the way srun/mpirun would start them (rank variables + HGAS_BOOT_ADDR; rank 0 serves
# the bootstrap store), with UCX limited to TCP so that every operation crosses the veth link.
#   two_hosts.sh <test program> [more programs...]
# Needs root and iproute2; otherwise it says so and exits 77 (ctest: skipped).
set -u
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "two_hosts: skipped: needs root and iproute2 (ip) to create network namespaces"
    exit 77
fi
if ! ip netns add "hgas-probe-$$" 2>/dev/null; then
    echo "two_hosts: skipped: this machine does not allow creating network namespaces"
    exit 77
fi
ip netns del "hgas-probe-$$"

ID=$$
NA=hgasA$ID NB=hgasB$ID VA=hva$ID VB=hvb$ID
NET=10.$((ID % 200 + 20)).$((ID / 200 % 250)).
cleanup() { ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null; }
trap cleanup EXIT
ip netns add "$NA" && ip netns add "$NB" || exit 1
ip link add "$VA" type veth peer name "$VB" || exit 1
ip link set "$VA" netns "$NA" && ip link set "$VB" netns "$NB" || exit 1
ip -n "$NA" addr add "${NET}1/24" dev "$VA" && ip -n "$NB" addr add "${NET}2/24" dev "$VB" || exit 1
for ns in "$NA" "$NB"; do ip -n "$ns" link set lo up; done
ip -n "$NA" link set "$VA" up && ip -n "$NB" link set "$VB" up || exit 1

bytes() { ip netns exec "$NA" cat "/sys/class/net/$VA/statistics/tx_bytes"; }
FAILED=0
PORT=$((20000 + ID % 20000))
for prog in "$@"; do
    for style in mpirun slurm; do
        PORT=$((PORT + 1))
        SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
        common=(HGAS_BOOT_ADDR="tcp:${NET}1:$PORT" HGAS_BOOT_SECRET="$SECRET" HGAS_TIMEOUT=120
                HGAS_BOOT_TIMEOUT=60 UCX_TLS=tcp,self UCX_WARN_UNUSED_ENV_VARS=n)
        if [ "$style" = mpirun ]; then
            r0=(OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2) r1=(OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2)
        else
            r0=(SLURM_PROCID=0 SLURM_NTASKS=2) r1=(SLURM_PROCID=1 SLURM_NTASKS=2)
        fi
        name="$(basename "$prog") ($style style)"
        before=$(bytes)
        ip netns exec "$NA" env -u HGAS_RANK -u HGAS_SIZE -u HGASRUN_PID "${common[@]}" "${r0[@]}" \
            HGAS_NODE_NAME=hostA UCX_NET_DEVICES="$VA" timeout 300 "$prog" >"/tmp/two_hosts.$ID.0" 2>&1 &
        p0=$!
        ip netns exec "$NB" env -u HGAS_RANK -u HGAS_SIZE -u HGASRUN_PID "${common[@]}" "${r1[@]}" \
            HGAS_NODE_NAME=hostB UCX_NET_DEVICES="$VB" timeout 300 "$prog" >"/tmp/two_hosts.$ID.1" 2>&1 &
        p1=$!
        wait $p0; rc0=$?
        wait $p1; rc1=$?
        moved=$(( $(bytes) - before ))
        if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ $moved -gt 100000 ]; then
            echo "ok   $name: both hosts passed; $moved bytes left host A over the veth link"
        else
            echo "FAIL $name: rank 0 exit $rc0, rank 1 exit $rc1, $moved bytes over the link"
            for r in 0 1; do echo "--- rank $r:"; tail -40 "/tmp/two_hosts.$ID.$r"; done
            FAILED=$((FAILED + 1))
        fi
        grep -E "^\[  (PASSED|FAILED) " "/tmp/two_hosts.$ID.0" | sed 's/^/     rank 0: /'
        rm -f "/tmp/two_hosts.$ID.0" "/tmp/two_hosts.$ID.1"
    done
done
echo "$FAILED failed"
[ $FAILED -eq 0 ]
