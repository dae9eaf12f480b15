"""Time helpers: aware-datetime checks, the integer-millisecond storage format and the learner's day.

Times are stored as integer milliseconds since the Unix epoch (UTC). A learner's day starts at
``rollover_hour`` o'clock local time (4 am by default, as in Anki), so a review at 03:59 still
belongs to the previous day. Where the clock falls back over that hour, the day starts at its first pass
and is not left again: the day of a later instant is never an earlier day.

An item is due on a day, as in Anki (``due_from``): an interval of a day or more makes it due from the
start of the learner's day its due time falls on; a same-day step, at its exact time. FSRS counts the days
between two answers the same way (``elapsed_days``): learner's days, not 24-hour periods, as Anki feeds it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone, tzinfo

__all__ = [
    "check_rollover_hour",
    "day_numbers",
    "day_start",
    "day_starts",
    "due_from",
    "elapsed_days",
    "from_ms",
    "require_aware",
    "to_ms",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_DAY = date(1970, 1, 1)
_ONE_MS = timedelta(milliseconds=1)
_ONE_DAY = timedelta(days=1)


def require_aware(value: datetime, name: str) -> datetime:
    """Return ``value`` converted to ``timezone.utc``; a naive datetime is refused."""
    if not isinstance(value, datetime):
        raise TypeError(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware (UTC), got a naive datetime")
    return value.astimezone(timezone.utc)


def to_ms(value: datetime) -> int:
    """Milliseconds since the epoch, rounded down (``value`` must be aware)."""
    return (value - _EPOCH) // _ONE_MS


def from_ms(ms: int) -> datetime:
    """The UTC datetime ``ms`` milliseconds after the epoch."""
    return _EPOCH + _ONE_MS * ms  # exact, and faster than timedelta(milliseconds=ms)


def check_rollover_hour(rollover_hour: int) -> None:
    """A ValueError unless ``rollover_hour`` is an int from 0 to 23."""
    if isinstance(rollover_hour, bool) or not isinstance(rollover_hour, int) or not 0 <= rollover_hour <= 23:
        raise ValueError(f"rollover_hour must be an int from 0 to 23, got {rollover_hour!r}")


def _wall(at: datetime, tz: tzinfo) -> datetime:
    return at.astimezone(tz).replace(tzinfo=None)


def _local_start(day: date, tz: tzinfo, rollover_hour: int) -> datetime:
    """The first instant (UTC) at which the local clock reads ``day`` at ``rollover_hour`` o'clock or later.

    Where the clock falls back over that hour it reads it twice: the first time counts. Where it springs
    forward over it, it never reads it: the day starts at the jump.
    """
    wall = datetime(day.year, day.month, day.day, rollover_hour)
    first = wall.replace(tzinfo=tz, fold=0).astimezone(timezone.utc)
    if _wall(first, tz) == wall:
        return first
    # In a gap: fold=0 maps with the offset before the jump (after it), fold=1 with the one after (before it).
    low, high = to_ms(wall.replace(tzinfo=tz, fold=1).astimezone(timezone.utc)), to_ms(first)
    while high - low > 1:  # the clock reads below `wall` at `low` and at or past it at `high`
        middle = (low + high) // 2
        if _wall(from_ms(middle), tz) >= wall:
            high = middle
        else:
            low = middle
    return from_ms(high)


def _local_day(at: datetime, tz: tzinfo, rollover_hour: int) -> date:
    """The learner's day containing ``at``: the last one started by then, so it never goes backwards."""
    at = require_aware(at, "at")
    day = (_wall(at, tz) - timedelta(hours=rollover_hour)).date()
    while _local_start(day + timedelta(days=1), tz, rollover_hour) <= at:  # the clock fell back
        day += timedelta(days=1)
    return day


def day_start(at: datetime, tz: tzinfo, rollover_hour: int = 4) -> datetime:
    """The UTC-aware start of the learner's day that contains ``at``.

    A day starts at the first instant the local clock reads ``rollover_hour`` o'clock (or later, where the
    clock jumps over it) on its date, and lasts until the next day starts: about 24 hours, never less than
    zero, so the day of a later instant is never an earlier day.
    """
    check_rollover_hour(rollover_hour)
    return _local_start(_local_day(at, tz, rollover_hour), tz, rollover_hour)


def due_from(due: datetime, last_review: datetime | None, tz: tzinfo, rollover_hour: int = 4) -> datetime:
    """When an item due at ``due``, answered last at ``last_review``, is due for the learner (UTC-aware).

    An interval of a day or more (``due`` at least 24 hours after ``last_review``, or no last review) makes
    it due from the start of the learner's day that contains ``due``, unless that start is not after the
    last answer (a 25-hour day): then, as a same-day step (an interval under a day) is, at ``due`` itself.
    """
    due = require_aware(due, "due")
    if last_review is not None and due - require_aware(last_review, "last_review") < _ONE_DAY:
        return due
    start = day_start(due, tz, rollover_hour)
    return due if last_review is not None and start <= last_review else start


def day_starts(at: datetime, tz: tzinfo, rollover_hour: int, count: int) -> list[datetime]:
    """Starts of ``count`` consecutive learner's days, the first one containing ``at`` (DST-aware)."""
    check_rollover_hour(rollover_hour)
    today = _local_day(at, tz, rollover_hour)
    return [_local_start(today + timedelta(days=k), tz, rollover_hour) for k in range(count)]


def day_numbers(times: Sequence[datetime], tz: tzinfo, rollover_hour: int = 4) -> list[int]:
    """The learner's day of each of ``times``, as a number (days since 1970-01-01 of the day's date), in
    order; fast over many times: one binary search among the day starts they span."""
    check_rollover_hour(rollover_hour)
    if not times:
        return []
    first = _local_day(min(times), tz, rollover_hour)
    span = (_local_day(max(times), tz, rollover_hour) - first).days
    base = (first - _EPOCH_DAY).days
    if span > len(times):  # a few times far apart: day by day would build more starts than there are times
        return [(_local_day(at, tz, rollover_hour) - _EPOCH_DAY).days for at in times]
    starts = [_local_start(first + timedelta(days=k), tz, rollover_hour) for k in range(1, span + 1)]
    return [base + bisect_right(starts, at) for at in times]


def elapsed_days(last: datetime, at: datetime, tz: tzinfo, rollover_hour: int = 4) -> int:
    """How many of the learner's days lie between an answer at ``last`` and one at ``at``: 0 on the same day,
    1 from the day after's rollover on (an answer at 23:00 and one at 09:00 the next morning are a day
    apart, one at 05:00 and one at 03:00 the next night are not); negative when ``at`` is the earlier."""
    check_rollover_hour(rollover_hour)
    last, at = require_aware(last, "last"), require_aware(at, "at")
    fixed = tz.utcoffset(None)  # a fixed offset (UTC, say) has one for every time; a zone with DST, none
    if fixed is not None:
        shift = fixed - timedelta(hours=rollover_hour)
        return ((at + shift).date() - (last + shift).date()).days
    return (_local_day(at, tz, rollover_hour) - _local_day(last, tz, rollover_hour)).days
