"""hgas from Python against torch.distributed on GPU tensors, in the same job and on the same
memory: an 8 B and a 1 MiB float64 allreduce in place, and an 8 B send/recv ping-pong (half the
round trip) between ranks 0 and 1. The tensors are torch views (DLPack) of hgas's symmetric GPU
arrays, so both libraries move the same bytes. torch's calls are followed by
torch.cuda.synchronize(): an hgas call returns when its data is in place, and so must the torch
call it is timed against. Every result is checked before it is timed.

    hgasrun -n 1 python3 vs_torch.py [iters]
    hgasrun -n 2 python3 vs_torch.py [iters]

torch.distributed's backend is NCCL where every rank has a GPU of its own, else Gloo (NCCL
refuses two ranks on one GPU). One JSON line per figure on rank 0, then a table with the ratio
hgas / torch (below 1: hgas is faster).
"""
import json
import socket
import sys
import time

import numpy as np


def timed(fn, iters, batches=5):
    """Median over `batches` of the mean time per call of `iters` calls, after a warm-up batch."""
    per = []
    for b in range(batches + 1):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        if b:
            per.append((time.perf_counter() - t0) / iters * 1e6)
    return float(np.median(per))


def main(iters):
    import torch
    import torch.distributed as dist

    import hgas

    with hgas.runtime():
        me, n = hgas.rank(), hgas.size()
        if not hgas.kind_available("cuda"):
            raise SystemExit("vs_torch: needs the cuda kind (a GPU and an hgas built with CUDA)")
        torch.cuda.set_device(hgas.device_gpu())
        port = hgas.zeros(1, np.int64)
        if me == 0:  # a free port for torch's rendezvous, told to the others through hgas
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port[0] = s.getsockname()[1]
        hgas.broadcast(port, 0)
        backend = "nccl" if n <= torch.cuda.device_count() else "gloo"
        dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{int(port[0])}", rank=me, world_size=n)
        sync = torch.cuda.synchronize
        rows = []

        def record(op, impl, us):
            rows.append((op, impl, us))
            if me == 0:
                print(json.dumps({"impl": impl, "op": op, "ranks": n, "backend": backend,
                                  "us_per_call": round(us, 3)}), flush=True)

        for count, op in ((1, "allreduce8"), (1 << 17, "allreduce1M")):
            a = hgas.zeros(count, np.float64, kind="cuda")
            t = torch.from_dlpack(a)  # the same GPU memory
            its = iters if count == 1 else max(iters // 10, 20)
            # Checked first: every rank's (me + 1) summed.
            want = n * (n + 1) / 2
            t.fill_(me + 1); sync(); hgas.allreduce(a)
            assert float(t[count - 1]) == want, f"hgas allreduce gave {float(t[count - 1])}, not {want}"
            t.fill_(me + 1); sync(); dist.all_reduce(t); sync()
            assert float(t[count - 1]) == want, f"torch all_reduce gave {float(t[count - 1])}, not {want}"
            hgas.barrier(); dist.barrier()
            record(op, "hgas", timed(lambda: hgas.allreduce(a), its))
            hgas.barrier(); dist.barrier()
            record(op, "torch." + backend, timed(lambda: (dist.all_reduce(t), sync()), its))
            hgas.barrier()
            hgas.free(a)

        if n >= 2:
            b = hgas.zeros(1, np.float64, kind="cuda")
            t = torch.from_dlpack(b)
            t.fill_(me + 10); sync()

            def ping(send, recv):
                def one():
                    if me == 0:
                        send(1); recv(1)
                    elif me == 1:
                        recv(0); send(0)
                return one

            h = ping(lambda p: hgas.send(b, p, 7), lambda p: hgas.recv(b, p, 7))
            h()  # checked: rank 0's 10 went to rank 1 (which held 11) and came back
            if me < 2:
                assert float(t[0]) == 10, f"hgas send/recv left {float(t[0])} on rank {me}, not 10"
            th = None
            if backend == "nccl":
                th = ping(lambda p: (dist.send(t, p), sync()), lambda p: (dist.recv(t, p), sync()))
            elif me == 0:  # its TCP pairs writev() from the tensor's address: EFAULT on GPU memory
                print("# torch.gloo takes no GPU tensors in send/recv: no torch figure for sendrecv8", flush=True)
            hgas.barrier()
            record("sendrecv8", "hgas", timed(h, iters) / 2)
            hgas.barrier(); dist.barrier()
            if th is not None:
                record("sendrecv8", "torch." + backend, timed(th, iters) / 2)
            hgas.barrier()
            hgas.free(b)

        dist.destroy_process_group()
        if me == 0:
            print(f"# {n} rank(s), torch.distributed backend {backend}; us per call, median of 5 batches of {iters} calls (a tenth as many for 1 MiB)")
            print(f"# {'op':<12} {'hgas':>9} {'torch':>9} {'hgas/torch':>10}")
            ops = dict.fromkeys(op for op, _, _ in rows)
            for op in ops:
                hv = [us for o, i, us in rows if o == op and i == "hgas"]
                tv = [us for o, i, us in rows if o == op and i != "hgas"]
                if hv and tv:
                    print(f"# {op:<12} {hv[0]:9.2f} {tv[0]:9.2f} {hv[0] / tv[0]:10.2f}")
                elif hv:
                    print(f"# {op:<12} {hv[0]:9.2f} {'-':>9} {'-':>10}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(args[0]) if args else 2000)
