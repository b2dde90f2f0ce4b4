"""What a call costs from Python: an 8 B blocking put to the right neighbour and a 1 MiB float64
allreduce in place, with hgas from Python (this package), and the same with mpi4py (MPI RMA put +
flush, MPI_Allreduce in place) when it is installed. One JSON line per measurement on rank 0;
overhead_c (the same loops in C) gives the baseline.

    hgasrun -n 2 python3 overhead.py [iters]          # hgas from Python
    mpirun -n 2 python3 overhead.py --mpi [iters]     # mpi4py
"""
import json
import sys
import time

import numpy as np


def timed(fn, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters * 1e6


def report(impl, op, ranks, us):
    print(json.dumps({"impl": impl, "op": op, "ranks": ranks, "us_per_call": round(us, 3)}), flush=True)


def run_hgas(iters):
    import hgas
    with hgas.runtime():
        me, n = hgas.rank(), hgas.size()
        box = hgas.zeros(8, np.float64)
        v = np.array([float(me)])
        big = np.zeros(1 << 17)
        right = (me + 1) % n
        for rep in range(2):  # the first round warms up
            hgas.barrier()
            put = timed(lambda: hgas.put(box, v, right), iters)
            hgas.barrier()
            ar = timed(lambda: hgas.allreduce(big), max(iters // 100, 10))
            if rep and me == 0:
                report("hgas-python", "put8", n, put)
                report("hgas-python", "allreduce1M", n, ar)


def run_mpi(iters):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    me, n = comm.Get_rank(), comm.Get_size()
    box = np.zeros(8)
    win = MPI.Win.Create(box, comm=comm)
    v = np.array([float(me)])
    big = np.zeros(1 << 17)
    right = (me + 1) % n
    win.Lock_all()

    def put():
        win.Put(v, right)
        win.Flush_local(right)  # as hgas_put: returns when the source may be reused
    for rep in range(2):
        comm.Barrier()
        p = timed(put, iters)
        comm.Barrier()
        ar = timed(lambda: comm.Allreduce(MPI.IN_PLACE, big), max(iters // 100, 10))
        if rep and me == 0:
            report("mpi4py", "put8", n, p)
            report("mpi4py", "allreduce1M", n, ar)
    win.Unlock_all()
    win.Free()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    iters = int(args[0]) if args else 20000
    (run_mpi if "--mpi" in sys.argv else run_hgas)(iters)
