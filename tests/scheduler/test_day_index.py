"""The learner's day never goes backwards as time goes forwards, whatever the zone and rollover hour.

Where a zone's clock falls back across the rollover hour (Pacific/Chatham at 03:45 -> 02:45 with a 3 am
rollover; Antarctica/Troll, two hours back at 03:00 -> 01:00), the wall clock passes the rollover hour twice:
the day starts at the first pass and stays started. Where it springs forward over the rollover hour, the day
starts at the jump.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from fixed_clock import utc

from scheduler import day_start
from scheduler._time import day_numbers, day_starts

_EPOCH_DAY = date(1970, 1, 1)

# Zones with their transitions of 2025, each swept for every listed rollover hour.
SWEEPS = [
    ("Pacific/Chatham", ["2025-04-05T14:00", "2025-09-27T14:00"], range(24)),
    ("Antarctica/Troll", ["2025-03-30T01:00", "2025-10-26T01:00"], range(24)),
    ("Australia/Lord_Howe", ["2025-04-05T15:00", "2025-10-04T15:30"], range(24)),
    ("America/Havana", ["2025-03-09T05:00", "2025-11-02T05:00"], range(24)),
    ("Atlantic/Azores", ["2025-03-30T01:00", "2025-10-26T01:00"], range(24)),
    ("Europe/London", ["2025-03-30T01:00", "2025-10-26T01:00"], range(24)),
    ("America/New_York", ["2025-03-09T07:00", "2025-11-02T06:00"], range(24)),
]


def instants(around: datetime, hours: int = 30, step: timedelta = timedelta(minutes=5)) -> list[datetime]:
    start = around - timedelta(hours=hours)
    return [start + k * step for k in range(int(2 * hours * timedelta(hours=1) / step) + 1)]


def sweep_cases() -> list[tuple[str, str, int]]:
    return [(zone, moment, hour) for zone, moments, hours in SWEEPS for moment in moments for hour in hours]


@pytest.mark.parametrize(("zone", "moment", "hour"), sweep_cases())
def test_day_is_monotonic_across_transitions(zone: str, moment: str, hour: int) -> None:
    tz = ZoneInfo(zone)
    times = instants(utc(moment))
    starts: list[datetime] = []
    last_start: datetime | None = None
    last_index: int | None = None
    for at, index in zip(times, day_numbers(times, tz, hour), strict=True):
        start = day_start(at, tz, hour)
        assert start <= at, (at, start)
        assert (start.astimezone(tz).date() - _EPOCH_DAY).days in (index, index + 1)
        if last_start is not None and last_index is not None:
            assert start >= last_start, (at, start, last_start)
            assert index - last_index in (0, 1), (at, index, last_index)
            assert (start == last_start) == (index == last_index), (at, start, index)
        if not starts or starts[-1] != start:
            starts.append(start)
        last_start, last_index = start, index
    for earlier, later in itertools.pairwise(starts):
        assert timedelta(hours=21) <= later - earlier <= timedelta(hours=27), (earlier, later)


@pytest.mark.parametrize(("zone", "moment", "hour"), sweep_cases())
def test_day_starts_agree_with_day_start(zone: str, moment: str, hour: int) -> None:
    tz = ZoneInfo(zone)
    at = utc(moment) - timedelta(hours=30)
    starts = day_starts(at, tz, hour, 4)
    assert starts[0] == day_start(at, tz, hour)
    for first, second in itertools.pairwise(starts):
        assert day_start(second, tz, hour) == second
        assert day_start(second - timedelta(milliseconds=1), tz, hour) == first


def test_chatham_autumn_with_a_3am_rollover() -> None:
    """03:45 CHADT (14:00 UTC) falls back to 02:45 CHAST: the day that began at the first 03:00 goes on."""
    tz = ZoneInfo("Pacific/Chatham")
    first_three = utc("2025-04-05T13:15")  # 03:00 +13:45, the first time the wall clock reads 03:00
    assert day_start(utc("2025-04-05T13:59"), tz, 3) == first_three
    assert day_start(utc("2025-04-05T14:00"), tz, 3) == first_three  # the wall clock reads 02:45 again
    assert day_start(utc("2025-04-05T14:15"), tz, 3) == first_three  # and 03:00 a second time
    assert day_start(utc("2025-04-06T14:14"), tz, 3) == first_three  # 03:59 +12:45 the next day
    assert day_start(utc("2025-04-06T14:15"), tz, 3) == utc("2025-04-06T14:15")  # 26 hours long


def test_chatham_spring_day_starts_at_the_jump() -> None:
    """02:45 CHAST (14:00 UTC) springs forward to 03:45 CHADT: 03:00 never comes, the day starts at 03:45."""
    tz = ZoneInfo("Pacific/Chatham")
    assert day_start(utc("2025-09-27T13:59"), tz, 3) == utc("2025-09-26T14:15")
    assert day_start(utc("2025-09-27T14:00"), tz, 3) == utc("2025-09-27T14:00")
    before, after = day_numbers([utc("2025-09-27T13:59"), utc("2025-09-27T14:00")], tz, 3)
    assert after - before == 1


@pytest.mark.parametrize("zone", ["Europe/Berlin", "Pacific/Chatham", "America/New_York"])
def test_day_numbers_agree_with_day_start_near_and_far(zone: str) -> None:
    """Many times close together (one binary search among the day starts they span) and a few far apart
    (day by day) both give the number of the date of `day_start`'s day."""
    tz = ZoneInfo(zone)
    near = [utc("2025-03-01T00:00") + k * timedelta(minutes=97) for k in range(2000)]
    far = [utc("1999-12-31T23:00"), utc("2025-06-01T03:30"), utc("2090-10-26T01:00")]
    for times in (near, far, near[::-1]):
        expected = [(day_start(at, tz, 4).astimezone(tz).date() - _EPOCH_DAY).days for at in times]
        assert day_numbers(times, tz, 4) == expected
    assert day_numbers([], tz, 4) == []
