"""The parts of ``benchmarks/retention_sim.py``: the memory models' calibration, the baselines' rules, reading
curves at matched retention, and a deterministic simulated year."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from scheduler import Memory, Rating

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "retention_sim.py"
_SPEC = importlib.util.spec_from_file_location("retention_sim", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
sim = importlib.util.module_from_spec(_SPEC)
sys.modules["retention_sim"] = sim  # dataclasses look their module up by name
_SPEC.loader.exec_module(sim)

G, H, A, E = Rating.GOOD, Rating.HARD, Rating.AGAIN, Rating.EASY


@pytest.mark.parametrize("model", [sim.ExponentialModel(), sim.ActrModel()], ids=lambda m: m.name)
def test_each_memory_model_is_calibrated_to_recall_a_day_and_a_week_after_one_exposure(model):
    assert model.fit == (pytest.approx(0.75, abs=1e-9), pytest.approx(0.55, abs=1e-9))


def test_the_calibrated_constants_are_the_documented_ones():
    assert sim.ExponentialModel().constants() == "S0 = 18.86 d, spread = 3.29, GAIN = 12, LAPSE = 0.5"
    assert sim.ActrModel().constants() == "tau = -2.43, spread = 0.45, C = 0.217, ALPHA = 0.177, S = 0.255"


def test_the_exponential_model_gains_more_from_a_harder_recall_and_relearns_faster_each_lapse():
    model = sim.ExponentialModel()
    state = [10.0, 0.0, 10.0]
    t = -10.0 * math.log(0.9)  # recall 0.9
    model.expose(state, t, recalled=True)
    assert state[:2] == [pytest.approx(10.0 * 2.2), t]
    massed = [10.0, 0.0, 10.0]
    model.expose(massed, 1e-6, recalled=True)
    assert massed[0] == pytest.approx(10.0, rel=1e-5)  # minutes later: nearly nothing gained
    lapsed = [40.0, 0.0, 1.0]
    model.expose(lapsed, 100.0, recalled=False)
    model.expose(lapsed, 101.0, recalled=False)
    assert lapsed == [10.0, 101.0, 4.0]  # half the stability, then the relearned floor doubles each lapse


def test_in_act_r_a_massed_trace_decays_faster_than_a_spaced_one():
    model = sim.ActrModel()
    massed, spaced = model.start(0.0, 0.0), model.start(0.0, 0.0)
    model.expose(massed, 1 / 1440, recalled=True)
    model.expose(spaced, 7.0, recalled=True)
    assert massed[-1] > spaced[-1] > model.ALPHA
    assert model.recall(spaced, 30.0) > model.recall(massed, 30.0)


def test_sm2_intervals_grow_1_6_then_by_the_e_factor_and_a_failure_restarts_them():
    sm2 = sim.Sm2(1.0, published=False)
    dues = [sm2.first("q", 0.75, G)] + [sm2.answer("q", day + 0.75, G) for day in (1, 7)]
    assert dues == [1, 7, 22]  # +1, +6, +15 (6 x 2.5)
    assert sm2.answer("q", 22.75, A) == 23 and sm2.cards["q"] == [0, 2.5, 1.0]
    assert sm2.answer("q", 23.75, E) == 24 and sm2.cards["q"][1] == pytest.approx(2.6)


def test_published_sm2_repeats_answers_below_good_the_same_day_without_changing_the_schedule():
    sm2 = sim.Sm2(1.0, published=True)
    again = sm2.first("q", 0.75, H)
    assert again == pytest.approx(0.75 + 5 / 1440)
    assert sm2.answer("q", again, H) == pytest.approx(again + 5 / 1440)
    assert sm2.answer("q", again + 0.01, G) == 1  # the due date decided by the Hard answer
    assert sm2.cards["q"][:2] == [1, pytest.approx(2.36)]


def test_leitner_moves_up_a_box_when_recalled_and_back_to_the_first_when_not():
    leitner = sim.Leitner(1.0)
    assert [leitner.answer("q", t, r) for t, r in ((0.5, G), (1.5, H), (3.5, G), (7.5, A))] == [1, 3, 7, 8]
    assert sim.Leitner(0.5).answer("q", 0.5, G) == 1  # never under a day
    assert sim.Fixed(7).answer("q", 3.9, A) == 10


def test_a_curve_is_read_between_its_points_and_never_outside_them():
    curve = [(0.80, 100.0), (0.90, 200.0), (0.95, 400.0)]
    assert sim.read_at(curve, 0.85) == pytest.approx(150.0)
    assert sim.read_at(curve, 0.925) == pytest.approx(300.0)
    assert sim.read_at(curve, 0.80) == 100.0
    assert sim.read_at(curve, 0.95) == 400.0
    assert sim.read_at(curve, 0.79) is None  # never extrapolated
    assert sim.read_at(curve, 0.96) is None
    assert sim.read_at([], 0.9) is None


def _outcome(label: str, family: str, learner: int, retention: float, reviews: int, minutes: float):
    return sim.Outcome(label, family, learner, [retention], reviews, 0, 0, minutes)


def test_a_family_is_read_at_the_references_retention_with_resampled_learners():
    reference = [_outcome("d", "c", 0, 0.90, 100, 10.0), _outcome("d", "c", 1, 0.90, 100, 10.0)]
    low = [_outcome("b1", "b", k, 0.85, 60, 6.0) for k in (0, 1)]
    high = [_outcome("b2", "b", k, 0.95, 100, 12.0) for k in (0, 1)]
    found = sim.matched([low, high], reference)
    assert (found.retention, found.reviews, found.minutes, found.final) == (
        0.90,
        pytest.approx(0.8),
        pytest.approx(0.9),
        pytest.approx(0.90),
    )
    assert found.reviews_ci == (pytest.approx(0.8), pytest.approx(0.8)) and found.outside == 0
    assert sim.matched([high], reference) is None  # 0.90 lies below its one point: out of range


def test_a_learner_never_fitted_has_no_personal_parameters_point():
    never = _outcome(sim.PERSONAL_LABEL, sim.PERSONAL, 0, 0.9, 100, 10.0)

    def rerun(retention: float):
        raise AssertionError("a learner without a fit is never rerun, nor relabelled")

    assert sim.personal_outcomes(never, rerun) == []
    fitted = sim.Outcome(sim.PERSONAL_LABEL, sim.PERSONAL, 0, [0.9], 100, 0, 0, 10.0, (60, (1.0,)))
    runs = sim.personal_outcomes(fitted, lambda r: _outcome(f"r={r:g}", sim.PERSONAL, 0, r, 1, 1.0))
    others = [f"r={r:g}" for r in sim.FIT_RETENTIONS if r != sim.DEFAULT_RETENTION]
    assert [o.label for o in runs] == [sim.PERSONAL_LABEL, *others] and len(runs) == len(sim.FIT_RETENTIONS)


def test_a_learners_points_in_each_family_are_over_the_same_learners():
    outcomes = [
        _outcome("a", "f", 0, 0.9, 1, 1.0),
        _outcome("a", "f", 1, 0.9, 1, 1.0),
        _outcome("b", "f", 0, 0.8, 1, 1.0),  # learner 1 has no point "b"
        _outcome("c", "g", 1, 0.8, 1, 1.0),
    ]
    grouped = sim._by_family(outcomes, [0, 1])
    learners = {name: [[o.learner for o in point] for point in points] for name, points in grouped.items()}
    assert learners == {"f": [[0, 1]]}
    assert [p.label for p in sim.summarize(outcomes)] == ["a", "b", "c"]


def test_the_course_is_due_on_the_learners_day_from_its_rollover():
    course = sim.Course(0.9, steps=False)
    assert course.first("q", 0.75, G) == pytest.approx(2 + 4 / 24)  # Good: due on day 2, from 04:00
    assert course.answer("q", 3.75, G) == pytest.approx(19 + 4 / 24)
    assert (course.states["q"].due - sim.START).total_seconds() / 86400 == pytest.approx(19.75)
    steps = sim.Course(0.9, steps=True)
    assert steps.first("q", 0.75, G) == pytest.approx(0.75 + 10 / 1440)  # a same-day step: its exact time


def test_every_scheduler_draws_the_same_random_numbers_for_a_questions_kth_answer():
    questions = [("00-a", "00"), ("00-b", "00"), ("01-a", "01")]
    learner = sim.Learner.make(3, questions)
    low, high = sim.Course(0.85, steps=False), sim.Course(0.95, steps=False)
    sim.simulate(learner, sim.ExponentialModel(), low)
    sim.simulate(learner, sim.ExponentialModel(), high)
    assert [int(r.rating) for r in low.log["00-a"][:14]] == [4, 1, 1, 1, 2, 3, 3, 3, 3, 1, 3, 2, 3, 2]
    assert [int(r.rating) for r in high.log["00-a"][:14]] == [4, 1, 1, 1, 2, 3, 3, 3, 3, 1, 3, 2, 3, 2]


def test_the_course_scheduler_switches_to_preset_parameters_on_their_day_keeping_due_dates():
    fitted = tuple(p * 1.1 if i in (0, 1, 2, 3) else p for i, p in enumerate(Memory().parameters))
    course = sim.Course(0.9, steps=False, preset=(5, fitted))
    due = course.first("q", 0.75, G)
    course.day_starts(4)
    assert course.memory.parameters == Memory().parameters
    course.day_starts(5)
    assert course.memory.parameters == pytest.approx(fitted)
    assert (course.states["q"].due - sim.START).total_seconds() / 86400 == pytest.approx(2.75)  # kept
    assert due == pytest.approx(2 + 4 / 24)  # due on its day, from the rollover
    assert course.fitted == (5, fitted)


def test_a_simulated_year_is_deterministic_and_counts_every_answer_after_the_first():
    questions = [("00-a", "00"), ("00-b", "00"), ("01-a", "01")]
    learner = sim.Learner.make(3, questions)
    first = sim.simulate(learner, sim.ExponentialModel(), sim.Sm2(1.0, published=True))
    again = sim.simulate(sim.Learner.make(3, questions), sim.ExponentialModel(), sim.Sm2(1.0, published=True))
    assert first == again and first.learner == 3
    assert len(first.retention) == len(sim.CHECK_DAYS)
    assert all(0.0 < r <= 1.0 for r in first.retention)
    fixed = sim.simulate(learner, sim.ExponentialModel(), sim.Fixed(30))
    lessons = {day: ids for day, ids in learner.lessons.items()}
    assert sorted(q for ids in lessons.values() for q in ids) == ["00-a", "00-b", "01-a"]
    assert fixed.same_day == 0 and 30 <= fixed.reviews <= 36  # three questions every 30 days, days skipped
