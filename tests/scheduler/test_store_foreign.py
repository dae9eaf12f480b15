"""Another program's SQLite file is refused and left untouched: same bytes, and no new file beside it."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from scheduler import Store, StoreCorruptError

DETAIL = "it is an SQLite database of another program: application_id 0, tables notes"


def listing(folder: Path) -> dict[str, str]:
    return {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in sorted(os.listdir(folder))
    }


def notes_db(path: Path, journal_mode: str, *, checkpoint: bool) -> sqlite3.Connection:
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA journal_mode = {journal_mode}")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    if checkpoint:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.commit()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("INSERT INTO notes VALUES ('my thesis')")
    else:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('my thesis')")
    connection.commit()
    return connection


def wal_with_its_log(folder: Path, *, checkpoint: bool) -> Path:
    """A WAL database with committed pages still in its -wal file and no -shm (copied, or left by a crash)."""
    source = folder / "source"
    source.mkdir()
    connection = notes_db(source / "notes.db", "WAL", checkpoint=checkpoint)
    path = folder / "notes.db"
    shutil.copyfile(source / "notes.db", path)
    shutil.copyfile(source / "notes.db-wal", folder / "notes.db-wal")
    connection.close()
    shutil.rmtree(source)
    return path


def wal_closed(folder: Path) -> Path:
    notes_db(folder / "notes.db", "WAL", checkpoint=False).close()
    return folder / "notes.db"


def rollback_mode(folder: Path) -> Path:
    notes_db(folder / "notes.db", "DELETE", checkpoint=False).close()
    return folder / "notes.db"


CASES: dict[str, Callable[[Path], Path]] = {
    "WAL, tables only in the -wal file": lambda folder: wal_with_its_log(folder, checkpoint=False),
    "WAL, rows only in the -wal file": lambda folder: wal_with_its_log(folder, checkpoint=True),
    "WAL, closed": wal_closed,
    "rollback journal": rollback_mode,
}


@pytest.mark.parametrize("create", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_foreign_database_is_refused_and_left_untouched(tmp_path: Path, case: str, create: bool) -> None:
    path = CASES[case](tmp_path)
    before = listing(tmp_path)
    with pytest.raises(StoreCorruptError) as info:
        Store.open(path, create=create)
    assert info.value.detail == DETAIL
    assert listing(tmp_path) == before  # the same files, byte for byte: no new -shm, -wal or -journal
