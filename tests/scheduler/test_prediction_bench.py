"""The parts of ``benchmarks/prediction_bench.py``: the baselines read as recall models on the learner's days,
the log readers, the time-series evaluation, what it prints for logs it cannot evaluate (a sentence, not a
traceback), and the README's table made from its results."""

from __future__ import annotations

import importlib.util
import math
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

MOUNTAIN = timezone(timedelta(hours=-7))  # the bench's default day: from 04:00 at UTC-7, 11:00 UTC
G, A = Rating.GOOD, Rating.AGAIN
HEADER = "card_id,review_rating,review_time,review_duration\n"
DAYS = (
    "Days: the learner's, taken to start at 04:00 at UTC-07:00 (11:00 UTC; the log gives no time zone); 0 "
    "answers fall between 06:00 and 15:00 UTC, so any rollover in that span splits the days alike."
)
TABLE_HEAD = "   model                            log loss RMSE (bins) calibration error (20 bins)   AUC"


def local(day: int, hour: int) -> datetime:
    """2025-01-(1 + day) at hour:00, UTC-7."""
    return datetime(2025, 1, 1 + day, hour, tzinfo=MOUNTAIN)


def test_sm2_read_as_recall_counts_learners_days_and_moves_on_each_days_first_answer() -> None:
    history = [(local(0, 10), G), (local(0, 20), A), (local(1, 9), G), (local(7, 3), G), (local(22, 5), A)]
    history += [(local(23, 5), G)]
    assert bench.Sm2(MOUNTAIN, 4).item("q", history) == [
        1.0,  # the same day: 0 days; the card does not move
        pytest.approx(0.9),  # 23 hours later, the next day: 1 day of 1
        pytest.approx(0.9 ** (5 / 6)),  # 03:00 is still day 6: 5 days of 6
        pytest.approx(0.9 ** (16 / 15)),  # 16 days of 6 * 2.5
        pytest.approx(0.9),  # Again restarts at 1 day
    ]


def test_leitner_read_as_recall_moves_up_a_box_and_back_to_the_first() -> None:
    history = [(local(0, 10), G), (local(1, 9), G), (local(3, 3), G), (local(6, 12), A), (local(7, 12), G)]
    assert bench.Leitner(MOUNTAIN, 4).item("q", history) == [
        pytest.approx(0.9),
        pytest.approx(0.9 ** (1 / 2)),  # 03:00 on the 4th is the 3rd's day: 1 day of 2
        pytest.approx(0.9),  # 4 days of 4
        pytest.approx(0.9),
    ]
    assert bench.Constant(0.7).item("q", history) == [0.7] * 4


