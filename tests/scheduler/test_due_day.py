"""Due on the learner's day, as in Anki: an interval of a day or more makes a question due from the start
of the day its due time falls on (the 4 am rollover, local time); a same-day step at its exact time. The
queue, the counts, the forecast and what the front ends say all follow it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fixed_clock import T0, UTC, utc
from store_helpers import GOOD, exact_store, steps_store

from course.progress import due_day, due_in, outlook
from scheduler import Item, Limits, Session, Store, due_from, due_queue, forecast, stats

NEW_YORK = ZoneInfo("America/New_York")
BANK = [Item("a1", "a"), Item("a2", "a")]


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with exact_store(db) as opened:
        opened.enroll("a", T0)
        yield opened


@pytest.mark.parametrize(
    ("due", "last", "tz", "hour", "expected"),
    [
        ("2025-03-12T18:00:00", "2025-03-10T18:00:00", UTC, 4, "2025-03-12T04:00:00"),  # two days: from 04:00
        ("2025-03-12T03:00:00", "2025-03-10T18:00:00", UTC, 4, "2025-03-11T04:00:00"),  # 03:00 is the 11th's
        ("2025-03-12T18:00:00", "2025-03-10T18:00:00", UTC, 0, "2025-03-12T00:00:00"),  # another rollover
        ("2025-03-12T18:00:00", "2025-03-10T18:00:00", NEW_YORK, 4, "2025-03-12T08:00:00"),  # 04:00 EDT
        ("2025-03-10T18:10:00", "2025-03-10T18:00:00", UTC, 4, "2025-03-10T18:10:00"),  # a step: exact
        ("2025-03-11T17:59:00", "2025-03-10T18:00:00", UTC, 4, "2025-03-11T17:59:00"),  # under a day: exact
        ("2025-03-12T18:00:00", None, UTC, 4, "2025-03-12T04:00:00"),
        # New York falls back on 2 Nov: that learner's day lasts 25 hours, from 08:00Z to 09:00Z the next day.
        # An answer at 08:30Z with a 1-day interval comes due at 08:30Z on 2 Nov, still the same day: exact.
        ("2025-11-02T08:30:00", "2025-11-01T08:30:00", NEW_YORK, 4, "2025-11-02T08:30:00"),
    ],
)
def test_due_from(due: str, last: str | None, tz: ZoneInfo, hour: int, expected: str) -> None:
    assert due_from(utc(due), None if last is None else utc(last), tz, hour) == utc(expected)


def test_a_question_due_later_today_is_served_from_the_rollover(store: Store) -> None:
    store.record("a1", GOOD, T0)  # Monday 09:00: Good on a new question, 4 days (fuzz off)
    card = store.card("a1")
    assert card is not None and card.due == utc("2025-03-14T09:00:00")
    early = utc("2025-03-14T05:00:00")  # that Friday, four hours before its due time
    assert [item.id for item in due_queue(store, BANK, early, UTC)] == ["a1", "a2"]
    assert Session(store, BANK, early, UTC, Limits(new_per_day=0)).due_count == 1
    summary = stats(store, BANK, early, UTC)
    assert (summary.due_now, summary.due_later_today) == (1, 0)
    assert forecast(store, BANK, early, UTC, days=2) == [1, 0]
    before = utc("2025-03-14T03:59:00")  # still Thursday's learner's day
    assert due_queue(store, BANK, before, UTC, Limits(new_per_day=0)) == []
    assert stats(store, BANK, before, UTC).due_now == 0
    assert forecast(store, BANK, before, UTC, days=2) == [0, 1]
    view = outlook(store, BANK, before, UTC, Limits(new_per_day=0))
    assert (view.due_now, view.next_due) == (0, utc("2025-03-14T04:00:00"))
    # Another rollover hour moves the day's start with it.
    assert due_queue(store, BANK, early, UTC, Limits(new_per_day=0), rollover_hour=6) == []


def test_a_same_day_step_stays_due_at_its_time(db: Path) -> None:
    with steps_store(db) as store:
        store.enroll("a", T0)
        store.record("a1", GOOD, T0)  # a learning step: due at 09:10
        assert due_queue(store, BANK, T0 + timedelta(minutes=5), UTC, Limits(new_per_day=0)) == []
        summary = stats(store, BANK, T0 + timedelta(minutes=5), UTC)
        assert (summary.due_now, summary.due_later_today) == (0, 1)
        assert [
            i.id for i in due_queue(store, BANK, T0 + timedelta(minutes=10), UTC, Limits(new_per_day=0))
        ] == ["a1"]


def test_the_front_ends_say_a_due_day() -> None:
    at = datetime(2025, 3, 10, 20, 0, tzinfo=UTC)
    assert due_day(utc("2025-03-11T04:00:00"), at, UTC) == "tomorrow"
    assert due_day(utc("2025-03-14T04:00:00"), at, UTC) == "in 4 days"
    assert due_day(utc("2025-03-11T03:00:00"), at, UTC) is None  # before the rollover: still today
    assert due_in(at, UTC)(utc("2025-03-11T04:00:00")) == "Next question due tomorrow."
    assert due_in(at, UTC)(utc("2025-03-10T20:10:00")) == "Next question due in 10m."
    assert due_in(at)(utc("2025-03-11T04:00:00")) == "Next question due in 8h."
