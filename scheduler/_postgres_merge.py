"""Merging another log into a learner's rows of the classroom database (``PostgresStore.merge``), as the
SQLite store merges: answers not present yet go in by time, every present row kept in its order. A log's tail
is rewritten in place (rows updated, the rest inserted): learners may not delete rows (a table-wide DELETE or
UPDATE privilege would let one lock the table against the whole class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from scheduler._memory import Memory
from scheduler._merging import Key, plan
from scheduler._postgres_schema import MINE, SCHEMA
from scheduler._records import Rating, Review, State
from scheduler._rows import CARD_STATE_CODES, STATE_CODES, review_from_row
from scheduler._time import from_ms, to_ms

__all__ = ["merge_decks", "merge_practice", "merge_reviews"]

_MINE = MINE

_REVIEW_TAIL = ("item_id", "rating", "reviewed_at", "duration_ms", "due", "state_before")
_CRAM_TAIL = ("item_id", "rating", "reviewed_at", "duration_ms")


def _tail_seqs(rows: Sequence[tuple[Any, ...]], start: int, count: int) -> list[int]:
    """The ``count`` seqs a log's rewritten tail takes: those of its rows from ``start`` on (seq first in
    each row), then the next ones after the last."""
    seqs = [int(row[0]) for row in rows[start:]]
    last = int(rows[-1][0]) if rows else 0
    return seqs + list(range(last + 1, last + 1 + count - len(seqs)))


def _write_tail(
    connection: psycopg.Connection[Any],
    table: str,
    columns: tuple[str, ...],
    old: Sequence[tuple[Any, ...]],
    new: Sequence[tuple[Any, ...]],
) -> None:
    """A log's tail rewritten (rows seq first, then ``columns``): the rows of ``old`` changed in place, the
    rest of ``new`` inserted after. Never a DELETE: learners may not (a table-wide DELETE or UPDATE
    privilege would let one lock the table against the class)."""
    before = {int(row[0]): tuple(row[1:]) for row in old}
    changed = [(*row[1:], row[0]) for row in new if row[0] in before and tuple(row[1:]) != before[row[0]]]
    added = [row for row in new if row[0] not in before]
    with connection.cursor() as cursor:
        if changed:
            assignments = ", ".join(f"{column} = %s" for column in columns)
            cursor.executemany(
                f"UPDATE {SCHEMA}.{table} SET {assignments} WHERE {_MINE} AND seq = %s".encode(), changed
            )
        if added:
            cursor.executemany(
                f"INSERT INTO {SCHEMA}.{table} (seq, {', '.join(columns)}) "
                f"VALUES ({', '.join(['%s'] * (len(columns) + 1))})".encode(),
                added,
            )


def merge_reviews(
    connection: psycopg.Connection[Any], memory: Memory, incoming: list[Key]
) -> tuple[int, int]:
    """Merge ``incoming`` answers into the learner's review log, by time, every present row kept in its order;
    the due dates from each item's first new answer on recomputed with ``memory``. (added, skipped): the
    caller rebuilds the cards when any was added."""
    rows = connection.execute(
        "SELECT seq, item_id, rating, reviewed_at, duration_ms, due, state_before "
        f"FROM {SCHEMA}.review_log WHERE {_MINE} ORDER BY seq".encode()
    ).fetchall()
    merge = plan([(row[0], (row[1], row[2], row[3], row[4])) for row in rows], incoming)
    if not merge.added:
        return 0, merge.skipped
    merged, start = merge.merged, merge.start
    kept = {row[0]: row for row in rows}
    touched = {key[0] for row_id, key in merged[start:] if row_id is None}
    history: dict[str, list[Review]] = {item_id: [] for item_id in touched}
    for row in rows[:start]:
        if row[1] in touched:
            history[row[1]].append(review_from_row(row[1:6]))
    seqs = _tail_seqs(rows, start, len(merged) - start)
    recompute: set[str] = set()
    tail = []
    for offset, (row_id, key) in enumerate(merged[start:]):
        item_id = key[0]
        if row_id is None:
            recompute.add(item_id)
        if row_id is None or item_id in recompute:
            due, before = _redo(memory, history[item_id], key)
        else:
            due, before = kept[row_id][5], kept[row_id][6]
        if item_id in history:
            history[item_id].append(review_from_row((*key[:4], due)))
        tail.append((seqs[offset], *key, due, before))
    _write_tail(connection, "review_log", _REVIEW_TAIL, rows[start:], tail)
    return merge.added, merge.skipped


def _redo(memory: Memory, history: list[Review], key: Key) -> tuple[int, int]:
    item_id, rating, at, _ = key
    before = memory.replay(item_id, history) if history else None
    after = memory.review(before, item_id, Rating(rating), from_ms(at))
    state = STATE_CODES[State.NEW] if before is None else CARD_STATE_CODES[before.state]
    return to_ms(after.due), state


def merge_practice(connection: psycopg.Connection[Any], incoming: list[Key]) -> tuple[int, int]:
    """Merge ``incoming`` practice answers into the learner's practice log, by time. (added, skipped)."""
    rows = connection.execute(
        f"SELECT seq, item_id, rating, reviewed_at, duration_ms FROM {SCHEMA}.cram_log WHERE {_MINE} "
        "ORDER BY seq".encode()
    ).fetchall()
    merge = plan([(row[0], (row[1], row[2], row[3], row[4])) for row in rows], incoming)
    if not merge.added:
        return 0, merge.skipped
    seqs = _tail_seqs(rows, merge.start, len(merge.merged) - merge.start)
    tail = [(seqs[offset], *key) for offset, (_, key) in enumerate(merge.merged[merge.start :])]
    _write_tail(connection, "cram_log", _CRAM_TAIL, rows[merge.start :], tail)
    return merge.added, merge.skipped


def merge_decks(connection: psycopg.Connection[Any], dates: Mapping[str, int]) -> int:
    """Enroll the learner in ``dates``' decks, each keeping its earliest date; how many were new."""
    known = dict(
        connection.execute(f"SELECT deck, enrolled_at FROM {SCHEMA}.decks WHERE {_MINE}".encode()).fetchall()
    )
    for deck, at in dates.items():
        if deck not in known or at < known[deck]:
            connection.execute(
                f"INSERT INTO {SCHEMA}.decks (deck, enrolled_at) VALUES (%s, %s) "
                "ON CONFLICT (learner, deck) DO UPDATE SET enrolled_at = excluded.enrolled_at".encode(),
                (deck, at),
            )
    return sum(deck not in known for deck in dates)
