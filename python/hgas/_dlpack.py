"""DLPack through ctypes: reading a capsule that another library made (CuPy, torch), and making
one for hgas device memory that cupy.from_dlpack / torch.from_dlpack take without a copy."""
from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p

import numpy as np

CPU, CUDA, CUDA_HOST = 1, 2, 3  # DLDeviceType
_CAPSULE_NAME = b"dltensor"


class _Device(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _Tensor(Structure):
    _fields_ = [("data", c_void_p), ("device", _Device), ("ndim", c_int32), ("dtype", _DType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _Managed(Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", c_void_p), ("deleter", _DELETER)]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [c_void_p, ctypes.c_char_p]
# The same call taking the capsule as a raw address, for the destructor (the object is dying).
_get_pointer_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))

_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_KINDS = {v: k for k, v in _CODES.items()}
_BFLOAT = 4  # kDLBfloat: torch.bfloat16, jax's bfloat16

# bfloat16, which NumPy lacks: 16-bit records named "bfloat16" (hgas.bfloat16). A DLPack bfloat16
# tensor (torch.bfloat16) parses to it and an hgas array of it exports as one, so the element
# type survives the round trip; reductions combine it as bfloat16 (HGAS_BFLOAT16).
BFLOAT16 = np.dtype([("bfloat16", "<u2")])

# Exported tensors live here until their consumer calls the deleter (or the capsule dies unused).
_live: dict[int, tuple] = {}


@_DELETER
def _deleter(managed):
    _live.pop(ctypes.addressof(managed.contents), None)


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # Called while the capsule is being destroyed: take it as a raw pointer, never as an object.
    if _api.PyCapsule_IsValid(capsule, _CAPSULE_NAME):  # never consumed: release it ourselves
        _live.pop(_get_pointer_raw(capsule, _CAPSULE_NAME), None)


def export(owner, ptr: int, shape: tuple, dtype: np.dtype, device: tuple[int, int]):
    """A DLPack capsule over `ptr` (C order) that keeps `owner` alive until the consumer is done."""
    dtype = np.dtype(dtype)
    ndim = len(shape)
    dims = (c_int64 * max(ndim, 1))(*shape)
    m = _Managed()
    m.dl_tensor.data = ptr
    m.dl_tensor.device = _Device(*device)
    m.dl_tensor.ndim = ndim
    m.dl_tensor.dtype = _DType(_BFLOAT if dtype == BFLOAT16 else _CODES[dtype.kind], dtype.itemsize * 8, 1)
    m.dl_tensor.shape = dims
    m.dl_tensor.strides = None  # compact row-major
    m.dl_tensor.byte_offset = 0
    m.deleter = _deleter
    addr = ctypes.addressof(m)
    _live[addr] = (m, dims, owner)
    return _api.PyCapsule_New(addr, _CAPSULE_NAME, ctypes.cast(_capsule_destructor, c_void_p))


def parse(capsule) -> tuple[int, tuple, np.dtype, int, bool]:
    """(address, shape, dtype, device_type, contiguous) of a DLPack capsule, left unconsumed (its
    destructor frees it when the caller drops it)."""
    addr = _api.PyCapsule_GetPointer(capsule, _CAPSULE_NAME)
    t = _Managed.from_address(addr).dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    kind = _KINDS.get(t.dtype.code)
    if t.dtype.code == _BFLOAT and t.dtype.bits == 16 and t.dtype.lanes == 1:
        dtype = BFLOAT16
    elif kind is None or t.dtype.lanes != 1:
        raise TypeError(f"hgas: DLPack data type code {t.dtype.code} with {t.dtype.lanes} lanes is not supported "
                        "(integers, unsigned integers, floats, bfloat16 and bools are)")
    else:
        dtype = np.dtype(f"{kind}{t.dtype.bits // 8}") if kind != "b" else np.dtype(bool)
    contiguous = True
    if t.strides:
        expect = 1
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and t.strides[i] != expect:
                contiguous = False
            expect *= shape[i]
    return (t.data or 0) + t.byte_offset, shape, dtype, t.device.device_type, contiguous
