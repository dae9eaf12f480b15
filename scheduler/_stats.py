"""Numbers for the learner: what is due, how much was reviewed, and true retention."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from scheduler._records import Item
from scheduler._store import Store
from scheduler._time import DayIndexer, day_starts, require_aware, to_ms

__all__ = ["Stats", "forecast", "stats"]

_REVIEW_STATE = 2


@dataclass(frozen=True)
class Stats:
    """A summary at one moment ``at``; every count is over the ``items`` given (removed items are ignored).

    What is due today comes in two parts, so that each agrees with what a session shows: ``due_now`` is what
    is due at ``at`` (overdue included), the due reviews a session started at ``at`` serves (before daily
    limits; a session's "N due now"); ``due_later_today`` is what comes due after ``at`` and before the next
    rollover (learning steps, mostly), served by a session started then.
    """

    due_now: int  # due at `at` or earlier
    due_later_today: int  # due after `at`, before the next rollover
    due_next_7_days: tuple[int, ...]  # 7 counts: day 1..7 after today
    reviews_today: int  # scheduled answers since today's rollover (cram answers are not counted)
    reviews_total: int
    true_retention: (
        float | None
    )  # share not AGAIN over each item's first answer of a day, if it was in review
    new_available: int  # items of enrolled decks never answered (before any daily limit)


def _due_per_day(due_times: list[tuple[str, int]], ids: set[str], starts: list[datetime]) -> list[int]:
    """Due counts per day: bucket k is [starts[k], starts[k + 1]), with everything overdue in bucket 0."""
    bounds = [to_ms(start) for start in starts[1:]]
    counts = [0] * len(bounds)
    for item_id, due in due_times:
        if item_id in ids:
            day = bisect_left(bounds, due + 1)  # due < bounds[day]
            if day < len(counts):
                counts[day] += 1
    return counts


def _true_retention(
    rows: list[tuple[str, int, int, int]], ids: set[str], tz: tzinfo, rollover_hour: int
) -> float | None:
    day_of = DayIndexer(tz, rollover_hour)
    seen: set[tuple[str, int]] = set()
    counted = passed = 0
    for item_id, reviewed_at, rating, state_before in rows:
        if item_id not in ids:
            continue
        key = (item_id, day_of(reviewed_at))
        if key in seen:
            continue
        seen.add(key)
        if state_before == _REVIEW_STATE:
            counted += 1
            passed += rating != 1
    return passed / counted if counted else None


def stats(store: Store, items: Sequence[Item], at: datetime, tz: tzinfo, rollover_hour: int = 4) -> Stats:
    """The numbers at ``at``, all read from one snapshot of the store."""
    at = require_aware(at, "at")
    starts = day_starts(at, tz, rollover_hour, 9)
    ids = {item.id for item in items}
    with store.snapshot():
        due_times = store._due_times()
        counts = store._review_counts()
        decks = set(store.enrolled())
        answered_today = store._answers_between(starts[0], starts[1])
        retention_rows = store._retention_rows()
    due = _due_per_day(due_times, ids, starts)
    at_ms = to_ms(at)
    due_now = sum(when <= at_ms for item_id, when in due_times if item_id in ids)
    seen = {item_id for item_id, _ in due_times}
    return Stats(
        due_now=due_now,
        due_later_today=due[0] - due_now,
        due_next_7_days=tuple(due[1:8]),
        reviews_today=sum(item_id in ids for item_id, _ in answered_today),
        reviews_total=sum(counts.get(item_id, 0) for item_id in ids),
        true_retention=_true_retention(retention_rows, ids, tz, rollover_hour),
        new_available=len({item.id for item in items if item.deck in decks and item.id not in seen}),
    )


def forecast(
    store: Store, items: Sequence[Item], at: datetime, tz: tzinfo, days: int = 30, rollover_hour: int = 4
) -> list[int]:
    """Due counts for ``days`` learner's days from today; day 0 includes everything overdue."""
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ValueError(f"days must be a positive int, got {days!r}")
    at = require_aware(at, "at")
    starts = day_starts(at, tz, rollover_hour, days + 1)
    return _due_per_day(store._due_times(), {item.id for item in items}, starts)
