"""A learner's progress: where it lives (`db_path`, `open_store`), the store source that opens it for a
session, the outbox that keeps a class database's answers through an outage, the `Keeper` every answer goes
through, the progress file (export and import), the outlook texts (what is due, what was done) and the
code cards that an exercise's named mistake brings back (`bring_back`), and the predictions a learner commits
under a lesson's Predict prompts (`commit_prediction`, `prediction_counts`).
"""

from __future__ import annotations

from course.progress._bringing_back import WEEK, bring_back, brought_back, next_day, practising
from course.progress._calibration import calibration_report
from course.progress._file import Progress, ProgressFileError, lines, read_progress
from course.progress._keeping import Keeper, QuizSave
from course.progress._location import (
    SERVICE_SCHEMES,
    db_path,
    default_path,
    items,
    learner_url,
    local_tz,
    open_store,
    path_source,
    server_url,
)
from course.progress._outbox import OUTBOX_ERRORS, Kept, note_for, sent_note, waiting_note
from course.progress._outlook import (
    LimitOptions,
    Outlook,
    due_again,
    due_day,
    due_in,
    interval,
    lesson_label,
    lessons_started,
    next_steps,
    outlook,
    parameters_text,
    plural,
    progress_report,
    retention_text,
)
from course.progress._predicting import (
    Committed,
    PredictionCounts,
    commit_prediction,
    graded,
    prediction_counts,
)
from course.progress._source import PROBLEMS, StoreLike, StoreSource

__all__ = [
    "OUTBOX_ERRORS",
    "PROBLEMS",
    "SERVICE_SCHEMES",
    "WEEK",
    "Committed",
    "Keeper",
    "Kept",
    "LimitOptions",
    "Outlook",
    "PredictionCounts",
    "Progress",
    "ProgressFileError",
    "QuizSave",
    "StoreLike",
    "StoreSource",
    "bring_back",
    "brought_back",
    "calibration_report",
    "commit_prediction",
    "db_path",
    "default_path",
    "due_again",
    "due_day",
    "due_in",
    "graded",
    "interval",
    "items",
    "learner_url",
    "lesson_label",
    "lessons_started",
    "lines",
    "local_tz",
    "next_day",
    "next_steps",
    "note_for",
    "open_store",
    "outlook",
    "parameters_text",
    "path_source",
    "plural",
    "practising",
    "prediction_counts",
    "progress_report",
    "read_progress",
    "retention_text",
    "sent_note",
    "server_url",
    "waiting_note",
]
