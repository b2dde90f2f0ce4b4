"""The hgas API for Python: runtime, symmetric arrays, one-sided operations, signals, atomics,
collectives, tagged messages and stream-ordered operations, over the C library."""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import sys
from ctypes import byref, c_int, c_uint64, c_void_p
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from . import _dlpack
from ._arrays import KINDS, DeviceArray, local_buffer
from ._errors import InvalidArgError, check
from ._lib import gptr_t, lib, msg_info_t

try:  # the hot calls in C where the extension was built (the build tree, pip install); else ctypes
    from . import _fast
    _fast.setup(*(ctypes.cast(getattr(lib, f), c_void_p).value
                  for f in ("hgas_ptr", "hgas_put", "hgas_get", "hgas_allreduce")))
    _fast_put, _fast_get, _fast_allreduce = _fast.put, _fast.get, _fast.allreduce
except ImportError:
    def _fast_put(dst: Any, src: Any, rank: int) -> int:
        return -1
    _fast_get = _fast_put

    def _fast_allreduce(array: Any, op: int) -> int:
        return -1

ANY_RANK = -1
ANY_TAG = -1
TAG_MAX = 0x7FFFFFFF

_CMP = {"eq": 0, "==": 0, "ne": 1, "!=": 1, "gt": 2, ">": 2, "ge": 3, ">=": 3, "lt": 4, "<": 4, "le": 5, "<=": 5}
_SIGNAL_OP = {"set": 0, "add": 1}
_OP = {"sum": 0, "min": 1, "max": 2, "prod": 3, "and": 4, "or": 5, "xor": 6}
# hgas_dtype_t of an array's dtype. float16 is IEEE binary16; bfloat16 (no NumPy type) is
# hgas.bfloat16, what a torch.bfloat16 tensor parses to, or ml_dtypes' bfloat16 (by its name).
_DTYPE = {np.dtype(np.int32): 0, np.dtype(np.int64): 1, np.dtype(np.uint32): 2, np.dtype(np.uint64): 3,
          np.dtype(np.float32): 4, np.dtype(np.float64): 5, np.dtype(np.int8): 6, np.dtype(np.int16): 7,
          np.dtype(np.uint8): 8, np.dtype(np.uint16): 9, np.dtype(np.float16): 10, _dlpack.BFLOAT16: 11}
# The element types a reduction's dtype= names, reinterpreting the array's bytes, and their sizes.
_DTYPE_NAME = {"int32": 0, "int64": 1, "uint32": 2, "uint64": 3, "float32": 4, "float64": 5, "int8": 6,
               "int16": 7, "uint8": 8, "uint16": 9, "float16": 10, "half": 10, "bfloat16": 11}
_DTYPE_SIZE = {0: 4, 1: 8, 2: 4, 3: 8, 4: 4, 5: 8, 6: 1, 7: 2, 8: 1, 9: 2, 10: 2, 11: 2}
bfloat16 = _dlpack.BFLOAT16
_AMO_CTYPE = {0: ctypes.c_int32, 1: ctypes.c_int64, 2: ctypes.c_uint32, 3: ctypes.c_uint64}

# Symmetric allocations by start address: kind and bytes, for free() and finalize().
_allocs: dict[int, tuple[str, int]] = {}
# Buffers of _nbi operations, kept alive until quiet() or barrier() completes them (a temporary
# such as np.array([...]) would otherwise be freed, and its memory reused, while in flight).
_nbi_keep: list = []
_g = gptr_t()   # scratch global pointers for the blocking calls (calls are serialized per rank)
_g2 = gptr_t()


def _pick(table: dict, key: Any, what: str, call: str) -> int:
    try:
        return table[key]
    except (KeyError, TypeError):
        raise InvalidArgError(f"hgas.{call}: unknown {what} {key!r}; use one of {sorted(set(map(str, table)))}") \
            from None


