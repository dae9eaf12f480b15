"""Migrations: an older file is brought up to date in order, in one transaction, or not at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import GOOD, exact_store, full

import scheduler._opening
from scheduler import Store, StoreAccessError
from scheduler._schema import MIGRATIONS, TABLES

CONNECT = sqlite3.connect  # the real one, for looking at the file from outside
VERSION_2 = (
    "CREATE TABLE notes (item_id TEXT PRIMARY KEY, text TEXT NOT NULL)",
    "INSERT INTO notes SELECT DISTINCT item_id, 'v2' FROM review_log",
)
VERSION_3 = (  # needs version 2 first: runs only in order
    "ALTER TABLE notes ADD COLUMN seen INTEGER NOT NULL DEFAULT 0",
    "UPDATE notes SET text = text || '+v3', seen = 1",
)


def version_1_file(path: Path) -> list[object]:
    with exact_store(path) as store:
        for index in range(6):
            store.record(f"q{index % 3}", GOOD, T0 + timedelta(hours=index))
        return [store.reviews(), store.cards()]


def on_disk(path: Path) -> tuple[int, set[str], int]:
    """The file's schema version, table names and page count."""
    connection = CONNECT(path)
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
    finally:
        connection.close()
    return version, {name for (name,) in tables}, pages


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The statements run on the store's own connection (not the read-only look before opening)."""
    statements: list[str] = []
    connect = sqlite3.connect

    def tracing(*args: object, **kwargs: object) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)  # type: ignore[arg-type]
        if not kwargs.get("uri"):
            connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(sqlite3, "connect", tracing)
    yield statements


def patch_migrations(monkeypatch: pytest.MonkeyPatch, *added: tuple[str, ...]) -> None:
    migrations = (*MIGRATIONS, *added)
    monkeypatch.setattr(scheduler._opening, "MIGRATIONS", migrations)
    monkeypatch.setattr(scheduler._opening, "SCHEMA_VERSION", len(migrations))


def test_a_version_1_file_is_upgraded_in_order_in_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, traced: list[str]
) -> None:
    path = tmp_path / "progress.sqlite3"
    kept = version_1_file(path)
    traced.clear()
    patch_migrations(monkeypatch, VERSION_2, VERSION_3)
    with Store.open(path) as store:
        assert [store.reviews(), store.cards()] == kept
        rows = store._connection.execute("SELECT item_id, text, seen FROM notes ORDER BY item_id").fetchall()
    assert rows == [("q0", "v2+v3", 1), ("q1", "v2+v3", 1), ("q2", "v2+v3", 1)]
    assert on_disk(path)[:2] == (3, TABLES | {"notes"})
    begin, commit = traced.index("BEGIN IMMEDIATE"), traced.index("COMMIT")
    assert [s for s in traced if s in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")] == [
        "BEGIN IMMEDIATE",
        "COMMIT",
    ]
    inside = traced[begin + 1 : commit]
    assert [s for s in inside if s in VERSION_2 + VERSION_3] == [*VERSION_2, *VERSION_3]
    assert inside[-1] == "PRAGMA user_version = 3"

    traced.clear()
    with Store.open(path):  # up to date: nothing more to do, nothing written
        pass
    assert not any(s.startswith(("BEGIN", "CREATE", "ALTER", "PRAGMA user_version =")) for s in traced)


# A version 3 that fails half way: after a statement that worked, by a full disk or by a bug.
BIG_INSERT = (
    "INSERT INTO notes (item_id, text) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
    "WHERE i < 5000) SELECT 'x' || i, printf('%.500c', 'x') FROM n"
)
BAD_INSERT = "INSERT INTO review_log (item_id) VALUES ('x')"  # NOT NULL constraint failed: a bug


@pytest.mark.parametrize("failing", [BIG_INSERT, BAD_INSERT], ids=["disk full", "bug"])
def test_a_failing_migration_leaves_version_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, traced: list[str], failing: str
) -> None:
    path = tmp_path / "progress.sqlite3"
    kept = version_1_file(path)
    traced.clear()
    patch_migrations(monkeypatch, VERSION_2, (VERSION_3[0], failing))
    pages = on_disk(path)[2]
    connect = sqlite3.connect  # the traced one

    def small_disk(*args: object, **kwargs: object) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)  # type: ignore[arg-type]
        if not kwargs.get("uri"):
            connection.execute(f"PRAGMA max_page_count = {pages + 8}")
        return connection

    monkeypatch.setattr(sqlite3, "connect", small_disk)
    expected = StoreAccessError if failing == BIG_INSERT else sqlite3.IntegrityError
    with pytest.raises(expected) as info:
        Store.open(path)
    if failing == BIG_INSERT:
        assert str(info.value) == full(path)
    else:
        assert str(info.value) == "NOT NULL constraint failed: review_log.rating"
    assert traced[traced.index(VERSION_3[0]) :][-2:] == [failing, "ROLLBACK"]
    assert on_disk(path)[:2] == (1, set(TABLES))  # rolled back: no notes table, still version 1

    monkeypatch.undo()  # this version of the code again: the file is as it was
    with Store.open(path) as store:
        assert [store.reviews(), store.cards()] == kept
