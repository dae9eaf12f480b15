"""The parts of ``benchmarks/retention_sim.py``: the memory models' calibration, the baselines' rules, reading
curves at matched retention, and a deterministic simulated year."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from scheduler import Memory, Rating

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "retention_sim.py"
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


def test_a_family_is_read_at_a_retention_between_its_points_and_never_outside_them():
    curve = [sim.Point("a", "f", 0.80, 0, 100.0, 0, 0), sim.Point("b", "f", 0.90, 0, 200.0, 0, 0)]
    assert sim.reviews_at(curve, 0.85) == pytest.approx(150.0)
    assert sim.reviews_at(curve, 0.80) == 100.0
    assert sim.reviews_at(curve, 0.95) is None
    baseline = [sim.Point("c", "g", 0.85, 0, 120.0, 0, 0), sim.Point("d", "g", 0.99, 0, 50.0, 0, 0)]
    assert sim.matched(baseline, curve) == (pytest.approx(0.8), 0.85)


def test_the_course_scheduler_switches_to_preset_parameters_on_their_day_keeping_due_dates():
    fitted = tuple(p * 1.1 if i in (0, 1, 2, 3) else p for i, p in enumerate(Memory().parameters))
    course = sim.Course(0.9, steps=False, preset=(5, fitted))
    due = course.first("q", 0.75, G)
    course.day_starts(4)
    assert course.memory.parameters == Memory().parameters
    course.day_starts(5)
    assert course.memory.parameters == pytest.approx(fitted)
    assert (course.states["q"].due - sim.START).total_seconds() / 86400 == pytest.approx(due)
    assert course.fitted == (5, fitted)


def test_a_simulated_year_is_deterministic_and_counts_every_answer_after_the_first():
    questions = [("00-a", "00"), ("00-b", "00"), ("01-a", "01")]
    learner = sim.Learner.make(3, questions)
    first = sim.simulate(learner, sim.ExponentialModel(), sim.Sm2(1.0, published=True))
    again = sim.simulate(sim.Learner.make(3, questions), sim.ExponentialModel(), sim.Sm2(1.0, published=True))
    assert first == again
    assert len(first.retention) == len(sim.CHECK_DAYS)
    assert all(0.0 < r <= 1.0 for r in first.retention)
    fixed = sim.simulate(learner, sim.ExponentialModel(), sim.Fixed(30))
    lessons = {day: ids for day, ids in learner.lessons.items()}
    assert sorted(q for ids in lessons.values() for q in ids) == ["00-a", "00-b", "01-a"]
    assert fixed.same_day == 0 and 30 <= fixed.reviews <= 36  # three questions every 30 days, days skipped
