#!/usr/bin/env python3
"""Opens COUNT idle connections to a bootstrap store (HGAS_BOOT_ADDR syntax: unix:/path or
tcp:host:port), keeps them HOLD seconds without sending a byte, then reports how many the store
had closed: `flood: opened N, refused R, closed by the store C, still open O`.
Used by store_flood.sh (and by hand: a stranger's flood against a running job)."""
import errno
import resource
import select
import socket
import sys
import time


def main():
    addr, count, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, count + 64) if hard != resource.RLIM_INFINITY else count + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    kind, _, rest = addr.partition(":")
    socks, refused = [], 0
    for _ in range(count):
        try:
            if kind == "unix":
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(rest)
            else:
                host, _, port = rest.rpartition(":")
                s = socket.create_connection((host, int(port)))
            s.setblocking(False)
            socks.append(s)
        except OSError as e:
            if e.errno == errno.EMFILE:
                break
            refused += 1
    print(f"flood: opened {len(socks)}", flush=True)
    end = time.time() + hold
    closed = set()
    poller = select.poll()  # not select(): descriptors above 1023 are the point here
    for s in socks:
        poller.register(s.fileno(), select.POLLIN)
    by_fd = {s.fileno(): s for s in socks}
    while time.time() < end and len(closed) < len(socks):
        for fd, _ in poller.poll(200):
            try:
                gone = by_fd[fd].recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                closed.add(fd)
                poller.unregister(fd)
    print(f"flood: opened {len(socks)}, refused {refused}, closed by the store {len(closed)}, "
          f"still open {len(socks) - len(closed)}", flush=True)


if __name__ == "__main__":
    main()
