"""1-D heat diffusion on a rod split across ranks: each rank puts its edge cells into its
neighbours' halo cells (put_signal: data, then a step counter), waits for both of its own
halos, and updates its cells; an allreduce gives the total heat. Run: hgasrun -n 4 python3 heat.py"""
import numpy as np

import hgas

CELLS, STEPS, ALPHA = 64, 200, 0.25
with hgas.runtime():
    me, n = hgas.rank(), hgas.size()
    u = hgas.zeros(CELLS + 2, np.float64)          # symmetric: [left halo, cells..., right halo]
    arrived = hgas.zeros(2, np.uint64)             # halo signals: [from left, from right]
    u[1:-1] = np.where(np.arange(CELLS) + me * CELLS < n * CELLS // 2, 100.0, 0.0)
    hgas.barrier()
    left, right = me - 1, me + 1
    for step in range(1, STEPS + 1):
        if left >= 0:   # my first cell becomes the left rank's right halo; signal its word 1
            hgas.put_signal(u[-1:], u[1:2], arrived[1:], step, left)
        if right < n:   # my last cell becomes the right rank's left halo; signal its word 0
            hgas.put_signal(u[0:1], u[-2:-1], arrived[0:], step, right)
        if left >= 0:
            hgas.signal_wait_until(arrived[0:], ">=", step)
        if right < n:
            hgas.signal_wait_until(arrived[1:], ">=", step)
        edge = u.copy()                            # insulated ends: copy the edge cell into the halo
        edge[0] = edge[1] if left < 0 else edge[0]
        edge[-1] = edge[-2] if right >= n else edge[-1]
        hgas.barrier()                             # everyone has read its halos before they change
        u[1:-1] = edge[1:-1] + ALPHA * (edge[:-2] - 2 * edge[1:-1] + edge[2:])
    total = hgas.allreduce(np.array([u[1:-1].sum()]))[0]
    whole = hgas.fcollect(hgas.zeros(n * CELLS, np.float64), u[1:-1].copy())
    if me == 0:                                    # check against the serial solution
        rod = np.where(np.arange(n * CELLS) < n * CELLS // 2, 100.0, 0.0)
        for _ in range(STEPS):
            p = np.concatenate(([rod[0]], rod, [rod[-1]]))
            rod = p[1:-1] + ALPHA * (p[:-2] - 2 * p[1:-1] + p[2:])
        ok = np.allclose(whole, rod) and np.isclose(total, rod.sum())
        print(f"heat: {n} ranks, total heat {total:.6f}, {'matches' if ok else 'DOES NOT match'} the serial solution")
