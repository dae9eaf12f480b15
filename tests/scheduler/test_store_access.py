"""A file that is fine but cannot be written or opened (disk full, read-only, no folder, I/O error) raises
StoreAccessError, never StoreCorruptError: the learner must not be told to move a healthy file aside."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import (
    GOOD,
    cannot_open,
    child_env,
    damaged,
    exact_store,
    full,
    io_error,
    read_only,
    untouched,
)

from scheduler import Store, StoreAccessError, StoreCorruptError, StoreLockedError
from scheduler._failures import translate


def sqlite_error(kind: type[sqlite3.Error], text: str, code: int | None) -> sqlite3.Error:
    """An sqlite3 error as Python 3.11+ raises it (with ``sqlite_errorcode``), or as 3.10 does (without)."""
    error = kind(text)
    if code is not None:
        error.sqlite_errorcode = code  # type: ignore[attr-defined]
    return error


OPERATIONAL, DATABASE = sqlite3.OperationalError, sqlite3.DatabaseError
TRANSLATIONS = [
    # (error class, SQLite's message, extended result code, the message the learner gets)
    (OPERATIONAL, "database or disk is full", 13, full),
    (OPERATIONAL, "attempt to write a readonly database", 8, read_only),
    (OPERATIONAL, "attempt to write a readonly database", 1032, read_only),  # SQLITE_READONLY_DBMOVED
    (
        OPERATIONAL,
        "unable to open database file",
        14,
        lambda p: cannot_open(p, "unable to open database file"),
    ),
    (OPERATIONAL, "access permission denied", 3, lambda p: cannot_open(p, "access permission denied")),
    (OPERATIONAL, "disk I/O error", 10, io_error),
    (OPERATIONAL, "disk I/O error", 778, io_error),  # SQLITE_IOERR_WRITE
    (OPERATIONAL, "disk I/O error", 4874, io_error),  # SQLITE_IOERR_SHMSIZE
    (
        DATABASE,
        "database disk image is malformed",
        11,
        lambda p: damaged(p, "database disk image is malformed"),
    ),
    (DATABASE, "file is not a database", 26, lambda p: damaged(p, "file is not a database")),
]


@pytest.mark.parametrize("with_code", [True, False], ids=["3.11+ errorcode", "3.10 message"])
@pytest.mark.parametrize(("kind", "text", "code", "expected"), TRANSLATIONS)
def test_translate(tmp_path: Path, kind, text: str, code: int, expected, with_code: bool) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "progress.sqlite3"
    error = translate(path, sqlite_error(kind, text, code if with_code else None), 5000, opened=True)
    assert error is not None
    assert str(error) == expected(path)
    assert isinstance(error, StoreCorruptError if code in (11, 26) else StoreAccessError)


def test_translate_open_time_corruption_and_other_codes(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    malformed = sqlite_error(DATABASE, "database disk image is malformed", 11)
    assert str(translate(path, malformed, 5000)) == untouched(path, "database disk image is malformed")
    busy = translate(path, sqlite_error(OPERATIONAL, "database is locked", 5), 5000, opened=True)
    assert isinstance(busy, StoreLockedError)
    assert isinstance(
        translate(path, sqlite_error(OPERATIONAL, "database is locked", None), 200), StoreLockedError
    )
    # Where there is a result code, it decides, not the message text.
    assert isinstance(
        translate(path, sqlite_error(OPERATIONAL, "database is locked", 13), 200), StoreAccessError
    )
    # Not about the file: a bug to re-raise, not something to blame the file for.
    assert translate(path, sqlite_error(OPERATIONAL, "out of memory", 7), 5000) is None
    assert translate(path, sqlite_error(OPERATIONAL, "out of memory", None), 5000) is None
    assert (
        translate(path, sqlite_error(sqlite3.IntegrityError, "NOT NULL constraint failed", 1299), 5000)
        is None
    )
    # Anything else unknown is still reported as damage, worded for when it happened.
    other = sqlite_error(OPERATIONAL, "no such table: cards", 1)
    assert str(translate(path, other, 5000, opened=True)) == damaged(path, "no such table: cards")


def test_a_full_disk_is_not_corruption(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    with exact_store(path) as store:
        pages = store._connection.execute("PRAGMA page_count").fetchone()[0]
        store._connection.execute(f"PRAGMA max_page_count = {pages}")  # SQLite raises SQLITE_FULL for real
        recorded = 0
        with pytest.raises(StoreAccessError) as info:
            for index in range(1000):
                store.record(f"a-longish-item-id-{index}" * 8, GOOD, T0 + timedelta(minutes=index))
                recorded += 1
        assert str(info.value) == full(path)
        assert (info.value.reason, info.value.path) == ("full", str(path))
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        assert len(store.reviews()) == recorded  # the failed answer left nothing half-written
        store._connection.execute(f"PRAGMA max_page_count = {pages * 100}")  # space freed
        store.record("after", GOOD, T0 + timedelta(days=1))
        assert len(store.reviews()) == recorded + 1


def test_a_file_where_a_folder_should_be(tmp_path: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    for path in (blocker / "progress.sqlite3", blocker / "sub" / "progress.sqlite3"):
        for create in (True, False):
            with pytest.raises(StoreAccessError) as info:
                Store.open(path, create=create)
            assert str(info.value) == cannot_open(path, f"{blocker} is not a folder")
            assert (info.value.reason, info.value.detail) == ("open", f"{blocker} is not a folder")
    assert blocker.read_text() == "mine"


def test_connect_and_mkdir_failures_are_translated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sub" / "progress.sqlite3"

    def no_space(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "mkdir", no_space)
    with pytest.raises(StoreAccessError) as info:
        Store.open(path)
    assert str(info.value) == full(path)
    monkeypatch.undo()

    def cannot_connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        raise sqlite_error(OPERATIONAL, "unable to open database file", 14)

    monkeypatch.setattr(sqlite3, "connect", cannot_connect)
    with pytest.raises(StoreAccessError) as info:
        Store.open(path)
    assert str(info.value) == cannot_open(path, "unable to open database file")


# A read-only file and a read-only folder, for real: a read-only bind mount in a private mount namespace
# when running as root (root ignores file modes), file modes otherwise.
READ_ONLY_CHECKS = """
import sys
from datetime import datetime, timezone
from scheduler import Rating, Store, StoreError

