"""The learner's day (4 am local rollover, DST-aware) and interval labels."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from fixed_clock import UTC, utc

from scheduler import day_start, format_interval

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("local", "tz", "expected"),
    [
        # 03:59 local still belongs to the previous day; 04:00 starts the new one.
        ("2025-01-15T03:59:59", UTC, "2025-01-14T04:00:00"),
        ("2025-01-15T04:00:00", UTC, "2025-01-15T04:00:00"),
        ("2025-01-15T03:59:59", BERLIN, "2025-01-14T03:00:00"),
        ("2025-01-15T04:00:00", BERLIN, "2025-01-15T03:00:00"),
        ("2025-01-15T23:59:00", BERLIN, "2025-01-15T03:00:00"),
        ("2025-07-15T04:00:00", BERLIN, "2025-07-15T02:00:00"),
        # Berlin springs forward on 2025-03-30 at 02:00 -> 03:00.
        ("2025-03-30T03:59:00", BERLIN, "2025-03-29T03:00:00"),
        ("2025-03-30T04:00:00", BERLIN, "2025-03-30T02:00:00"),
        # New York springs forward on 2025-03-09 and falls back on 2025-11-02.
        ("2025-03-09T03:59:00", NEW_YORK, "2025-03-08T09:00:00"),
        ("2025-03-09T04:00:00", NEW_YORK, "2025-03-09T08:00:00"),
        ("2025-11-02T01:30:00", NEW_YORK, "2025-11-01T08:00:00"),
        ("2025-11-02T03:59:00", NEW_YORK, "2025-11-01T08:00:00"),
        ("2025-11-02T04:00:00", NEW_YORK, "2025-11-02T09:00:00"),
    ],
)
def test_day_start(local: str, tz: ZoneInfo | timezone, expected: str) -> None:
    at = datetime.fromisoformat(local).replace(tzinfo=tz)
    start = day_start(at, tz)
    assert start == utc(expected)
    assert start.tzinfo is UTC
    assert day_start(at.astimezone(UTC), tz) == start  # the instant matters, not how it is written


@pytest.mark.parametrize(
    ("tz", "day", "hours"),
    [
        (BERLIN, "2025-03-29", 23),  # ends at the spring-forward rollover
        (BERLIN, "2025-03-30", 24),
        (BERLIN, "2025-10-25", 25),
        (NEW_YORK, "2025-03-08", 23),
        (NEW_YORK, "2025-11-01", 25),
        (UTC, "2025-03-30", 24),
    ],
)
def test_day_length_follows_local_clock(tz: ZoneInfo | timezone, day: str, hours: int) -> None:
    start = day_start(datetime.fromisoformat(f"{day}T12:00:00").replace(tzinfo=tz), tz)
    end = start + timedelta(hours=hours)
    assert day_start(end - timedelta(seconds=1), tz) == start
    assert day_start(end, tz) == end


def test_other_rollover_hours() -> None:
    at = datetime(2025, 1, 15, 0, 30, tzinfo=BERLIN)
    assert day_start(at, BERLIN, rollover_hour=0) == utc("2025-01-14T23:00:00")
    assert day_start(at, BERLIN, rollover_hour=23) == utc("2025-01-14T22:00:00")


@pytest.mark.parametrize("hour", [-1, 24, 4.0, True])
def test_bad_rollover_hour(hour: object) -> None:
    with pytest.raises(ValueError) as info:
        day_start(utc("2025-01-15T12:00:00"), UTC, rollover_hour=hour)  # type: ignore[arg-type]
    assert str(info.value) == f"rollover_hour must be an int from 0 to 23, got {hour!r}"


def test_naive_time_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        day_start(datetime(2025, 1, 15, 12, 0), UTC)
    assert str(info.value) == "at must be timezone-aware (UTC), got a naive datetime"


@pytest.mark.parametrize(
    ("interval", "label"),
    [
        (timedelta(seconds=-5), "<1m"),
        (timedelta(0), "<1m"),
        (timedelta(seconds=59), "<1m"),
        (timedelta(minutes=1), "1m"),
        (timedelta(minutes=5, seconds=30), "6m"),
        (timedelta(minutes=10), "10m"),
        (timedelta(minutes=59, seconds=29), "59m"),
        (timedelta(minutes=59, seconds=30), "1h"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=23, minutes=29), "23h"),
        (timedelta(hours=23, minutes=30), "1d"),
        (timedelta(days=4), "4d"),
        (timedelta(days=29, hours=11), "29d"),
        (timedelta(days=29, hours=12), "1.0mo"),
        (timedelta(days=63), "2.1mo"),
        (timedelta(days=364), "12.1mo"),
        (timedelta(days=365), "1.0y"),
        (timedelta(days=475), "1.3y"),
        (timedelta(days=36500), "100.0y"),
    ],
)
def test_format_interval(interval: timedelta, label: str) -> None:
    assert format_interval(interval) == label
