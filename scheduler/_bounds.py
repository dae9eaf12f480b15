"""What the stores (SQLite and PostgreSQL) and fsrs can hold: the times, durations and ids they take.

Both stores check every write against these bounds before anything is written (`scheduler._rows`), and an
importer can check a whole file against them first (``course.progress`` does).

- **Times** run from `EARLIEST_TIME` (1970) to just before `LATEST_TIME` (the year 9000), UTC: a due date
  up to `MAX_INTERVAL_DAYS` (a century, fsrs's own maximum and the longest interval `Memory` accepts) after
  an answer, and the start of its day in any time zone, stay within what ``datetime`` holds (to 9999).
- **Durations** are whole milliseconds from 0 to `MAX_DURATION_MS`, a 64-bit integer column's largest value.
- **Ids** (items, decks) are non-empty text of at most `MAX_ID_BYTES` bytes in UTF-8, without U+0000
  (PostgreSQL's text cannot hold it) and without lone surrogates (which are not UTF-8).
- **Short texts** (a nudge's reason, `MAX_REASON`; a prediction's answer, `MAX_PREDICTION_ANSWER`) are one
  line of at most that many characters, without control characters.
"""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = [
    "EARLIEST_TIME",
    "LATEST_TIME",
    "MAX_DURATION_MS",
    "MAX_ID_BYTES",
    "MAX_INTERVAL_DAYS",
    "MAX_PREDICTION_ANSWER",
    "MAX_REASON",
    "id_problem",
    "prediction_answer_problem",
    "reason_problem",
    "time_range_text",
]

EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=timezone.utc)
"""The earliest time a store takes."""
LATEST_TIME = datetime(9000, 1, 1, tzinfo=timezone.utc)
"""The first time a store no longer takes: every time is before it."""
MAX_INTERVAL_DAYS = 36500
"""The longest interval, in days, that `Memory` schedules (fsrs's default maximum)."""
MAX_DURATION_MS = 2**63 - 1
"""The longest duration a store takes, in milliseconds (BIGINT in PostgreSQL, INTEGER in SQLite)."""
MAX_ID_BYTES = 1000
"""The longest id a store takes, in bytes of UTF-8 (well within PostgreSQL's limit on an index entry)."""


def time_range_text() -> str:
    """``from 1970 to 8999``: the years of the times a store takes."""
    return f"from {EARLIEST_TIME.year} to {LATEST_TIME.year - 1}"


def id_problem(value: str) -> str | None:
    """Why the non-empty text `value` cannot be a stored id, as a phrase that follows its name (``must not
    contain U+0000 (at character 3)``), or None when it can."""
    nul = value.find("\x00")
    if nul >= 0:
        return f"must not contain U+0000 (at character {nul + 1})"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as problem:
        return (
            f"must be Unicode text: it holds a lone surrogate, U+{ord(value[problem.start]):04X} "
            f"(at character {problem.start + 1})"
        )
    if size > MAX_ID_BYTES:
        return f"must be at most {MAX_ID_BYTES} bytes long in UTF-8 (it has {size})"
    return None


MAX_REASON = 200
"""The most characters a nudge's reason holds: a few words, on one line."""


def reason_problem(value: object) -> str | None:
    """Why `value` cannot be a nudge's reason, as a phrase that follows its name, or None when it can."""
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty str"
    if len(value) > MAX_REASON or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return f"must be at most {MAX_REASON} characters on one line"
    return id_problem(value)


MAX_PREDICTION_ANSWER = 200
"""The most characters a prediction's answer holds (``PredictionEvent.answer``): a guess, on one line."""


def prediction_answer_problem(value: object) -> str | None:
    """Why `value` cannot be a prediction's answer, as a phrase that follows its name, or None when it can
    ("" can: a prediction skipped)."""
    if not isinstance(value, str):
        return 'must be a str ("" when skipped)'
    if len(value) > MAX_PREDICTION_ANSWER or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return f"must be at most {MAX_PREDICTION_ANSWER} characters on one line"
    return id_problem(value)
