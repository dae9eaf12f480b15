"""The parts of ``benchmarks/optimal_retention.py``: what a lapse and its relearning are charged (as fsrs-rs's
CMRR charges them), its FSRS formulas against py-fsrs's, its fast schedule against ``scheduler.Memory``'s, the
log's times by state, the sweep's least cost, the default's rule and the README's block."""

from __future__ import annotations

import importlib.util
import random
import sys
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Card, Scheduler
from fsrs import Rating as FsrsRating

from scheduler import LogEntry, Memory, Rating, due_from

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
_SPEC = importlib.util.spec_from_file_location("optimal_retention", _BENCHMARKS / "optimal_retention.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["optimal_retention"] = bench  # dataclasses look their module up by name
_SPEC.loader.exec_module(bench)
sim = sys.modules["retention_sim"]

A, H, G, E = Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY
GOOD_ONLY = (0.0, 0.0, 1.0, 0.0)
TINY = bench.Costs(
    "tiny",
    ((8.0, 7.0, 6.0, 5.0), (20.0, 15.0, 10.0, 5.0), (12.0, 9.0, 4.0, 3.0)),
    (0.5, 0.0, 0.5, 0.0),
    (0.0, 1.0, 0.0),
    2,
    1,
    (GOOD_ONLY, GOOD_ONLY, GOOD_ONLY),
    ((0.5, 0.0, 0.5, 0.0), GOOD_ONLY, GOOD_ONLY),
)


def test_a_lapse_costs_its_again_time_and_the_relearning_steps_after_it() -> None:
    # each relearning step is Again (12 s, and another step) or Good (4 s, relearnt), at most 5 steps
    relearning = sum(0.5**k * (0.5 * 12 + 0.5 * 4) for k in range(5))
    assert bench.steps_cost(TINY, bench.RELEARNING) == pytest.approx(relearning) == pytest.approx(15.5)
    assert bench.lapse_cost(TINY) == pytest.approx(20 + 15.5)
    assert bench.recall_cost(TINY) == 10.0
    assert bench.lapse_cost(bench.course_costs(TINY)) == 30.0  # the course: no steps, its explanation read
    assert bench.recall_cost(bench.course_costs(TINY)) == 12.0


def test_a_new_card_is_charged_its_learning_steps() -> None:
    # two learning steps: after a first Good one more Good; after Again two; after Easy none
    assert bench.steps_cost(TINY, bench.LEARNING, G) == 6.0
    assert bench.steps_cost(TINY, bench.LEARNING, A) == 12.0
    assert bench.steps_cost(TINY, bench.LEARNING, E) == 0.0


def test_fsrs_rs_defaults_charge_a_lapse_about_three_recalled_reviews() -> None:
    assert round(bench.steps_cost(bench.FSRS_RS, bench.RELEARNING), 1) == 18.8
    assert round(bench.lapse_cost(bench.FSRS_RS), 1) == 38.2
    assert round(bench.recall_cost(bench.FSRS_RS), 1) == 13.0


def test_the_drawn_steps_follow_the_chain() -> None:
    fsrs = bench.Fsrs(Memory().parameters)
    s, d, seconds = fsrs.steps(2.0, 5.0, replace(TINY, relearning_transitions=(GOOD_ONLY,) * 3),
                               bench.RELEARNING, A, random.Random(1))  # fmt: skip
    assert (s, d, seconds) == (fsrs.same_day_s(2.0, G), fsrs.next_d(5.0, G), 4.0)
    s, d, seconds = fsrs.steps(2.0, 5.0, TINY, bench.LEARNING, A, random.Random(1))
    assert seconds == 12.0 and s == fsrs.same_day_s(fsrs.same_day_s(2.0, G), G)


def test_the_fsrs_formulas_are_py_fsrs_s() -> None:
    parameters = Memory().parameters
    fsrs = bench.Fsrs(parameters)
    scheduler = Scheduler(parameters, 0.85, learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    card, _ = scheduler.review_card(Card(), FsrsRating.Good, start)
    s, d, last = fsrs.init_s(G), fsrs.init_d(G), 0
    draws = random.Random(3)
    for _ in range(12):
        day = last + fsrs.interval(s, 0.85)
        assert card.due == start + timedelta(days=day)
        r = fsrs.recall(day - last, s)
        assert r == pytest.approx(
            scheduler.get_card_retrievability(card, start + timedelta(days=day)), abs=1e-12
        )
        rating = draws.choice([A, H, G, E])
        card, _ = scheduler.review_card(card, FsrsRating(rating), start + timedelta(days=day))
        s = fsrs.forgotten_s(s, r, d) if rating == A else fsrs.recalled_s(s, r, d, rating)
        d, last = fsrs.next_d(d, rating), day
        assert card.stability == pytest.approx(s)
        assert card.difficulty == pytest.approx(d)
    stepped = Scheduler(parameters, 0.85, relearning_steps=(timedelta(minutes=10),), enable_fuzzing=False)
    at = start + timedelta(days=last + 5)
    lapsed, _ = stepped.review_card(card, FsrsRating.Again, at)
    relearnt, _ = stepped.review_card(lapsed, FsrsRating.Good, at + timedelta(minutes=10))
    forgotten = fsrs.forgotten_s(s, fsrs.recall(5, s), d)
    assert relearnt.stability == pytest.approx(fsrs.same_day_s(forgotten, G))


@pytest.mark.parametrize("steps", [False, True])
def test_the_fast_schedule_is_the_course_s_memory_without_fuzz(steps: bool) -> None:
    for seed in range(8):
        draws = random.Random(seed)
        memory = Memory(0.8, enable_fuzzing=False, **(sim.FSRS_STEPS if steps else sim.NO_STEPS))
        fast = bench.Scheduled(0.8, steps)
        state, t = None, 0.75
        for _ in range(20):
            rating = Rating(draws.choice([A, A, H, G, G, G, E]))
            state = memory.review(state, "x", rating, sim.START + timedelta(days=t))
            due = (due_from(state.due, state.last_review, timezone.utc) - sim.START) / timedelta(days=1)
            assert fast.answer("x", t, rating) == pytest.approx(due, abs=1e-6)
            assert fast.cards["x"][2] == pytest.approx(state.stability)
            assert fast.cards["x"][3] == pytest.approx(state.difficulty)
            t = due if draws.random() < 0.5 else max(due, t) + draws.choice([0.01, 0.3, 1.2, 3.7])


def _entry(item: str, day: int, minute: int, rating: Rating, seconds: float) -> LogEntry:
    at = datetime(2026, 3, 1, 20, tzinfo=timezone.utc) + timedelta(days=day, minutes=minute)
    return LogEntry(item, rating, at, int(seconds * 1000))


def test_the_log_s_times_are_counted_by_state_as_fsrs_rs_counts_them() -> None:
    log = [
        *(_entry("a", 0, m, r, s) for m, r, s in ((0, A, 10), (1, G, 8), (11, G, 6))),  # learning
        *(_entry("a", 2, m, r, s) for m, r, s in ((0, A, 12), (10, G, 9))),  # a lapse, then relearning
        *(_entry("b", 0, m, G, 5) for m in (0, 10)),  # learning
        _entry("b", 3, 0, G, 7),  # a recalled review
    ]
    costs = bench.log_costs(log, timezone.utc, 4)
    assert costs.seconds == (
        (10.0, 6.0, 6.0, 6.0),
        (12.0, 7.0, 7.0, 7.0),
        (9.0, 9.0, 9.0, 9.0),
    )  # Good's where none
    weight = 2 / 52  # fsrs-rs smooths towards its defaults by n / (50 + n)
    assert costs.first == pytest.approx(
        tuple(
            weight * m + (1 - weight) * d for m, d in zip((0.5, 0, 0.5, 0), bench.FSRS_RS.first, strict=True)
        )
    )
    assert (costs.learning_steps, costs.relearning_steps) == (2, 1)


def test_the_least_cost_and_the_retentions_near_it_on_a_made_up_curve() -> None:
    curve = bench.Curve(
        "m", "c", {0.70: 110.0, 0.71: 101.0, 0.72: 100.0, 0.73: 102.5, 0.74: 104.0, 0.75: 101.5}, {}
    )
    assert curve.least == 0.72
    assert bench.spans(curve.within(0.02)) == "0.71-0.72, 0.75"
    assert bench.spans(curve.within(0.03)) == "0.71-0.73, 0.75"
    assert curve.relative(0.74) == pytest.approx(1.04)
    assert bench.Curve("m", "c", {0.80: 1.0, 0.81: 1.0}, {}).least == 0.80  # a tie: the lower


def test_the_default_is_0_85_unless_the_course_s_own_times_find_the_least_higher() -> None:
    own = bench.course_costs(bench.FSRS_RS).label

    def curve(costs: str, least: float) -> object:
        return bench.Curve("m", costs, {0.70: 2.0, least: 1.0}, {})

    assert bench.chosen_default([curve(own, 0.74), curve(bench.FSRS_RS.label, 0.90)]) == 0.85
    assert bench.chosen_default([curve(own, 0.74), curve(own, 0.88)]) == 0.88


def test_the_readme_block() -> None:
    figures = {
        "learners": 2,
        "questions": 3,
        "default": 0.85,
        "fsrs_compute_optimal_retention": 0.9,
        "charges": [{"costs": "the course's, no steps", "lapse": 30.0, "recalled": 12.0}],
        "scenarios": [
            {
                "memory": "ACT-R model",
                "costs": "the course's, no steps",
                "least": 0.7,
                "seconds": 117,
                "within_2": "0.70-0.71",
                "within_3": "0.70-0.72",
                "curve": {"0.70": 1.0, "0.77": 1.0604, "0.85": 1.1831, "0.90": 1.3236},
            }
        ],
    }
    assert bench.readme_block(figures) == (
        "  | memory | answer times | least cost at | within 2% | within 3% | 0.77 | 0.85 | 0.90 |\n"
        "  |---|---|---|---|---|---|---|---|\n"
        "  | ACT-R model | the course's, no steps | **0.70** (117 s) | 0.70-0.71 | 0.70-0.72 | "
        "1.06 | 1.18 | 1.32 |\n"
        "\n"
        "  Least cost: seconds of answers per question remembered at day 365 (2 learners x 3 questions per "
        "memory); the last columns, the cost at that retention relative to the least. A lapse, relearning "
        "included, against a recalled review: the course's, no steps: 30.0 s against 12.0 s. fsrs's own "
        "`compute_optimal_retention`: 0.90. The course's default: **0.85**.\n"
    )


QUESTIONS = [("q1", "00"), ("q2", "00"), ("q3", "01")]


def test_every_answer_of_a_simulated_year_is_charged_once() -> None:
    learner = sim.Learner.make(0, QUESTIONS)
    ones = replace(bench.course_costs(TINY), seconds=((1.0,) * 4,) * 3)  # no steps, 1 s an answer
    fsrs = bench.Fsrs(Memory().parameters)
    year = bench.fsrs_year(fsrs, 0.8, ones, learner)
    assert year.seconds == year.reviews + len(QUESTIONS)  # one answer a review, and the first answers
    assert bench.fsrs_year(fsrs, 0.8, ones, learner) == year  # seeded
    scheduler = bench.Scheduled(0.8, steps=False)
    outcome = sim.simulate(learner, sim.ExponentialModel(), scheduler)
    assert sum(scheduler.counts[bench.LEARNING]) == len(QUESTIONS)
    assert sum(scheduler.counts[bench.REVIEW]) == outcome.reviews
    assert bench.charge(scheduler.counts, ones) == outcome.reviews + len(QUESTIONS)
