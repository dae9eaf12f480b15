"""Predicted recall against what happened: the scores of ``scheduler.predictions`` (srs-benchmark's log loss,
RMSE (bins) and AUC, and a calibration error over 20 bins), srs-benchmark's time-series split, the learner's
days, and ``python -m course stats --calibration``."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from pathlib import Path

import pytest
from fixed_clock import T0, UTC
from store_helpers import AGAIN, GOOD, exact_store

from course.progress import calibration_report
from scheduler import (
    CALIBRATION_BINS,
    FsrsPredictor,
    Item,
    LogEntry,
    Memory,
    Prediction,
    Scores,
    Settings,
    Store,
    auc,
    bins,
    calibration_error,
    log_loss,
    predictions,
    rmse_bins,
    score,
    time_series_split,
)
from scheduler._calibration import _benchmark_bin
from scheduler._memory import DEFAULT_PARAMETERS

T = datetime(2025, 1, 1, tzinfo=UTC)
FOUR = [  # features: elapsed learner's days, place in the item's history, lapses before
    Prediction("a", T, 0.9, True, 1, 2, 0),
    Prediction("b", T, 0.7, False, 2, 3, 0),
    Prediction("c", T, 0.6, True, 4, 2, 1),
    Prediction("d", T, 0.5, False, 30, 8, 3),
]
MOUNTAIN = timezone(timedelta(hours=-7))  # the day starts at 04:00 local, 11:00 UTC


def local(day: int, hour: int, minute: int = 0) -> datetime:
    """2025-01-(1 + day) at hour:minute, UTC-7."""
    return datetime(2025, 1, 1 + day, hour, minute, tzinfo=MOUNTAIN)


def test_srs_benchmark_bins_each_answer_by_its_days_place_and_lapses() -> None:
    # delta_t: 2.48 * 3.62 ** floor(log(t) / log(3.62)), to 2 places; i: 1.99 * 1.89 ** floor(...), to 0;
    # lapses: 1.65 * 1.73 ** floor(...), to 0, or 0 for none
    assert [_benchmark_bin(x) for x in FOUR] == [
        (2.48, 4.0, 0.0),  # 1 day -> 2.48; i = 2 -> 1.99 * 1.89 = 3.76 -> 4
        (2.48, 4.0, 0.0),  # 2 days -> 2.48 too; i = 3 -> 4 too
        (8.98, 4.0, 2.0),  # 4 days -> 2.48 * 3.62 = 8.98; 1 lapse -> 1.65 -> 2
        (32.5, 13.0, 5.0),  # 30 days -> 2.48 * 3.62**2 = 32.50; i = 8 -> 13.4 -> 13; 3 lapses -> 4.94 -> 5
    ]


def test_the_scores_of_four_predictions() -> None:
    assert log_loss(FOUR) == pytest.approx(
        -(math.log(0.9) + math.log(0.3) + math.log(0.6) + math.log(0.5)) / 4
    )
    # srs-benchmark's bins: a and b together (mean 0.8, recalled 0.5), c alone (0.6, 1), d alone (0.5, 0)
    assert rmse_bins(FOUR) == pytest.approx(math.sqrt((2 * 0.3**2 + 0.4**2 + 0.5**2) / 4))
    # 20 equal bins of predicted recall: each alone
    assert calibration_error(FOUR) == pytest.approx(math.sqrt((0.1**2 + 0.7**2 + 0.4**2 + 0.5**2) / 4))
    assert calibration_error(FOUR, 2) == pytest.approx(0.675 - 0.5)  # 2 bins: all four in [0.5, 1]
    assert auc(FOUR) == 0.75  # recalled 0.9 above both forgotten, recalled 0.6 above 0.5 but below 0.7
    assert [(b.low, b.count, b.predicted, b.recalled) for b in bins(FOUR)] == [
        (0.5, 1, 0.5, 0.0),
        (0.6, 1, 0.6, 1.0),
        (0.7, 1, 0.7, 0.0),
        (0.9, 1, 0.9, 1.0),
    ]
    assert CALIBRATION_BINS == 20
    assert [(b.low, b.high, b.count, b.recalled) for b in bins(FOUR, 2)] == [(0.5, 1.0, 4, 0.5)]
    assert score(FOUR) == Scores(4, log_loss(FOUR), rmse_bins(FOUR), calibration_error(FOUR), 0.75)
    tie = [FOUR[0], FOUR[1], FOUR[1]._replace(p=0.9)]
    assert auc(tie) == 0.75  # one pair ordered right, one tie (0.9, 0.9) counting a half
    assert log_loss([FOUR[0]._replace(p=1.0, recalled=False)]) == pytest.approx(-math.log(1e-4))  # clipped
    with pytest.raises(ValueError, match="both recalled and forgotten"):
        auc(FOUR[:1])


def test_without_both_outcomes_auc_is_none_and_nothing_cannot_be_scored() -> None:
    recalled = [FOUR[0], FOUR[2]]
    assert score(recalled).auc is None and score(recalled).answers == 2
    assert score([FOUR[1]]).auc is None
    with pytest.raises(ValueError, match="no predictions to score"):
        score([])


LOG = [  # item a, in UTC-7 with the day starting at 04:00
    LogEntry("a", GOOD, local(0, 10), None),
    LogEntry("a", AGAIN, local(0, 13), None),  # the same day: feeds the history, not scored, not a lapse
    LogEntry("a", GOOD, local(2, 23), None),  # 2 days
    LogEntry("a", AGAIN, local(3, 9), None),  # 10 hours later, but the next day: scored, a lapse
    LogEntry("b", GOOD, local(0, 5), None),
    LogEntry("b", GOOD, local(1, 3), None),  # 22 hours later, but the same learner's day (03:00 < 04:00)
    LogEntry("b", GOOD, local(1, 5), None),  # 2 hours later, but the next day
    LogEntry("a", GOOD, local(5, 8), None),  # 2 days
]


def test_answers_on_a_later_learners_day_are_scored_with_their_features_and_all_feed_the_history() -> None:
    memory = Memory(tz=MOUNTAIN, rollover_hour=4)
    found = predictions(LOG, FsrsPredictor(memory), MOUNTAIN, 4)
    assert [(x.item_id, x.at, x.recalled, x.elapsed_days, x.i, x.lapses) for x in found] == [
        ("b", local(1, 5), True, 1, 3, 0),
        ("a", local(2, 23), True, 2, 3, 0),
        ("a", local(3, 9), False, 1, 4, 0),
        ("a", local(5, 8), True, 2, 5, 1),
    ]  # in time order
    state = memory.review(memory.review(None, "a", GOOD, local(0, 10)), "a", AGAIN, local(0, 13))
    assert found[1].p == memory.retrievability(state, local(2, 23))  # after the same-day Again
    in_utc = predictions(LOG, FsrsPredictor(Memory()))  # days from 04:00 UTC, 21:00 the evening before here
    assert [(x.item_id, x.at, x.elapsed_days, x.i, x.lapses) for x in in_utc] == [
        ("b", local(1, 3), 1, 2, 0),  # 10:00 UTC, the day after 12:00 UTC; 12:00 UTC then the same day
        ("a", local(2, 23), 3, 3, 0),  # 06:00 UTC
        ("a", local(5, 8), 2, 5, 0),  # the Again at 16:00 UTC was on the same UTC day: no lapse
    ]


def test_srs_benchmarks_split_is_sklearns_time_series_split() -> None:
    # TimeSeriesSplit(n_splits=5) on 20 samples: test folds of 20 // 6 = 3, the last 15
    assert time_series_split(20) == [range(5, 8), range(8, 11), range(11, 14), range(14, 17), range(17, 20)]
    assert time_series_split(6) == [range(k, k + 1) for k in range(1, 6)]
    assert time_series_split(7, 2) == [range(3, 5), range(5, 7)]
    with pytest.raises(ValueError, match="5 answers are too few for 5 splits: they need at least 6"):
        time_series_split(5)
    with pytest.raises(ValueError, match="splits must be an int of 2 or more, got 1"):
        time_series_split(10, 1)


BANK = [Item(f"q{k}", "a") for k in range(120)]


def _answered(store: Store, count: int) -> None:
    for k, item in enumerate(BANK):
        store.record(item.id, GOOD, T0)
        if k < count:
            store.record(item.id, AGAIN if k % 4 == 0 else GOOD, T0 + timedelta(days=1 + k % 20))


def test_stats_calibration_says_how_many_reviews_it_needs_then_shows_the_bins_it_scores(db: Path) -> None:
    with exact_store(db) as store:
        _answered(store, 99)
        assert calibration_report(store, BANK) == (
            "Calibration: needs 100 reviews answered on a later day than the question's previous answer; "
            "you have 99 (1 to go)."
        )
        store.record("q99", GOOD, T0 + timedelta(days=30))
        report = calibration_report(store, BANK)
        assert report == (
            "Calibration: the recall FSRS's default parameters predict for each review, from the answers "
            "before it,\n"
            "against what happened, over 100 reviews answered on a later day than the question's previous "
            "answer,\n"
            "in 20 bins of predicted recall (empty ones not shown):\n"
            "  predicted  reviews  predicted  recalled\n"
            "  65-70%           1      66.8%    100.0%\n"
            "  70-75%          39      72.7%     74.4%\n"
            "  75-80%          25      77.5%     80.0%\n"
            "  80-85%          15      82.3%     66.7%\n"
            "  85-90%          10      86.9%    100.0%\n"
            "  90-95%          10      92.8%     50.0%\n"
            "  Calibration error (these 20 bins) 0.158. RMSE (bins) 0.141: srs-benchmark's, over bins of\n"
            "  days since the previous answer, answer number and lapses. Log loss 0.636. AUC 0.400."
        )
        # the table's bins are the calibration error's: its root of the count-weighted mean squared gap
        gaps = [(1, 0.668, 1.0), (39, 0.727, 0.744), (25, 0.775, 0.8), (15, 0.823, 0.667)]
        gaps += [(10, 0.869, 1.0), (10, 0.928, 0.5)]
        assert math.sqrt(sum(n * (p - r) ** 2 for n, p, r in gaps) / 100) == pytest.approx(0.158, abs=5e-4)
        assert calibration_report(store, BANK[100:]).endswith("you have 0 (100 to go).")


def test_stats_calibration_after_optimize_says_it_is_in_sample(db: Path) -> None:
    fitted = (0.3, 1.5, 2.5, 9.0, *tuple(DEFAULT_PARAMETERS)[4:])
    with exact_store(db) as store:
        _answered(store, 100)
        store.save_settings(Settings(None, fitted, T0 + timedelta(days=10, hours=1), 600), T0)
        report = calibration_report(store, BANK)
        assert report.startswith(
            "Calibration: the recall your fitted FSRS parameters predict for each review"
        )
        assert report.endswith(
            "\n  In-sample: your parameters were fitted (20 Mar 2025, optimize) to your reviews until then, "
            "and 50 of\n  these 100 came before that, so these scores flatter them."
        )
        store.save_settings(Settings(None, fitted, T0 - timedelta(days=1), 600), T0)
        assert calibration_report(store, BANK).endswith(
            "\n  None of these reviews came before your parameters were fitted (9 Mar 2025): out of sample."
        )
        store.save_settings(Settings(None, fitted), T0)
        assert calibration_report(store, BANK).endswith(
            "\n  If your parameters were fitted to these reviews, these scores flatter them (in-sample)."
        )


def _srs_benchmark_rmse_matrix(rows: list[dict[str, object]]) -> float:
    """srs-benchmark's ``rmse_matrix`` (open-spaced-repetition/srs-benchmark, utils.py), its weights all 1
    and sklearn's weighted RMSE written out: the reference ``rmse_bins`` is checked against."""
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    tmp = pd.DataFrame(rows)

    def count_lapse(r_history: str, t_history: str) -> int:
        lapse = 0
        for r, t in zip(r_history.split(","), t_history.split(","), strict=True):
            if t != "0" and r == "1":
                lapse += 1
        return lapse

    tmp["lapse"] = tmp.apply(lambda x: count_lapse(x["r_history"], x["t_history"]), axis=1)
    tmp["delta_t"] = tmp["elapsed_days"].map(
        lambda x: round(2.48 * np.power(3.62, np.floor(np.log(x) / np.log(3.62))), 2)
    )
    tmp["i"] = tmp["i"].map(lambda x: round(1.99 * np.power(1.89, np.floor(np.log(x) / np.log(1.89))), 0))
    tmp["lapse"] = tmp["lapse"].map(
        lambda x: round(1.65 * np.power(1.73, np.floor(np.log(x) / np.log(1.73))), 0) if x != 0 else 0
    )
    tmp["weights"] = 1
    tmp = (
        tmp.groupby(["delta_t", "i", "lapse"]).agg({"y": "mean", "p": "mean", "weights": "sum"}).reset_index()
    )
    return float(np.sqrt(np.sum(tmp["weights"] * (tmp["y"] - tmp["p"]) ** 2) / np.sum(tmp["weights"])))


