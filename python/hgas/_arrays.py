"""Arrays: hgas device memory as an object with DLPack, and any array as a local buffer."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import _dlpack
from ._errors import InvalidArgError, UnsupportedError, check
from ._lib import gptr_t, lib

KIND_HOST, KIND_CUDA, KIND_SIM = 0, 1, 2
KINDS = {"host": KIND_HOST, "cuda": KIND_CUDA, "sim": KIND_SIM}


class DeviceArray:
    """Symmetric (or registered) device memory of this rank: kind "cuda" or "sim".

    A "cuda" array is the rank's GPU memory: `cupy.from_dlpack(a)` and `torch.from_dlpack(a)`
    view it without a copy (DLPack, and `__cuda_array_interface__`). A "sim" array is simulated
    device memory that only hgas calls reach: copy it in and out with `copy_from` / `numpy()`.
    Either is a remote target or source of put/get/signals/atomics and a local buffer of every
    call. Indexing along the first axis gives a view (the same memory, so still symmetric)."""

    __slots__ = ("ptr", "shape", "dtype", "kind", "nbytes", "_base", "__weakref__")

    def __init__(self, ptr: int, shape: tuple, dtype: Any, kind: str, base: Any = None):
        self.ptr = ptr
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.kind = kind
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self._base = base

    @property
    def size(self) -> int:
        return self.nbytes // self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    def __repr__(self) -> str:
        return f"hgas.DeviceArray(kind={self.kind!r}, shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"

    def __getitem__(self, key) -> "DeviceArray":
        """A view of element(s) along the first axis: a[i] or a[i:j] (step 1)."""
        if not self.shape:
            raise InvalidArgError("hgas.DeviceArray: a 0-d array cannot be indexed")
        n, row = self.shape[0], self.nbytes // max(self.shape[0], 1)
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise InvalidArgError(f"hgas.DeviceArray[{key}]: only step 1 keeps the view contiguous")
            stop = max(stop, start)
            return DeviceArray(self.ptr + start * row, (stop - start,) + self.shape[1:], self.dtype, self.kind,
                               self._base or self)
        i = int(key)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise InvalidArgError(f"hgas.DeviceArray[{key}]: index out of range for length {n}")
        shape = self.shape[1:] or (1,)  # an element stays a 1-element array (a signal word, an atomic)
        return DeviceArray(self.ptr + i * row, shape, self.dtype, self.kind, self._base or self)

    # --- DLPack and the CUDA array interface (kind "cuda" only) ---------------------------------
    def __dlpack_device__(self) -> tuple[int, int]:
        if self.kind == "cuda":
            return (_dlpack.CUDA, max(lib.hgas_device_gpu(), 0))
        if self.kind == "host":  # registered or symmetric host memory wrapped as a DeviceArray
            return (_dlpack.CPU, 0)
        raise UnsupportedError("hgas: sim memory is reachable only through hgas calls and cannot be exported "
                               "with DLPack; copy it out with .numpy()")

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None):
        """A DLPack capsule over this memory (no copy). hgas writes device memory from its own
        streams and completes them before a blocking call returns, so the consumer's `stream`
        needs no ordering here."""
        if copy:
            raise BufferError("hgas.DeviceArray: __dlpack__(copy=True) is not supported; export without a copy")
        return _dlpack.export(self, self.ptr, self.shape, self.dtype, self.__dlpack_device__())

    @property
    def __cuda_array_interface__(self) -> dict:
        if self.kind != "cuda":
            raise AttributeError("__cuda_array_interface__ is only for kind 'cuda'")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": None}

    # --- copies ---------------------------------------------------------------------------------
    def _self_gptr(self) -> gptr_t:
        g = gptr_t()
        check(lib.hgas_ptr(self.ptr, lib.hgas_rank_me(), ctypes.byref(g)))
        return g

    def numpy(self) -> np.ndarray:
        """A host copy (NumPy) of this array."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            check(lib.hgas_get(out.ctypes.data, self._self_gptr(), self.nbytes))
        return out

    def copy_from(self, src: Any) -> None:
        """Copies a host or device array of the same number of bytes into this one."""
        addr, nbytes, _ = local_buffer(src)
        if nbytes != self.nbytes:
            raise InvalidArgError(f"hgas.DeviceArray.copy_from: the source has {nbytes} bytes, this array {self.nbytes}")
        if nbytes:
            check(lib.hgas_put(self._self_gptr(), addr, nbytes))