def test_a_csv_log_in_py_fsrs_format_is_read(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(HEADER + "1,3,2024-03-29T20:32:32.250000+00:00,25060\n2,1,2024-03-29T13:32:32-07:00,\n")
    assert bench.read_log(path) == [
        LogEntry("1", G, datetime(2024, 3, 29, 20, 32, 32, 250000, tzinfo=timezone.utc), 25060),
        LogEntry("2", A, datetime(2024, 3, 29, 20, 32, 32, tzinfo=timezone.utc), None),
    ]


def _log(path: Path, rows: list[tuple[str, int, datetime]]) -> Path:
    path.write_text(HEADER + "".join(f"{card},{rating},{at.isoformat()},1000\n" for card, rating, at in rows))
    return path


def _main(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, list[str]]:
    status = bench.main([str(arg) for arg in argv])
    return status, capsys.readouterr().out.splitlines()


def test_a_log_too_short_to_fit_says_so_and_the_others_are_scored() -> None:
    log = [LogEntry(f"q{k}", G, local(k % 3, 12), None) for k in range(12)]
    log += [LogEntry(f"q{k}", A if k % 3 == 0 else G, local(5 + k % 4, 12), None) for k in range(12)]
    evaluation = bench.evaluate(log, 2, MOUNTAIN, 4)  # the first fold starts on day 6: 3 scored before it
    assert evaluation.folds == [range(4, 8), range(8, 12)]  # 12 scored: 2 folds of 12 // 3
    assert evaluation.results[bench._NAMES[1]] == "not fitted: 3 of 512 reviews before test fold 1"
    constant = evaluation.results[bench._NAMES[4]]
    assert not isinstance(constant, str) and constant.answers == 8
    assert (
        bench.table(evaluation.results)[2]
        == "   FSRS-6, fitted before each fold  not fitted: 3 of 512 reviews before test fold 1"
    )


def test_one_card_is_evaluated_over_its_own_days(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ratings = [3, 3, 1, 3, 3, 1, 3]  # one answer a day at 11:00 local: 6 scored, 5 folds of one
    path = _log(tmp_path / "one.csv", [("c", r, local(day, 11)) for day, r in enumerate(ratings)])
    status, lines = _main(capsys, path)
    assert status == 0
    assert lines[:3] == [
        f"== {path}: 7 answers of 1 item (5 not Again)",
        DAYS,
        "Split: srs-benchmark's, sklearn's TimeSeriesSplit(n_splits=5) over the 6 scored answers "
        "(each on a later learner's day than its item's previous one) in time order: the first 1 only "
        "train; then 5 test folds of 1, each predicted by models trained on every answer before it, 5 "
        "answers scored together.",
    ]
    assert lines[3:] == [
        TABLE_HEAD,
        "   FSRS-6, default parameters          1.567       0.492                       0.498 0.000",
        "   FSRS-6, fitted before each fold  not fitted: 1 of 512 reviews before test fold 1",
        "   SM-2                                1.684       0.486                       0.626 0.000",
        "   Leitner boxes                       1.377       0.477                       0.463 0.083",
        "   constant                            2.441       0.482                       0.646 0.000",
    ]
    # The constant, by hand: the share recalled among the scored answers before each fold, 1, 1/2, 2/3, 3/4,
    # 3/5, against A G G A G: every forgotten answer predicted above every recalled one (AUC 0).
    p, y = [1.0, 1 / 2, 2 / 3, 3 / 4, 3 / 5], [0, 1, 1, 0, 1]
    losses = [-math.log(q if r else 1 - min(q, 1 - 1e-4)) for q, r in zip(p, y, strict=True)]
    assert f"{sum(losses) / 5:.3f}" == "2.441"
    # srs-benchmark's bins: 1 day each; answer 3 with no lapse; 4, 5 and 6 (bin 7) with 1 (bin 2); 7 with 2
    middle = (sum(p[1:4]) / 3 - 2 / 3) ** 2
    assert f"{math.sqrt((1 + 3 * middle + 0.4**2) / 5):.3f}" == "0.482"
    assert (
        f"{math.sqrt(sum((q - r) ** 2 for q, r in zip(p, y, strict=True)) / 5):.3f}" == "0.646"
    )  # each alone


def _uniform(tmp_path: Path, rating: int) -> Path:
    rows = [(f"q{k}", 3, local(0, 12)) for k in range(8)] + [
        (f"q{k}", rating, local(1 + k, 12)) for k in range(8)
    ]
    return _log(tmp_path / "log.csv", rows)


RECALLED = [
    "   FSRS-6, default parameters          0.193       0.175                       0.176   n/a",
    "   SM-2                                0.632       0.463                       0.469   n/a",
    "   Leitner boxes                       0.632       0.463                       0.469   n/a",
]
FORGOTTEN = [
    "   FSRS-6, default parameters          1.749       0.825                       0.825   n/a",
    "   SM-2                                0.786       0.537                       0.543   n/a",
    "   Leitner boxes                       0.786       0.537                       0.543   n/a",
]


@pytest.mark.parametrize(
    ("rating", "every", "rows"), [(3, "recalled", RECALLED), (1, "forgotten", FORGOTTEN)]
)
def test_all_recalled_or_all_forgotten_scores_auc_as_n_a_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rating: int, every: str, rows: list[str]
) -> None:
    status, lines = _main(capsys, _uniform(tmp_path, rating))
    assert status == 0
    constant = "   constant                            0.000       0.000                       0.000   n/a"
    assert lines[3:] == [
        TABLE_HEAD,
        rows[0],
        "   FSRS-6, fitted before each fold  not fitted: 3 of 512 reviews before test fold 1",
        *rows[1:],
        constant,  # it predicts 1 (clipped to 0.9999) or 0 (clipped to 0.0001)
        f"AUC n/a: every predicted answer was {every}; AUC needs both recalled and forgotten answers.",
    ]


NIGHT = (
    "Days: the learner's, taken to start at 04:00 at UTC-07:00 (11:00 UTC; the log gives no time zone); {} "
    "answers fall between 06:00 and 15:00 UTC: where in it the day starts can change the days."
)


@pytest.mark.parametrize(
    ("rows", "days", "sentence"),
    [
        (
            [("a", 3, local(0, 5)), ("a", 1, local(0, 9)), ("b", 3, local(1, 3)), ("b", 3, local(0, 22))],
            NIGHT.format(2),  # 12:00 and 10:00 UTC
            "None of its answers was given on a later learner's day than its item's previous answer: "
            "there is nothing to score.",
        ),
        (
            [("a", 3, local(0, 5)), ("a", 1, local(0, 5)), ("b", 3, local(0, 5))],
            NIGHT.format(3),
            "All of its answers were given at one time: there is no later answer to predict.",
        ),
        (
            [("a", 3, local(k, 12)) for k in range(5)],
            DAYS,
            "Only 4 of its answers are scored (given on a later learner's day than their item's previous "
            "one): 5 time-series splits need at least 6.",
        ),
    ],
    ids=["same-day only", "one time", "too few for 5 splits"],
)
def test_a_log_with_too_little_to_score_says_why(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rows: list[tuple[str, int, datetime]],
    days: str,
    sentence: str,
) -> None:
    path = _log(tmp_path / "log.csv", rows)
    status, lines = _main(capsys, path)
    answers = f"{len(rows)} answers of {len({card for card, _, _ in rows})} item"
    assert status == 1
    assert lines[0].startswith(f"== {path}: {answers}")
    assert lines[1:] == [days, sentence]


def test_an_empty_log_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _log(tmp_path / "empty.csv", [])
    assert _main(capsys, path) == (1, [f"== {path} holds no answers: there is nothing to predict."])


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("missing.csv", None, "{path} cannot be read (No such file or directory)"),
        ("bad.csv", b"\xff\xfe\x00", "{path} is not a py-fsrs review log: it is not UTF-8 text"),
        ("cols.csv", "id,rating\n1,3\n", "{path} is not a py-fsrs review log: it has no column card_id, "),
        (
            "rating.csv",
            HEADER + "1,5,2024-03-29T20:32:32+00:00,1\n",
            "{path}, line 2: review_rating must be ",
        ),
        (
            "naive.csv",
            HEADER + "1,3,2024-03-29T20:32:32,1\n",
            "{path}, line 2: review_time has no UTC offset: ",
        ),
        ("time.csv", HEADER + "1,3,yesterday,1\n", "{path}, line 2: review_time must be an ISO 8601 time, "),
        (
            "ms.csv",
            HEADER + "1,3,2024-03-29T20:32:32+00:00,1.5\n",
            "{path}, line 2: review_duration must be ",
        ),
        ("notes.txt", "hello\n", "{path}, line 1: not a progress file"),
    ],
)
def test_an_unreadable_log_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str | bytes | None, why: str
) -> None:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    status, lines = _main(capsys, path)
    assert status == 1 and len(lines) == 1
    assert lines[0].startswith("Cannot evaluate: " + why.format(path=path)) and lines[0].endswith(".")


