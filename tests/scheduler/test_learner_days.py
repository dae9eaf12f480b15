"""FSRS counts the learner's days, not 24-hour periods: what fsrs gives when it is told the days elapsed."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import fsrs
import pytest
from fixed_clock import UTC

from scheduler import LogEntry, Memory, Rating, Review, Settings, Store, fit_parameters, fit_reviews
from scheduler._time import elapsed_days

PARIS = ZoneInfo("Europe/Paris")
EVENING = datetime(2025, 1, 6, 18, 0, tzinfo=UTC)  # a Monday's session
NEXT_MORNING = datetime(2025, 1, 7, 8, 0, tzinfo=UTC)  # 14 hours later, the next learner's day


def fsrs_alone(retention: float = Memory().desired_retention) -> fsrs.Scheduler:
    return fsrs.Scheduler(
        desired_retention=retention, learning_steps=(), relearning_steps=(), enable_fuzzing=False
    )


def fsrs_with_days(first: Rating, second: Rating, days: int) -> fsrs.Card:
    """What fsrs gives for ``second`` answered ``days`` whole days after ``first`` (as fsrs counts them)."""
    scheduler = fsrs_alone()
    card, _ = scheduler.review_card(
        fsrs.Card(card_id=1), fsrs.Rating(int(first)), NEXT_MORNING - timedelta(days)
    )
    card, _ = scheduler.review_card(card, fsrs.Rating(int(second)), NEXT_MORNING)
    return card


def test_forgotten_then_reviewed_next_morning_gets_fsrs_with_one_elapsed_day() -> None:
    memory = Memory(enable_fuzzing=False)
    forgotten = memory.review(None, "q", Rating.AGAIN, EVENING)
    assert (round(forgotten.stability, 4), forgotten.due) == (0.212, EVENING + timedelta(days=1))
    after = memory.review(forgotten, "q", Rating.GOOD, NEXT_MORNING)
    expected = fsrs_with_days(Rating.AGAIN, Rating.GOOD, days=1)
    assert (after.stability, after.difficulty, after.due) == (
        expected.stability,
        expected.difficulty,
        expected.due,
    )
    assert (round(after.stability, 4), after.due - NEXT_MORNING) == (1.8868, timedelta(days=4))
    # fsrs alone, counting the 14 hours as 0 days, takes it for a same-day answer:
    alone = fsrs_alone()
    card, _ = alone.review_card(fsrs.Card(card_id=1), fsrs.Rating.Again, EVENING)
    card, _ = alone.review_card(card, fsrs.Rating.Good, NEXT_MORNING)
    assert (round(card.stability, 4), card.due - NEXT_MORNING) == (0.2467, timedelta(days=1))


def test_recall_next_morning_is_fsrs_recall_after_one_day() -> None:
    memory = Memory(enable_fuzzing=False)
    forgotten = memory.review(None, "q", Rating.AGAIN, EVENING)
    card, _ = fsrs_alone().review_card(fsrs.Card(card_id=1), fsrs.Rating.Again, EVENING)
    one_day = fsrs_alone().get_card_retrievability(card, EVENING + timedelta(days=1))
    assert memory.retrievability(forgotten, NEXT_MORNING) == one_day
    assert round(one_day, 4) == 0.7662
    assert memory.retrievability(forgotten, EVENING + timedelta(hours=9)) == 1.0  # 03:00: the same day


@pytest.mark.parametrize(
    ("later", "days"),
    [
        (timedelta(hours=9, minutes=59), 0),  # 03:59 the next night: still Monday's day
        (timedelta(hours=10), 1),  # 04:00: Tuesday
        (timedelta(days=1, hours=9, minutes=59), 1),
        (timedelta(days=1, hours=10), 2),
    ],
)
def test_days_start_at_the_rollover(later: timedelta, days: int) -> None:
    memory = Memory(enable_fuzzing=False)
    assert memory.elapsed_days(EVENING, EVENING + later) == days
    first = memory.review(None, "q", Rating.GOOD, EVENING)
    second = memory.review(first, "q", Rating.GOOD, EVENING + later)
    scheduler = fsrs_alone()
    card, _ = scheduler.review_card(
        fsrs.Card(card_id=1), fsrs.Rating.Good, EVENING + later - timedelta(days, 1)
    )
    card, _ = scheduler.review_card(card, fsrs.Rating.Good, EVENING + later)
    assert (second.stability, second.difficulty) == (card.stability, card.difficulty)


def test_days_are_counted_in_the_learners_zone() -> None:
    at = datetime(2025, 1, 6, 21, 0, tzinfo=UTC)  # 22:00 in Paris
    later = datetime(2025, 1, 7, 3, 30, tzinfo=UTC)  # 04:30 in Paris, 03:30 in UTC
    assert Memory().elapsed_days(at, later) == 0
    assert Memory(tz=PARIS).elapsed_days(at, later) == 1
    assert Memory(tz=PARIS, rollover_hour=5).elapsed_days(at, later) == 0


def test_a_day_of_25_hours_stays_one_day() -> None:
    """Where the clock falls back (Paris, 26 October 2025, at 3 am), the learner's day of the 25th lasts 25
    hours: an answer 24.5 hours after another on that day is still the same day, and fsrs is told so."""
    start = datetime(2025, 10, 25, 2, 10, tzinfo=UTC)  # 04:10 in Paris on the 25th, summer time
    later = start + timedelta(hours=24, minutes=30)  # 03:40 in Paris on the 26th, winter time: before 4 am
    memory = Memory(tz=PARIS, enable_fuzzing=False)
    assert memory.elapsed_days(start, later) == 0
    first = memory.review(None, "q", Rating.GOOD, start)
    assert (
        memory.review(first, "q", Rating.GOOD, later).stability == first.stability
    )  # short-term, Good: same
    assert memory.retrievability(first, later) == 1.0


def test_elapsed_days_refuses_what_it_cannot_count() -> None:
    with pytest.raises(ValueError, match="rollover_hour must be an int from 0 to 23, got 24"):
        elapsed_days(EVENING, NEXT_MORNING, UTC, 24)
    with pytest.raises(ValueError, match="rollover_hour must be an int from 0 to 23, got 24"):
        Memory(rollover_hour=24)
    with pytest.raises(TypeError, match="tz must be a tzinfo, got str"):
        Memory(tz="Europe/Paris")  # type: ignore[arg-type]
    assert elapsed_days(NEXT_MORNING, EVENING, UTC) == -1


def test_a_store_counts_the_days_of_the_zone_it_was_opened_in(tmp_path: Path) -> None:
    at = datetime(2025, 1, 6, 21, 0, tzinfo=UTC)
    later = datetime(2025, 1, 7, 3, 30, tzinfo=UTC)
    with Store.open(tmp_path / "p.sqlite3", tz=PARIS) as store:
        assert (store.memory.tz, store.memory.rollover_hour) == (PARIS, 4)
        store.record("q", Rating.AGAIN, at)
        review = store.record("q", Rating.GOOD, later)
        expected = Memory(tz=PARIS).review(
            Memory(tz=PARIS).review(None, "q", Rating.AGAIN, at), "q", Rating.GOOD, later
        )
        assert store.card("q") == expected
        assert review.due == expected.due
        store.save_settings(Settings(0.9), at)
        assert (store.memory.tz, store.memory.desired_retention) == (PARIS, 0.9)
    with Store.open(tmp_path / "merged.sqlite3", tz=PARIS) as store:
        store.merge([LogEntry("q", Rating.AGAIN, at, None), LogEntry("q", Rating.GOOD, later, None)], [], {})
        assert store.card("q") == expected


def test_a_fit_sees_only_the_learners_days(tmp_path: Path) -> None:
    """Two logs whose answers differ only in the hour within each learner's day fit the same parameters;
    moving answers across the rollover changes what a fit learns from."""
    draw = random.Random(3)
    evening: list[Review] = []
    anytime: list[Review] = []
    start = datetime(2025, 3, 10, 18, 0, tzinfo=UTC)
    for index in range(40):
        day = 0
        for _ in range(16):
            rating = Rating.AGAIN if draw.random() < 0.15 else Rating.GOOD
            at = start + timedelta(days=day, minutes=index)
            moved = start + timedelta(days=day, hours=draw.uniform(-13.9, 5.9))  # 04:06 to 23:54 that day
            evening.append(Review(f"q{index}", rating, at, None, at))
            anytime.append(Review(f"q{index}", rating, moved, None, moved))
            day += 1 if rating == Rating.AGAIN else draw.randint(1, 9)
    assert fit_reviews(evening) == fit_reviews(anytime) == 600
    assert fit_parameters(evening) == fit_parameters(anytime)
    assert fit_reviews(anytime, timezone(timedelta(hours=10))) < 600  # other days: some answers now same-day
