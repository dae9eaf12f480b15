"""Predicted recall against what happened: the scores of ``scheduler.predictions`` (srs-benchmark's log loss,
RMSE over bins and AUC), time-ordered splits, and ``python -m course stats --calibration``."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fixed_clock import T0, UTC
from store_helpers import AGAIN, GOOD, exact_store

from course.progress import calibration_report
from scheduler import (
    FsrsPredictor,
    Item,
    LogEntry,
    Memory,
    Prediction,
    Scores,
    auc,
    bins,
    log_loss,
    predictions,
    rmse_bins,
    score,
    split_times,
)

T = datetime(2025, 1, 1, tzinfo=UTC)
FOUR = [
    Prediction("a", T, 0.8, True),
    Prediction("b", T, 0.4, False),
    Prediction("c", T, 0.8, False),
    Prediction("d", T, 0.95, True),
]
LOG = [
    LogEntry("a", GOOD, T, None),
    LogEntry("a", AGAIN, T + timedelta(hours=3), None),  # the same day: feeds the history, not scored
    LogEntry("a", GOOD, T + timedelta(days=2), None),
    LogEntry("b", GOOD, T + timedelta(hours=1), None),
    LogEntry("b", AGAIN, T + timedelta(days=1, hours=1), None),
    LogEntry("a", GOOD, T + timedelta(days=5), None),
]


def test_the_scores_of_four_predictions() -> None:
    assert log_loss(FOUR) == pytest.approx(
        -(math.log(0.8) + math.log(0.6) + math.log(0.2) + math.log(0.95)) / 4
    )
    # 20 bins: 0.4 alone (recalled 0), 0.8 twice (recalled 0.5), 0.95 alone (recalled 1)
    assert rmse_bins(FOUR) == pytest.approx(math.sqrt((0.4**2 + 2 * 0.3**2 + 0.05**2) / 4))
    assert auc(FOUR) == 0.875  # 3 pairs ordered right, one tie (0.8, 0.8) counting a half
    assert [(b.low, b.count, b.predicted, b.recalled) for b in bins(FOUR)] == [
        (0.4, 1, 0.4, 0.0),
        (0.8, 2, 0.8, 0.5),
        (0.9, 1, 0.95, 1.0),
    ]
    assert score(FOUR) == Scores(4, log_loss(FOUR), rmse_bins(FOUR), 0.875)
    assert log_loss([Prediction("a", T, 1.0, False)]) == pytest.approx(-math.log(1e-4))  # clipped
    with pytest.raises(ValueError, match="both recalled and forgotten"):
        auc(FOUR[:1])


def test_only_answers_a_day_or_more_after_the_previous_one_are_scored_and_all_feed_the_history() -> None:
    found = predictions(LOG, FsrsPredictor(Memory()))
    assert [(x.item_id, x.at, x.recalled) for x in found] == [
        ("a", T + timedelta(days=2), True),
        ("a", T + timedelta(days=5), True),
        ("b", T + timedelta(days=1, hours=1), False),
    ]
    memory = Memory()
    state = memory.review(memory.review(None, "a", GOOD, T), "a", AGAIN, T + timedelta(hours=3))
    assert found[0].p == memory.retrievability(state, T + timedelta(days=2))  # after the same-day Again
    later = predictions(LOG, FsrsPredictor(Memory()), start=T + timedelta(days=2), end=T + timedelta(days=5))
    assert [x.at for x in later] == [T + timedelta(days=2)]


def test_time_ordered_splits_cut_the_scored_answers_into_equal_parts() -> None:
    assert split_times(LOG, 2) == [T + timedelta(days=2)]
    assert split_times(LOG, 3) == [T + timedelta(days=2), T + timedelta(days=5)]
    with pytest.raises(ValueError, match="3 scored answers cannot be cut into 4 parts"):
        split_times(LOG, 4)


def test_stats_calibration_says_how_many_reviews_it_needs_then_shows_bins(db: Path) -> None:
    bank = [Item(f"q{k}", "a") for k in range(120)]
    with exact_store(db) as store:
        for k, item in enumerate(bank):
            store.record(item.id, GOOD, T0)
            if k < 99:
                store.record(item.id, AGAIN if k % 4 == 0 else GOOD, T0 + timedelta(days=1 + k % 20))
        assert calibration_report(store, bank) == (
            "Calibration: needs 100 reviews answered a day or more after the question's previous answer; "
            "you have 99 (1 to go)."
        )
        store.record("q99", GOOD, T0 + timedelta(days=30))
        assert calibration_report(store, bank) == (
            "Calibration: the recall the schedule predicted (its current FSRS parameters) against what "
            "happened,\n"
            "over 100 reviews answered a day or more after the question's previous answer:\n"
            "  predicted  reviews  predicted  recalled\n"
            "  60-70%           1      66.8%    100.0%\n"
            "  70-80%          64      74.6%     76.6%\n"
            "  80-90%          25      84.2%     80.0%\n"
            "  90-100%         10      92.8%     50.0%\n"
            "  Log loss 0.636, RMSE over bins 0.158, AUC 0.400."
        )
        assert calibration_report(store, bank[100:]).endswith("you have 0 (100 to go).")