def test_the_readme_table_is_made_from_the_figures() -> None:
    models = [
        {"readme": "FSRS-6, default", "log_loss": 0.4424, "rmse_bins": 0.0675, "calibration_error": 0.031,
         "auc": 0.6751},
        {"readme": "FSRS-6, fitted", "missing": "not fitted: 4 of 512 reviews before test fold 1"},
        {"readme": "a constant", "log_loss": 0.5, "rmse_bins": 0.1, "calibration_error": 0.1, "auc": None},
    ]  # fmt: skip
    counts = {"answers": 12580, "items": 1205, "scored": 6372, "predicted": 5310}
    counts |= {"splits": 5, "fold_size": 1062}
    assert bench.readme_block({"calibration_bins": 20, "models": models, **counts}) == (
        "  | model | log loss | RMSE (bins) | calibration error (20 bins) | AUC |\n"
        "  |---|---|---|---|---|\n"
        "  | FSRS-6, default | 0.442 | 0.068 | 0.031 | 0.675 |\n"
        "  | FSRS-6, fitted | not fitted: 4 of 512 reviews before test fold 1 | | | |\n"
        "  | a constant | 0.500 | 0.100 | 0.100 | n/a |\n"
        "\n"
        "  12,580 answers to 1,205 cards, 6,372 of them scored (on a later day than the card's previous "
        "answer); 5,310 predicted, in 5 folds of 1,062.\n"
    )