def _remote(obj: Any, rank: int, out: gptr_t = _g) -> tuple[gptr_t, int, np.dtype]:
    """Global pointer to symmetric `obj` as it lives on `rank`, its bytes and dtype."""
    if type(obj) is DeviceArray:
        addr, nbytes, dtype = obj.ptr, obj.nbytes, obj.dtype
    else:
        addr, nbytes, dtype = local_buffer(obj, order=False)
    st = lib.hgas_ptr(addr, rank, byref(out))
    if st:
        check(st)
    return out, nbytes, dtype


# ------------------------------------------------------------------------------------------------
# Runtime
# ------------------------------------------------------------------------------------------------

def init() -> None:
    """Joins the job (collective). Under `hgasrun -n N python3 prog.py` every rank calls it.
    Raises AlreadyInitializedError if called twice. An uncaught exception after init ends the
    whole job with its message (rather than leaving the other ranks to time out)."""
    check(lib.hgas_init())
    _install_excepthook()


def finalize() -> None:
    """Leaves the job (collective): completes outstanding operations and frees every symmetric
    array; NumPy views of symmetric memory must not be used after it. A second call does nothing."""
    _allocs.clear()
    check(lib.hgas_finalize())
    _nbi_keep.clear()


def initialized() -> bool:
    """Whether this process is between init() and finalize()."""
    return bool(lib.hgas_initialized())


@contextlib.contextmanager
def runtime() -> Iterator[None]:
    """`with hgas.runtime():` joins the job and leaves it at the end of the block."""
    init()
    try:
        yield
    finally:
        if lib.hgas_initialized():
            finalize()


def rank() -> int:
    """This rank's number in [0, size()); -1 before init."""
    return lib.hgas_rank_me()


def size() -> int:
    """Number of ranks in the job; -1 before init."""
    return lib.hgas_rank_n()


def local_rank() -> int:
    """This rank's index among the ranks of its node."""
    return lib.hgas_local_rank()


def local_size() -> int:
    """How many ranks this rank's node has."""
    return lib.hgas_local_n()


def progress() -> None:
    """Makes progress on outstanding operations (every blocking call does it too)."""
    check(lib.hgas_progress())


def kind_available(kind: str) -> bool:
    """Whether this rank has memory of `kind` ("host", "cuda", "sim")."""
    return bool(lib.hgas_kind_available(_pick(KINDS, kind, "memory kind", "kind_available")))


def device_gpu() -> int:
    """CUDA ordinal of this rank's GPU, or -1 (call cupy.cuda.Device(n).use() / torch.cuda.set_device(n))."""
    return lib.hgas_device_gpu()


_prev_hook = None


def _install_excepthook() -> None:
    global _prev_hook
    if _prev_hook is not None:
        return
    _prev_hook = sys.excepthook

    def hook(tp, value, tb):
        _prev_hook(tp, value, tb)
        if lib.hgas_initialized():
            sys.stderr.flush()
            lib.hgas_abort(1, f"uncaught Python exception {tp.__name__}: {value}".encode(errors="replace")[:900])
    sys.excepthook = hook


lib.hgas_abort.argtypes = [c_int, ctypes.c_char_p]
lib.hgas_abort.restype = None


@atexit.register
def _finalize_at_exit() -> None:
    if lib.hgas_initialized():
        lib.hgas_finalize()


# ------------------------------------------------------------------------------------------------
# Memory
# ------------------------------------------------------------------------------------------------

def _shape(shape: Any) -> tuple:
    return (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)


def empty(shape: Any, dtype: Any = np.float64, kind: str = "host") -> Any:
    """A symmetric array (collective: every rank allocates the same shape and dtype in the same
    order). kind "host" gives a NumPy array on the rank's symmetric heap; "cuda" and "sim" give an
    hgas.DeviceArray. Contents are undefined; zeros() fills them. Free with hgas.free(a) (also
    collective) or leave it to finalize(): dropping the last reference does not free it."""
    k = _pick(KINDS, kind, "memory kind", "empty")
    shape, dtype = _shape(shape), np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    p = c_void_p()
    check(lib.hgas_malloc_kind(nbytes, k, byref(p)))
    addr = p.value or 0
    if addr:
        _allocs[addr] = (kind, nbytes)
    if kind == "host":
        if not addr:
            return np.empty(shape, dtype)
        return np.frombuffer((ctypes.c_char * nbytes).from_address(addr), dtype).reshape(shape)
    return DeviceArray(addr, shape, dtype, kind)


