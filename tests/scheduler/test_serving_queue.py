"""Serving: due-queue order, enrolled decks, daily limits, sessions, cram, stats and forecast.

The mechanics are tested with fsrs's same-day steps and desired retention (the ``store`` fixture here); what a
session serves with ``Memory()``'s defaults (no same-day steps) has its own test."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fixed_clock import T0, UTC
from store_helpers import AGAIN, EASY, GOOD, HARD, exact_store, steps_store

from scheduler import (
    CramReview,
    CramSession,
    Item,
    Limits,
    Nudge,
    Rating,
    Session,
    Stats,
    Store,
    due_queue,
    forecast,
    stats,
)

BERLIN = ZoneInfo("Europe/Berlin")
EIGHT_DAYS = timedelta(days=8)  # a new item answered EASY is due 8 days later (fuzz off, fsrs's retention)


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    """An open store with fsrs's same-day steps and desired retention, fuzz off."""
    with steps_store(db) as opened:
        yield opened


def items(*ids: str) -> list[Item]:
    return [Item(item_id, item_id.rstrip("0123456789")) for item_id in ids]


def ids(queue: list[Item]) -> list[str]:
    return [item.id for item in queue]


def test_order_enrolled_decks_and_removed_items(store: Store) -> None:
    bank = items("a1", "a2", "a3", "a4", "a5", "b1", "b2")
    store.enroll("a", T0)
    store.record("a1", EASY, T0)  # due T0+8d, high retrievability
    store.record("a2", EASY, T0 - timedelta(days=2))  # due T0+6d: the most overdue
    store.record("a3", AGAIN, T0 + EIGHT_DAYS - timedelta(minutes=1))  # due T0+8d too, low retrievability
    store.record("a5", EASY, T0 + timedelta(days=5))  # due T0+13d: not due yet
    store.record("b2", EASY, T0 + timedelta(days=1))  # deck b is not enrolled, but b2 has a card
    store.record("gone", EASY, T0 - timedelta(days=5))  # no longer in the bank
    at = T0 + timedelta(days=10)
    card_a1, card_a3 = store.card("a1"), store.card("a3")
    assert card_a1 is not None and card_a3 is not None
    assert card_a1.due == card_a3.due
    assert store.memory.retrievability(card_a3, at) < store.memory.retrievability(card_a1, at)
    assert ids(due_queue(store, bank, at, UTC)) == ["a2", "a3", "a1", "b2", "a4"]
    assert ids(due_queue(store, bank, T0 + timedelta(days=7), UTC)) == ["a2", "a4"]
    store.enroll("b", at)
    assert ids(due_queue(store, bank, at, UTC)) == ["a2", "a3", "a1", "b2", "a4", "b1"]


def test_equal_due_and_retrievability_keep_bank_order(store: Store) -> None:
    store.enroll("a", T0)
    for item_id in ("a3", "a1", "a2"):
        store.record(item_id, EASY, T0)
    at = T0 + EIGHT_DAYS
    assert ids(due_queue(store, items("a2", "a3", "a1"), at, UTC)) == ["a2", "a3", "a1"]
    assert ids(due_queue(store, items("a1", "a2", "a3"), at, UTC)) == ["a1", "a2", "a3"]


def test_a_limit_that_cuts_a_tie_keeps_the_lowest_retrievability(store: Store) -> None:
    store.enroll("a", T0)
    store.record("a2", EASY, T0 - timedelta(days=2))  # due T0+6d: first
    store.record("a1", EASY, T0)  # due T0+8d, high retrievability
    store.record("a3", AGAIN, T0 + EIGHT_DAYS - timedelta(minutes=1))  # due T0+8d too, low retrievability
    bank, at = items("a1", "a2", "a3"), T0 + timedelta(days=10)
    assert ids(due_queue(store, bank, at, UTC, Limits(reviews_per_day=2))) == ["a2", "a3"]
    assert ids(due_queue(store, bank, at, UTC, Limits(reviews_per_day=1))) == ["a2"]
    assert ids(due_queue(store, bank, at, UTC, Limits(reviews_per_day=0))) == []


