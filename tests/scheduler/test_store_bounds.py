"""What the stores and fsrs can hold (`scheduler._bounds`), as SQLite and `Memory` see it: a write refused
for it leaves no file behind, and `Memory` schedules nothing that ``datetime`` cannot hold. (Both stores'
messages: ``tests/scheduler/test_store_contract.py``.)"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fixed_clock import T0, UTC

from scheduler import (
    EARLIEST_TIME,
    LATEST_TIME,
    MAX_DURATION_MS,
    MAX_ID_BYTES,
    LogEntry,
    Memory,
    Rating,
    Store,
    id_problem,
    time_range_text,
)

END_OF_TIME = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


def test_the_bounds() -> None:
    assert [EARLIEST_TIME.isoformat(), LATEST_TIME.isoformat()] == [
        "1970-01-01T00:00:00+00:00",
        "9000-01-01T00:00:00+00:00",
    ]
    assert (MAX_DURATION_MS, MAX_ID_BYTES, time_range_text()) == (2**63 - 1, 1000, "from 1970 to 8999")
    assert [id_problem(text) for text in ("01-a", "x" * 1000, "€" * 333)] == [None, None, None]
    assert id_problem("€" * 334) == "must be at most 1000 bytes long in UTF-8 (it has 1002)"


def test_a_write_refused_leaves_no_file_behind(db: Path, tmp_path: Path) -> None:
    """Issue 20, item 19: a store opened on a missing file creates it with its first write; a write refused
    (here, answers at the end of time, which overflowed in fsrs after the file was made) creates nothing."""
    with Store.open(db, defer_create=True) as store:
        writes = [
            lambda: store.record("q", Rating.GOOD, END_OF_TIME),
            lambda: store.record_cram("q", Rating.GOOD, T0, MAX_DURATION_MS + 1),
            lambda: store.enroll("01", END_OF_TIME),
            lambda: store.merge(
                [LogEntry("q", Rating.GOOD, T0, None), LogEntry("r", Rating.GOOD, END_OF_TIME, None)], [], {}
            ),
        ]
        for write in writes:
            with pytest.raises(ValueError):
                write()
        assert store.reviews() == []
    assert list(tmp_path.iterdir()) == []


def test_memory_schedules_nothing_past_what_datetime_holds() -> None:
    with pytest.raises(ValueError) as longer:
        Memory(maximum_interval=36501)
    assert str(longer.value) == "maximum_interval must be from 1 to 36500 days, got 36501"
    with pytest.raises(ValueError) as step:
        Memory(learning_steps=(timedelta(days=36501),))
    assert str(step.value) == (
        "learning_steps must be positive timedeltas of at most 36500 days, got "
        "(datetime.timedelta(days=36501),)"
    )
    memory = Memory(maximum_interval=36500)
    last = LATEST_TIME - timedelta(milliseconds=1)
    assert memory.review(None, "q", Rating.EASY, last).due > last  # the last time held: its due date too
    for method in (
        lambda: memory.review(None, "q", Rating.GOOD, LATEST_TIME),
        lambda: memory.preview(None, "q", END_OF_TIME),
    ):
        with pytest.raises(ValueError, match=r"^at must be a time from 1970 to 8999 \(UTC\), got 9"):
            method()