def zeros(shape: Any, dtype: Any = np.float64, kind: str = "host") -> Any:
    """A zero-filled symmetric array (collective; see empty()). On return every rank's copy is
    zero, so peers may write into it at once."""
    a = empty(shape, dtype, kind)
    if kind == "host":
        a.fill(0)
    elif a.nbytes:
        a.copy_from(np.zeros(a.shape, a.dtype))
    barrier()
    return a


def free(a: Any) -> None:
    """Frees a symmetric array from empty()/zeros() (collective). Views of it must not be used after."""
    addr = a.ptr if type(a) is DeviceArray else local_buffer(a, order=False)[0]
    if addr not in _allocs:
        raise InvalidArgError("hgas.free: the array is not the whole of a live symmetric allocation "
                              "(pass the array that hgas.zeros/empty returned, once)")
    check(lib.hgas_free(addr))
    del _allocs[addr]


class Registration:
    """A user buffer registered for device transfers; deregisters at the end of a `with` block."""

    def __init__(self, buf: Any):
        self.buf = buf
        self.addr, self.nbytes, _ = local_buffer(buf, order=False)

    def deregister(self) -> None:
        if self.addr:
            check(lib.hgas_deregister(self.addr))
            self.addr = 0

    def __enter__(self) -> "Registration":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.deregister()


def register(buf: Any) -> Registration:
    """Registers a host buffer (NumPy, bytearray, torch CPU tensor, ...) for device transfers:
    page-locked and mapped where CUDA is available, so copies between it and GPU memory run at
    pinned speed. The buffer must outlive the registration."""
    reg = Registration(buf)
    check(lib.hgas_register(reg.addr, reg.nbytes))
    return reg


def deregister(buf: Any) -> None:
    """Releases the registration of `buf` (or of a Registration)."""
    if isinstance(buf, Registration):
        buf.deregister()
        return
    check(lib.hgas_deregister(local_buffer(buf, order=False)[0]))


# ------------------------------------------------------------------------------------------------
# One-sided operations
# ------------------------------------------------------------------------------------------------

class Handle:
    """A non-blocking operation in flight: wait() or test() completes it. Keeps its buffers
    alive until then."""

    __slots__ = ("_h", "_keep", "_info")

    def __init__(self, keep: Any = None, info: msg_info_t | None = None):
        self._h = c_void_p()
        self._keep = keep
        self._info = info

    def wait(self) -> "MsgInfo | None":
        """Waits (up to HGAS_TIMEOUT) until the operation is complete; a receive returns its MsgInfo."""
        check(lib.hgas_wait(self._h))
        self._h.value = None
        self._keep = None
        return _info(self._info) if self._info is not None else None

    def test(self) -> bool:
        """One progress pass: True once the operation is complete."""
        done = c_int()
        check(lib.hgas_test(self._h, byref(done)))
        if done.value:
            self._h.value = None
            self._keep = None
        return bool(done.value)

    @property
    def info(self) -> "MsgInfo | None":
        """What a completed receive got."""
        return _info(self._info) if self._info is not None else None


def wait_all(handles: Sequence[Handle]) -> None:
    """Completes every handle; raises the first failure after waiting for all."""
    arr = (c_void_p * len(handles))(*[h._h.value for h in handles])
    st = lib.hgas_wait_all(arr, len(handles))
    for h in handles:
        h._h.value = None
        h._keep = None
    check(st)


def _put_args(dst: Any, src: Any, rank: int, call: str, out: gptr_t = _g) -> tuple[gptr_t, int, int]:
    if type(src) is np.ndarray and src.flags.c_contiguous:
        saddr, n = src.__array_interface__["data"][0], src.nbytes
    else:
        saddr, n, _ = local_buffer(src)
    g, dn, _ = _remote(dst, rank, out)
    if n > dn:
        raise InvalidArgError(f"hgas.{call}: the source has {n} bytes but the symmetric destination only {dn}")
    return g, saddr, n