def test_daily_limits(store: Store) -> None:
    bank = items("r1", "r2", "r3", "r4", "n1", "n2", "n3", "n4")
    store.enroll("n", T0)
    for item_id in ("r1", "r2", "r3", "r4"):
        store.record(item_id, EASY, T0)
    at = T0 + timedelta(days=9)
    limits = Limits(new_per_day=2, reviews_per_day=3)
    assert ids(due_queue(store, bank, at, UTC, limits)) == ["r1", "r2", "r3", "n1", "n2"]
    store.record("n1", GOOD, at)  # a new item answered today
    store.record("r1", GOOD, at)  # a review answered today
    later = at + timedelta(minutes=1)
    assert ids(due_queue(store, bank, later, UTC, limits)) == ["r2", "r3", "n2"]
    store.record("n1", GOOD, at + timedelta(minutes=10))  # a learning step counts as a review
    assert ids(due_queue(store, bank, later, UTC, limits)) == ["r2", "n2"]
    assert ids(due_queue(store, bank, later, UTC, Limits(new_per_day=0, reviews_per_day=0))) == []
    assert ids(due_queue(store, bank, later, UTC, Limits(new_per_day=1, reviews_per_day=1))) == []
    tomorrow = at + timedelta(days=1)  # the limits start over after the rollover
    assert ids(due_queue(store, bank, tomorrow, UTC, limits)) == ["r2", "r3", "r4", "n2", "n3"]


def test_limits_follow_the_4am_rollover_in_local_time(store: Store) -> None:
    bank = items("n1", "n2", "n3")
    store.enroll("n", T0)
    limits = Limits(new_per_day=1)
    before = (T0 + timedelta(days=10)).astimezone(BERLIN).replace(hour=3, minute=59)  # CET: 02:59Z
    rollover = before.replace(hour=4, minute=0)
    store.record("n1", GOOD, before)
    assert ids(due_queue(store, bank, before + timedelta(seconds=30), BERLIN, limits)) == []
    assert ids(due_queue(store, bank, rollover, BERLIN, limits)) == ["n2"]
    # With tz=UTC the day rolls over at 04:00Z, so 04:00 Berlin (03:00Z) is still the day of that answer.
    assert ids(due_queue(store, bank, rollover, UTC, limits)) == []


def test_limits_validation() -> None:
    with pytest.raises(ValueError) as info:
        Limits(new_per_day=-1)
    assert str(info.value) == "new_per_day must be a non-negative int, got -1"


def test_session_brings_again_back_before_the_end(store: Store) -> None:
    bank = items("n1", "n2")
    store.enroll("n", T0)
    session = Session(store, bank, T0, UTC)
    assert session.remaining == 2
    assert session.intervals(bank[0], T0) == {
        AGAIN: timedelta(minutes=1),
        HARD: timedelta(minutes=5, seconds=30),
        GOOD: timedelta(minutes=10),
        EASY: timedelta(days=8),
    }
    shown = []
    answers = iter([AGAIN, GOOD, AGAIN, GOOD, EASY])  # n2's Good: its 10-minute step comes back too
    at = T0
    while (item := session.next()) is not None:
        assert session.next() == item  # showing again does not advance
        shown.append(item.id)
        review = session.answer(item, next(answers), at, duration_ms=1500)
        assert review.reviewed_at == at
        at += timedelta(seconds=20)
    assert shown == ["n1", "n2", "n1", "n2", "n1"]
    assert session.remaining == 0
    assert [(r.item_id, r.rating) for r in store.reviews()] == [
        ("n1", AGAIN),
        ("n2", GOOD),
        ("n1", AGAIN),
        ("n2", GOOD),
        ("n1", EASY),
    ]


