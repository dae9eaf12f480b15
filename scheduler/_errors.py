"""Errors raised by the store; the messages are shown to learners as they are."""

from __future__ import annotations

import os

__all__ = ["StoreCorruptError", "StoreError", "StoreLockedError", "StoreNotFoundError", "StoreVersionError"]


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
    """The file is not a readable database of ours; it was not modified."""

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        self.detail = detail
        self._setup(
            path,
            f"{os.fspath(path)} is not a readable progress database ({detail}); it was left untouched. "
            "Move it aside to start fresh.",
            detail,
        )


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
