"""Store: creating, recording, reading back, the cache, schema pragmas and locking."""

from __future__ import annotations

import os
import pickle
import sqlite3
import time
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fixed_clock import T0, UTC
from store_helpers import AGAIN, EASY, GOOD, HARD, exact_store, steps_store

from scheduler import (
    SCHEMA_VERSION,
    CardState,
    Memory,
    PredictionEvent,
    Review,
    Store,
    StoreAccessError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    StoreVersionError,
)

NAIVE = T0.replace(tzinfo=None)


def test_create_sets_up_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "progress.sqlite3"
    with Store.open(path) as store:
        assert store.path == path
        assert isinstance(store.memory, Memory)
        assert repr(store) == f"Store({str(path)!r})"
    connection = sqlite3.connect(path)
    pragma = {
        name: connection.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("application_id", "user_version", "journal_mode")
    }
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    connection.close()
    assert pragma == {"application_id": 0x41744373, "user_version": SCHEMA_VERSION, "journal_mode": "wal"}
    assert SCHEMA_VERSION == 4
    assert tables == {"review_log", "cram_log", "cards", "decks", "settings", "nudge_log", "prediction_log"}


def test_missing_file_without_create(tmp_path: Path) -> None:
    path = tmp_path / "nope.sqlite3"
    with pytest.raises(StoreNotFoundError) as info:
        Store.open(path, create=False)
    assert str(info.value) == f"no progress database at {path}"
    assert info.value.path == str(path)
    assert not path.exists()


