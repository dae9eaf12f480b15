"""A learner's progress as a file of JSON lines, to move it to another machine or merge two of them.

Line 1 is the header ``{"format": "attention-course-progress", "version": 1, "exported_at": TIME}``; each
other line is one record, in the store's order: the enrolled lessons first, then the scheduled answers, then
the practice (cram) answers, then the nudges (cards a named mistake brought back: ``scheduler.Nudge``), then
the predictions (what was committed under a lesson's Predict prompts: ``scheduler.PredictionEvent``)::

    {"type": "enrollment", "lesson": "01", "at": "2025-03-03T09:00:00.000Z"}
    {"type": "review", "item": "01-a", "rating": "good", "at": "2025-03-03T10:00:00.000Z", "duration_ms": 9}
    {"type": "practice", "item": "01-a", "rating": "hard", "at": "2025-03-04T10:00:00.000Z", "duration_ms": 0}
    {"type": "nudge", "item": "05-code-causal-mask", "at": "2025-03-04T10:00:00.000Z",
     "due": "2025-03-05T03:00:00.000Z", "reason": "causal-top-left"}
    {"type": "prediction", "item": "02-predict-variance", "at": "2025-03-04T10:00:00.000Z",
     "answer": "about 64", "right": true}

``answer`` is the prediction as committed ("" for a skip), ``right`` true, false, or null for a skip. A file
is written in the lowest version that holds it, so that an older course still reads it: with predictions,
version 3; with nudges and no predictions, version 2; with neither, version 1. A course that reads only an
older version says to upgrade.

A rating is written by its name (``again``, ``hard``, ``good``, ``easy``), a time as ISO 8601 UTC to the
millisecond (any ISO 8601 time with a UTC offset is read), ``duration_ms`` as a whole number or null. Blank
lines are ignored; anything else wrong is a `ProgressFileError` naming the file and the line, and so is a
file of a newer format version. Reading checks every line before anything is imported, against what the
stores and fsrs can hold too (``scheduler.id_problem``: ids; times from 1970 to 8999; durations up to
``scheduler.MAX_DURATION_MS``), and refuses a time later than the `now` it is given: nothing is answered in
the future.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scheduler import (
    EARLIEST_TIME,
    LATEST_TIME,
    MAX_DURATION_MS,
    LogEntry,
    Nudge,
    PredictionEvent,
    Rating,
    id_problem,
    prediction_answer_problem,
    reason_problem,
    time_range_text,
)

__all__ = ["FORMAT", "VERSION", "Progress", "ProgressFileError", "lines", "read_progress", "utc_text"]

FORMAT = "attention-course-progress"
VERSION = 3
_RATINGS = {rating.name.lower(): rating for rating in Rating}
_KINDS = ("enrollment", "review", "practice", "nudge", "prediction")
_SHOWN = 60  # the longest value a message shows whole


class ProgressFileError(Exception):
    """A progress file that cannot be imported; the message names the file (and the line)."""


@dataclass(frozen=True)
class Progress:
    """What a progress file holds: enrolled lessons with their dates, scheduled and practice answers, nudges
    and predictions."""

    enrollments: dict[str, datetime]
    reviews: list[LogEntry]
    practice: list[LogEntry]
    nudges: list[Nudge] = field(default_factory=list)
    predictions: list[PredictionEvent] = field(default_factory=list)

    def __len__(self) -> int:
        records = (self.reviews, self.practice, self.nudges, self.predictions)
        return len(self.enrollments) + sum(len(kind) for kind in records)


def utc_text(at: datetime) -> str:
    """`at` as ISO 8601 UTC to the millisecond: ``2025-03-03T10:00:00.000Z``."""
    at = at.astimezone(timezone.utc)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def lines(progress: Progress, exported_at: datetime) -> Iterator[str]:
    """The file's lines, without line ends: the header, then every record."""
    version = 3 if progress.predictions else 2 if progress.nudges else 1  # the lowest that holds it
    yield json.dumps({"format": FORMAT, "version": version, "exported_at": utc_text(exported_at)})
    for lesson, at in progress.enrollments.items():
        yield json.dumps({"type": "enrollment", "lesson": lesson, "at": utc_text(at)})
    for kind, entries in (("review", progress.reviews), ("practice", progress.practice)):
        for entry in entries:
            yield json.dumps(
                {
                    "type": kind,
                    "item": entry.item_id,
                    "rating": entry.rating.name.lower(),
                    "at": utc_text(entry.reviewed_at),
                    "duration_ms": entry.duration_ms,
                }
            )
    for nudge in progress.nudges:
        yield json.dumps(
            {
                "type": "nudge",
                "item": nudge.item_id,
                "at": utc_text(nudge.nudged_at),
                "due": utc_text(nudge.due),
                "reason": nudge.reason,
            }
        )
    for prediction in progress.predictions:
        yield json.dumps(
            {
                "type": "prediction",
                "item": prediction.item_id,
                "at": utc_text(prediction.predicted_at),
                "answer": prediction.answer,
                "right": prediction.right,
            }
        )