def test_session_with_the_defaults_serves_each_new_question_once(db: Path) -> None:
    """Without same-day steps an Again is due tomorrow: the session does not bring it back."""
    bank = items("n1", "n2")
    with exact_store(db) as store:
        store.enroll("n", T0)
        session = Session(store, bank, T0, UTC)
        assert session.intervals(bank[0], T0) == {
            AGAIN: timedelta(days=1),
            HARD: timedelta(days=2),
            GOOD: timedelta(days=4),
            EASY: timedelta(days=16),
        }
        shown = []
        at = T0
        while (item := session.next()) is not None:
            shown.append(item.id)
            session.answer(item, AGAIN, at)
            at += timedelta(seconds=20)
        assert shown == ["n1", "n2"]
        assert session.remaining == 0
        assert store.due_times() == {"n1": T0 + timedelta(days=1), "n2": T0 + timedelta(days=1, seconds=20)}
        assert [card.state for card in store.cards().values()] == ["review", "review"]


def test_cram_leaves_schedule_and_log_untouched(store: Store) -> None:
    store.enroll("a", T0)
    store.record("a1", GOOD, T0)
    store.record("a1", GOOD, T0 + timedelta(minutes=10))
    cards, log = store.cards(), store.reviews()
    bank = items("a1", "a2", "b1")
    cram = CramSession(store, bank)
    assert cram.remaining == 3
    at = T0 + timedelta(hours=1)
    answered = []
    for rating in (AGAIN, GOOD, HARD, EASY):
        item = cram.next()
        assert item is not None
        answered.append(item.id)
        assert cram.answer(item, rating, at, duration_ms=700) is None
    assert cram.next() is None
    assert answered == ["a1", "a2", "b1", "a1"]
    assert store.cards() == cards
    assert store.reviews() == log
    assert store.cram_reviews() == [
        CramReview("a1", AGAIN, at, 700),
        CramReview("a2", GOOD, at, 700),
        CramReview("b1", HARD, at, 700),
        CramReview("a1", EASY, at, 700),
    ]


def test_stats_and_forecast(store: Store) -> None:
    at = T0 + timedelta(days=10)
    today = at.replace(hour=4)  # today: 04:00Z .. 04:00Z tomorrow
    due = {
        "a1": at - timedelta(days=1),  # overdue
        "a2": at + timedelta(hours=2),
        "a3": today + timedelta(days=1, minutes=-1),  # still today
        "a4": today + timedelta(days=1),  # day 1
        "a5": today + timedelta(days=3, hours=8),  # day 3
        "a6": today + timedelta(days=8, hours=-1),  # day 7
        "a7": today + timedelta(days=8),  # day 8
        "gone": at - timedelta(days=3),  # not in the bank
    }
    for item_id, when in due.items():
        store.record(item_id, EASY, when - EIGHT_DAYS)
    store.enroll("a", T0)
    store.enroll("b", T0)
    store.record("b1", GOOD, at - timedelta(hours=1))  # answered today: learning, due at 08:10Z
    store.record_cram("a1", GOOD, at)  # practice is not a review
    bank = items("a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b1", "b2", "c1")
    assert stats(store, bank, at, UTC) == Stats(
        due_now=4,  # a1 (overdue), b1 (a step, due at 08:10Z), and a2 and a3: due today, from the rollover
        due_later_today=0,  # no same-day step comes due after `at`
        due_next_7_days=(1, 0, 1, 0, 0, 0, 1),
        reviews_today=2,  # b1, and a7 (answered at today's 04:00Z rollover)
        reviews_total=8,
        true_retention=None,
        new_available=3,  # a8, a9, b2 (deck c is not enrolled)
    )
    assert forecast(store, bank, at, UTC, days=10) == [4, 1, 0, 1, 0, 0, 0, 1, 1, 0]
    assert forecast(store, bank, at, UTC, days=1) == [4]
    assert len(forecast(store, bank, at, UTC)) == 30
    with pytest.raises(ValueError) as info:
        forecast(store, bank, at, UTC, days=0)
    assert str(info.value) == "days must be a positive int, got 0"


