"""Reductions on the 8/16-bit integers and the 16-bit floats (float16, bfloat16), with values:
integer sums that wrap around as the C types do, and 16-bit float sums built so that exactly one
step rounds whatever order the algorithm combines in (rank 0 brings a power of two, rank 1 a
value that ties at its ulp of 2, the others 0), so the result is the exact sum rounded to even."""
import numpy as np
import pytest

import hgas
from hgas import _dlpack


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16])
def test_small_integer_sums_wrap(dtype):
    me, n = hgas.rank(), hgas.size()
    per = 100 if np.dtype(dtype).itemsize == 1 else 30000
    a = np.full(33, per, dtype)
    a[1] = me  # a sum that does not wrap
    hgas.allreduce(a)  # in place (the fast path)
    want = np.array([per * n] * 33, np.int64)
    want[1] = n * (n - 1) // 2
    assert np.array_equal(a, want.astype(dtype))  # astype wraps as the C cast does
    out = np.zeros(33, dtype)
    src = np.full(33, me + 1, dtype)
    hgas.allreduce(src, op="max", out=out)  # through ctypes
    assert (out == n).all()


@pytest.mark.parametrize("dtype", [np.int8, np.uint16])
def test_bitwise_ops(dtype):
    me, n = hgas.rank(), hgas.size()
    bit = np.array([1 << (me % 7)] * 5, dtype)
    out = np.zeros_like(bit)
    hgas.allreduce(bit, op="or", out=out)
    assert (out == sum(1 << (p % 7) for p in range(min(n, 7)))).all()
    hgas.allreduce(np.full(5, 0xF0 | me).astype(dtype), op="and", out=out)  # 0xf0 wraps in int8
    want = 0xFF
    for p in range(n):
        want &= 0xF0 | p
    assert (out == np.array(want).astype(dtype)).all()
    hgas.allreduce(np.full(5, me + 1, dtype), op="xor", out=out)
    x = 0
    for p in range(n):
        x ^= p + 1
    assert (out == x).all()


def _tie_values(me, big, small):
    """rank 0: big, rank 1: small, others 0; element 0 with small = 1 (rounds down), element 1
    with small = 3 (rounds up)."""
    return [big if me == 0 else 1.0 if me == 1 else 0.0, big if me == 0 else small if me == 1 else 0.0]


def test_float16_sums_round_to_nearest_even():
    me, n = hgas.rank(), hgas.size()
    a = np.array(_tie_values(me, 2048.0, 3.0) + [0.5, -0.25 * me], np.float16)
    b = a.copy()
    hgas.allreduce(a)  # fast path
    out = np.zeros_like(b)
    hgas.allreduce(b, out=out)  # ctypes path
    for r in (a, out):
        assert r.view(np.uint16)[0] == 0x6800  # 2048 + 1 -> 2048
        assert r.view(np.uint16)[1] == (0x6802 if n >= 2 else 0x6800)  # 2048 + 3 -> 2052
        assert r[2] == 0.5 * n
    mn = np.zeros(1, np.float16)
    hgas.allreduce(np.array([-0.25 * me], np.float16), op="min", out=mn)
    assert mn[0] == -0.25 * (n - 1)


def test_bfloat16_through_raw_bits_and_dtype_name():
    me, n = hgas.rank(), hgas.size()
    # bfloat16 is the upper half of a float32: 256 + 1 -> 256 (0x4380), 256 + 3 -> 260 (0x4382).
    bits = (np.array(_tie_values(me, 256.0, 3.0) + [-1.5], np.float32).view(np.uint32) >> 16).astype(np.uint16)
    raw = bytearray(bits.tobytes())  # no element type at all: the name says what it holds
    hgas.allreduce(raw, dtype="bfloat16")
    got = np.frombuffer(raw, np.uint16)
    assert got[0] == 0x4380
    assert got[1] == (0x4382 if n >= 2 else 0x4380)
    want2 = np.array([-1.5 * n], np.float32).view(np.uint32)[0] >> 16  # exact for small n
    assert got[2] == want2
    root = n - 1
    out = np.full(3, 7, np.uint16)
    hgas.reduce(bits, root, op="max", out=out, dtype="bfloat16")
    if me == root:
        assert out[2] == 0xBFC0  # -1.5 everywhere
    else:
        assert (out == 7).all()  # left as it was


def test_bfloat16_arrays_and_dlpack_tensors():
    """hgas.bfloat16 arrays reduce as bfloat16, and so does a DLPack tensor of bfloat16 (what
    torch.from_numpy(...).view(torch.bfloat16) hands over): the type comes from the capsule."""
    me, n = hgas.rank(), hgas.size()
    a = np.zeros(2, hgas.bfloat16)
    a["bfloat16"] = [0x4380 if me == 0 else 0x3F80 if me == 1 else 0, 0x3F00]  # 256 or 1; 0.5
    hgas.allreduce(a)
    assert a["bfloat16"][0] == 0x4380  # 256 + 1 rounds back to 256
    assert a["bfloat16"][1] == (np.array([0.5 * n], np.float32).view(np.uint32)[0] >> 16)

    class Tensor:  # a CPU tensor of bfloat16 seen through DLPack, as torch exports one
        def __init__(self, store):
            self.store = store

        def __dlpack__(self, stream=None):
            return _dlpack.export(self, self.store.ctypes.data, self.store.shape, hgas.bfloat16, (_dlpack.CPU, 0))

    store = np.array([0x4380 if me == 0 else 0x4040 if me == 1 else 0], np.uint16)  # 256 or 3
    t = Tensor(store)
    assert _dlpack.parse(t.__dlpack__())[2] == hgas.bfloat16
    hgas.allreduce(t)
    assert store[0] == (0x4382 if n >= 2 else 0x4380)  # 259 rounds to 260


def test_small_types_in_symmetric_collectives():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(4, np.float16)
    if me == 0:
        a[:] = [0.1, -2.5, 65504.0, 2.0 ** -24]  # the largest half and the smallest subnormal
    hgas.broadcast(a, 0)
    assert np.array_equal(np.array(a), np.array([0.1, -2.5, 65504.0, 2.0 ** -24], np.float16))
    d = hgas.zeros(2 * n, np.int8)
    hgas.fcollect(d, np.array([-me, me], np.int8))
    assert np.array_equal(np.array(d), np.array([[-p, p] for p in range(n)], np.int8).ravel())
    hgas.free(d)
    hgas.free(a)


def test_reduction_type_errors_name_the_types():
    with pytest.raises(hgas.InvalidArgError, match="reductions work on int8, int16.*bfloat16.*not complex64"):
        hgas.allreduce(np.zeros(2, np.complex64))
    with pytest.raises(hgas.InvalidArgError, match="3 bytes are not a whole number of bfloat16 elements"):
        hgas.allreduce(bytearray(3), dtype="bfloat16")
    with pytest.raises(hgas.InvalidArgError, match="dtype='complex' is not a reduction type"):
        hgas.allreduce(np.zeros(2, np.int32), dtype="complex")
    with pytest.raises(hgas.InvalidArgError, match="atomics work on int32, int64, uint32 and uint64 arrays, not int8"):
        s = hgas.zeros(4, np.int8)
        try:
            hgas.atomic_add(s, 1, 0)
        finally:
            hgas.free(s)
