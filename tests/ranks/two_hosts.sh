#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair, one rank in each,
# started the way srun/mpirun would start them (rank variables + HGAS_BOOT_ADDR; rank 0 serves
# the bootstrap store), with UCX limited to TCP so that every operation crosses the veth link;
# with --hgasrun also the way a user without a batch system would: hgasrun in host A with
# --host <A's address>,<B's address>, starting B's rank through an rsh that enters B.
#   two_hosts.sh [--hgasrun <hgasrun>] <test program> [more programs...]
# Needs root and iproute2; otherwise it says so and exits 77 (ctest: skipped).
set -u
HGASRUN=""
if [ "${1:-}" = --hgasrun ]; then HGASRUN=$2; shift 2; fi
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
# The rsh of the hgasrun style: host B's address enters namespace B (in a session of its own,
# as sshd would start it), with B's network device for UCX.
RSH=/tmp/two_hosts.$ID.rsh
cat >"$RSH" <<SH
#!/bin/sh
[ "\$1" = "${NET}2" ] || { echo "rsh: unknown host \$1" >&2; exit 255; }
exec ip netns exec "$NB" env UCX_NET_DEVICES="$VB" setsid -w /bin/sh -c "\$2"
SH
chmod +x "$RSH"
trap 'cleanup; rm -f "$RSH"' EXIT
STYLES="mpirun slurm"
[ -n "$HGASRUN" ] && STYLES="$STYLES hgasrun"
FAILED=0
PORT=$((20000 + ID % 20000))
for prog in "$@"; do
    for style in $STYLES; do
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
        if [ "$style" = hgasrun ]; then
            # One launcher in host A; rank 1 in host B through the rsh, its boot address A's.
            ip netns exec "$NA" env -u HGAS_RANK -u HGAS_SIZE -u HGASRUN_PID -u HGAS_BOOT_ADDR \
                HGAS_TIMEOUT=120 HGAS_BOOT_TIMEOUT=60 UCX_TLS=tcp,self UCX_WARN_UNUSED_ENV_VARS=n \
                UCX_NET_DEVICES="$VA" timeout 300 "$HGASRUN" --host "${NET}1,${NET}2" --rsh "$RSH" \
                -x UCX_TLS -x UCX_WARN_UNUSED_ENV_VARS "$prog" >"/tmp/two_hosts.$ID.0" 2>&1
            rc0=$?
            rc1=$rc0
            : >"/tmp/two_hosts.$ID.1"
        else
        ip netns exec "$NA" env -u HGAS_RANK -u HGAS_SIZE -u HGASRUN_PID "${common[@]}" "${r0[@]}" \
            HGAS_NODE_NAME=hostA UCX_NET_DEVICES="$VA" timeout 300 "$prog" >"/tmp/two_hosts.$ID.0" 2>&1 &
        p0=$!
        ip netns exec "$NB" env -u HGAS_RANK -u HGAS_SIZE -u HGASRUN_PID "${common[@]}" "${r1[@]}" \
            HGAS_NODE_NAME=hostB UCX_NET_DEVICES="$VB" timeout 300 "$prog" >"/tmp/two_hosts.$ID.1" 2>&1 &
        p1=$!
        wait $p0; rc0=$?
        wait $p1; rc1=$?
        fi
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