def _get_args(dst: Any, src: Any, rank: int, call: str) -> tuple[int, gptr_t, int]:
    if type(dst) is np.ndarray and dst.flags.c_contiguous and dst.flags.writeable:
        daddr, n = dst.__array_interface__["data"][0], dst.nbytes
    else:
        daddr, n, _ = local_buffer(dst, writable=True)
    g, sn, _ = _remote(src, rank)
    if n > sn:
        raise InvalidArgError(f"hgas.{call}: the destination has {n} bytes but the symmetric source only {sn}")
    return daddr, g, n


def put(dst: Any, src: Any, rank: int) -> None:
    """Copies local array `src` into symmetric array `dst` as it lives on `rank` (src.nbytes
    bytes, from dst's start). Returns when `src` may be reused."""
    st = _fast_put(dst, src, rank)
    if st >= 0:
        if st:
            check(st)
        return
    g, s, n = _put_args(dst, src, rank, "put")
    st = lib.hgas_put(g, s, n)
    if st:
        check(st)


def get(dst: Any, src: Any, rank: int) -> None:
    """Copies symmetric array `src` as it lives on `rank` into local array `dst` (dst.nbytes bytes)."""
    st = _fast_get(dst, src, rank)
    if st >= 0:
        if st:
            check(st)
        return
    d, g, n = _get_args(dst, src, rank, "get")
    st = lib.hgas_get(d, g, n)
    if st:
        check(st)


def put_nbi(dst: Any, src: Any, rank: int) -> None:
    """put() completing at quiet() (or barrier()): `src` must stay unchanged until then; hgas
    keeps a reference to it, so a temporary is safe."""
    g, s, n = _put_args(dst, src, rank, "put_nbi")
    check(lib.hgas_put_nbi(g, s, n))
    _nbi_keep.append(src)


def get_nbi(dst: Any, src: Any, rank: int) -> None:
    """get() completing at quiet(): `dst` holds the data after it."""
    d, g, n = _get_args(dst, src, rank, "get_nbi")
    check(lib.hgas_get_nbi(d, g, n))
    _nbi_keep.append(dst)


def put_nb(dst: Any, src: Any, rank: int) -> Handle:
    """put() returning a Handle, complete (at the target) when wait()/test() says so."""
    g, s, n = _put_args(dst, src, rank, "put_nb")
    h = Handle(src)
    check(lib.hgas_put_nb(g, s, n, byref(h._h)))
    return h


def get_nb(dst: Any, src: Any, rank: int) -> Handle:
    """get() returning a Handle; `dst` holds the data once it completes."""
    d, g, n = _get_args(dst, src, rank, "get_nb")
    h = Handle(dst)
    check(lib.hgas_get_nb(d, g, n, byref(h._h)))
    return h


def fence() -> None:
    """Puts to each target issued before are delivered before those issued after."""
    check(lib.hgas_fence())


def quiet() -> None:
    """Waits until every operation this rank issued is complete at its target."""
    check(lib.hgas_quiet())
    _nbi_keep.clear()


# ------------------------------------------------------------------------------------------------
# Signals
# ------------------------------------------------------------------------------------------------

def _signal_word(sig: Any, call: str) -> int:
    # A signal word is written by other ranks, not by a producer's kernels: no stream to wait for.
    addr, n, dtype = (sig.ptr, sig.nbytes, sig.dtype) if type(sig) is DeviceArray else local_buffer(sig, order=False)
    if dtype.itemsize != 8 or n < 8:
        raise InvalidArgError(f"hgas.{call}: a signal is a 64-bit word: pass a uint64 array (its first element "
                              f"is the word), not {dtype} with {n} bytes")
    return addr


