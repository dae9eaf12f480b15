"""How another log goes into a learner's store: which answers are already there, where the others fit in
time, and what a store writes for it. Both stores' ``merge`` (SQLite's ``Store`` and the classroom's
``PostgresStore``) check what they are given with `incoming`, read their rows, ask `merge_plan` what to write
and write it: the plan is the same for both, only the reading and the writing are theirs.

The existing log keeps every row and their relative order; each new answer goes after every row answered at
or before it, so a log in time order stays in time order. A log is rewritten from its first new answer on
(its tail); the due date and the state before of a rewritten scheduled answer are those the log had, unless
its item has a new answer at or before it: then both are recomputed by answering the item's rows in their new
order. A deck keeps its earliest date.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from scheduler._memory import Memory
from scheduler._records import LogEntry, Merged, Rating, Review, State
from scheduler._rows import CARD_STATE_CODES, STATE_CODES, check_answer, check_id, check_time, review_from_row
from scheduler._time import from_ms, to_ms

__all__ = [
    "Incoming",
    "Key",
    "MergePlan",
    "Plan",
    "PracticeRow",
    "ReviewRow",
    "ReviewValues",
    "Tail",
    "entry_key",
    "incoming",
    "interleave",
    "merge_plan",
    "new_answers",
    "plan",
]

Key = tuple[str, int, int, "int | None"]  # item_id, rating, reviewed_at (ms), duration_ms
ReviewValues = tuple[str, int, int, "int | None", int, int]  # a Key, then due (ms) and state_before (code)
ReviewRow = tuple[int, str, int, int, "int | None", int, int]  # a review log row: its id, then ReviewValues
PracticeRow = tuple[int, str, int, int, "int | None"]  # a practice log row: its id, then the Key

_Values = TypeVar("_Values")


def entry_key(entry: LogEntry) -> Key:
    """A merged answer as the merge plan compares it: item, rating, time in ms, duration (a ValueError for an
    answer a store cannot hold)."""
    rating, at = check_answer(entry.item_id, entry.rating, entry.reviewed_at, entry.duration_ms)
    return (entry.item_id, int(rating), to_ms(at), entry.duration_ms)


def new_answers(present: Iterable[Key], incoming: Iterable[Key]) -> tuple[list[Key], int]:
    """The `incoming` answers that are not `present` (counted: an answer given twice is kept twice), in
    time order (ties in the order given), and how many were skipped as present."""
    left = Counter(present)
    fresh: list[Key] = []
    skipped = 0
    for key in sorted(incoming, key=lambda key: key[2]):
        if left[key] > 0:
            left[key] -= 1
            skipped += 1
        else:
            fresh.append(key)
    return fresh, skipped


def interleave(existing: Sequence[tuple[int, Key]], fresh: Sequence[Key]) -> list[tuple[int | None, Key]]:
    """`existing` rows (id, key) in log order and `fresh` keys (in time order) as one sequence: a fresh key
    comes before the first existing row answered later than it; ids are None for fresh keys."""
    out: list[tuple[int | None, Key]] = []
    i = j = 0
    while i < len(existing) or j < len(fresh):
        if j < len(fresh) and (i == len(existing) or fresh[j][2] < existing[i][1][2]):
            out.append((None, fresh[j]))
            j += 1
        else:
            out.append(existing[i])
            i += 1
    return out


@dataclass(frozen=True)
class Plan:
    """How `incoming` answers go into a log: ``merged`` is the whole log afterwards (ids None for new rows),
    rows from ``start`` on are the ones to rewrite; ``added`` new answers, ``skipped`` already present."""

    merged: list[tuple[int | None, Key]]
    start: int
    added: int
    skipped: int


def plan(existing: Sequence[tuple[int, Key]], incoming: Iterable[Key]) -> Plan:
    """The `Plan` for merging `incoming` into the log `existing` (rows (id, key) in log order)."""
    fresh, skipped = new_answers([key for _, key in existing], incoming)
    merged = interleave(existing, fresh)
    start = next((index for index, (row_id, _) in enumerate(merged) if row_id is None), len(merged))
    return Plan(merged, start, len(fresh), skipped)


@dataclass(frozen=True)
class Incoming:
    """Another log, checked and as the plan compares it: its scheduled and practice answers as keys, and
    each deck's enrollment time (ms)."""

    answers: list[Key]
    practice: list[Key]
    decks: dict[str, int]


