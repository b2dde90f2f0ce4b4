"""The C library (libhgas) through ctypes: where it is found, and the prototypes of its calls.

ctypes rather than a compiled extension: the package then builds nothing, installs with plain
`pip install`, and works against any libhgas of the same ABI. What a call costs over C is
measured by `python/bench/overhead.py` (python/README.md has the figures).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
from ctypes import (POINTER, Structure, c_char_p, c_int, c_size_t, c_uint16, c_uint32, c_uint64,
                    c_void_p)

__all__ = ["lib", "gptr_t", "msg_info_t", "library_path"]


class gptr_t(Structure):
    """hgas_gptr_t: a byte in the global address space."""
    _fields_ = [("offset", c_uint64), ("rank", c_uint32), ("segment", c_uint16), ("flags", c_uint16)]


class msg_info_t(Structure):
    """hgas_msg_info_t: what a receive got or a probe found."""
    _fields_ = [("source", c_int), ("tag", c_int), ("bytes", c_size_t)]


def _candidates() -> list[str]:
    """Where libhgas may be, most specific first."""
    out = []
    env = os.environ.get("HGAS_LIBRARY")
    if env:
        return [env]  # named explicitly: nothing else is tried, so a wrong path is reported
    try:  # written by the build tree's copy of the package and by `cmake --install`
        from . import _libpath  # type: ignore[attr-defined]
        out.append(_libpath.LIBRARY)
    except ImportError:
        pass
    # Beside the launcher on PATH: <prefix>/bin/hgasrun next to <prefix>/lib/libhgas.so.0
    run = shutil.which("hgasrun")
    if run:  # an install tree (<prefix>/bin), or a build tree (<build>/bin holds a link to hgasrun)
        prefix = os.path.dirname(os.path.dirname(os.path.abspath(run)))
        for sub in ("lib", "lib64", "src/api"):
            out.append(os.path.join(prefix, sub, "libhgas.so.0"))
    found = ctypes.util.find_library("hgas")
    if found:
        out.append(found)
    out.append("libhgas.so.0")  # LD_LIBRARY_PATH
    return out


def _load() -> tuple[ctypes.CDLL, str]:
    tried = []
    for path in _candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            # RTLD_LOCAL: libhgas's symbols stay out of the process's global scope, so modules
            # loaded later (CuPy, torch, ml_dtypes) never bind to them. Where a toolchain links
            # the C++ runtime into libhgas statically, RTLD_GLOBAL had libhgas's copy of
            # libstdc++ answer ml_dtypes' calls, and importing CuPy after hgas.init() crashed.
            return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("hgas: cannot load the C library libhgas; tried: " + "; ".join(tried) +
                      ". Set HGAS_LIBRARY=<prefix>/lib/libhgas.so.0, put the prefix's bin/ (hgasrun) on PATH, "
                      "or use the build tree's package (PYTHONPATH=<build>/python)")


lib, library_path = _load()

_S = c_int  # hgas_status_t
_G = gptr_t
_P = c_void_p
_H = c_void_p  # hgas_handle_t
_PROTOS = {
    # runtime
    "hgas_init": (_S, []), "hgas_finalize": (_S, []), "hgas_initialized": (c_int, []),
    "hgas_rank_me": (c_int, []), "hgas_rank_n": (c_int, []), "hgas_node_me": (c_int, []),
    "hgas_node_n": (c_int, []), "hgas_local_rank": (c_int, []), "hgas_local_n": (c_int, []),
    "hgas_progress": (_S, []), "hgas_error_string": (c_char_p, [c_int]), "hgas_last_error": (c_char_p, []),
    # pointers and memory
    "hgas_ptr": (_S, [_P, c_int, POINTER(_G)]), "hgas_kind_available": (c_int, [c_int]),
    "hgas_malloc_kind": (_S, [c_size_t, c_int, POINTER(_P)]), "hgas_free": (_S, [_P]),
    "hgas_ptr_kind": (c_int, [_P]), "hgas_register": (_S, [_P, c_size_t]), "hgas_deregister": (_S, [_P]),
    # one-sided
    "hgas_put": (_S, [_G, _P, c_size_t]), "hgas_get": (_S, [_P, _G, c_size_t]),
    "hgas_put_nbi": (_S, [_G, _P, c_size_t]), "hgas_get_nbi": (_S, [_P, _G, c_size_t]),
    "hgas_put_nb": (_S, [_G, _P, c_size_t, POINTER(_H)]), "hgas_get_nb": (_S, [_P, _G, c_size_t, POINTER(_H)]),
    "hgas_wait": (_S, [_H]), "hgas_test": (_S, [_H, POINTER(c_int)]),
    "hgas_wait_all": (_S, [POINTER(_H), c_size_t]),
    "hgas_fence": (_S, []), "hgas_quiet": (_S, []),
    # signals and atomics
    "hgas_put_signal": (_S, [_G, _P, c_size_t, _G, c_uint64, c_int]),
    "hgas_put_signal_nbi": (_S, [_G, _P, c_size_t, _G, c_uint64, c_int]),
    "hgas_signal_wait_until": (_S, [_P, c_int, c_uint64, POINTER(c_uint64)]),
    "hgas_signal_test": (_S, [_P, c_int, c_uint64, POINTER(c_int)]),
    "hgas_signal_fetch": (_S, [_P, POINTER(c_uint64)]),
    "hgas_atomic": (_S, [_G, c_int, c_int, _P, _P, _P]),
    # collectives
    "hgas_barrier": (_S, []), "hgas_broadcast": (_S, [_P, _P, c_size_t, c_int]),
    "hgas_reduce": (_S, [_P, _P, c_size_t, c_int, c_int, c_int]),
    "hgas_allreduce": (_S, [_P, _P, c_size_t, c_int, c_int]),
    "hgas_fcollect": (_S, [_P, _P, c_size_t]), "hgas_alltoall": (_S, [_P, _P, c_size_t]),
    # tagged messages
    "hgas_send": (_S, [_P, c_size_t, c_int, c_int]),
    "hgas_recv": (_S, [_P, c_size_t, c_int, c_int, POINTER(msg_info_t)]),
    "hgas_isend": (_S, [_P, c_size_t, c_int, c_int, POINTER(_H)]),
    "hgas_irecv": (_S, [_P, c_size_t, c_int, c_int, POINTER(msg_info_t), POINTER(_H)]),
    "hgas_iprobe": (_S, [c_int, c_int, POINTER(c_int), POINTER(msg_info_t)]),
    "hgas_probe": (_S, [c_int, c_int, POINTER(msg_info_t)]),
    # device: stream-ordered operations
    "hgas_device_gpu": (c_int, []), "hgas_stream_sync": (_S, [_P]),
    "hgas_put_on_stream": (_S, [_P, _P, c_size_t, c_int, _P]),
    "hgas_put_signal_on_stream": (_S, [_P, _P, c_size_t, _P, c_uint64, c_int, c_int, _P]),
    "hgas_signal_wait_on_stream": (_S, [_P, c_int, c_uint64, _P]),
    "hgas_barrier_on_stream": (_S, [_P]), "hgas_quiet_on_stream": (_S, [_P]),
}
for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args
del _name, _res, _args, _f
