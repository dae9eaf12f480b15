"""The course's Jupyter widgets: a lesson's quiz and the spaced-repetition review.

``quiz("02")`` and ``review()`` return small objects that display as a widget in JupyterLab (and as a stable
sentence in plain text, which is what nbval compares). They work with ipywidgets 7.7 and 8.
"""

from __future__ import annotations

from course.widgets._quiz import QuizWidget, quiz
from course.widgets._render import to_html
from course.widgets._review import NO_PROGRESS, ReviewWidget, review

__all__ = ["NO_PROGRESS", "QuizWidget", "ReviewWidget", "quiz", "review", "to_html"]