def incoming(
    answers: Sequence[LogEntry], practice: Sequence[LogEntry], decks: Mapping[str, datetime]
) -> Incoming:
    """What ``Storage.merge`` was given, checked before a store is touched: a ValueError (or TypeError) for
    any answer or deck a store cannot hold."""
    return Incoming(
        [entry_key(entry) for entry in answers],
        [entry_key(entry) for entry in practice],
        {check_id(deck, "deck"): to_ms(check_time(at, "at")) for deck, at in decks.items()},
    )


@dataclass(frozen=True)
class Tail(Generic[_Values]):
    """A log rewritten from its row at index ``start`` on: ``rows`` is what it holds from there afterwards,
    in log order (each row's values without its id; more rows than it had), the rows before ``start`` kept."""

    start: int
    rows: list[_Values]


@dataclass(frozen=True)
class MergePlan:
    """What a store writes to merge another log, in one transaction: the review log's tail (None: left as it
    is; else every card is rebuilt afterwards), the practice log's tail (None: left as it is), and the decks
    to enroll, each with the date it keeps (an enrolled deck is written again with an earlier date).
    ``merged`` is what the merge returns."""

    reviews: Tail[ReviewValues] | None
    practice: Tail[Key] | None
    decks: dict[str, int]
    merged: Merged


def merge_plan(
    memory: Memory,
    given: Incoming,
    reviews: Sequence[ReviewRow],
    practice: Sequence[PracticeRow],
    enrolled: Mapping[str, int],
) -> MergePlan:
    """The `MergePlan` for merging ``given`` into a learner's ``reviews`` and ``practice`` logs (their rows in
    log order) and ``enrolled`` decks (enrollment times in ms), due dates recomputed with ``memory``."""
    review_tail, added, skipped = _review_tail(memory, reviews, given.answers)
    practice_plan = plan([(row[0], row[1:]) for row in practice], given.practice)
    practice_tail = (
        Tail(practice_plan.start, [key for _, key in practice_plan.merged[practice_plan.start :]])
        if practice_plan.added
        else None
    )
    decks = {deck: at for deck, at in given.decks.items() if deck not in enrolled or at < enrolled[deck]}
    merged = Merged(
        added,
        practice_plan.added,
        sum(deck not in enrolled for deck in given.decks),
        skipped + practice_plan.skipped,
    )
    return MergePlan(review_tail, practice_tail, decks, merged)


def _review_tail(
    memory: Memory, rows: Sequence[ReviewRow], incoming: Iterable[Key]
) -> tuple[Tail[ReviewValues] | None, int, int]:
    """The review log's rewritten tail (None when nothing is added), and (added, skipped)."""
    merge = plan([(row[0], row[1:5]) for row in rows], incoming)
    if not merge.added:
        return None, 0, merge.skipped
    merged, start = merge.merged, merge.start
    kept = {row[0]: row for row in rows}
    touched = {key[0] for row_id, key in merged[start:] if row_id is None}
    history: dict[str, list[Review]] = {item_id: [] for item_id in touched}
    for row in rows[:start]:
        if row[1] in touched:
            history[row[1]].append(review_from_row(row[1:6]))
    recompute: set[str] = set()
    tail: list[ReviewValues] = []
    for row_id, key in merged[start:]:
        item_id = key[0]
        if row_id is None:
            recompute.add(item_id)
        if row_id is None or item_id in recompute:
            due, before = _redo(memory, history[item_id], key)
        else:
            due, before = kept[row_id][5], kept[row_id][6]
        if item_id in history:
            history[item_id].append(review_from_row((*key, due)))
        tail.append((*key, due, before))
    return Tail(start, tail), merge.added, merge.skipped


def _redo(memory: Memory, history: list[Review], key: Key) -> tuple[int, int]:
    """The due time and the state code before, of answer `key` given after `history` (its item's rows)."""
    item_id, rating, at, _ = key
    before = memory.replay(item_id, history) if history else None
    after = memory.review(before, item_id, Rating(rating), from_ms(at))
    state = STATE_CODES[State.NEW] if before is None else CARD_STATE_CODES[before.state]
    return to_ms(after.due), state
