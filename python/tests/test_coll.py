"""Barrier and collectives. Collectives take host memory (as the C API does); point-to-point
operations in them use symmetric arrays of the kind under test."""
import numpy as np
import pytest

import hgas
from conftest import KIND, fill, host


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float32, np.float64])
def test_allreduce_sum_in_place(dtype):
    me, n = hgas.rank(), hgas.size()
    a = np.arange(1000).astype(dtype) + me
    r = hgas.allreduce(a, op="sum")
    assert r is a
    assert np.array_equal(a, (np.arange(1000) * n + n * (n - 1) // 2).astype(dtype))


@pytest.mark.parametrize("op,expect", [("min", lambda n: 0), ("max", lambda n: n - 1),
                                       ("prod", lambda n: np.prod(np.arange(1, n + 1)))])
def test_allreduce_ops(op, expect):
    me, n = hgas.rank(), hgas.size()
    a = np.full(7, me + (1 if op == "prod" else 0), np.int64)
    out = np.empty_like(a)
    hgas.allreduce(a, op=op, out=out)
    assert (out == expect(n)).all()
    assert (a == me + (1 if op == "prod" else 0)).all()  # the input is left alone


def test_allreduce_symmetric_array():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(1 << 17, np.float64)  # 1 MiB
    fill(a, np.full(1 << 17, me + 1.0))
    hgas.allreduce(a)
    assert (host(a) == n * (n + 1) / 2).all()
    hgas.free(a)


def test_reduce_to_root():
    me, n = hgas.rank(), hgas.size()
    root = n - 1
    a = np.full(5, me, np.float64)
    out = np.full(5, -1.0)
    hgas.reduce(a, root, op="max", out=out)
    assert (out == (n - 1 if me == root else -1.0)).all()


def test_broadcast():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(100, np.int32)
    if me == 0:
        fill(a, np.arange(100))
    hgas.broadcast(a, 0)
    assert np.array_equal(host(a), np.arange(100))
    hgas.free(a)


def test_fcollect_and_alltoall():
    me, n = hgas.rank(), hgas.size()
    dst = hgas.zeros(3 * n, np.int64)
    hgas.fcollect(dst, np.full(3, me, np.int64))
    assert np.array_equal(host(dst), np.repeat(np.arange(n), 3))
    src = np.array([100 * me + j for j in range(n)], np.int64)
    out = hgas.zeros(n, np.int64)
    hgas.alltoall(out, src)
    assert np.array_equal(host(out), np.array([100 * i + me for i in range(n)]))
    hgas.free(out)
    hgas.free(dst)


def test_barrier_orders_puts():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(n, np.int64, KIND)
    for step in range(3):
        hgas.put(a[me:me + 1], np.array([step * 10 + me], np.int64), (me + step) % n)
        hgas.barrier()
        src = (me - step) % n
        assert host(a)[src] == step * 10 + src
        hgas.barrier()
    hgas.free(a)
