"""Migrations: an older file is brought up to date in order, in one transaction, or not at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import GOOD, exact_store, full, make_newer

import scheduler._opening
from scheduler import (
    SCHEMA_VERSION,
    Nudge,
    PredictionEvent,
    Settings,
    Store,
    StoreAccessError,
    StoreVersionError,
)
from scheduler._schema import MIGRATIONS, TABLES

CONNECT = sqlite3.connect  # the real one, for looking at the file from outside
TABLES_1 = frozenset({"review_log", "cram_log", "cards", "decks"})  # what version 1 has
# Two made-up migrations after the real ones, to test the machinery.
VERSION_3 = (
    "CREATE TABLE notes (item_id TEXT PRIMARY KEY, text TEXT NOT NULL)",
    "INSERT INTO notes SELECT DISTINCT item_id, 'v3' FROM review_log",
)
VERSION_4 = (  # needs version 3 first: runs only in order
    "ALTER TABLE notes ADD COLUMN seen INTEGER NOT NULL DEFAULT 0",
    "UPDATE notes SET text = text || '+v4', seen = 1",
)


def version_1_file(path: Path) -> list[object]:
    """A store file as version 1 of the schema wrote it, with answers; its reviews and cards."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler._opening, "MIGRATIONS", MIGRATIONS[:1])
        patch.setattr(scheduler._opening, "SCHEMA_VERSION", 1)
        patch.setattr(scheduler._opening, "TABLES", TABLES_1)
        with exact_store(path) as store:
            for index in range(6):
                store.record(f"q{index % 3}", GOOD, T0 + timedelta(hours=index))
            kept = [store.reviews(), store.cards()]
    assert on_disk(path)[:2] == (1, set(TABLES_1))
    return kept


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
    patch_migrations(monkeypatch, VERSION_3, VERSION_4)
    with Store.open(path) as store:
        assert [store.reviews(), store.cards()] == kept
        rows = store._connection.execute("SELECT item_id, text, seen FROM notes ORDER BY item_id").fetchall()
    assert rows == [("q0", "v3+v4", 1), ("q1", "v3+v4", 1), ("q2", "v3+v4", 1)]
    assert on_disk(path)[:2] == (len(MIGRATIONS) + 2, TABLES | {"notes"})
    begin, commit = traced.index("BEGIN IMMEDIATE"), traced.index("COMMIT")
    assert [s for s in traced if s in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")] == [
        "BEGIN IMMEDIATE",
        "COMMIT",
    ]
    inside = traced[begin + 1 : commit]
    assert [s for s in inside if s in MIGRATIONS[1] + VERSION_3 + VERSION_4] == [
        *MIGRATIONS[1],
        *VERSION_3,
        *VERSION_4,
    ]
    assert inside[-1] == f"PRAGMA user_version = {len(MIGRATIONS) + 2}"

    traced.clear()
    with Store.open(path):  # up to date: nothing more to do, nothing written
        pass
    assert not any(s.startswith(("BEGIN", "CREATE", "ALTER", "PRAGMA user_version =")) for s in traced)


# A version 4 that fails half way: after a statement that worked, by a full disk or by a bug.
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
    patch_migrations(monkeypatch, VERSION_3, (VERSION_4[0], failing))
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
    assert traced[traced.index(VERSION_4[0]) :][-2:] == [failing, "ROLLBACK"]
    assert on_disk(path)[:2] == (1, set(TABLES_1))  # rolled back: no settings or notes table, still version 1

    monkeypatch.undo()  # this version of the code again: the file is as it was
    with Store.open(path) as store:
        assert [store.reviews(), store.cards()] == kept


def test_a_version_1_file_gains_the_settings_table_and_keeps_every_row(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    kept = version_1_file(path)
    with Store.open(path) as store:  # this version: migrations 2, 3 and 4
        assert [store.reviews(), store.cards()] == kept
        assert store.settings() == Settings()
        assert store.memory.desired_retention == 0.85  # Memory's default
    assert SCHEMA_VERSION == 4
    assert on_disk(path)[:2] == (4, set(TABLES))
    assert sorted(TABLES - TABLES_1) == ["nudge_log", "prediction_log", "settings"]
    with Store.open(path) as store:
        store.save_settings(Settings(desired_retention=0.9), T0)
    with Store.open(path) as store:
        assert [store.reviews(), store.cards()] == kept  # due dates from the log; no fuzz differs
        assert store.settings() == Settings(desired_retention=0.9)
        assert store.memory.desired_retention == 0.9


def test_a_version_3_file_gains_the_prediction_log_and_keeps_every_row(
    tmp_path: Path, traced: list[str]
) -> None:
    path = tmp_path / "progress.sqlite3"
    nudge = Nudge("q0", T0, T0 + timedelta(days=1), "a mistake")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler._opening, "MIGRATIONS", MIGRATIONS[:3])
        patch.setattr(scheduler._opening, "SCHEMA_VERSION", 3)
        patch.setattr(scheduler._opening, "TABLES", TABLES - {"prediction_log"})
        with exact_store(path) as store:
            store.record("q0", GOOD, T0)
            store.nudge(nudge)
            store.save_settings(Settings(desired_retention=0.9), T0)
            kept = [store.reviews(), store.cards(), store.nudges(), store.settings()]
    assert on_disk(path)[:2] == (3, set(TABLES - {"prediction_log"}))
    traced.clear()
    with Store.open(path) as store:  # this version: migration 4
        assert [store.reviews(), store.cards(), store.nudges(), store.settings()] == kept
        assert store.predictions() == []
        kept_prediction = store.predict(PredictionEvent("q0", T0 + timedelta(hours=1), "[1, 2]", False))
    assert [s for s in traced if s in MIGRATIONS[3]] == list(MIGRATIONS[3])
    assert f"PRAGMA user_version = {SCHEMA_VERSION}" in traced
    assert on_disk(path)[:2] == (4, set(TABLES))
    assert sorted(TABLES - TABLES_1) == ["nudge_log", "prediction_log", "settings"]
    with Store.open(path) as store:
        assert store.predictions() == [kept_prediction]
        assert store.nudges() == [nudge]


def test_a_file_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    version_1_file(path)
    Store.open(path).close()
    make_newer(path)
    with pytest.raises(StoreVersionError) as info:
        Store.open(path)
    assert (info.value.found, info.value.known) == (SCHEMA_VERSION + 1, SCHEMA_VERSION) == (5, 4)
    assert on_disk(path)[:2] == (5, set(TABLES))
