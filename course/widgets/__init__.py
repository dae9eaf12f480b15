"""The course's Jupyter widgets: a lesson's quiz, the spaced-repetition review, practice (cram), the class
review on a projector (`class_review`), and for a class on a shared database: the live class review
(`live_projector` on the projector, `live` in each learner's notebook) and the instructor's class report
(`class_report_view`).

``predict("02-variance-at-64")`` goes under a lesson's Predict prompt and ``reveal(...)`` in the cell that
checks it (`course.widgets._predict`). ``quiz("02")``, ``review()`` and ``cram("02", "03")`` return small
objects that display as a widget in JupyterLab (and as a stable sentence in plain text, which is what nbval
compares). They work with ipywidgets 7.7 and 8. They grade and order the options of multiple-choice questions
as `course.bank` says: a new order each time a question is shown, drawn from the `rng` given (a
`random.Random`; default a fresh one).

The progress database is held open only while a session runs, from the session's first use of it to its
summary (a review: from its start; practice: from its first answer; a quiz, whose session is one answer: for
each read or write), never while the kernel idles after a summary; `course.progress.StoreSource` is the
one place that opens and closes it.

Importing the widgets also starts listening to the exercises' checkers (`course.checkers.listen`): in a
Jupyter kernel, a named mistake brings back the code cards that practise it, the next day
(`course.widgets._bringing_back`).
"""

from __future__ import annotations

from course.widgets import _bringing_back  # noqa: F401 - registers the listener that brings cards back
from course.widgets._class_report_view import ClassReportWidget, class_report_view
from course.widgets._class_review import ClassReviewWidget, class_review
from course.widgets._cram import PRACTICE_NOTE, CramWidget, cram
from course.widgets._explorer import Drawn, Explorer
from course.widgets._live_answer import NO_CLASS_DB, LiveAnswerWidget, live
from course.widgets._live_projector import LiveProjectorWidget, live_prediction, live_projector
from course.widgets._predict import PredictionWidget, Revealed, predict, reveal
from course.widgets._quiz import QuizWidget, quiz
from course.widgets._review import NO_PROGRESS, ReviewWidget, review

__all__ = [
    "NO_CLASS_DB",
    "NO_PROGRESS",
    "PRACTICE_NOTE",
    "ClassReportWidget",
    "ClassReviewWidget",
    "CramWidget",
    "Drawn",
    "Explorer",
    "LiveAnswerWidget",
    "LiveProjectorWidget",
    "PredictionWidget",
    "QuizWidget",
    "Revealed",
    "ReviewWidget",
    "class_report_view",
    "class_review",
    "cram",
    "live",
    "live_prediction",
    "live_projector",
    "predict",
    "quiz",
    "reveal",
    "review",
]
