"""The widgets' clock: what "now" is, checked, and how long an answer took."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

__all__ = ["Clock", "duration_ms", "read_clock", "real_clock"]

Clock = Callable[[], datetime]


def real_clock() -> datetime:
    """The default clock: now, in UTC."""
    return datetime.now(timezone.utc)


def read_clock(clock: Clock) -> datetime:
    """Call `clock` and check what it returns: an aware datetime, converted to UTC."""
    now = clock()
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"clock() must return a timezone-aware datetime, got {now!r}")
    return now.astimezone(timezone.utc)


def duration_ms(start: datetime, end: datetime) -> int:
    """Whole milliseconds from `start` to `end` (0 if the clock went backwards)."""
    return max(0, round((end - start).total_seconds() * 1000))
