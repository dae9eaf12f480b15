"""The parts of ``benchmarks/prediction_bench.py``: the baselines read as recall models, the log readers and
the time-ordered evaluation, on tiny logs."""

from __future__ import annotations

import importlib.util
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from scheduler import LogEntry, Rating

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "prediction_bench.py"
_SPEC = importlib.util.spec_from_file_location("prediction_bench", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["prediction_bench"] = bench
_SPEC.loader.exec_module(bench)

T = datetime(2025, 1, 1, 18, tzinfo=timezone.utc)
G, A = Rating.GOOD, Rating.AGAIN


def day(n: float) -> datetime:
    return T + timedelta(days=n)


def test_sm2_read_as_recall_is_0_9_when_an_interval_ends_and_moves_once_a_day() -> None:
    history = [(day(0), G), (day(0.01), A), (day(1), G), (day(7), G), (day(29.5), A), (day(30.5), G)]
    found = bench.Sm2().item("q", history)
    assert found[0] == pytest.approx(0.9 ** (0.01 / 1))  # the same day: read, but the card does not move
    assert found[1:4] == [pytest.approx(0.9), pytest.approx(0.9), pytest.approx(0.9**1.5)]  # 1, 6, 15 days
    assert found[4] == pytest.approx(0.9)  # Again restarts at 1 day


def test_leitner_read_as_recall_moves_up_a_box_and_back_to_the_first() -> None:
    history = [(day(0), G), (day(1), G), (day(3), G), (day(7), A), (day(8), G)]
    assert bench.Leitner().item("q", history) == [
        pytest.approx(0.9),
        pytest.approx(0.9),
        pytest.approx(0.9),
        pytest.approx(0.9),
    ]
    assert bench.Constant(0.7).item("q", history) == [0.7] * 4


def test_a_csv_log_in_py_fsrs_format_is_read(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(
        "card_id,review_rating,review_time,review_duration\n1,3,2024-03-29T20:32:32.250000+00:00,25060\n"
    )
    assert bench.read_log(path) == [
        LogEntry("1", G, datetime(2024, 3, 29, 20, 32, 32, 250000, tzinfo=timezone.utc), 25060)
    ]


def test_a_log_too_short_to_fit_says_so_and_the_others_are_scored() -> None:
    log = [LogEntry(f"q{k}", G, day(k % 3), None) for k in range(12)]
    log += [LogEntry(f"q{k}", A if k % 3 == 0 else G, day(5 + k % 4), None) for k in range(12)]
    results, scored = bench.evaluate(log, 2)
    assert scored == 6
    assert results[bench.MODELS[1]] == "not fitted: 6 of 512 reviews before part 2"
    constant = results[bench.MODELS[4]]
    assert not isinstance(constant, str) and constant.answers == 6 and constant.auc == 0.5
    assert (
        bench.table(results)[2]
        == "   FSRS-6, fitted to the earlier part   not fitted: 6 of 512 reviews before part 2"
    )
