"""Every test module here runs on every rank of an hgasrun job (`hgasrun -n N python -m pytest
...`): tests are collective and run in the same order everywhere. The job is joined once per
process, for the whole session, except by test_runtime.py which tests joining itself."""
import os

import numpy as np
import pytest

import hgas

# The memory kind of the symmetric arrays under test: host (default), sim or cuda.
KIND = os.environ.get("HGAS_TEST_KIND", "host")


# HGAS_TEST_CTYPES=1: every call takes the ctypes path, as where hgas._fast is not built.
if os.environ.get("HGAS_TEST_CTYPES") == "1":
    from hgas import _api

    _api._fast_put = _api._fast_get = lambda *a: -1
    _api._fast_allreduce = lambda *a: -1


@pytest.fixture(scope="session", autouse=True)
def job(request):
    if request.node.get_closest_marker("no_job") or os.environ.get("HGAS_TEST_NO_JOB"):
        yield
        return
    hgas.init()
    yield
    hgas.finalize()


def host(a):
    """A host copy of a symmetric array of any kind."""
    return a.numpy() if isinstance(a, hgas.DeviceArray) else np.array(a)


def fill(a, values):
    """Writes `values` into this rank's copy of symmetric array `a` of any kind."""
    values = np.ascontiguousarray(values, dtype=a.dtype).reshape(a.shape)
    if isinstance(a, hgas.DeviceArray):
        a.copy_from(values)
    else:
        a[...] = values