def test_the_default_run_writes_the_figures_the_readme_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[tuple[str, dict[str, object], tuple[str, ...]]] = []
    monkeypatch.setattr(bench, "LOG", _uniform(tmp_path, 3))
    monkeypatch.setattr(bench, "write_results", lambda *made: written.append(made))
    assert _main(capsys, "--splits", 2)[0] == 0 and not written  # not the default run: nothing written
    status, lines = _main(capsys)
    assert status == 0 and lines[-1].startswith("results: benchmarks/results/prediction_bench.json")
    [(name, figures, depends)] = written
    assert name == "prediction_bench"
    assert depends == (
        "benchmarks/prediction_bench.py",
        "benchmarks/data/review_logs_josh.csv",
        "scheduler/_calibration.py",
        *bench.SCHEDULING_CODE,  # scheduler/_memory.py, _time.py, ...
    )
    models = figures.pop("models")
    assert figures == {
        "log": bench.LOG.as_posix(),
        "answers": 16,
        "items": 8,
        "not_again": 16,
        "scored": 8,
        "splits": 5,
        "train_only": 3,
        "fold_size": 1,
        "predicted": 5,
        "calibration_bins": 20,
        "day": {
            "utc_offset_hours": -7,
            "rollover_hour": 4,
            "quiet_utc_hours": [6, 15],
            "answers_in_quiet_hours": 0,
            "line": DAYS,
        },
    }
    assert models[1] == {  # type: ignore[index]
        "name": "FSRS-6, fitted before each fold",
        "readme": "FSRS-6, fitted to the answers before each fold (the course's `optimize`)",
        "missing": "not fitted: 3 of 512 reviews before test fold 1",
    }
    assert bench.readme_block({**figures, "models": models}).splitlines()[2:] == [
        "  | FSRS-6, default parameters (what the course starts with) | 0.193 | 0.175 | 0.176 | n/a |",
        "  | FSRS-6, fitted to the answers before each fold (the course's `optimize`) | not fitted: 3 of 512 "
        "reviews before test fold 1 | | | |",
        "  | SM-2, its intervals read as recall 0.9^(t/I) | 0.632 | 0.463 | 0.469 | n/a |",
        "  | Leitner boxes, read the same way | 0.632 | 0.463 | 0.469 | n/a |",
        "  | a constant: the share recalled before each fold | 0.000 | 0.000 | 0.000 | n/a |",
        "",
        "  16 answers to 8 cards, 8 of them scored (on a later day than the card's previous answer); "
        "5 predicted, in 5 folds of 1.",
    ]
