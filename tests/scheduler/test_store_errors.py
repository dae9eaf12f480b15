"""Files that are not a readable store of ours raise exact errors and are left byte-for-byte untouched."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import damaged, exact_store, make_newer, untouched

import scheduler._opening
from scheduler import SCHEMA_VERSION, Memory, Rating, Store, StoreCorruptError, StoreVersionError
from scheduler._opening import read_identity


def real_store(path: Path, reviews: int = 300) -> None:
    with exact_store(path) as store:
        for index in range(reviews):
            store.record(
                f"item-with-a-longish-id-{index % 60}", Rating(1 + index % 4), T0 + timedelta(hours=index)
            )
    assert not Path(f"{path}-wal").exists()


def random_bytes(path: Path) -> str:
    path.write_bytes(random.Random(7).randbytes(8192))
    return "not an SQLite database"


def sqlite_header_only(path: Path) -> str:
    path.write_bytes(b"SQLite format 3\x00" + b"\x10\x00")
    return "truncated: the file has 18 bytes"


def truncated_real_db(path: Path) -> str:
    real_store(path)
    data = path.read_bytes()
    assert len(data) % 4096 == 0 and len(data) >= 8 * 4096
    path.write_bytes(data[: 5 * 4096 + 100])
    return f"truncated: the file has {5 * 4096 + 100} bytes, its header says {len(data)}"


def foreign_db(path: Path) -> str:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    connection.execute("CREATE TABLE tags (note INTEGER, tag TEXT)")
    connection.execute("INSERT INTO notes (body) VALUES ('my thesis')")
    connection.commit()
    connection.close()
    return "it is an SQLite database of another program: application_id 0, tables notes, tags"


def foreign_app_id(path: Path) -> str:
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA application_id = 42")
    connection.execute("PRAGMA user_version = 1")
    connection.commit()
    connection.close()
    return "it is an SQLite database of another program: application_id 42, tables none"


def ours_missing_table(path: Path) -> str:
    real_store(path, reviews=3)
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE decks")
    connection.commit()
    connection.close()
    return "tables missing: decks"


def a_directory(path: Path) -> str:
    path.mkdir()
    return "it is a directory"


CASES: dict[str, Callable[[Path], str]] = {
    "random bytes": random_bytes,
    "header only": sqlite_header_only,
    "truncated real db": truncated_real_db,
    "foreign db": foreign_db,
    "foreign application_id": foreign_app_id,
    "ours, table missing": ours_missing_table,
    "directory": a_directory,
}


def fingerprint(path: Path) -> tuple[str, list[str]]:
    digest = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, sorted(os.listdir(path.parent))


@pytest.mark.parametrize("create", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_unreadable_file_is_left_untouched(tmp_path: Path, case: str, create: bool) -> None:
    path = tmp_path / "progress.sqlite3"
    detail = CASES[case](path)
    before = fingerprint(path)
    with pytest.raises(StoreCorruptError) as info:
        Store.open(path, create=create)
    assert str(info.value) == untouched(path, detail)
    assert info.value.detail == detail
    assert fingerprint(path) == before  # same bytes, and no -wal/-shm/-journal left behind


def test_newer_schema_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    real_store(path, reviews=5)
    make_newer(path)
    before = fingerprint(path)
    with pytest.raises(StoreVersionError) as info:
        Store.open(path)
    newer = SCHEMA_VERSION + 1
    assert str(info.value) == (
        f"{path} was written by a newer version of this software (schema {newer}, this version knows up to "
        f"{SCHEMA_VERSION}); upgrade the software to open it"
    )
    assert (info.value.found, info.value.known) == (newer, SCHEMA_VERSION)
    assert fingerprint(path) == before


def test_damaged_pages_are_reported_when_read(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    real_store(path)
    data = bytearray(path.read_bytes())
    data[4096:] = random.Random(3).randbytes(len(data) - 4096)  # keep page 1 (header and schema) intact
    path.write_bytes(bytes(data))
    # Given a memory, opening reads no settings: the damage is found by the first read
    with Store.open(path, memory=Memory()) as store, pytest.raises(StoreCorruptError) as info:
        store.reviews()
    assert str(info.value) == damaged(path, "database disk image is malformed")
    assert (info.value.detail, info.value.opened) == ("database disk image is malformed", True)
    # Without one, opening reads the settings, and finds it then: nothing was written yet
    with pytest.raises(StoreCorruptError) as info:
        Store.open(path)
    assert str(info.value) == untouched(path, "database disk image is malformed")


def test_damage_found_after_writes_does_not_claim_the_file_untouched(tmp_path: Path) -> None:
    # Only the last page is damaged: the file opens, writes to undamaged pages succeed and change it,
    # and the damage shows up at the first read of that page. "Left untouched" would be false by then.
    path = tmp_path / "progress.sqlite3"
    real_store(path)
    data = bytearray(path.read_bytes())
    data[-4096:] = random.Random(3).randbytes(4096)
    path.write_bytes(bytes(data))
    with Store.open(path) as store:
        store.enroll("01", T0)
        store.record_cram("x", Rating.GOOD, T0)
        with pytest.raises(StoreCorruptError) as info:
            store.reviews()
    message = str(info.value).encode()
    assert message == damaged(path, "database disk image is malformed").encode()
    assert b"untouched" not in message
    assert path.read_bytes() != bytes(data)  # indeed not untouched


def test_a_file_read_while_another_program_writes_it_is_looked_at_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another kernel creating the store (or copying its WAL into it) at the moment we look can make one
    # look read the new tables with the old header: that is no reason to call the file foreign.
    path = tmp_path / "progress.sqlite3"
    real_store(path, reviews=3)
    looks: list[object] = []

    def torn_then_real(connection: sqlite3.Connection) -> object:
        identity = read_identity(connection)
        looks.append(identity)
        return (0, 0, identity[2]) if len(looks) == 1 else identity

    monkeypatch.setattr(scheduler._opening, "read_identity", torn_then_real)
    with Store.open(path, create=False) as store:
        assert len(store.reviews()) == 3
    assert len(looks) == 2

    looks.clear()
    foreign = tmp_path / "notes.sqlite3"
    detail = foreign_db(foreign)
    with pytest.raises(StoreCorruptError) as info:
        Store.open(foreign)
    assert str(info.value) == untouched(foreign, detail)
    assert len(looks) == 2  # refused after two looks that agree


def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    path.touch()
    with Store.open(path, create=False) as store:
        store.record("q", Rating.GOOD, T0)
        assert len(store.reviews()) == 1


def test_an_empty_foreign_database_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    sqlite3.connect(path).execute("PRAGMA user_version = 1").connection.close()
    with Store.open(path) as store:
        store.enroll("01", T0)
    with Store.open(path) as store:
        assert store.enrolled() == {"01": T0}