def local_buffer(obj: Any, writable: bool = False, order: bool = True) -> tuple[int, int, np.dtype]:
    """(address, bytes, dtype) of a contiguous array: NumPy, hgas.DeviceArray, anything with
    __cuda_array_interface__ (CuPy, torch on the GPU) or DLPack (torch on the CPU, JAX, ...),
    or the buffer protocol (bytearray, memoryview). `order`: the call reads or writes the data
    now, so it waits for the producer's stream where the interface leaves that to the consumer
    (_order_by_dlpack); False where only the address is needed, or the call is ordered by a
    stream the caller passes."""
    if type(obj) is np.ndarray:  # the common case first
        if not obj.flags.c_contiguous:
            raise InvalidArgError("hgas: the array is not contiguous (C order); pass np.ascontiguousarray(a) "
                                  "or a contiguous slice")
        if writable and not obj.flags.writeable:
            raise InvalidArgError("hgas: the destination array is read-only")
        return obj.__array_interface__["data"][0], obj.nbytes, obj.dtype
    if type(obj) is DeviceArray:
        return obj.ptr, obj.nbytes, obj.dtype
    if isinstance(obj, np.ndarray):
        return local_buffer(np.asarray(obj), writable, order)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        shape, dtype = tuple(cai["shape"]), np.dtype(cai["typestr"])
        strides = cai.get("strides")
        if strides is not None and tuple(strides) != _c_strides(shape, dtype.itemsize):
            raise InvalidArgError("hgas: the device array is not contiguous (C order); pass a contiguous copy")
        stream = cai.get("stream")
        if stream:
            # Version 3 of the interface: the producer names the stream its data is written on
            # (1: the legacy default stream, 2: the per-thread one) and the consumer waits for it.
            # CuPy's array of `cp.full(...)` may still be being filled when hgas reads it.
            check(lib.hgas_stream_sync(int(stream)))
        elif order and cai.get("version", 0) < 3:
            _order_by_dlpack(obj)
        return int(cai["data"][0]), int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype
    if hasattr(obj, "__dlpack__"):
        addr, shape, dtype, _, contiguous = _dlpack.parse(obj.__dlpack__())
        if not contiguous:
            raise InvalidArgError("hgas: the array is not contiguous (C order); pass a contiguous copy")
        return addr, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype
    try:  # the buffer protocol: bytearray, memoryview, array.array, ...
        view = np.frombuffer(obj, np.uint8)
    except (TypeError, ValueError):
        view = None
    if view is not None:
        return local_buffer(view, writable)
    raise InvalidArgError(f"hgas: {type(obj).__name__} is not an array: pass a NumPy, CuPy or torch array, "
                          "an hgas array, or any object with DLPack or the buffer protocol")


def _order_by_dlpack(obj: Any) -> None:
    """Waits until the work the producer has issued on its current stream is done, for an
    array whose __cuda_array_interface__ names no stream because its version predates streams
    (torch's is version 2). DLPack's __dlpack__(stream=1) makes the producer order its current
    stream before the legacy default stream (an event and a wait, torch's documented behavior),
    and hgas waits for that stream: a tensor that a kernel on a torch side stream is still
    writing is read after the write, and one being read is written after the read. An array
    that cannot export (a torch tensor that requires grad) is taken as it is: the caller
    synchronizes, as with a CUDA-aware MPI."""
    export = getattr(obj, "__dlpack__", None)
    if export is None:
        return
    try:
        export(stream=1)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return
    check(lib.hgas_stream_sync(1))


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    out, step = [], itemsize
    for s in reversed(shape):
        out.append(step)
        step *= s
    return tuple(reversed(out))