def put_signal(dst: Any, src: Any, sig: Any, value: int, rank: int, op: str = "set") -> None:
    """Puts `src` into symmetric `dst` on `rank`, then updates that rank's signal word (the first
    element of symmetric uint64 array `sig`) with `op` ("set" or "add") and `value`. A rank that
    sees the new signal sees the data. Returns when `src` may be reused."""
    g, s, n = _put_args(dst, src, rank, "put_signal")
    sg, _, _ = _remote(sig, rank, _g2)
    _signal_word(sig, "put_signal")
    check(lib.hgas_put_signal(g, s, n, sg, value, _pick(_SIGNAL_OP, op, "signal op", "put_signal")))


def put_signal_nbi(dst: Any, src: Any, sig: Any, value: int, rank: int, op: str = "set") -> None:
    """put_signal() completing at quiet()."""
    g, s, n = _put_args(dst, src, rank, "put_signal_nbi")
    sg, _, _ = _remote(sig, rank, _g2)
    _signal_word(sig, "put_signal_nbi")
    check(lib.hgas_put_signal_nbi(g, s, n, sg, value, _pick(_SIGNAL_OP, op, "signal op", "put_signal_nbi")))
    _nbi_keep.append(src)


def signal_wait_until(sig: Any, cmp: str, value: int) -> int:
    """Waits until this rank's signal word (first element of `sig`) compares true with `value`
    (cmp: "eq" "ne" "gt" "ge" "lt" "le", or "==" "!=" ">" ">=" "<" "<="); returns the value seen.
    Raises hgas.TimeoutError after HGAS_TIMEOUT."""
    seen = c_uint64()
    check(lib.hgas_signal_wait_until(_signal_word(sig, "signal_wait_until"),
                                     _pick(_CMP, cmp, "comparison", "signal_wait_until"), value, byref(seen)))
    return seen.value


def signal_test(sig: Any, cmp: str, value: int) -> bool:
    """One check of the signal_wait_until condition."""
    ok = c_int()
    check(lib.hgas_signal_test(_signal_word(sig, "signal_test"), _pick(_CMP, cmp, "comparison", "signal_test"),
                               value, byref(ok)))
    return bool(ok.value)


def signal_fetch(sig: Any) -> int:
    """Atomic read of this rank's signal word."""
    v = c_uint64()
    check(lib.hgas_signal_fetch(_signal_word(sig, "signal_fetch"), byref(v)))
    return v.value


# ------------------------------------------------------------------------------------------------
# Atomics: on the first element of a symmetric int32/int64/uint32/uint64 array
# ------------------------------------------------------------------------------------------------

_AMO = {"fetch": 0, "set": 1, "add": 2, "fetch_add": 3, "inc": 4, "fetch_inc": 5, "swap": 6,
        "compare_swap": 7, "and": 8, "or": 9, "xor": 10, "fetch_and": 11, "fetch_or": 12, "fetch_xor": 13}
_FETCHING = {0, 3, 5, 6, 7, 11, 12, 13}


def atomic(target: Any, op: str, rank: int, value: int = 0, compare: int = 0) -> int | None:
    """One atomic `op` on the first element of symmetric integer array `target` on `rank`:
    fetch, set, add, fetch_add, inc, fetch_inc, swap, compare_swap (value if == compare), and,
    or, xor, fetch_and, fetch_or, fetch_xor. Fetching ops return the old value."""
    code = _pick(_AMO, op, "atomic op", "atomic")
    g, n, dtype = _remote(target, rank)
    t = _DTYPE.get(dtype)
    ct = _AMO_CTYPE.get(t)
    if ct is None:
        raise InvalidArgError(f"hgas.atomic: atomics work on int32, int64, uint32 and uint64 arrays, not {dtype}")
    operand, cmpv, result = ct(value), ct(compare), ct()
    check(lib.hgas_atomic(g, code, t, byref(operand), byref(cmpv), byref(result)))
    return result.value if code in _FETCHING else None


def atomic_fetch(target: Any, rank: int) -> int:
    """Atomic read of target[0] on `rank`."""
    return atomic(target, "fetch", rank)  # type: ignore[return-value]


