"""Generic spaced repetition on FSRS: a review log in SQLite, due queues, sessions, statistics, and how
well predicted recall matched a log (``predictions``, ``score``: srs-benchmark's scores).

A classroom's shared PostgreSQL store is ``scheduler.postgres.PostgresStore`` (needs psycopg; importing
``scheduler`` does not import it).

It knows nothing about the course it serves; everything it schedules is an ``Item`` (an id and a deck).
"""

from __future__ import annotations

from scheduler._bounds import (
    EARLIEST_TIME,
    LATEST_TIME,
    MAX_DURATION_MS,
    MAX_ID_BYTES,
    MAX_INTERVAL_DAYS,
    MAX_PREDICTION_ANSWER,
    MAX_REASON,
    id_problem,
    prediction_answer_problem,
    reason_problem,
    time_range_text,
)
from scheduler._calibration import (
    CALIBRATION_BINS,
    MIN_CALIBRATION_REVIEWS,
    Bin,
    FsrsPredictor,
    Prediction,
    Predictor,
    Scores,
    auc,
    bins,
    calibration_error,
    log_loss,
    predictions,
    rmse_bins,
    score,
    time_series_split,
)
from scheduler._errors import (
    StoreAccessError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    StoreUnavailableError,
    StoreVersionError,
)
from scheduler._fitting import MIN_FIT_REVIEWS, NotEnoughReviews, fit_parameters, fit_reviews
from scheduler._format import format_interval
from scheduler._memory import Memory
from scheduler._records import (
    RETENTION_RANGE,
    Answer,
    AnsweredToday,
    CardState,
    CramReview,
    DueItems,
    Item,
    Limits,
    LogEntry,
    Merged,
    Nudge,
    PredictionEvent,
    Rating,
    Review,
    Settings,
    State,
    retention_problem,
)
from scheduler._schema import SCHEMA_VERSION
from scheduler._serving import ASKED_AGAIN_WITHIN, CramSession, Session, due_queue
from scheduler._stats import Stats, due_counts, forecast, stats, true_retention
from scheduler._storage import Storage
from scheduler._store import Store
from scheduler._time import day_numbers, day_start, due_from, elapsed_days

__all__ = [
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
