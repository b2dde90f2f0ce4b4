"""DLPack export of hgas arrays (no copy) and the arrays' views, on any kind."""
import gc

import numpy as np
import pytest

import hgas
from hgas import _dlpack
from conftest import KIND, fill, host


def test_export_shares_memory_and_releases_it():
    backing = np.arange(12, dtype=np.float32)
    # The same export path as kind cuda, over host memory (device type CPU), so NumPy can consume it.
    d = hgas.DeviceArray(backing.__array_interface__["data"][0], (3, 4), np.float32, "host", base=backing)
    view = np.from_dlpack(d)
    assert view.shape == (3, 4) and view.dtype == np.float32
    backing[6] = -1.0
    assert view[1, 2] == -1.0  # the same memory: no copy
    assert len(_dlpack._live) == 1
    del view
    gc.collect()
    assert len(_dlpack._live) == 0  # the consumer's deleter released it
    cap = d.__dlpack__()
    del cap  # never consumed: the capsule's destructor releases it
    gc.collect()
    assert len(_dlpack._live) == 0


def test_parse_reads_shape_dtype_and_strides():
    a = np.arange(24, dtype=np.int16).reshape(4, 6)
    addr, shape, dtype, dev, contiguous = _dlpack.parse(a.__dlpack__())
    assert (addr, shape, dtype, dev, contiguous) == (a.__array_interface__["data"][0], (4, 6), np.int16,
                                                     _dlpack.CPU, True)
    assert not _dlpack.parse(a[:, ::2].__dlpack__())[4]


def test_views_of_a_symmetric_device_array():
    a = hgas.zeros((4, 3), np.int64, KIND)
    fill(a, np.arange(12).reshape(4, 3))
    if KIND == "host":
        assert isinstance(a, np.ndarray)
    else:
        assert host(a[1]).tolist() == [3, 4, 5]
        assert host(a[1:3]).tolist() == [[3, 4, 5], [6, 7, 8]]
        assert host(a[-1]).tolist() == [9, 10, 11]
        with pytest.raises(hgas.InvalidArgError, match="only step 1"):
            a[::2]
        if KIND == "sim":
            with pytest.raises(hgas.UnsupportedError, match="sim memory"):
                a.__dlpack__()
    hgas.barrier()
    hgas.free(a)
