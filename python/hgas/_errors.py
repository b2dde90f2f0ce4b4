"""hgas.Error and one subclass per status code of the C library (hgas/status.h)."""
from __future__ import annotations

from ._lib import lib

__all__ = ["Error", "NotInitializedError", "InvalidArgError", "OutOfBoundsError", "NoMemoryError",
           "UnsupportedError", "TimeoutError", "PeerFailedError", "TransportError", "BootstrapError",
           "MisalignedError", "AlreadyInitializedError", "InvalidSettingError", "InvalidPointerError",
           "InternalError", "TruncatedError", "check", "raise_status"]


class Error(Exception):
    """A failed hgas call. `status` is the C status code, `name` its constant
    (HGAS_ERR_TIMEOUT), and the message is the C library's: what went wrong, where, and what to do."""

    status: int = -1

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def name(self) -> str:
        return lib.hgas_error_string(self.status).decode() if self.status >= 0 else "hgas.Error"


class NotInitializedError(Error):
    """A call before hgas.init() or after hgas.finalize()."""
    status = 1


class InvalidArgError(Error, ValueError):
    """A bad argument: unknown rank, wrong buffer, bad operation name, ..."""
    status = 2


class OutOfBoundsError(Error, IndexError):
    """A range leaves its allocation or segment."""
    status = 3


class NoMemoryError(Error, MemoryError):
    """A heap is full; the message names the setting that enlarges it."""
    status = 4


class UnsupportedError(Error):
    """The operation is not available on this path, kind or build."""
    status = 5


class TimeoutError(Error):  # noqa: A001 - hgas.TimeoutError, as the C status is named
    """A wait passed its deadline (HGAS_TIMEOUT)."""
    status = 6


class PeerFailedError(Error):
    """Another rank died or aborted the job."""
    status = 7


class TransportError(Error):
    """The transport reported an error."""
    status = 8


class BootstrapError(Error):
    """The bootstrap store could not be reached or answered badly."""
    status = 9


class MisalignedError(Error):
    """An atomic or signal address is not aligned to its width."""
    status = 10


class AlreadyInitializedError(Error):
    """hgas.init() called twice."""
    status = 11


class InvalidSettingError(Error):
    """An HGAS_* environment variable holds a bad value."""
    status = 12


class InvalidPointerError(Error):
    """A buffer is not symmetric, not hgas memory, or freed."""
    status = 13


class InternalError(Error):
    """A bug in hgas: please report it with the message."""
    status = 14


class TruncatedError(Error):
    """A message is longer than the receive buffer."""
    status = 15


for _cls in (Error,) + tuple(Error.__subclasses__()):
    _cls.__module__ = "hgas"  # tracebacks say hgas.TimeoutError, as the names are used
_BY_STATUS = {cls.status: cls for cls in (
    NotInitializedError, InvalidArgError, OutOfBoundsError, NoMemoryError, UnsupportedError, TimeoutError,
    PeerFailedError, TransportError, BootstrapError, MisalignedError, AlreadyInitializedError,
    InvalidSettingError, InvalidPointerError, InternalError, TruncatedError)}


def raise_status(status: int) -> None:
    """Raises the subclass of Error for a failed C call, with the library's message."""
    msg = lib.hgas_last_error()
    msg = msg.decode(errors="replace") if msg else ""
    cls = _BY_STATUS.get(status, Error)
    raise cls(msg or lib.hgas_error_string(status).decode(), status)


def check(status: int) -> None:
    """Raises unless status is HGAS_OK."""
    if status:
        raise_status(status)
