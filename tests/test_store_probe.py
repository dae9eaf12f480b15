"""`Store.check_writable`: whether an answer could be saved now, found before the first question, writing
nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import hold_lock, read_only

from scheduler import Store, StoreAccessError, StoreLockedError


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
