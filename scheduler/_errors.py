"""Errors raised by the store; the messages are shown to learners as they are."""

from __future__ import annotations

import os

__all__ = [
    "StoreAccessError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreNotFoundError",
    "StoreVersionError",
]


class StoreError(Exception):
    """Base class of every store error; ``path`` is the database file concerned."""

    path: str

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), self._args

    def _setup(self, path: str | os.PathLike[str], message: str, *args: object) -> None:
        self.path = os.fspath(path)
        self._args = (path, *args)
        super().__init__(message)


class StoreNotFoundError(StoreError):
    """The database file does not exist and creating it was not allowed."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._setup(path, f"no progress database at {os.fspath(path)}")


class StoreCorruptError(StoreError):
    """The file is not a readable database of ours.

    Raised while opening (``opened`` False), the file was not modified. Raised later (``opened`` True), a
    damaged part was found on first reading it, and earlier writes to undamaged parts may have succeeded.
    """

    def __init__(self, path: str | os.PathLike[str], detail: str, opened: bool = False) -> None:
        self.detail = detail
        self.opened = opened
        if opened:
            message = (
                f"{os.fspath(path)} is damaged ({detail}); stop using it and move it aside to start fresh, "
                "keeping the moved copy"
            )
        else:
            message = (
                f"{os.fspath(path)} is not a readable progress database ({detail}); it was left untouched. "
                "Move it aside to start fresh."
            )
        self._setup(path, message, detail, opened)


_ACCESS_MESSAGES = {
    "full": "{path} cannot be written: the disk is full; free some space and try again",
    "read-only": "{path} cannot be written (read-only file or folder); check its permissions",
    "open": "{path} cannot be opened ({detail}); check that its folder exists and is writable",
    "io": "{path} cannot be read or written (disk I/O error); check the disk it is on and try again",
}


class StoreAccessError(StoreError):
    """The file could not be opened, read or written, though its contents may well be fine.

    ``reason`` is one of "full" (no space left), "read-only" (file, folder or disk not writable), "open"
    (it cannot be opened or created; ``detail`` says why) and "io" (the disk reported an I/O error).
    """

    def __init__(self, path: str | os.PathLike[str], reason: str, detail: str = "") -> None:
        if reason not in _ACCESS_MESSAGES:
            raise ValueError(f"reason must be one of {', '.join(_ACCESS_MESSAGES)}, got {reason!r}")
        self.reason = reason
        self.detail = detail
        message = _ACCESS_MESSAGES[reason].format(path=os.fspath(path), detail=detail)
        self._setup(path, message, reason, detail)


class StoreLockedError(StoreError):
    """Another connection held the write lock for longer than the busy timeout."""

    def __init__(self, path: str | os.PathLike[str], waited_s: float) -> None:
        self.waited_s = waited_s
        self._setup(
            path,
            f"{os.fspath(path)} is locked by another program (waited {waited_s:g} s); close other kernels or "
            "terminals using it and try again",
            waited_s,
        )


class StoreVersionError(StoreError):
    """The file was written with a newer schema than this code knows."""

    def __init__(self, path: str | os.PathLike[str], found: int, known: int) -> None:
        self.found = found
        self.known = known
        self._setup(
            path,
            f"{os.fspath(path)} was written by a newer version of this course (schema {found}, this version "
            f"knows up to {known}); upgrade the course",
            found,
            known,
        )
