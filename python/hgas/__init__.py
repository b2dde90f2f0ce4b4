"""hgas from Python: one global address space over the memory of every rank of a job.

    import hgas, numpy as np
    with hgas.runtime():
        a = hgas.zeros(4, np.float64)                  # symmetric: on every rank
        hgas.put(a, np.full(4, hgas.rank()), (hgas.rank() + 1) % hgas.size())
        hgas.barrier()
        hgas.allreduce(a, op="sum")

Run with `hgasrun -n 4 python3 prog.py`. python/README.md has the whole API."""
from ._api import (ANY_RANK, ANY_TAG, TAG_MAX, Handle, MsgInfo, Registration, allreduce, alltoall, atomic,
                   atomic_add, atomic_compare_swap, atomic_fetch, atomic_fetch_add, atomic_fetch_inc, atomic_inc,
                   atomic_set, atomic_swap, barrier, barrier_on_stream, bfloat16, broadcast, deregister, device_gpu, empty,
                   fcollect, fence, finalize, free, get, get_nb, get_nbi, init, initialized, iprobe, irecv, isend,
                   kind_available, local_rank, local_size, probe, progress, put, put_nb, put_nbi, put_on_stream,
                   put_signal, put_signal_nbi, put_signal_on_stream, quiet, quiet_on_stream, rank, recv, reduce,
                   register, runtime, send, signal_fetch, signal_test, signal_wait_on_stream, signal_wait_until,
                   size, stream_sync, wait_all, zeros)
from ._arrays import DeviceArray
from ._errors import (AlreadyInitializedError, BootstrapError, Error, InternalError, InvalidArgError,
                      InvalidPointerError, InvalidSettingError, MisalignedError, NoMemoryError, NotInitializedError,
                      OutOfBoundsError, PeerFailedError, TimeoutError, TransportError, TruncatedError,
                      UnsupportedError)
from ._lib import library_path

__version__ = "0.1.0"
__all__ = [n for n in dir() if not n.startswith("_")]
