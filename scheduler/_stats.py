"""Numbers for the learner: what is due, how much was reviewed, and true retention."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from operator import attrgetter

from scheduler._bulk import paused_gc
from scheduler._records import Answer, CardState, Item, Rating, State
from scheduler._serving import new_items
from scheduler._storage import Storage
from scheduler._time import day_numbers, day_starts, due_from, from_ms, require_aware, to_ms

__all__ = ["Stats", "due_counts", "forecast", "stats", "true_retention"]

_REVIEWED_AT = attrgetter("reviewed_at")


@dataclass(frozen=True)
class Stats:
    """A summary at one moment ``at``; every count is over the ``items`` given (removed items are ignored).

    What is due today comes in two parts, so that each agrees with what a session shows: ``due_now`` is what
    is due at ``at`` on the learner's day (``scheduler.due_from``: an interval of a day or more is due from
    the day's start; overdue included), the due reviews a session started at ``at`` serves (before daily
    limits; a session's "N due now"); ``due_later_today`` is what comes due after ``at`` and before the next
    rollover (same-day steps), served by a session started then. ``new_available`` is what such a session
    serves as new before the daily limit (``scheduler._serving.new_items``): items never answered, of
    enrolled decks or brought back by a nudge due by ``at``; an item never answered is never counted as due,
    nudged or not.
    """

    due_now: int  # due on the learner's day, by `at`
    due_later_today: int  # same-day steps due after `at`, before the next rollover
    due_next_7_days: tuple[int, ...]  # 7 counts: day 1..7 after today
    reviews_today: int  # scheduled answers since today's rollover (cram answers are not counted)
    reviews_total: int
    true_retention: (
        float | None
    )  # share not AGAIN over each item's first answer of a day, if it was in review
    new_available: int  # never answered, of enrolled decks or nudged (before any daily limit)


def _due_per_day(due_times: dict[str, datetime], ids: set[str], starts: list[datetime]) -> list[int]:
    """Due counts per day: bucket k is [starts[k], starts[k + 1]), with everything overdue in bucket 0."""
    bounds = [from_ms(to_ms(start)) for start in starts[1:]]  # to the millisecond, as times are stored
    counts = [0] * len(bounds)
    for item_id, due in due_times.items():
        if item_id in ids:
            day = bisect_right(bounds, due)  # due < bounds[day]
            if day < len(counts):
                counts[day] += 1
    return counts


def _is_step(card: CardState | None, at: datetime, tz: tzinfo, rollover_hour: int) -> bool:
    """Whether `card` (due later today) is not due yet at `at`: a same-day step (``due_from``)."""
    return card is not None and due_from(card.due, card.last_review, tz, rollover_hour) > at


def _true_retention(answers: list[Answer], ids: set[str], tz: tzinfo, rollover_hour: int) -> float | None:
    """The share not AGAIN of the answers to items in review that were the first of their item on their
    learner's day, over the items in `ids`."""
    # An (item, day) pair is one int, item number * 2**32 + day: a million of them hash faster than tuples.
    number = {item_id: k << 32 for k, item_id in enumerate(ids)}
    days = day_numbers(list(map(_REVIEWED_AT, answers)), tz, rollover_hour)
    seen: set[int] = set()
    counted = passed = 0
    review, again = State.REVIEW, Rating.AGAIN
    for (item_id, _, rating, state_before), day in zip(answers, days, strict=True):  # an Answer's fields
        item = number.get(item_id)
        if item is None or item + day in seen:
            continue
        seen.add(item + day)
        if state_before is review:
            counted += 1
            passed += rating is not again
    return passed / counted if counted else None


def stats(store: Storage, items: Sequence[Item], at: datetime, tz: tzinfo, rollover_hour: int = 4) -> Stats:
    """The numbers at ``at``, all read from one snapshot of the store."""
    at = require_aware(at, "at")
    starts = day_starts(at, tz, rollover_hour, 9)
    ids = {item.id for item in items}
    with store.snapshot():
        schedule = store.due_by(at)  # every card, and the nudges due by `at`: what a session serves as new
        scheduled = schedule.scheduled
        # an item never answered that a nudge brought back is new, not due, as a session serves it
        due_times = {i: when for i, when in store.due_times().items() if i in scheduled}
        later = {i: when for i, when in due_times.items() if i in ids and at < when < starts[1]}
        steps = sum(_is_step(store.card(i), at, tz, rollover_hour) for i in later)
        counts = store.review_counts()
        decks = set(store.enrolled())
        answered_today = store.answers(starts[0], starts[1])
        # The whole log, read and reduced to one number while the collector is paused: the answers are freed
        # before it resumes, so it never walks over them (a million on a large store).
        with paused_gc():
            retention = _true_retention(store.answers(), ids, tz, rollover_hour)
    due = _due_per_day(due_times, ids, starts)
    return Stats(
        due_now=due[0] - steps,
        due_later_today=steps,
        due_next_7_days=tuple(due[1:8]),
        reviews_today=sum(answer.item_id in ids for answer in answered_today),
        reviews_total=sum(counts.get(item_id, 0) for item_id in ids),
        true_retention=retention,
        new_available=len(new_items(items, scheduled, decks, schedule.nudged)),
    )


def true_retention(
    answers: Sequence[Answer], items: Sequence[Item], tz: tzinfo, rollover_hour: int = 4
) -> float | None:
    """A learner's true retention over ``answers`` (in log order): the share not AGAIN of the answers to
    ``items`` in review that were the first of their item on the learner's day; None when there are none."""
    return _true_retention(list(answers), {item.id for item in items}, tz, rollover_hour)


def due_counts(
    due_times: Mapping[str, datetime],
    items: Sequence[Item],
    at: datetime,
    tz: tzinfo,
    days: int = 30,
    rollover_hour: int = 4,
) -> list[int]:
    """Due counts of ``items`` for ``days`` learner's days from the day of ``at``; day 0 includes everything
    overdue. ``due_times``: when each item is due, as ``Storage.due_times`` gives it."""
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ValueError(f"days must be a positive int, got {days!r}")
    at = require_aware(at, "at")
    starts = day_starts(at, tz, rollover_hour, days + 1)
    return _due_per_day(dict(due_times), {item.id for item in items}, starts)


def forecast(
    store: Storage, items: Sequence[Item], at: datetime, tz: tzinfo, days: int = 30, rollover_hour: int = 4
) -> list[int]:
    """Due counts for ``days`` learner's days from today; day 0 includes everything overdue."""
    return due_counts(store.due_times(), items, at, tz, days, rollover_hour)