def read_progress(path: Path, now: datetime) -> Progress:
    """Read and check the whole progress file at `path`, every time in it at or before `now` (aware);
    `ProgressFileError` for the first problem."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as problem:
        raise ProgressFileError(f"{path} cannot be read ({problem.strerror or problem})") from None
    except UnicodeDecodeError:
        raise ProgressFileError(f"{path} is not a progress file: it is not UTF-8 text") from None
    numbered = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not numbered:
        raise ProgressFileError(f"{path} is empty: it is not a progress file")
    _check_header(path, *numbered[0])
    progress = Progress({}, [], [])
    for number, line in numbered[1:]:
        try:
            _add(progress, _object(line), now)
        except ValueError as problem:
            raise ProgressFileError(f"{path}, line {number}: {problem}") from None
    return progress


def _check_header(path: Path, number: int, line: str) -> None:
    try:
        header = _object(line)
    except ValueError:
        header = {}
    version = header.get("version")
    if header.get("format") != FORMAT or isinstance(version, bool) or not isinstance(version, int):
        raise ProgressFileError(
            f'{path}, line {number}: not a progress file (it must start with {{"format": "{FORMAT}", '
            f'"version": {VERSION}, ...}})'
        )
    if version > VERSION:
        raise ProgressFileError(
            f"{path} was written by a newer course (progress format {version}; this course reads {VERSION}): "
            "upgrade the course to import it"
        )


def _shown(value: object) -> str:
    """`value` as a message shows it: its repr, cut to `_SHOWN` characters."""
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 3]}..."


def _object(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as problem:
        raise ValueError(f"not JSON ({problem.msg} at column {problem.colno})") from None
    except ValueError:  # a whole number of more digits than Python converts
        raise ValueError("not JSON that can be read (a number in it is too long)") from None
    except RecursionError:
        raise ValueError("not JSON that can be read (nested too deeply)") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _add(progress: Progress, record: dict[str, Any], now: datetime) -> None:
    kind = record.get("type")
    if kind not in _KINDS:
        raise ValueError(f"unknown record type {_shown(kind)} (expected one of {', '.join(_KINDS)})")
    at = _time(record.get("at"), now)
    if kind == "nudge":
        due = _time(record.get("due"), None, "due")
        reason = record.get("reason")
        problem = reason_problem(reason)
        if problem is not None:
            raise ValueError(f"'reason' {problem.replace(' str', ' string')}, got {_shown(reason)}")
        progress.nudges.append(Nudge(_text(record, "item"), at, due, str(reason)))
        return
    if kind == "prediction":
        answer, right = record.get("answer"), record.get("right")
        problem = prediction_answer_problem(answer)
        if problem is not None:
            raise ValueError(f"'answer' {problem.replace(' str', ' string')}, got {_shown(answer)}")
        if right is not None and not isinstance(right, bool):
            raise ValueError(f"'right' must be true, false or null, got {_shown(right)}")
        progress.predictions.append(PredictionEvent(_text(record, "item"), at, str(answer), right))
        return
    if kind == "enrollment":
        lesson = _text(record, "lesson")
        progress.enrollments[lesson] = min(at, progress.enrollments.get(lesson, at))
        return
    entry = LogEntry(_text(record, "item"), _rating(record.get("rating")), at, _duration(record))
    (progress.reviews if kind == "review" else progress.practice).append(entry)


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key!r} must be a non-empty string, got {_shown(value)}")
    problem = id_problem(value)
    if problem is not None:
        raise ValueError(f"{key!r} {problem}")
    return value


def _rating(value: object) -> Rating:
    if not isinstance(value, str) or value not in _RATINGS:
        raise ValueError(f"'rating' must be one of {', '.join(_RATINGS)}, got {_shown(value)}")
    return _RATINGS[value]


def _time(value: object, now: datetime | None, key: str = "at") -> datetime:
    """The time `value` (the record's `key`) says, in UTC: one a store can hold, and not after `now` (when
    given)."""
    problem = ValueError(f"{key!r} must be an ISO 8601 time with a UTC offset, got {_shown(value)}")
    if not isinstance(value, str):
        raise problem
    try:
        given = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise problem from None
    if given.tzinfo is None or given.utcoffset() is None:
        raise problem
    out_of_range = ValueError(f"{key!r} must be a time {time_range_text()}, got {_shown(value)}")
    try:
        at = given.astimezone(timezone.utc)
    except OverflowError:  # hours from the first or the last moment datetime can hold
        raise out_of_range from None
    if not EARLIEST_TIME <= at < LATEST_TIME:
        raise out_of_range
    if now is not None and at > now:
        raise ValueError(
            f"'at' is in the future: {_shown(value)} is after now ({utc_text(now)}); check the clock of the "
            "computer it was exported on"
        )
    return at


def _duration(record: dict[str, Any]) -> int | None:
    value = record.get("duration_ms")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"'duration_ms' must be a whole number, 0 or more, or null, got {_shown(value)}")
    if value is not None and value > MAX_DURATION_MS:
        raise ValueError(f"'duration_ms' must be at most {MAX_DURATION_MS}, got {_shown(value)}")
    return value