def test_stats_count_what_a_session_serves_when_nudges_brought_items_back(store: Store) -> None:
    """An item never answered that a nudge brought back is new in a session (first among the new ones, in
    any deck) and so in stats, never due; one nudged for tomorrow, of a deck not enrolled, is nothing yet."""
    bank = items("a1", "a2", "a3", "b1", "c1")
    store.enroll("a", T0)
    store.record("a1", EASY, T0)  # due T0 + 8d
    at = T0 + timedelta(days=10)
    store.nudge(Nudge("b1", T0, at - timedelta(hours=1), "a mistake"))  # deck b is not enrolled
    store.nudge(
        Nudge("a3", T0, at - timedelta(hours=1), "a mistake")
    )  # deck a is: served first, counted once
    store.nudge(Nudge("c1", T0, at + timedelta(days=1), "a mistake"))  # due tomorrow
    session = Session(store, bank, at, UTC)
    assert ids(due_queue(store, bank, at, UTC)) == ["a1", "a3", "b1", "a2"]
    assert (session.due_count, session.new_count) == (1, 3)
    result = stats(store, bank, at, UTC)
    assert (result.due_now, result.due_later_today, result.new_available) == (1, 0, 3)
    assert result.due_next_7_days == (0, 0, 0, 0, 0, 0, 0)  # c1 comes back tomorrow as a new item


def test_true_retention_counts_first_answer_of_each_day_in_review(store: Store) -> None:
    def answer(item_id: str, rating: Rating, day: int, hour: int, minute: int = 0) -> str:
        store.record(item_id, rating, datetime(2025, 1, day, hour, minute, tzinfo=BERLIN))
        card = store.card(item_id)
        assert card is not None
        return card.state

    assert answer("r1", EASY, 1, 10) == "review"
    assert answer("r1", GOOD, 9, 10) == "review"  # counted: pass
    assert answer("r1", AGAIN, 9, 11) == "relearning"  # not the first answer of the day
    assert answer("r2", EASY, 1, 10) == "review"
    assert answer("r2", AGAIN, 10, 3, 30) == "relearning"  # counted (learner's day 9): fail
    assert answer("r2", GOOD, 10, 3, 45) == "review"
    assert answer("r2", HARD, 10, 4, 30) == "review"  # counted: a new day began at 04:00 local
    assert answer("r3", GOOD, 1, 10) == "learning"
    assert answer("r3", GOOD, 1, 10, 10) == "review"
    assert answer("r3", GOOD, 3, 10) == "review"  # counted: pass
    assert answer("r4", GOOD, 1, 10) == "learning"
    assert answer("r4", GOOD, 1, 10, 10) == "review"
    assert answer("r4", AGAIN, 1, 10, 20) == "relearning"  # review state, but not first of the day
    at = datetime(2025, 1, 20, 12, 0, tzinfo=BERLIN)
    bank = items("r1", "r2", "r3", "r4")
    assert stats(store, bank, at, BERLIN).true_retention == 0.75
    # Counted by UTC days instead, r2's 03:30 and 04:30 answers (02:30Z, 03:30Z) fall on one day.
    assert stats(store, bank, at, UTC).true_retention == 2 / 3
    assert stats(store, items("r4"), at, BERLIN).true_retention is None


def test_due_now_is_what_a_session_serves_and_later_today_comes_after(store: Store) -> None:
    """A learning step due later today is counted as "later today", not "due now", in stats and session."""
    at = T0 + timedelta(days=10)
    store.enroll("a", T0)
    store.record("a1", EASY, at - EIGHT_DAYS - timedelta(hours=1))  # due an hour ago
    store.record("a2", GOOD, at - timedelta(minutes=5))  # learning: due in 5 minutes
    store.record("a3", AGAIN, at - timedelta(minutes=1))  # learning: due now
    bank = items("a1", "a2", "a3")
    summary = stats(store, bank, at, UTC)
    session = Session(store, bank, at, UTC, Limits(new_per_day=0))
    assert (summary.due_now, summary.due_later_today) == (2, 1)
    assert session.due_count == summary.due_now
    later = at + timedelta(minutes=5)
    assert Session(store, bank, later, UTC).due_count == stats(store, bank, later, UTC).due_now == 3
    assert stats(store, bank, later, UTC).due_later_today == 0
