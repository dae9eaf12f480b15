"""Merging another log into a learner's rows of the classroom database (``PostgresStore.merge``): the rows
read, the plan the SQLite store merges by too (`scheduler._merging.merge_plan`), and what it says written.
A log's tail is rewritten in place (rows updated, the rest inserted): learners may not delete rows (a
table-wide DELETE or UPDATE privilege would let one lock the table against the whole class).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from scheduler._memory import Memory
from scheduler._merging import Incoming, MergePlan, Tail, merge_plan
from scheduler.postgres._schema import MINE, SCHEMA

__all__ = ["merge"]

_REVIEW_TAIL = ("item_id", "rating", "reviewed_at", "duration_ms", "due", "state_before")
_CRAM_TAIL = ("item_id", "rating", "reviewed_at", "duration_ms")


def merge(connection: psycopg.Connection[Any], memory: Memory, given: Incoming) -> MergePlan:
    """Merge ``given`` into the learner's logs and decks, due dates recomputed with ``memory``, in the
    caller's transaction; the plan written (its ``reviews`` not None: the caller rebuilds the cards)."""
    reviews = connection.execute(
        "SELECT seq, item_id, rating, reviewed_at, duration_ms, due, state_before "
        f"FROM {SCHEMA}.review_log WHERE {MINE} ORDER BY seq".encode()
    ).fetchall()
    practice = connection.execute(
        f"SELECT seq, item_id, rating, reviewed_at, duration_ms FROM {SCHEMA}.cram_log WHERE {MINE} "
        "ORDER BY seq".encode()
    ).fetchall()
    enrolled = dict(
        connection.execute(f"SELECT deck, enrolled_at FROM {SCHEMA}.decks WHERE {MINE}".encode()).fetchall()
    )
    plan = merge_plan(memory, given, reviews, practice, enrolled)
    if plan.reviews is not None:
        _write_tail(connection, "review_log", _REVIEW_TAIL, reviews, plan.reviews)
    if plan.practice is not None:
        _write_tail(connection, "cram_log", _CRAM_TAIL, practice, plan.practice)
    if plan.decks:
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {SCHEMA}.decks (deck, enrolled_at) VALUES (%s, %s) "
                "ON CONFLICT (learner, deck) DO UPDATE SET enrolled_at = excluded.enrolled_at".encode(),
                list(plan.decks.items()),
            )
    return plan


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
    rows: Sequence[tuple[Any, ...]],
    tail: Tail[Any],
) -> None:
    """A log (``rows``: seq first, then ``columns``, in log order) rewritten from the ``tail``'s start: its
    rows from there changed in place, the rest of the tail inserted after. Never a DELETE: learners may not
    (a table-wide DELETE or UPDATE privilege would let one lock the table against the class)."""
    seqs = _tail_seqs(rows, tail.start, len(tail.rows))
    before = {int(row[0]): tuple(row[1:]) for row in rows[tail.start :]}
    new = [(seq, *values) for seq, values in zip(seqs, tail.rows, strict=True)]
    changed = [(*row[1:], row[0]) for row in new if row[0] in before and tuple(row[1:]) != before[row[0]]]
    added = [row for row in new if row[0] not in before]
    with connection.cursor() as cursor:
        if changed:
            assignments = ", ".join(f"{column} = %s" for column in columns)
            cursor.executemany(
                f"UPDATE {SCHEMA}.{table} SET {assignments} WHERE {MINE} AND seq = %s".encode(), changed
            )
        if added:
            cursor.executemany(
                f"INSERT INTO {SCHEMA}.{table} (seq, {', '.join(columns)}) "
                f"VALUES ({', '.join(['%s'] * (len(columns) + 1))})".encode(),
                added,
            )