def atomic_set(target: Any, value: int, rank: int) -> None:
    """Atomic write of target[0] on `rank`."""
    atomic(target, "set", rank, value)


def atomic_add(target: Any, value: int, rank: int) -> None:
    """target[0] += value on `rank`."""
    atomic(target, "add", rank, value)


def atomic_fetch_add(target: Any, value: int, rank: int) -> int:
    """target[0] += value on `rank`; returns the old value."""
    return atomic(target, "fetch_add", rank, value)  # type: ignore[return-value]


def atomic_inc(target: Any, rank: int) -> None:
    atomic(target, "inc", rank)


def atomic_fetch_inc(target: Any, rank: int) -> int:
    return atomic(target, "fetch_inc", rank)  # type: ignore[return-value]


def atomic_swap(target: Any, value: int, rank: int) -> int:
    """Writes value into target[0] on `rank`; returns the old value."""
    return atomic(target, "swap", rank, value)  # type: ignore[return-value]


def atomic_compare_swap(target: Any, compare: int, value: int, rank: int) -> int:
    """Writes value into target[0] on `rank` if it equals compare; returns the old value."""
    return atomic(target, "compare_swap", rank, value, compare)  # type: ignore[return-value]


# ------------------------------------------------------------------------------------------------
# Collectives (every rank calls them in the same order with matching arguments)
# ------------------------------------------------------------------------------------------------

def barrier() -> None:
    """Waits for every rank; completes this rank's outstanding operations first."""
    check(lib.hgas_barrier())
    _nbi_keep.clear()


_TYPES_MSG = ("int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64 and "
              "bfloat16 (hgas.bfloat16, torch.bfloat16, or dtype='bfloat16' over raw 16-bit data)")


def _reduce_type(dtype: np.dtype, named: Any, nbytes: int, call: str) -> int:
    """The hgas_dtype_t a reduction combines: `named` (dtype=) over the array's bytes, else the array's own."""
    if named is not None:
        t = _DTYPE_NAME.get(named) if type(named) is str else None
        if t is None:
            try:
                t = _DTYPE.get(np.dtype(named))
            except TypeError:
                t = None
        if t is None:
            raise InvalidArgError(f"hgas.{call}: dtype={named!r} is not a reduction type; use one of {_TYPES_MSG}")
        if nbytes % _DTYPE_SIZE[t]:
            raise InvalidArgError(f"hgas.{call}: {nbytes} bytes are not a whole number of {named} elements "
                                  f"({_DTYPE_SIZE[t]} bytes each)")
        return t
    t = _DTYPE.get(dtype)
    if t is None and dtype.name == "bfloat16":  # ml_dtypes (JAX)
        t = 11
    if t is None:
        raise InvalidArgError(f"hgas.{call}: reductions work on {_TYPES_MSG}; not {dtype}")
    return t


def _reduce_args(array: Any, out: Any, call: str, named: Any = None) -> tuple[int, int, int, int]:
    src, n, dtype = local_buffer(array)
    t = _reduce_type(dtype, named, n, call)
    count = n // _DTYPE_SIZE[t]
    if out is None:
        return src, src, count, t
    dst, dn, ddtype = local_buffer(out, writable=True)
    if dn != n or (named is None and ddtype != dtype):
        raise InvalidArgError(f"hgas.{call}: `out` must match the array ({n} bytes of {dtype}), "
                              f"not {dn} bytes of {ddtype}")
    return dst, src, count, t


