"""Opening a store file safely: look before writing, so a file that is not ours is never modified."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from scheduler._errors import StoreCorruptError, StoreError, StoreVersionError
from scheduler._failures import from_os_error, is_busy, translate
from scheduler._schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, TABLES

__all__ = ["EMPTY", "MISSING", "Identity", "enable_wal", "inspect", "migrate"]

MISSING = "missing"
EMPTY = "empty"
_MAGIC = b"SQLite format 3\x00"
Identity = tuple[int, int, frozenset[str]]  # application_id, user_version, table names
T = TypeVar("T")


def _patiently(action: Callable[[], T], timeout_ms: int) -> T:
    """Run ``action``, retrying while the file is busy, up to the busy timeout. Needed where SQLite returns
    SQLITE_BUSY without calling its busy handler: switching to WAL, and reading while another connection
    is creating the file or recovering its WAL."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def _header_problem(header: bytes, size: int, wal_exists: bool) -> str | None:
    if header[:16] != _MAGIC:
        return "not an SQLite database"
    if len(header) < 100:
        return f"truncated: the file has {size} bytes"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"invalid page size {page_size} in its header"
    pages = int.from_bytes(header[28:32], "big")
    # The page count is trusted only when "version-valid-for" matches the change counter; with a -wal
    # file present a checkpoint may be half done, so SQLite itself is left to judge.
    if not wal_exists and header[92:96] == header[24:28] and pages * page_size > size:
        return f"truncated: the file has {size} bytes, its header says {pages * page_size}"
    return None


def read_identity(connection: sqlite3.Connection) -> Identity:
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    user_version = connection.execute("PRAGMA user_version").fetchone()[0]
    names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return application_id, user_version, frozenset(name for (name,) in names)


def check_identity(path: Path, identity: Identity) -> None:
    """Raise unless the file is ours (or an empty database) with a schema this code knows."""
    application_id, user_version, tables = identity
    if application_id != APPLICATION_ID:
        if application_id == 0 and not tables:
            return
        listed = ", ".join(sorted(tables)) or "none"
        raise StoreCorruptError(
            path,
            f"it is an SQLite database of another program: application_id {application_id}, tables {listed}",
        )
    if user_version > SCHEMA_VERSION:
        raise StoreVersionError(path, user_version, SCHEMA_VERSION)
    if user_version == SCHEMA_VERSION and not tables >= TABLES:
        raise StoreCorruptError(path, f"tables missing: {', '.join(sorted(TABLES - tables))}")


def inspect(path: Path, timeout_ms: int) -> str | Identity:
    """MISSING, EMPTY, or the identity of an existing database, found without writing anything.

    A file found unreadable is refused only when a second look finds it so for the same reason: while
    another program creates the file or copies its WAL into it, one look can read half old, half new pages.
    """
    error: StoreError | None = None
    for _ in range(3):
        try:
            return _look(path, timeout_ms)
        except (StoreCorruptError, StoreVersionError) as exc:
            if error is not None and str(exc) == str(error):
                raise
            error = exc
    assert error is not None
    raise error


def _look(path: Path, timeout_ms: int) -> str | Identity:
    try:
        info = path.stat()
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        raise from_os_error(path, exc) from exc
    if stat.S_ISDIR(info.st_mode):
        raise StoreCorruptError(path, "it is a directory")
    wal_exists = os.path.exists(f"{path}-wal")
    if info.st_size == 0 and not wal_exists:
        return EMPTY
    if info.st_size > 0:
        try:
            with open(path, "rb") as file:
                header = file.read(100)
        except OSError as exc:
            raise from_os_error(path, exc) from exc
        problem = _header_problem(header, info.st_size, wal_exists)
        if problem is not None:
            raise StoreCorruptError(path, problem)
    # Read the main file as immutable first: that creates no -wal/-shm file. With no -wal or -journal file it
    # is complete; otherwise it may lack committed pages still in the WAL, and is looked at again below.
    wal_or_journal = wal_exists or os.path.exists(f"{path}-journal")
    try:
        identity = _read(path, path, "immutable=1", timeout_ms)
    except StoreError:
        if not wal_or_journal:
            raise
        identity = None  # half written: SQLite, reading the WAL too, judges below
    if identity is not None and identity[0] != APPLICATION_ID:
        check_identity(path, identity)  # another program's tables: refused before SQLite makes any file
    if not wal_or_journal:
        assert identity is not None
        check_identity(path, identity)
        return identity
    ours = identity is not None and identity[0] == APPLICATION_ID
    if wal_exists and not ours and not os.path.exists(f"{path}-shm"):
        identity = _read_copy(path, timeout_ms)  # reading it in place would leave a new -shm beside it
    else:
        identity = _read(path, path, "mode=ro", timeout_ms)  # sees the committed pages still in the WAL
    check_identity(path, identity)
    return identity


def _read(path: Path, source: Path, mode: str, timeout_ms: int) -> Identity:
    """The identity of the database file ``source`` (``path`` or a copy of it), opened with URI ``mode``."""
    uri = f"{source.absolute().as_uri()}?{mode}"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=timeout_ms / 1000, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise (translate(path, exc, timeout_ms) or StoreCorruptError(path, str(exc))) from exc
    try:
        return _patiently(lambda: read_identity(connection), timeout_ms)
    except sqlite3.DatabaseError as exc:
        raise (translate(path, exc, timeout_ms) or StoreCorruptError(path, str(exc))) from exc
    finally:
        connection.close()


def _read_copy(path: Path, timeout_ms: int) -> Identity:
    """The identity of ``path`` with its -wal, read from copies in a temporary folder (SQLite would create
    a -shm file beside a WAL database it reads, and the file may be another program's)."""
    with tempfile.TemporaryDirectory(prefix="store-look-") as folder:
        copy = Path(folder) / "look.sqlite3"
        try:
            shutil.copyfile(path, copy)
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")
        except FileNotFoundError:  # checkpointed and removed meanwhile: the main file is complete
            return _read(path, path, "immutable=1", timeout_ms)
        except OSError as exc:
            raise from_os_error(path, exc) from exc
        return _read(path, copy, "mode=ro", timeout_ms)


def enable_wal(connection: sqlite3.Connection, timeout_ms: int) -> None:
    """Switch the file to WAL (a persistent setting; nothing is written when it is already on)."""

    def switch() -> None:
        if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            connection.execute("PRAGMA journal_mode = WAL").fetchone()

    _patiently(switch, timeout_ms)


def migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Bring the schema up to date in one BEGIN IMMEDIATE transaction (nothing to do when current)."""
    if connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        if application_id == APPLICATION_ID:
            return
    connection.execute("BEGIN IMMEDIATE")
    try:
        identity = read_identity(connection)  # again, now that we hold the lock
        check_identity(path, identity)
        version = identity[1] if identity[0] == APPLICATION_ID else 0
        for statements in MIGRATIONS[version:]:
            for statement in statements:
                connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