def test_record_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    berlin = (T0 + timedelta(microseconds=123456)).astimezone(ZoneInfo("Europe/Berlin"))  # 10:00:00.123456
    with exact_store(tmp_path / "defaults.sqlite3") as store:  # Memory's defaults: no same-day steps
        assert store.record("q1", GOOD, berlin).due == T0 + timedelta(days=4, microseconds=123000)
        assert store.record("q2", AGAIN, berlin).due == T0 + timedelta(days=1, microseconds=123000)
    with steps_store(path) as store:  # fsrs's steps: a first Good is due again in 10 minutes
        first = store.record("q1", GOOD, berlin, duration_ms=4200)
        assert first == Review("q1", GOOD, T0 + timedelta(microseconds=123000), 4200, first.due)
        assert first.due == T0 + timedelta(minutes=10, microseconds=123000)
        assert first.reviewed_at.tzinfo is UTC and first.due.tzinfo is UTC
        second = store.record("q2", 4, T0)  # a plain int is accepted as a rating
        third = store.record("q1", GOOD, first.due)
        assert second.rating is EASY and second.duration_ms is None
        assert store.reviews() == [first, second, third]
        assert store.reviews("q1") == [first, third]
        assert store.reviews("unknown") == []
        assert store.card("unknown") is None
        card = store.card("q1")
        assert card is not None and card.difficulty is not None
        assert round(card.difficulty, 9) == 2.111214236
        assert card == CardState(
            "q1", "review", None, 2.3065, card.difficulty, third.due, third.reviewed_at, 2, 0
        )
        cards = store.cards()
    with Store.open(path, create=False) as reopened:  # everything survives a reopen
        assert reopened.cards() == cards
        assert reopened.reviews() == [first, second, third]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.record("q", 5, T0), "rating must be a Rating or an int from 1 to 4, got 5"),
        (lambda s: s.record_cram("q", 0, T0), "rating must be a Rating or an int from 1 to 4, got 0"),
        (lambda s: s.record("", GOOD, T0), "item_id must be a non-empty str, got ''"),
        (
            lambda s: s.record("q", GOOD, T0, duration_ms=-1),
            "duration_ms must be None or a non-negative int, got -1",
        ),
        (
            lambda s: s.record("q", GOOD, NAIVE),
            "at must be timezone-aware (UTC), got a naive datetime",
        ),
        (
            lambda s: s.record_cram("q", GOOD, NAIVE),
            "at must be timezone-aware (UTC), got a naive datetime",
        ),
        (
            lambda s: s.enroll("01", NAIVE),
            "at must be timezone-aware (UTC), got a naive datetime",
        ),
        (lambda s: s.enroll("", T0), "deck must be a non-empty str, got ''"),
    ],
)
def test_bad_input_is_refused_and_nothing_written(store: Store, call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as info:
        call(store)
    assert str(info.value) == message
    assert (store.reviews(), store.cram_reviews(), store.enrolled(), store.cards()) == ([], [], {}, {})


@pytest.mark.parametrize(
    ("rating", "shown"),
    [(True, "True (bool)"), (3.0, "3.0 (float)"), ("3", "'3' (str)"), (None, "None (NoneType)")],
)
def test_ratings_must_be_ints_not_bools_or_floats(store: Store, rating: object, shown: str) -> None:
    message = f"rating must be a Rating or an int from 1 to 4, got {shown}"
    calls = [
        lambda: store.record("q", rating, T0),  # type: ignore[arg-type]
        lambda: store.record_cram("q", rating, T0),  # type: ignore[arg-type]
        lambda: store.memory.review(None, "q", rating, T0),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == message
    assert (store.reviews(), store.cram_reviews()) == ([], [])
    assert store.record("q", 3, T0).rating is GOOD  # a plain int is fine


def test_enroll_is_idempotent(store: Store) -> None:
    store.enroll("02", T0 + timedelta(days=1))
    store.enroll("01", T0)
    store.enroll("02", T0 + timedelta(days=5))
    assert store.enrolled() == {"01": T0, "02": T0 + timedelta(days=1)}


def test_stale_cache_is_replayed_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    with exact_store(path) as store:
        at = T0
        for rating in (GOOD, GOOD, AGAIN, GOOD, HARD):
            at = store.record("q", rating, at).due
        store.record("other", EASY, T0)
        expected = store.cards()
    raw = sqlite3.connect(path)
    raw.execute("DELETE FROM cards WHERE item_id = 'q'")
    raw.execute("UPDATE cards SET stability = 99.0 WHERE item_id = 'other'")
    raw.commit()
    raw.close()
    with exact_store(path) as store:
        assert store.card("q") is None  # reads come from the cache
        store.rebuild_cache()
        assert store.cards() == expected
    raw = sqlite3.connect(path)
    raw.execute("UPDATE cards SET log_id = 0, reps = 0 WHERE item_id = 'q'")
    raw.commit()
    raw.close()
    with exact_store(path) as store:  # a cache row that does not cover the whole log is not trusted
        review = store.record("q", GOOD, at)
        card = store.card("q")
        assert card is not None and card.reps == 6
        assert card == store.memory.replay("q", store.reviews("q"))
        assert review.due == card.due


def test_locked_database(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    with exact_store(path) as store:
        store.record("q", GOOD, T0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with exact_store(path, busy_timeout_ms=200) as store:
            assert store.reviews("q")[0].rating is GOOD  # WAL: reading still works
            started = time.monotonic()
            with pytest.raises(StoreLockedError) as info:
                store.record("q", GOOD, T0 + timedelta(minutes=10))
            waited = time.monotonic() - started
            assert str(info.value) == (
                f"{path} is locked by another program (waited 0.2 s); close other kernels or terminals "
                "using it and try again"
            )
            assert waited > 0.15  # it waited for the lock (how much longer depends on the machine's load)
            with pytest.raises(StoreLockedError):
                store.enroll("01", T0)
            holder.execute("ROLLBACK")
            store.record("q", GOOD, T0 + timedelta(minutes=10))  # usable again once the lock is gone
            assert len(store.reviews()) == 2
    finally:
        holder.close()


def test_error_messages_and_pickling() -> None:
    errors = [
        StoreNotFoundError("x.db"),
        StoreCorruptError("x.db", "not an SQLite database"),
        StoreCorruptError("x.db", "database disk image is malformed", opened=True),
        StoreLockedError("x.db", 5.0),
        StoreVersionError("x.db", 3, 1),
        StoreVersionError("x.db", 3, 1, "upgrade the app"),
        StoreAccessError("x.db", "full"),
        StoreAccessError("x.db", "read-only"),
        StoreAccessError("x.db", "open", "/home/me/notes.txt is not a folder"),
        StoreAccessError("x.db", "io"),
    ]
    assert [str(error) for error in errors] == [
        "no progress database at x.db",
        "x.db is not a readable progress database (not an SQLite database); it was left untouched. Move it "
        "aside to start fresh.",
        "x.db is damaged (database disk image is malformed); stop using it and move it aside to start fresh, "
        "keeping the moved copy",
        "x.db is locked by another program (waited 5 s); close other kernels or terminals using it and "
        "try again",
        "x.db was written by a newer version of this software (schema 3, this version knows up to 1); "
        "upgrade the software to open it",
        "x.db was written by a newer version of this software (schema 3, this version knows up to 1); "
        "upgrade the app",
        "x.db cannot be written: the disk is full; free some space and try again",
        "x.db cannot be written (read-only file or folder); check its permissions",
        "x.db cannot be opened (/home/me/notes.txt is not a folder); check that its folder exists and is "
        "writable",
        "x.db cannot be read or written (disk I/O error); check the disk it is on and try again",
    ]
    for error in errors:
        assert isinstance(error, StoreError)
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy), copy.path) == (type(error), str(error), "x.db")
        assert vars(copy) == vars(error)  # found/known, reason/detail, waited_s... survive too
    with pytest.raises(ValueError) as info:
        StoreAccessError("x.db", "gone")
    assert str(info.value) == "reason must be one of full, read-only, open, io, got 'gone'"


def test_busy_timeout_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        Store.open(tmp_path / "p.sqlite3", busy_timeout_ms=-5)
    assert str(info.value) == "busy_timeout_ms must be a non-negative int, got -5"
    assert not (tmp_path / "p.sqlite3").exists()


def test_a_store_that_saves_nothing_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "new" / "progress.sqlite3"
    with Store.open(path, defer_create=True) as store:
        assert not store.exists
        with store.snapshot():
            assert (store.cards(), store.reviews(), store.enrolled()) == ({}, [], {})
        assert (store.card("q"), store.cram_reviews()) == (None, [])
        store.rebuild_cache()
    assert os.listdir(tmp_path) == []


def test_a_file_made_by_another_program_after_opening_is_read(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    with Store.open(path, defer_create=True) as mine:
        assert mine.enrolled() == {}
        with Store.open(path) as other:
            other.enroll("00", T0)
        assert mine.enrolled() == {"00": T0}
        mine.record("q", GOOD, T0)
        assert mine.exists
        assert [review.item_id for review in mine.reviews()] == ["q"]


def test_a_closed_store_is_not_reopened(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "progress.sqlite3", defer_create=True)
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.enroll("00", T0)
    assert os.listdir(tmp_path) == []


def test_deferred_creation_happens_at_the_first_write(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "progress.sqlite3"
    with Store.open(path, defer_create=True) as store:
        assert (store.exists, os.listdir(tmp_path)) == (False, [])
        store.enroll("00", T0)  # creates the folders and the file
        assert store.exists
    with Store.open(path, create=False) as store:
        assert store.enrolled() == {"00": T0}


def test_deferred_creation_reports_a_folder_it_cannot_make(tmp_path: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    with Store.open(tmp_path / "sub" / "progress.sqlite3", defer_create=True) as store:
        blocker.rename(tmp_path / "sub")  # a file where the folder should be, found only at the first write
        with pytest.raises(StoreAccessError) as info:
            store.record_cram("q", GOOD, T0)
    assert info.value.reason == "open"
    assert sorted(os.listdir(tmp_path)) == ["sub"]


def test_predictions_are_kept_as_rows_of_their_own(tmp_path: Path) -> None:
    """Times in milliseconds; right 1, 0, or NULL for a skip; no card, no review: an event of its own."""
    path = tmp_path / "progress.sqlite3"
    with Store.open(path, defer_create=True) as store:
        kept = store.predict(PredictionEvent("q", T0 + timedelta(microseconds=2500), "[[1, 0]]", True))
        assert store.exists  # the first write creates the file, as any write does
        store.predict(PredictionEvent("q", T0 + timedelta(seconds=1), "", None))
        store.predict(PredictionEvent("r", T0 + timedelta(seconds=2), "0.5", False))
        assert kept == PredictionEvent("q", T0 + timedelta(milliseconds=2), "[[1, 0]]", True)
        assert (store.cards(), store.reviews(), store.cram_reviews()) == ({}, [], [])
    connection = sqlite3.connect(path)
    rows = connection.execute(
        "SELECT id, item_id, predicted_at, answer, right FROM prediction_log"
    ).fetchall()
    t0_ms = int(T0.timestamp() * 1000)
    assert rows == [
        (1, "q", t0_ms + 2, "[[1, 0]]", 1),
        (2, "q", t0_ms + 1000, "", None),
        (3, "r", t0_ms + 2000, "0.5", 0),
    ]
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        connection.execute(
            "INSERT INTO prediction_log (item_id, predicted_at, answer, right) VALUES ('q', 0, '', 2)"
        )
    connection.close()
    with Store.open(path) as store:
        assert [p.right for p in store.predictions()] == [True, None, False]
