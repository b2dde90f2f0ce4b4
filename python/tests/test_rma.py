"""put/get (blocking, nbi, handles), signals and atomics on symmetric arrays of the kind under
test (HGAS_TEST_KIND), with NumPy arrays as the local buffers."""
import numpy as np
import pytest

import hgas
from conftest import KIND, fill, host


def test_the_c_extension_is_in_use_where_built():
    import os
    if os.environ.get("HGAS_TEST_FAST") == "1" and os.environ.get("HGAS_TEST_CTYPES") != "1":
        from hgas import _api
        assert _api._fast_put is _api._fast.put  # the build made hgas._fast and the package loaded it


def test_rank_and_size():
    assert 0 <= hgas.rank() < hgas.size()
    seen = hgas.zeros(hgas.size(), np.int64, KIND)
    for r in range(hgas.size()):
        hgas.put(seen[hgas.rank():hgas.rank() + 1], np.array([hgas.rank() + 1], np.int64), r)
    hgas.barrier()
    assert host(seen).tolist() == list(range(1, hgas.size() + 1))
    hgas.free(seen)


def test_zeros_are_zero_and_typed():
    a = hgas.zeros((3, 5), np.float32, KIND)
    assert a.shape == (3, 5) and a.dtype == np.float32
    assert not host(a).any()
    if KIND == "host":
        assert isinstance(a, np.ndarray)
    hgas.free(a)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_put_ring(dtype):
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(1000, dtype, KIND)
    src = (np.arange(1000) * (me + 1) % 127).astype(dtype)
    hgas.put(a, src, (me + 1) % n)
    hgas.barrier()
    left = (me + n - 1) % n
    assert np.array_equal(host(a), (np.arange(1000) * (left + 1) % 127).astype(dtype))
    hgas.free(a)


def test_get_from_every_rank():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(64, np.int64, KIND)
    fill(a, np.arange(64) + 1000 * me)
    hgas.barrier()
    for r in range(n):
        out = np.empty(64, np.int64)
        hgas.get(out, a, r)
        assert np.array_equal(out, np.arange(64) + 1000 * r)
    hgas.barrier()
    hgas.free(a)


def test_put_into_a_slice():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(4 * n, np.float64, KIND)
    for r in range(n):  # every rank writes its block of everyone's array
        hgas.put(a[4 * me:4 * me + 4], np.full(4, me + 0.5), r)
    hgas.barrier()
    assert np.array_equal(host(a), np.repeat(np.arange(n) + 0.5, 4))
    hgas.free(a)


def test_nbi_and_handles():
    me, n = hgas.rank(), hgas.size()
    right = (me + 1) % n
    a = hgas.zeros(2, np.int64, KIND)
    b = hgas.zeros(2, np.int64, KIND)
    hgas.put_nbi(a, np.array([me, me], np.int64), right)
    h = hgas.put_nb(b, np.array([7, me], np.int64), right)
    hgas.quiet()
    h.wait()
    h.wait()  # waiting again on a completed handle is fine
    hgas.barrier()
    left = (me + n - 1) % n
    assert host(a).tolist() == [left, left] and host(b).tolist() == [7, left]
    out, out2 = np.zeros(2, np.int64), np.zeros(2, np.int64)
    g = hgas.get_nb(out, b, right)
    hgas.get_nbi(out2, a, right)
    while not g.test():
        pass
    hgas.quiet()
    assert out.tolist() == [7, me] and out2.tolist() == [me, me]
    hs = [hgas.get_nb(np.zeros(2, np.int64), a, r) for r in range(n)]
    hgas.wait_all(hs)
    hgas.barrier()
    hgas.free(b)
    hgas.free(a)


def test_put_signal_and_wait():
    me, n = hgas.rank(), hgas.size()
    right = (me + 1) % n
    data = hgas.zeros(16, np.float64, KIND)
    sig = hgas.zeros(1, np.uint64, KIND)
    payload = np.linspace(0, 1, 16) + me
    hgas.put_signal(data, payload, sig, 1, right, op="set")
    assert hgas.signal_wait_until(sig, "eq", 1) == 1
    left = (me + n - 1) % n
    assert np.allclose(host(data), np.linspace(0, 1, 16) + left)
    # every rank adds to rank 0's counter; rank 0 waits for all of them
    hgas.barrier()
    hgas.put_signal_nbi(data[0:1], np.array([1.0]), sig, 10, 0, op="add")
    hgas.quiet()
    if me == 0:
        assert hgas.signal_wait_until(sig, ">=", 1 + 10 * n) == 1 + 10 * n
        assert hgas.signal_test(sig, "eq", 1 + 10 * n)
        assert not hgas.signal_test(sig, "gt", 1 + 10 * n)
        assert hgas.signal_fetch(sig) == 1 + 10 * n
    hgas.barrier()
    hgas.free(sig)
    hgas.free(data)


def test_atomics():
    me, n = hgas.rank(), hgas.size()
    c = hgas.zeros(4, np.int64, KIND)
    olds = [hgas.atomic_fetch_add(c, 2, 0) for _ in range(5)]
    assert all(0 <= o < 10 * n and o % 2 == 0 for o in olds)
    hgas.atomic_inc(c[1:2], 0)
    hgas.barrier()
    if me == 0:
        assert hgas.atomic_fetch(c, 0) == 10 * n
        assert hgas.atomic_fetch(c[1:2], 0) == n
    hgas.barrier()
    # compare_swap: exactly one rank wins
    won = hgas.atomic_compare_swap(c[2:3], 0, me + 1, 0) == 0
    total = np.array([int(won)], np.int64)
    hgas.allreduce(total)
    assert total[0] == 1
    u = hgas.zeros(1, np.uint32, KIND)
    hgas.atomic(u, "or", 0, 1 << me % 32)
    hgas.barrier()
    mask = sum(1 << r % 32 for r in range(n))
    assert hgas.atomic_fetch(u, 0) == mask
    assert hgas.atomic_swap(c[3:4], 5, me) == 0 and hgas.atomic_fetch(c[3:4], me) == 5
    hgas.barrier()
    hgas.free(u)
    hgas.free(c)


def test_local_buffers_of_other_types():
    """bytearray and memoryview (buffer protocol) and a DLPack producer as put/get buffers."""
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(8, np.uint8, KIND)
    hgas.put(a, bytearray(b"abcdefgh"), (me + 1) % n)
    hgas.barrier()
    out = bytearray(8)
    hgas.get(memoryview(out), a, me)
    assert out == b"abcdefgh"

    class OnlyDLPack:  # an array known only by DLPack, as torch CPU tensors are
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    dst = np.zeros(8, np.uint8)
    hgas.get(OnlyDLPack(dst), a, me)
    assert bytes(dst) == b"abcdefgh"
    hgas.barrier()
    hgas.free(a)


def test_register_user_buffer():
    buf = np.zeros(1 << 16, np.uint8)
    with hgas.register(buf):
        a = hgas.zeros(1 << 16, np.uint8, KIND)
        fill(a, np.full(1 << 16, hgas.rank() + 3, np.uint8))
        hgas.barrier()
        hgas.get(buf, a, (hgas.rank() + 1) % hgas.size())
        assert (buf == (hgas.rank() + 1) % hgas.size() + 3).all()
        hgas.barrier()
        hgas.free(a)
    with pytest.raises(hgas.InvalidArgError, match="hgas_deregister"):
        hgas.deregister(buf)  # already released
