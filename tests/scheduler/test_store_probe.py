"""`Store.check_writable`: whether an answer could be saved now, found before the first question, writing
nothing."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import disk_with, full, hold_lock, read_only

from scheduler import Store, StoreAccessError, StoreLockedError
from scheduler._failures import ROOM_FOR_A_WRITE


def enrolled_store(db: Path) -> None:
    with Store.open(db) as store:
        store.enroll("00", T0)


def test_a_writable_store_passes_and_is_left_byte_identical(db: Path) -> None:
    enrolled_store(db)
    before = db.read_bytes()
    with Store.open(db, create=False) as store:
        store.check_writable()
        assert store.enrolled() == {"00": T0}
    assert db.read_bytes() == before


def test_a_file_sqlite_opens_read_only_is_reported(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    enrolled_store(db)
    connect = sqlite3.connect

    def read_only_connect(target: object, *args: object, **kwargs: object) -> sqlite3.Connection:
        if str(target) == str(db):  # as SQLite opens a file the operating system will not open for writing
            target, kwargs = f"{db.as_uri()}?mode=ro", {**kwargs, "uri": True}
        return connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", read_only_connect)
    with Store.open(db, create=False) as store:
        with pytest.raises(StoreAccessError) as caught:
            store.check_writable()
        assert (caught.value.reason, str(caught.value)) == ("read-only", read_only(db))
        assert store.enrolled() == {"00": T0}  # reading still works


def test_a_write_lock_held_elsewhere_is_reported(db: Path) -> None:
    enrolled_store(db)
    with (
        hold_lock(db),
        Store.open(db, create=False, busy_timeout_ms=0) as store,
        pytest.raises(StoreLockedError),
    ):
        store.check_writable()


def test_a_missing_file_is_not_created_by_the_probe(db: Path, tmp_path: Path) -> None:
    with Store.open(db, defer_create=True) as store:  # the file is created by the first write
        store.check_writable()
    assert list(tmp_path.iterdir()) == []


def test_the_probe_is_refused_inside_a_snapshot(db: Path) -> None:
    enrolled_store(db)
    with Store.open(db, create=False) as store, store.snapshot(), pytest.raises(RuntimeError) as caught:
        store.check_writable()
    assert str(caught.value) == "cannot probe writing inside Store.snapshot(); probe after the block ends"


@pytest.mark.parametrize("exists", [True, False], ids=["file", "no file yet"])
def test_a_disk_without_room_for_an_answer_is_reported(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exists: bool
) -> None:
    """Issue 20, item 4: a full disk is found before the first question (with a notebook holding the file
    open, SQLite's own files are there already, and only the first write fails)."""
    if exists:
        enrolled_store(db)
    before = sorted((path.name, path.read_bytes()) for path in tmp_path.iterdir())
    with Store.open(db, defer_create=True) as store:
        disk_with(monkeypatch, ROOM_FOR_A_WRITE - 4096)
        with pytest.raises(StoreAccessError) as caught:
            store.check_writable()
        assert (caught.value.reason, str(caught.value)) == ("full", full(db))
        disk_with(monkeypatch, ROOM_FOR_A_WRITE)  # room for one answer
        store.check_writable()
    assert sorted((path.name, path.read_bytes()) for path in tmp_path.iterdir()) == before


@pytest.mark.parametrize(("euid", "refused"), [(0, False), (1000, True)], ids=["root", "a user"])
def test_the_blocks_reserved_for_root_count_for_root_only(
    db: Path, monkeypatch: pytest.MonkeyPatch, euid: int, refused: bool
) -> None:
    enrolled_store(db)
    disk_with(monkeypatch, 0, for_root=10 * ROOM_FOR_A_WRITE)  # only the reserved blocks are left
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    with Store.open(db, create=False) as store:
        if refused:
            with pytest.raises(StoreAccessError, match="the disk is full"):
                store.check_writable()
        else:
            store.check_writable()
