"""Errors raised by the store; the messages are shown to learners as they are."""

from __future__ import annotations

import os

__all__ = [
    "StoreAccessError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreNotFoundError",
    "StoreUnavailableError",
    "StoreVersionError",
]


class StoreError(Exception):
    """Base class of every store error: ``path`` is the database file concerned, ``str(error)`` the message.

    A subclass (a store's own, or an application's) passes the path and its message to this constructor;
    a pickled error (sent from a worker process, say) is rebuilt with its attributes as they were.
    """

    path: str

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        super().__init__(message)
        self.path = os.fspath(path)

    def __reduce__(self) -> tuple[object, ...]:
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(kind: type[StoreError], args: tuple[object, ...], attributes: dict[str, object]) -> StoreError:
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    error.__dict__.update(attributes)
    return error


class StoreNotFoundError(StoreError):
    """The database file does not exist and creating it was not allowed."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, f"no progress database at {os.fspath(path)}")


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
        super().__init__(path, message)


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
        super().__init__(path, message)


class StoreLockedError(StoreError):
    """Another connection held the write lock for longer than the busy timeout."""

    def __init__(self, path: str | os.PathLike[str], waited_s: float) -> None:
        self.waited_s = waited_s
        super().__init__(
            path,
            f"{os.fspath(path)} is locked by another program (waited {waited_s:g} s); close other kernels or "
            "terminals using it and try again",
        )


class StoreVersionError(StoreError):
    """The file was written with a newer schema than this code knows; ``advice`` ends the message (what to
    upgrade: an application names itself)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        found: int,
        known: int,
        advice: str = "upgrade the software to open it",
    ) -> None:
        self.found = found
        self.known = known
        super().__init__(
            path,
            f"{os.fspath(path)} was written by a newer version of this software (schema {found}, this "
            f"version knows up to {known}); {advice}",
        )


class StoreUnavailableError(StoreError):
    """A database server could not be reached, or the connection to it was lost: the store's contents are
    not in doubt, and the same call may succeed once the server is back. ``detail`` says what happened."""

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        self.detail = detail
        super().__init__(
            path,
            f"{os.fspath(path)} cannot be reached ({detail}); nothing was lost that was saved before. Try "
            "again in a moment, or ask whoever runs the class database whether the server is up",
        )
