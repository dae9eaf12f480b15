"""Memory: exact FSRS trajectories (fuzz off, fixed clock), previews, retrievability, replay, time checks.

The mechanics of same-day steps are tested with fsrs's own steps and retention (``steps_memory``);
``Memory()``'s defaults (desired retention 0.85, no same-day steps) have their own exact cases."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import fsrs
import pytest
from fixed_clock import FSRS_T0, UTC, utc
from store_helpers import AGAIN, EASY, GOOD, HARD, STEPS, STEPS_RETENTION, steps_memory

from scheduler import CardState, Memory, Rating, Review, Store
from scheduler._memory import DEFAULT_LEARNING_STEPS, DEFAULT_RELEARNING_STEPS, DEFAULT_RETENTION

# With fsrs's steps (``steps_memory``), each item is answered exactly when it falls due. Rows: rating, state,
# step, stability and difficulty rounded to 4 decimals, due (UTC), reps, lapses.
TRAJECTORIES = {
    "good-at-due": [
        (GOOD, "learning", 1, 2.3065, 2.1181, "2025-01-06T09:10:00", 1, 0),
        (GOOD, "review", None, 2.3065, 2.1112, "2025-01-08T09:10:00", 2, 0),
        (GOOD, "review", None, 10.9710, 2.1043, "2025-01-19T09:10:00", 3, 0),
        (GOOD, "review", None, 46.3169, 2.0975, "2025-03-06T09:10:00", 4, 0),
        (GOOD, "review", None, 162.9998, 2.0906, "2025-08-16T09:10:00", 5, 0),
        (GOOD, "review", None, 497.8766, 2.0837, "2026-12-27T09:10:00", 6, 0),
    ],
    "lapse-and-relearn": [
        (GOOD, "learning", 1, 2.3065, 2.1181, "2025-01-06T09:10:00", 1, 0),
        (GOOD, "review", None, 2.3065, 2.1112, "2025-01-08T09:10:00", 2, 0),
        (GOOD, "review", None, 10.9710, 2.1043, "2025-01-19T09:10:00", 3, 0),
        (AGAIN, "relearning", 0, 1.5390, 7.3900, "2025-01-19T09:20:00", 4, 1),
        (HARD, "relearning", 0, 1.5390, 8.2526, "2025-01-19T09:35:00", 5, 1),
        (GOOD, "review", None, 1.5718, 8.2395, "2025-01-21T09:35:00", 6, 1),
        (EASY, "review", None, 6.3718, 7.6365, "2025-01-27T09:35:00", 7, 1),
    ],
    "easy-then-hard": [
        (EASY, "review", None, 8.2956, 1.0000, "2025-01-14T09:00:00", 1, 0),
        (HARD, "review", None, 26.7042, 4.0106, "2025-02-10T09:00:00", 2, 0),
        (HARD, "review", None, 61.9679, 6.0092, "2025-04-13T09:00:00", 3, 0),
        (AGAIN, "relearning", 0, 3.0895, 8.6735, "2025-04-13T09:10:00", 4, 1),
        (AGAIN, "relearning", 0, 1.0184, 9.5492, "2025-04-13T09:20:00", 5, 1),
        (GOOD, "review", None, 1.0688, 9.5349, "2025-04-14T09:20:00", 6, 1),
    ],
}


# The same, with ``Memory()``'s defaults: no learning or relearning state, intervals in days from the start.
DEFAULT_TRAJECTORIES = {
    "good-again-easy": [
        (GOOD, "review", None, 2.3065, 2.1181, "2025-01-10T09:00:00", 1, 0),
        (GOOD, "review", None, 16.1773, 2.1112, "2025-02-10T09:00:00", 2, 0),
        (GOOD, "review", None, 90.9889, 2.1043, "2025-08-02T09:00:00", 3, 0),
        (AGAIN, "review", None, 4.1415, 7.3900, "2025-08-10T09:00:00", 4, 1),
        (GOOD, "review", None, 13.9493, 7.3778, "2025-09-06T09:00:00", 5, 1),
        (EASY, "review", None, 64.7187, 6.4868, "2026-01-07T09:00:00", 6, 1),
    ],
}


def fsrs_trajectory(scheduler: fsrs.Scheduler, ratings: list[Rating]) -> list[tuple[object, ...]]:
    """What fsrs itself gives for ``ratings``, each answered when due: state, step, stability, difficulty and
    due."""
    card = fsrs.Card(card_id=Memory.card_id("q"), due=FSRS_T0)
    rows = []
    for rating in ratings:
        card, _ = scheduler.review_card(card, fsrs.Rating(int(rating)), card.due)
        rows.append((card.state.name.lower(), card.step, card.stability, card.difficulty, card.due))
    return rows


def memory_trajectory(memory: Memory, ratings: list[Rating]) -> list[tuple[object, ...]]:
    """The same rows from ``memory``."""
    state: CardState | None = None
    rows = []
    for rating in ratings:
        state = memory.review(state, "q", rating, FSRS_T0 if state is None else state.due)
        rows.append((state.state, state.step, state.stability, state.difficulty, state.due))
    return rows


def check_trajectory(memory: Memory, rows: list[tuple[object, ...]]) -> None:
    state: CardState | None = None
    for rating, kind, step, stability, difficulty, due, reps, lapses in rows:
        at = FSRS_T0 if state is None else state.due
        state = memory.review(state, "q", rating, at)
        assert state.stability is not None and state.difficulty is not None
        got = (state.state, state.step, round(state.stability, 4), round(state.difficulty, 4), state.due)
        assert got == (kind, step, stability, difficulty, utc(due))
        assert (state.last_review, state.reps, state.lapses) == (at, reps, lapses)
        assert state.due.tzinfo is UTC


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_trajectory_is_exact(name: str) -> None:
    check_trajectory(steps_memory(), TRAJECTORIES[name])


@pytest.mark.parametrize("name", sorted(DEFAULT_TRAJECTORIES))
def test_default_trajectory_is_exact(name: str) -> None:
    check_trajectory(Memory(enable_fuzzing=False), DEFAULT_TRAJECTORIES[name])


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_trajectory_is_fsrs_with_the_same_steps_and_retention(name: str) -> None:
    ratings = [row[0] for row in TRAJECTORIES[name]]
    scheduler = fsrs.Scheduler(desired_retention=STEPS_RETENTION, enable_fuzzing=False, **STEPS)  # type: ignore[arg-type]
    assert memory_trajectory(steps_memory(), ratings) == fsrs_trajectory(scheduler, ratings)


def test_memory_defaults_are_085_without_steps_and_match_fsrs() -> None:
    memory = Memory(enable_fuzzing=False)
    assert (DEFAULT_RETENTION, DEFAULT_LEARNING_STEPS, DEFAULT_RELEARNING_STEPS) == (0.85, (), ())
    assert (Memory().desired_retention, Memory().learning_steps, Memory().relearning_steps) == (0.85, (), ())
    assert (memory.desired_retention, memory.learning_steps, memory.relearning_steps) == (0.85, (), ())
    scheduler = fsrs.Scheduler(
        desired_retention=0.85, learning_steps=(), relearning_steps=(), enable_fuzzing=False
    )
    for rows in (*TRAJECTORIES.values(), *DEFAULT_TRAJECTORIES.values()):
        ratings = [row[0] for row in rows]
        assert memory_trajectory(memory, ratings) == fsrs_trajectory(scheduler, ratings)


def test_late_review_uses_elapsed_days() -> None:
    memory = steps_memory()
    state = memory.review(memory.review(None, "q", GOOD, FSRS_T0), "q", GOOD, utc("2025-01-06T09:10:00"))
    late = memory.review(state, "q", GOOD, utc("2025-01-18T09:10:00"))  # 10 days after it was due
    assert (round(late.stability, 4), late.due) == (27.0974, utc("2025-02-14T09:10:00"))


def test_preview_of_a_new_item() -> None:
    assert steps_memory().preview(None, "q", FSRS_T0) == {
        AGAIN: timedelta(minutes=1),
        HARD: timedelta(minutes=5, seconds=30),
        GOOD: timedelta(minutes=10),
        EASY: timedelta(days=8),
    }
    memory = steps_memory(enable_fuzzing=True)
    fuzzed = memory.preview(None, "q", FSRS_T0)
    assert fuzzed[EASY] == timedelta(days=6)  # 8 days, fuzzed: review will give exactly that
    assert {rating: memory.review(None, "q", rating, FSRS_T0).due - FSRS_T0 for rating in Rating} == fuzzed


def test_preview_of_a_new_item_with_the_defaults() -> None:
    assert Memory(enable_fuzzing=False).preview(None, "q", FSRS_T0) == {
        AGAIN: timedelta(days=1),
        HARD: timedelta(days=2),
        GOOD: timedelta(days=4),
        EASY: timedelta(days=16),
    }
    fuzzed = {
        AGAIN: timedelta(days=1),
        HARD: timedelta(days=2),
        GOOD: timedelta(days=3),
        EASY: timedelta(days=13),
    }
    assert Memory().preview(None, "q", FSRS_T0) == fuzzed  # fuzz moves 3 days or more only
    assert {rating: Memory().review(None, "q", rating, FSRS_T0).due - FSRS_T0 for rating in Rating} == fuzzed


def test_preview_of_a_review_card_shows_the_fuzz_review_will_draw() -> None:
    state = steps_memory().review(None, "q", EASY, FSRS_T0)
    at = utc("2025-01-14T09:00:00")
    exact = {
        AGAIN: timedelta(minutes=10),
        HARD: timedelta(days=27),
        GOOD: timedelta(days=39),
        EASY: timedelta(days=66),
    }
    assert steps_memory().preview(state, "q", at) == exact
    fuzzed = {
        AGAIN: timedelta(minutes=10),
        HARD: timedelta(days=25),
        GOOD: timedelta(days=42),
        EASY: timedelta(days=71),
    }
    memory = steps_memory(
        enable_fuzzing=True
    )  # drawn from the item, the rating and the time: the same each time
    assert [memory.preview(state, "q", at) for _ in range(3)] == [fuzzed] * 3
    assert {rating: memory.review(state, "q", rating, at).due - at for rating in Rating} == fuzzed
    within_a_ms = at + timedelta(microseconds=999)  # the store keeps whole milliseconds: the same draw
    assert memory.preview(state, "q", within_a_ms) == fuzzed


def test_preview_of_a_review_card_with_the_defaults() -> None:
    state = Memory(enable_fuzzing=False).review(None, "q", EASY, FSRS_T0)
    at = utc("2025-01-22T09:00:00")  # when it is due: 16 days
    assert state.due == at
    exact = {
        AGAIN: timedelta(days=3),
        HARD: timedelta(days=71),
        GOOD: timedelta(days=108),
        EASY: timedelta(days=189),
    }
    assert Memory(enable_fuzzing=False).preview(state, "q", at) == exact
    fuzzed = {
        AGAIN: timedelta(days=4),
        HARD: timedelta(days=76),
        GOOD: timedelta(days=107),
        EASY: timedelta(days=192),
    }
    memory = Memory()
    assert [memory.preview(state, "q", at) for _ in range(3)] == [fuzzed] * 3
    assert {rating: memory.review(state, "q", rating, at).due - at for rating in Rating} == fuzzed


@pytest.mark.parametrize(
    ("days", "expected"),
    [(0, 1.0), (1, 0.946847), (2, 0.909493), (5, 0.838861), (10, 0.774367), (30, 0.667526)],
)
def test_retrievability(days: int, expected: float) -> None:
    memory = Memory(enable_fuzzing=False)
    state = memory.review(memory.review(None, "q", GOOD, FSRS_T0), "q", GOOD, utc("2025-01-06T09:10:00"))
    at = utc("2025-01-06T09:10:00") + timedelta(days=days, hours=18)  # 03:10: the day before's, until 4 am
    assert round(memory.retrievability(state, at), 6) == expected


def test_card_id_is_stable_and_bounded() -> None:
    assert Memory.card_id("02-scaling-role") == 7327682705802996
    ids = {Memory.card_id(f"00-q{i}") for i in range(1000)}
    assert len(ids) == 1000
    assert all(0 < card_id < 2**53 for card_id in ids)


def test_aware_non_utc_times_are_converted() -> None:
    berlin = datetime(2025, 1, 6, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    state = steps_memory().review(None, "q", GOOD, berlin)
    assert state.last_review == FSRS_T0
    assert state.last_review.tzinfo is UTC
    assert state.due == utc("2025-01-06T09:10:00")
    assert Memory(enable_fuzzing=False).review(None, "q", GOOD, berlin).due == utc("2025-01-10T09:00:00")


NAIVE = FSRS_T0.replace(tzinfo=None)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m: m.review(None, "q", GOOD, NAIVE), "at"),
        (lambda m: m.preview(None, "q", NAIVE), "at"),
        (lambda m: m.retrievability(m.review(None, "q", GOOD, FSRS_T0), NAIVE), "at"),
        (lambda m: m.replay("q", [Review("q", GOOD, NAIVE, None, FSRS_T0)]), "reviewed_at"),
        (lambda m: m.replay("q", [Review("q", GOOD, FSRS_T0, None, NAIVE)]), "due"),
    ],
)
def test_naive_datetime_is_refused(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as info:
        call(Memory())
    assert str(info.value) == f"{name} must be timezone-aware (UTC), got a naive datetime"


def test_replay_errors() -> None:
    memory = Memory()
    with pytest.raises(ValueError) as info:
        memory.replay("q", [])
    assert str(info.value) == "no reviews to replay for 'q'"
    with pytest.raises(ValueError) as info:
        memory.replay("q", [Review("other", GOOD, FSRS_T0, None, FSRS_T0)])
    assert str(info.value) == "cannot replay a review of 'other' into the history of 'q'"
    with pytest.raises(ValueError) as info:
        memory.review(memory.review(None, "a", GOOD, FSRS_T0), "b", GOOD, FSRS_T0)
    assert str(info.value) == "the state given is for 'a', not 'b'"


@pytest.mark.parametrize(
    ("steps", "moved"), [pytest.param(True, 13, id="fsrs steps"), pytest.param(False, 37, id="defaults")]
)
def test_replay_with_fuzz_rebuilds_the_cached_state(db: Path, steps: bool, moved: int) -> None:
    def make(fuzz: bool) -> Memory:
        return steps_memory(enable_fuzzing=fuzz) if steps else Memory(enable_fuzzing=fuzz)

    memory = make(True)
    ratings = [GOOD, GOOD, HARD, GOOD, AGAIN, GOOD, EASY, GOOD, HARD, GOOD, GOOD, AGAIN, GOOD, GOOD]
    fuzzed = 0
    with Store.open(db, memory=memory) as store:
        for start, item in enumerate(("a", "b", "c")):
            at = FSRS_T0
            for index, rating in enumerate(ratings[start:]):
                exact = make(False).preview(store.card(item), item, at)[rating]
                review = store.record(item, rating, at, duration_ms=1000 + index)
                fuzzed += review.due - at != exact
                at = review.due + timedelta(hours=index % 5)
        cached = store.cards()
        assert fuzzed == moved  # fuzz moved these due dates, so replay has to take them from the log
        assert sorted(cached) == ["a", "b", "c"]
        for item, card in cached.items():
            assert memory.replay(item, store.reviews(item)) == card
            assert make(False).replay(item, store.reviews(item)) == card
        store.rebuild_cache()
        assert store.cards() == cached
