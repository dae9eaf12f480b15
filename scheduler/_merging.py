"""How another log's answers go into a log: which are already there, and where the others fit in time.

Pure functions on plain keys (item, rating code, time in milliseconds, duration), used by ``Store.merge``.
The existing log keeps every row and their relative order; each new answer goes after every row answered at
or before it, so a log in time order stays in time order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Key", "Plan", "interleave", "new_answers", "plan"]

Key = tuple[str, int, int, "int | None"]  # item_id, rating, reviewed_at (ms), duration_ms


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
