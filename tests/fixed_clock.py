"""Fixed instants and a clock for tests: fixed, and moved only when told to."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

__all__ = ["FSRS_T0", "T0", "UTC", "Clock", "utc"]

UTC = timezone.utc

# The tests' "now": a Monday, 09:00 UTC (the widget tests show it, e.g. "in 8m (2025-03-10 09:10)").
T0 = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)

# The instant the exact FSRS numbers were worked out from: test_scheduler_fsrs's trajectories give absolute
# due dates, and fuzz is drawn from the answer time (see scheduler.Memory), so the fuzzed intervals asserted
# in test_scheduler_fsrs and test_intervals hold at this instant only. Use T0 everywhere else.
FSRS_T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def utc(text: str) -> datetime:
    """``"2025-01-06T09:10:00"`` as an aware UTC datetime."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Clock:
    """A fixed clock that moves only when told to."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
