"""Turning sqlite3 and OS errors into store errors that say what went wrong and what the learner can do.

SQLite's result code is read from ``sqlite_errorcode`` (Python 3.11+); on 3.10 it is recognized from the
message, which for these codes is SQLite's fixed text.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from scheduler._errors import StoreAccessError, StoreCorruptError, StoreError, StoreLockedError

__all__ = ["ROOM_FOR_A_WRITE", "from_os_error", "is_busy", "no_room", "sqlite_code", "translate"]

# SQLite primary result codes (https://sqlite.org/rescode.html)
PERM, BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR = 3, 5, 6, 7, 8, 9, 10
CORRUPT, FULL, CANTOPEN, TOOBIG, CONSTRAINT, MISMATCH, MISUSE, RANGE, NOTADB = (
    11, 13, 14, 18, 19, 20, 21, 25, 26,
)  # fmt: skip
_NOT_ABOUT_THE_FILE = frozenset({NOMEM, INTERRUPT, TOOBIG, CONSTRAINT, MISMATCH, MISUSE, RANGE})
_MESSAGES = (  # how each code's error starts, for Python 3.10
    ("database is locked", BUSY),
    ("database table is locked", LOCKED),
    ("database or disk is full", FULL),
    ("attempt to write a readonly database", READONLY),
    ("unable to open database file", CANTOPEN),
    ("disk I/O error", IOERR),
    ("access permission denied", PERM),
    ("database disk image is malformed", CORRUPT),
    ("file is not a database", NOTADB),
    ("out of memory", NOMEM),
    ("interrupted", INTERRUPT),
)


ROOM_FOR_A_WRITE = 64 * 1024
"""The free space, in bytes, that one answer's write may need: the write-ahead log's frames of the few pages
it changes (the log, its indexes, the card), with room to spare."""


def no_room(folder: Path) -> bool:
    """Whether the disk of `folder` has less free space than a write may need (`ROOM_FOR_A_WRITE`), counting
    the blocks reserved for root when running as root; False where that cannot be told (no ``statvfs``, or
    the folder cannot be looked at)."""
    try:
        disk = os.statvfs(folder)
    except (AttributeError, OSError):
        return False
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return (disk.f_bfree if as_root else disk.f_bavail) * disk.f_frsize < ROOM_FOR_A_WRITE


def sqlite_code(exc: sqlite3.Error) -> int | None:
    """SQLite's primary result code for ``exc``, or None when it is not known."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF
    text = str(exc)
    return next((code for start, code in _MESSAGES if text.startswith(start)), None)


def is_busy(exc: sqlite3.Error) -> bool:
    return sqlite_code(exc) in (BUSY, LOCKED)


def _nearest_existing(path: Path) -> Path | None:
    return next((parent for parent in path.parents if os.path.lexists(parent)), None)


def _cannot_open(path: Path, detail: str) -> StoreAccessError:
    """Why ``path`` cannot be opened or created, told from its nearest existing folder."""
    folder = _nearest_existing(path)
    if folder is not None and not folder.is_dir():
        return StoreAccessError(path, "open", f"{folder} is not a folder")
    if folder is not None and not os.access(folder, os.W_OK):
        return StoreAccessError(path, "read-only")
    return StoreAccessError(path, "open", detail)


def from_os_error(path: Path, exc: OSError) -> StoreAccessError:
    """The store error for an OS error met while looking at or creating the file (or its folder)."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return StoreAccessError(path, "full")
    if exc.errno == errno.EROFS:
        return StoreAccessError(path, "read-only")
    if exc.errno == errno.EIO:
        return StoreAccessError(path, "io")
    reason = exc.strerror or type(exc).__name__
    return _cannot_open(path, reason[:1].lower() + reason[1:])


def translate(path: Path, exc: sqlite3.Error, timeout_ms: int, opened: bool = False) -> StoreError | None:
    """The store error for an sqlite3 error, or None when it is not about the file (a bug: re-raise it).

    ``opened`` says whether the store was already open, which decides how a damaged file is reported.
    """
    if isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError)):
        return None
    code = sqlite_code(exc)
    if code in (BUSY, LOCKED):
        return StoreLockedError(path, timeout_ms / 1000)
    if code == FULL:
        return StoreAccessError(path, "full")
    if code == READONLY:
        return StoreAccessError(path, "read-only")
    if code in (CANTOPEN, PERM):
        return _cannot_open(path, str(exc))
    if code == IOERR:
        return StoreAccessError(path, "io")
    if code in _NOT_ABOUT_THE_FILE:
        return None
    return StoreCorruptError(path, str(exc), opened)
