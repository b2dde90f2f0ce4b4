"""Bad input raises hgas.Error subclasses carrying the C library's message (or, for checks the
Python layer makes itself, a message that names the call and what to pass)."""
import numpy as np
import pytest

import hgas
from conftest import KIND


def test_unknown_rank_names_it():
    a = hgas.zeros(4, np.float64, KIND)
    with pytest.raises(hgas.InvalidArgError, match=r"hgas_ptr: rank 9999 does not exist \(the job has \d+ ranks\)"):
        hgas.put(a, np.zeros(4), 9999)
    with pytest.raises(hgas.Error) as e:  # the base class catches every subclass
        hgas.get(np.zeros(4), a, -5)
    assert isinstance(e.value, ValueError) and e.value.status == 2 and e.value.name == "HGAS_ERR_INVALID_ARG"
    hgas.barrier()
    hgas.free(a)


def test_plain_numpy_array_is_not_symmetric():
    with pytest.raises(hgas.InvalidPointerError, match="hgas_ptr"):
        hgas.put(np.zeros(4), np.zeros(4), 0)


def test_source_larger_than_destination():
    a = hgas.zeros(4, np.float64, KIND)
    with pytest.raises(hgas.InvalidArgError, match=r"hgas.put: the source has 64 bytes but the symmetric "
                                                   r"destination only 32"):
        hgas.put(a, np.zeros(8), 0)
    with pytest.raises(hgas.InvalidArgError, match=r"hgas.get: the destination has 64 bytes"):
        hgas.get(np.zeros(8), a, 0)
    hgas.barrier()
    hgas.free(a)


def test_bad_names_and_types():
    a = hgas.zeros(4, np.float64, KIND)
    with pytest.raises(hgas.InvalidArgError, match=r"hgas.allreduce: unknown reduction op 'avg'; use one of"):
        hgas.allreduce(np.zeros(3), op="avg")
    with pytest.raises(hgas.InvalidArgError, match="reductions work on int8, int16, int32.* not complex128"):
        hgas.allreduce(np.zeros(3, np.complex128))
    with pytest.raises(hgas.InvalidArgError, match="atomics work on int32, int64, uint32 and uint64 arrays, not float64"):
        hgas.atomic_fetch_add(a, 1, 0)
    with pytest.raises(hgas.InvalidArgError, match="a signal is a 64-bit word"):
        hgas.signal_fetch(np.zeros(1, np.uint32))
    with pytest.raises(hgas.InvalidArgError, match="unknown comparison 'almost'"):
        hgas.signal_test(np.zeros(1, np.uint64), "almost", 1)
    with pytest.raises(hgas.InvalidArgError, match="not contiguous"):
        hgas.allreduce(np.zeros((4, 4))[:, 1])
    with pytest.raises(hgas.InvalidArgError, match="is not an array"):
        hgas.send(object(), 0)
    with pytest.raises(hgas.InvalidArgError, match="unknown memory kind 'gpu'"):
        hgas.zeros(4, kind="gpu")
    with pytest.raises(hgas.InvalidArgError, match="is not a CUDA stream"):
        hgas.quiet_on_stream("stream 0")
    hgas.barrier()
    hgas.free(a)


def test_signal_word_in_private_memory_is_refused_by_the_library():
    with pytest.raises(hgas.Error, match="hgas_signal_fetch"):
        hgas.signal_fetch(np.zeros(1, np.uint64))


def test_free_twice():
    a = hgas.zeros(4, np.float64, KIND)
    hgas.free(a)
    with pytest.raises(hgas.InvalidArgError, match="not the whole of a live symmetric allocation"):
        hgas.free(a)


def test_out_of_memory_names_the_setting():
    with pytest.raises(hgas.NoMemoryError, match="HGAS_(SIM_|CUDA_)?HEAP_SIZE"):
        hgas.zeros(1 << 40, np.uint8, KIND)


def test_stream_ordered_calls_reach_the_library():
    """Without a GPU every stream-ordered call fails with the library's message naming it; with
    one, a put on the default stream lands (tests/test_gpu.py does more)."""
    me, n = hgas.rank(), hgas.size()
    if not hgas.kind_available("cuda"):
        a = hgas.zeros(4, np.float64)
        s = hgas.zeros(1, np.uint64)
        calls = [("put_on_stream", (a, np.ones(4), 0)), ("put_signal_on_stream", (a, np.ones(4), s, 1, 0)),
                 ("signal_wait_on_stream", (s, "eq", 1)), ("barrier_on_stream", ()), ("quiet_on_stream", ()),
                 ("stream_sync", ())]
        for name, args in calls:
            with pytest.raises(hgas.UnsupportedError, match=f"hgas_{name}: this rank has no GPU"):
                getattr(hgas, name)(*args)
        hgas.barrier()
        hgas.free(s)
    else:
        a = hgas.zeros(4, np.float64, "cuda")
        src = hgas.zeros(4, np.float64, "cuda")
        src.copy_from(np.full(4, me + 1.0))
        hgas.put_on_stream(a, src, (me + 1) % n, None)
        hgas.quiet_on_stream(None)
        hgas.stream_sync(None)
        hgas.barrier()
        assert (a.numpy() == (me + n - 1) % n + 1.0).all()
        hgas.free(src)
    hgas.barrier()
    hgas.free(a)