def test_rmse_bins_is_srs_benchmarks_rmse_matrix_on_a_random_log() -> None:
    rng = random.Random(20250101)
    log = [
        LogEntry(
            f"q{k}", rng.choice([AGAIN, GOOD, GOOD, GOOD]), T + timedelta(hours=rng.uniform(0, 24 * 90)), None
        )
        for k in range(60)
        for _ in range(rng.randint(1, 14))
    ]
    found = predictions(log, FsrsPredictor(Memory()))  # UTC, from 04:00
    p = {(x.item_id, x.at): x.p for x in found}
    rows: list[dict[str, object]] = []
    for item in sorted({e.item_id for e in log}):
        history = sorted((e for e in log if e.item_id == item), key=lambda e: e.reviewed_at)
        days = [(e.reviewed_at - timedelta(hours=4)).date().toordinal() for e in history]
        gaps = ["0"] + [str(b - a) for a, b in pairwise(days)]  # t_history: the first answer's is 0
        for j in range(1, len(history)):
            if days[j] > days[j - 1]:
                rows.append(
                    {
                        "r_history": ",".join(str(int(e.rating)) for e in history[:j]),
                        "t_history": ",".join(gaps[:j]),
                        "elapsed_days": days[j] - days[j - 1],
                        "i": j + 1,
                        "y": int(history[j].rating != AGAIN),
                        "p": p[item, history[j].reviewed_at],
                    }
                )
    assert len(rows) == len(found) > 200
    assert rmse_bins(found) == pytest.approx(_srs_benchmark_rmse_matrix(rows), abs=1e-12)
