"""The public surface of the scheduler package, and what importing it pulls in."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from store_helpers import REPO

import scheduler


def test_public_names() -> None:
    assert scheduler.__all__ == [
        "ASKED_AGAIN_WITHIN",
        "CALIBRATION_BINS",
        "EARLIEST_TIME",
        "LATEST_TIME",
        "MAX_DURATION_MS",
        "MAX_ID_BYTES",
        "MAX_INTERVAL_DAYS",
        "MAX_PREDICTION_ANSWER",
        "MAX_REASON",
        "MIN_CALIBRATION_REVIEWS",
        "MIN_FIT_REVIEWS",
        "RETENTION_RANGE",
        "SCHEMA_VERSION",
        "Answer",
        "AnsweredToday",
        "Bin",
        "CardState",
        "CramReview",
        "CramSession",
        "DueItems",
        "FsrsPredictor",
        "Item",
        "Limits",
        "LogEntry",
        "Memory",
        "Merged",
        "NotEnoughReviews",
        "Nudge",
        "Prediction",
        "PredictionEvent",
        "Predictor",
        "Rating",
        "Review",
        "Scores",
        "Session",
        "Settings",
        "State",
        "Stats",
        "Storage",
        "Store",
        "StoreAccessError",
        "StoreCorruptError",
        "StoreError",
        "StoreLockedError",
        "StoreNotFoundError",
        "StoreUnavailableError",
        "StoreVersionError",
        "auc",
        "bins",
        "calibration_error",
        "day_numbers",
        "day_start",
        "due_counts",
        "due_from",
        "due_queue",
        "elapsed_days",
        "fit_parameters",
        "fit_reviews",
        "forecast",
        "format_interval",
        "id_problem",
        "log_loss",
        "prediction_answer_problem",
        "predictions",
        "reason_problem",
        "retention_problem",
        "rmse_bins",
        "score",
        "stats",
        "time_range_text",
        "time_series_split",
        "true_retention",
    ]
    assert all(hasattr(scheduler, name) for name in scheduler.__all__)
    assert [(rating.name, int(rating)) for rating in scheduler.Rating] == [
        ("AGAIN", 1),
        ("HARD", 2),
        ("GOOD", 3),
        ("EASY", 4),
    ]
    assert [(state.name, state.value) for state in scheduler.State] == [
        ("NEW", "new"),
        ("LEARNING", "learning"),
        ("REVIEW", "review"),
        ("RELEARNING", "relearning"),
    ]


def test_import_pulls_in_no_heavy_or_course_modules() -> None:
    # fsrs's optimizer (torch, pandas) is imported by scheduler.fit_parameters only, when a fit runs;
    # psycopg by scheduler.postgres only
    code = (
        "import sys, scheduler; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'torch', 'numpy', 'matplotlib', 'course', 'pandas', 'ipywidgets', 'psycopg'} | "
        "{m for m in sys.modules if m == 'fsrs.optimizer'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, timeout=60
    )
    assert result.stdout == "[]\n"


def test_a_prediction_event_and_the_bound_on_its_answer() -> None:
    """`PredictionEvent`, what ``Storage.predict`` keeps (``scheduler.Prediction`` is the calibration's)."""
    fields = [(f.name, f.type) for f in dataclasses.fields(scheduler.PredictionEvent)]
    assert fields == [
        ("item_id", "str"),
        ("predicted_at", "datetime"),
        ("answer", "str"),
        ("right", "bool | None"),
    ]
    assert scheduler.PredictionEvent.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert scheduler.Merged(1, 2, 3, 4).predictions == 0
    assert scheduler.MAX_PREDICTION_ANSWER == 200
    problem = scheduler.prediction_answer_problem
    assert [problem(""), problem("x" * 200), problem("[[1, 0], [0, 1]]"), problem("é ∞")] == [None] * 4
    for text in ("x" * 201, "two\nlines", "a\tb", "del\x7f", "nul\x00"):
        assert problem(text) == "must be at most 200 characters on one line", repr(text)
    assert problem("\ud800") == "must be Unicode text: it holds a lone surrogate, U+D800 (at character 1)"
    assert problem(None) == problem(1) == 'must be a str ("" when skipped)'
