"""Tagged send/recv with NumPy buffers and arrays of the kind under test."""
import numpy as np
import pytest

import hgas
from conftest import KIND, fill, host


def test_send_recv_ring():
    me, n = hgas.rank(), hgas.size()
    right, left = (me + 1) % n, (me + n - 1) % n
    h = hgas.isend(np.arange(10, dtype=np.int64) + me, right, tag=5)
    buf = np.zeros(10, np.int64)
    info = hgas.recv(buf, source=left, tag=5)
    h.wait()
    assert info == hgas.MsgInfo(left, 5, 80)
    assert np.array_equal(buf, np.arange(10) + left)


def test_irecv_any_source_and_probe():
    me, n = hgas.rank(), hgas.size()
    if me == 0:
        got = set()
        for _ in range(n - 1):
            pinfo = hgas.probe(tag=9)
            assert pinfo.bytes == 8 and pinfo.tag == 9
            buf = np.zeros(1, np.int64)
            info = hgas.irecv(buf, hgas.ANY_RANK, 9).wait()
            assert buf[0] == info.source * 3
            got.add(info.source)
        assert got == set(range(1, n))
        assert hgas.iprobe(tag=9) is None
    else:
        hgas.send(np.array([me * 3], np.int64), 0, tag=9)
    hgas.barrier()


def test_device_kind_buffers():
    me, n = hgas.rank(), hgas.size()
    a = hgas.zeros(256, np.float32, KIND)
    b = hgas.zeros(256, np.float32, KIND)
    fill(a, np.arange(256) + me)
    h = hgas.irecv(b, (me + n - 1) % n, 1)
    hgas.send(a, (me + 1) % n, 1)
    h.wait()
    assert np.array_equal(host(b), np.arange(256) + (me + n - 1) % n)
    hgas.barrier()
    hgas.free(b)
    hgas.free(a)


def test_truncated_message_raises_with_the_library_message():
    me, n = hgas.rank(), hgas.size()
    h = hgas.isend(np.zeros(16, np.uint8), (me + 1) % n, tag=77)
    with pytest.raises(hgas.TruncatedError, match="hgas_recv") as e:
        hgas.recv(np.zeros(8, np.uint8), (me + n - 1) % n, 77)
    assert e.value.status == 15 and e.value.name == "HGAS_ERR_TRUNCATED"
    h.wait()
    hgas.barrier()
