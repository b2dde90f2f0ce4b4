"""Joining and leaving the job (run with HGAS_TEST_NO_JOB=1: this module does it itself)."""
import numpy as np
import pytest

import hgas


def test_before_during_and_after():
    assert not hgas.initialized() and hgas.rank() == -1 and hgas.size() == -1
    with pytest.raises(hgas.NotInitializedError, match="before hgas_init"):
        hgas.barrier()
    with hgas.runtime():
        assert hgas.initialized() and 0 <= hgas.rank() < hgas.size()
        with pytest.raises(hgas.AlreadyInitializedError):
            hgas.init()
        a = hgas.zeros(2, np.int64)
        hgas.barrier()
    assert not hgas.initialized()
    hgas.finalize()  # a second finalize does nothing
    with pytest.raises(hgas.UnsupportedError, match="hgas_init"):
        hgas.init()  # a process joins its job once
    assert a.shape == (2,)


def test_library_stays_out_of_the_global_scope():
    """Modules loaded after hgas must not bind to libhgas's symbols (loaded RTLD_LOCAL)."""
    import ctypes
    from hgas._lib import lib
    assert lib.hgas_rank_me  # the package itself finds the calls through its own handle
    with pytest.raises(AttributeError):
        ctypes.CDLL(None).hgas_rank_me  # the process's global scope does not have them
