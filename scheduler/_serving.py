"""What to review now: the due queue with daily limits, review sessions and cram sessions."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta, tzinfo
from itertools import chain

from scheduler._records import AnsweredToday, Item, Limits, Rating, Review, State
from scheduler._storage import Storage
from scheduler._time import day_starts, due_from, require_aware

__all__ = ["ASKED_AGAIN_WITHIN", "CramSession", "Session", "due_queue", "new_items"]

_ONE_MS = timedelta(milliseconds=1)


def due_queue(
    store: Storage,
    items: Sequence[Item],
    at: datetime,
    tz: tzinfo,
    limits: Limits = Limits(),  # noqa: B008 - frozen, so a shared default is safe
    rollover_hour: int = 4,
) -> list[Item]:
    """Items to review at ``at``: due reviews, then new items of enrolled decks, within today's limits.

    Due means due on the learner's day (``scheduler.due_from``): an item whose interval was a day or more is
    due from the start of the day its due time falls on (the rollover, ``rollover_hour`` o'clock in ``tz``),
    as in Anki; a same-day step at its exact time. Due reviews are ordered most overdue first (by due time),
    ties broken by lowest retrievability and then by the order of ``items``; new items come in ``items``
    order. Items in the store but not in ``items`` are ignored. A nudge (``Storage.nudge``) not answered
    since makes its item due from the nudge's due time: a card then, if it is later; an item never answered
    comes first among the new items, within the new limit, whether its deck is enrolled or not.
    """
    due, new, _ = _due_and_new(store, items, at, tz, limits, rollover_hour)
    return due + new


def _due_and_new(
    store: Storage, items: Sequence[Item], at: datetime, tz: tzinfo, limits: Limits, rollover_hour: int
) -> tuple[list[Item], list[Item], AnsweredToday]:
    """The due queue in its two parts, and what today's answers count against the limits, read from one
    snapshot of the store."""
    at = require_aware(at, "at")
    with store.snapshot():
        return _read_queue(store, items, at, tz, limits, rollover_hour)


def _answered_today(
    store: Storage, items: Sequence[Item], positions: Mapping[str, int], start: datetime, end: datetime
) -> AnsweredToday:
    """The scheduled answers from `start` to `end` of the `items` (at `positions`), counted by deck."""
    new: dict[str, int] = {}
    reviews: dict[str, int] = {}
    for answer in store.answers(start, end):
        position = positions.get(answer.item_id)
        if position is not None:
            counts = new if answer.state_before is State.NEW else reviews
            deck = items[position].deck
            counts[deck] = counts.get(deck, 0) + 1
    return AnsweredToday(new, reviews)


def _read_queue(
    store: Storage, items: Sequence[Item], at: datetime, tz: tzinfo, limits: Limits, rollover_hour: int
) -> tuple[list[Item], list[Item], AnsweredToday]:
    start, end = day_starts(at, tz, rollover_hour, 2)
    positions: dict[str, int] = {}
    for position, item in enumerate(items):
        positions.setdefault(item.id, position)
    answered = _answered_today(store, items, positions, start, end)
    new_done, reviews_done = answered.new_total, answered.reviews_total

    schedule = store.due_by(end - _ONE_MS)  # due today: the day-based ones later today too (`due_from`)

    def due_today(item_id: str, when: datetime) -> bool:
        if when <= at:
            return True
        card = store.card(item_id)
        return card is not None and due_from(card.due, card.last_review, tz, rollover_hour) <= at

    seen = schedule.scheduled
    nudged = {item_id: when for item_id, when in schedule.nudged.items() if when <= at}
    due = schedule.due
    if any(item_id in seen for item_id in nudged):  # a nudge brings a card forward: due at the earlier time
        times = dict(due.items())
        for item_id, when in nudged.items():
            if item_id in seen and (item_id not in times or when < times[item_id]):
                times[item_id] = when
        due = dict(sorted(times.items(), key=lambda pair: pair[1]))
    cap = max(0, limits.reviews_per_day - reviews_done)
    queue = _break_ties(store, items, _earliest(due, positions, cap, due_today), at, cap)

    new_left = max(0, limits.new_per_day - new_done)
    new = new_items(items, seen, set(store.enrolled()), nudged, new_left) if new_left else []
    return queue, new, answered


def new_items(
    items: Sequence[Item],
    scheduled: Collection[str],
    decks: Collection[str],
    nudged: Collection[str],
    limit: int | None = None,
) -> list[Item]:
    """The new items a session serves, in the order it serves them, the first `limit` of them (None: all):
    the items never answered (not in `scheduled`) that a nudge due now brought back (`nudged`), in any deck,
    enrolled or not, then those of the enrolled `decks`, in ``items`` order; an id that appears twice in
    ``items`` counts once, at its first place. ``scheduler.stats`` counts the same ones
    (``Stats.new_available``)."""
    positions: dict[str, int] = {}
    for position, item in enumerate(items):
        positions.setdefault(item.id, position)
    new: list[Item] = []
    taken: set[str] = set()
    brought = [(position, item) for position, item in enumerate(items) if item.id in nudged] if nudged else []
    rest = ((position, item) for position, item in enumerate(items) if item.deck in decks)
    for position, item in chain(brought, rest):  # nudged new items first, in any deck, enrolled or not
        if limit is not None and len(new) == limit:
            break
        if item.id not in scheduled and positions[item.id] == position and item.id not in taken:
            new.append(item)
            taken.add(item.id)
    return new


def _earliest(
    due: Mapping[str, datetime],
    positions: dict[str, int],
    cap: int,
    due_today: Callable[[str, datetime], bool],
) -> list[tuple[datetime, int]]:
    """(due time, position) of the first `cap` items of `due` (earliest first) that are in `positions` and
    `due_today`, and of any more due at the same time as the last of them, sorted; the rest of `due` is never
    read."""
    found: list[tuple[datetime, int]] = []
    for item_id in due:
        position = positions.get(item_id)
        if position is None:
            continue
        when = due[item_id]
        if not due_today(item_id, when):
            continue
        if len(found) >= cap and (not found or when != found[-1][0]):
            break
        found.append((when, position))
    found.sort()  # equal due times by position
    return found


def _break_ties(
    store: Storage, items: Sequence[Item], due: list[tuple[datetime, int]], at: datetime, cap: int
) -> list[Item]:
    """The first ``cap`` of ``due`` (sorted by due time, then position) with equal due times ordered by lowest
    retrievability first; retrievability is computed only where such a tie matters."""
    queue: list[Item] = []
    start = 0
    while start < len(due) and len(queue) < cap:
        end = start + 1
        while end < len(due) and due[end][0] == due[start][0]:
            end += 1
        group = [position for _, position in due[start:end]]
        if len(group) > 1:
            recall = {}
            for position in group:
                card = store.card(items[position].id)
                recall[position] = 0.0 if card is None else store.memory.retrievability(card, at)
            group.sort(key=lambda position: (recall[position], position))
        queue.extend(items[position] for position in group[: cap - len(queue)])
        start = end
    return queue


ASKED_AGAIN_WITHIN = timedelta(hours=1)
"""A review session asks an item again before it ends when its answer makes it due within this time (a
same-day learning or relearning step); with the default memory, which has none, nothing comes back."""


class _Queue:
    """A queue of items answered one at a time; an answer may send the item to the back (``_advance``)."""

    def __init__(self, store: Storage, queue: list[Item]) -> None:
        self._store = store
        self._queue = queue

    @property
    def remaining(self) -> int:
        """How many answers the session still expects (an item answered AGAIN counts again)."""
        return len(self._queue)

    def next(self) -> Item | None:
        """The item to show now (the same one until it is answered), or None when the session is over."""
        return self._queue[0] if self._queue else None

    def intervals(self, item: Item, at: datetime) -> dict[Rating, timedelta]:
        """The interval each rating would lead to in the schedule, for button labels."""
        return self._store.memory.preview(self._store.card(item.id), item.id, at)

    def _advance(self, item: Item, again: bool) -> None:
        if item in self._queue:
            self._queue.remove(item)
        if again:
            self._queue.append(item)


class Session(_Queue):
    """A review session over the due queue at ``at``; answers are recorded in the schedule.

    ``due_count`` and ``new_count`` are the numbers of due reviews and of new items in the queue it was
    created with (they do not change as it is answered); ``answered_today`` is what the day's answers before
    it counted against ``limits``.
    """

    def __init__(
        self,
        store: Storage,
        items: Sequence[Item],
        at: datetime,
        tz: tzinfo,
        limits: Limits = Limits(),  # noqa: B008 - frozen, so a shared default is safe
        rollover_hour: int = 4,
    ) -> None:
        due, new, answered = _due_and_new(store, items, at, tz, limits, rollover_hour)
        super().__init__(store, due + new)
        self.due_count = len(due)
        self.new_count = len(new)
        self.answered_today = answered

    def answer(self, item: Item, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        """Record the answer; an item now due within ``ASKED_AGAIN_WITHIN`` (a same-day step) goes to the
        back, so it comes back before the session ends."""
        review = self._store.record(item.id, rating, at, duration_ms)
        self._advance(item, review.due - at <= ASKED_AGAIN_WITHIN)
        return review


class CramSession(_Queue):
    """Practice over all of ``items``, in order; answers go to the cram log, the schedule is unchanged."""

    def __init__(self, store: Storage, items: Sequence[Item]) -> None:
        super().__init__(store, list(items))

    def answer(self, item: Item, rating: Rating, at: datetime, duration_ms: int | None = None) -> None:
        """Log the practice answer; AGAIN puts the item back at the end of this session."""
        self._store.record_cram(item.id, rating, at, duration_ms)
        self._advance(item, Rating(rating) == Rating.AGAIN)