def allreduce(array: Any, op: str = "sum", out: Any = None, dtype: Any = None) -> Any:
    """Combines `array` of every rank element-wise with op ("sum", "min", "max", "prod"; "and",
    "or", "xor" on integers) into `out` (default: `array` itself, in place) on every rank;
    returns the result array. Element types: every integer of 8 to 64 bits, float16, float32,
    float64, bfloat16; `dtype` ("bfloat16", "float16", "int8", ... or a NumPy dtype) combines
    the array's bytes as that type instead of its own (bfloat16 bits in a uint16 array). 16-bit
    floats are combined in float32 and rounded to nearest even after every step. Host memory,
    symmetric or not, and hgas's symmetric arrays of any kind (hgas.zeros(..., kind="cuda"), or a
    CuPy/torch view of one)."""
    if out is None and dtype is None and type(op) is str and op in _OP:
        st = _fast_allreduce(array, _OP[op])
        if st >= 0:
            if st:
                check(st)
            return array
    dst, src, count, t = _reduce_args(array, out, "allreduce", dtype)
    st = lib.hgas_allreduce(dst, src, count, t, _pick(_OP, op, "reduction op", "allreduce"))
    if st:
        check(st)
    return array if out is None else out


def reduce(array: Any, root: int, op: str = "sum", out: Any = None, dtype: Any = None) -> Any:
    """allreduce() with the result on `root` only (elsewhere `out` is left as it was)."""
    dst, src, count, t = _reduce_args(array, out, "reduce", dtype)
    check(lib.hgas_reduce(dst, src, count, t, _pick(_OP, op, "reduction op", "reduce"), root))
    return array if out is None else out


def broadcast(array: Any, root: int) -> Any:
    """Copies symmetric `array` of `root` into the same array of every rank (in place)."""
    addr, n, _ = local_buffer(array)
    check(lib.hgas_broadcast(addr, addr, n, root))
    return array


def fcollect(dst: Any, src: Any) -> Any:
    """Concatenates every rank's `src` in rank order into symmetric `dst` (size() * src.nbytes) on every rank."""
    d, dn, _ = local_buffer(dst, writable=True)
    s, n, _ = local_buffer(src)
    if dn != n * size():
        raise InvalidArgError(f"hgas.fcollect: `dst` must have size() * src.nbytes = {n * size()} bytes, not {dn}")
    check(lib.hgas_fcollect(d, s, n))
    return dst


