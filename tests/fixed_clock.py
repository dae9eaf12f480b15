"""A clock for tests: fixed, and moved only when told to."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

__all__ = ["T0", "Clock"]

T0 = datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)


class Clock:
    """A fixed clock that moves only when told to."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