for path in sys.argv[1:]:
    try:
        with Store.open(path) as store:
            reviews = len(store.reviews())
            store.record("q", Rating.GOOD, datetime(2025, 1, 7, tzinfo=timezone.utc))
            print(f"{path}: wrote after reading {reviews}")
    except StoreError as error:
        print(f"{type(error).__name__}: {error}")
"""


def _can_mount() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return False
    probe = subprocess.run([unshare, "-m", "mount", "--make-rprivate", "/"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="needs POSIX permissions")
def test_read_only_file_and_folder(tmp_path: Path) -> None:
    loose, closed = tmp_path / "loose", tmp_path / "closed"
    for folder in (loose, closed):
        folder.mkdir()
        with Store.open(folder / "progress.sqlite3") as store:
            store.record("q", GOOD, T0)
    file_ro = loose / "progress.sqlite3"  # a read-only file in a writable folder
    paths = [file_ro, closed / "progress.sqlite3", closed / "new.sqlite3", closed / "sub" / "new.sqlite3"]
    command = [sys.executable, "-c", READ_ONLY_CHECKS, *map(str, paths)]
    env = child_env()
    if os.geteuid() == 0:
        if not _can_mount():
            pytest.skip("running as root without mount namespaces: cannot make a file read-only")
        mounts = " && ".join(
            f"mount --bind {target} {target} && mount -o remount,bind,ro {target}"
            for target in (file_ro, closed)
        )
        result = subprocess.run(
            [
                "unshare",
                "-m",
                "sh",
                "-c",
                f'mount --make-rprivate / && {mounts} && exec "$@"',
                "sh",
                *command,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
    else:
        file_ro.chmod(0o444)
        closed.chmod(0o555)
        try:
            result = subprocess.run(command, capture_output=True, text=True, env=env)
        finally:
            closed.chmod(0o755)
            file_ro.chmod(0o644)
    assert result.stderr == ""
    assert result.stdout.splitlines() == [f"StoreAccessError: {read_only(path)}" for path in paths]
    with Store.open(file_ro) as store:  # nothing was damaged or lost
        assert len(store.reviews()) == 1
    assert sorted(os.listdir(closed)) == ["progress.sqlite3"]