def alltoall(dst: Any, src: Any) -> Any:
    """Block j of `src` goes to rank j, which stores it as block i (this rank) of symmetric `dst`;
    both of size() equal blocks."""
    d, dn, _ = local_buffer(dst, writable=True)
    s, n, _ = local_buffer(src)
    if dn != n or n % size():
        raise InvalidArgError(f"hgas.alltoall: `src` and `dst` must have the same size, a multiple of size() = "
                              f"{size()} blocks; got {n} and {dn} bytes")
    check(lib.hgas_alltoall(d, s, n // size()))
    return dst


# ------------------------------------------------------------------------------------------------
# Tagged messages (two-sided, MPI semantics)
# ------------------------------------------------------------------------------------------------

class MsgInfo(NamedTuple):
    """What a receive got or a probe found."""
    source: int
    tag: int
    bytes: int


def _info(i: msg_info_t) -> MsgInfo:
    return MsgInfo(i.source, i.tag, i.bytes)


def send(buf: Any, dest: int, tag: int = 0) -> None:
    """Sends `buf` (any local array) to rank `dest` with `tag` (0..TAG_MAX)."""
    a, n, _ = local_buffer(buf)
    check(lib.hgas_send(a, n, dest, tag))


def recv(buf: Any, source: int = ANY_RANK, tag: int = ANY_TAG) -> MsgInfo:
    """Receives the first matching message into `buf` (its capacity is buf.nbytes); returns who
    sent it, its tag and its bytes. A longer message raises hgas.TruncatedError (and is consumed)."""
    a, n, _ = local_buffer(buf, writable=True)
    info = msg_info_t()
    check(lib.hgas_recv(a, n, source, tag, byref(info)))
    return _info(info)


def isend(buf: Any, dest: int, tag: int = 0) -> Handle:
    """Non-blocking send: `buf` must stay unchanged until the handle completes."""
    a, n, _ = local_buffer(buf)
    h = Handle(buf)
    check(lib.hgas_isend(a, n, dest, tag, byref(h._h)))
    return h


def irecv(buf: Any, source: int = ANY_RANK, tag: int = ANY_TAG) -> Handle:
    """Non-blocking receive: the handle's wait() returns the MsgInfo."""
    a, n, _ = local_buffer(buf, writable=True)
    info = msg_info_t()
    h = Handle(buf, info)
    check(lib.hgas_irecv(a, n, source, tag, byref(info), byref(h._h)))
    return h


def iprobe(source: int = ANY_RANK, tag: int = ANY_TAG) -> MsgInfo | None:
    """The MsgInfo of a matching message that has arrived (not received), or None."""
    flag, info = c_int(), msg_info_t()
    check(lib.hgas_iprobe(source, tag, byref(flag), byref(info)))
    return _info(info) if flag.value else None


def probe(source: int = ANY_RANK, tag: int = ANY_TAG) -> MsgInfo:
    """Waits for a matching message and describes it without receiving it."""
    info = msg_info_t()
    check(lib.hgas_probe(source, tag, byref(info)))
    return _info(info)


# ------------------------------------------------------------------------------------------------
# Stream-ordered operations (CUDA streams of CuPy or torch; docs/device.md)
# ------------------------------------------------------------------------------------------------

def _stream(s: Any) -> int:
    """A cudaStream_t from None (the legacy default stream), an int, a CuPy stream (.ptr) or a
    torch stream (.cuda_stream)."""
    if s is None:
        return 0
    if isinstance(s, int):
        return s
    for attr in ("ptr", "cuda_stream"):
        v = getattr(s, attr, None)
        if isinstance(v, int):
            return v
    raise InvalidArgError(f"hgas: {type(s).__name__} is not a CUDA stream: pass a cupy.cuda.Stream, a "
                          "torch.cuda.Stream, a cudaStream_t as int, or None")


def put_on_stream(dst: Any, src: Any, rank: int, stream: Any = None) -> None:
    """Enqueues on `stream` a copy of local `src` into symmetric `dst` on `rank`."""
    d, dn, _ = local_buffer(dst, order=False)
    s, n, _ = local_buffer(src, order=False)
    if n > dn:
        raise InvalidArgError(f"hgas.put_on_stream: the source has {n} bytes but the destination only {dn}")
    check(lib.hgas_put_on_stream(d, s, n, rank, _stream(stream)))


def put_signal_on_stream(dst: Any, src: Any, sig: Any, value: int, rank: int, stream: Any = None,
                         op: str = "set") -> None:
    """Enqueues put_signal on `stream`: the data, then the signal update on `rank`."""
    d, dn, _ = local_buffer(dst, order=False)
    s, n, _ = local_buffer(src, order=False)
    if n > dn:
        raise InvalidArgError(f"hgas.put_signal_on_stream: the source has {n} bytes but the destination only {dn}")
    check(lib.hgas_put_signal_on_stream(d, s, n, _signal_word(sig, "put_signal_on_stream"), value,
                                        _pick(_SIGNAL_OP, op, "signal op", "put_signal_on_stream"), rank,
                                        _stream(stream)))


def signal_wait_on_stream(sig: Any, cmp: str, value: int, stream: Any = None) -> None:
    """Later work on `stream` waits until this rank's signal word compares true with `value`."""
    check(lib.hgas_signal_wait_on_stream(_signal_word(sig, "signal_wait_on_stream"),
                                         _pick(_CMP, cmp, "comparison", "signal_wait_on_stream"), value,
                                         _stream(stream)))


def barrier_on_stream(stream: Any = None) -> None:
    """The device barrier across ranks, in stream order (collective)."""
    check(lib.hgas_barrier_on_stream(_stream(stream)))


def quiet_on_stream(stream: Any = None) -> None:
    """Operations enqueued before on `stream` are complete at their targets before later work starts."""
    check(lib.hgas_quiet_on_stream(_stream(stream)))


def stream_sync(stream: Any = None) -> None:
    """Waits for `stream`, serving proxied requests, at most HGAS_TIMEOUT (use it instead of
    stream.synchronize() where the stream waits on a signal)."""
    check(lib.hgas_stream_sync(_stream(stream)))
