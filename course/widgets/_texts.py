"""The widgets' words for the learner: hints, notes, errors, and the small HTML helpers they are made with."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, tzinfo

from course.bank import MEANINGS, NAMES, Verdict
from course.progress import due_day
from scheduler import Rating, StoreError, day_start, format_interval

__all__ = [
    "RECALL_HINT",
    "RIGHT_HINT",
    "error_html",
    "heading",
    "html_text",
    "option_note",
    "problem_text",
    "rating_label",
    "rating_tooltip",
    "unexpected_html",
    "unwritable_html",
    "verdict_html",
    "when",
]

RECALL_HINT = (
    f"<p><b>Again</b>: {MEANINGS[Rating.AGAIN]}. <b>Hard</b>: {MEANINGS[Rating.HARD]} "
    f"(it still counts as remembered). <b>Good</b>: {MEANINGS[Rating.GOOD]}. <b>Easy</b>: at once. "
    "Each button shows when the question comes back.</p>"
)
RIGHT_HINT = (
    "<p>Saved as <b>{rating}</b> when you press {button}. <b>Hard</b>: it took effort (it still counts as "
    "remembered); <b>Good</b>: remembered; <b>Easy</b>: it came at once.</p>"
)


def rating_label(rating: Rating, intervals: Mapping[Rating, timedelta] | None) -> str:
    """A rating button's text: ``Good (10m)``, or just ``Good`` when the interval is unknown."""
    if intervals is None or rating not in intervals:
        return NAMES[rating]
    return f"{NAMES[rating]} ({format_interval(intervals[rating])})"


def rating_tooltip(rating: Rating, intervals: Mapping[Rating, timedelta] | None) -> str:
    """A rating button's tooltip: what the rating means, and when the question comes back if known."""
    tip = f"{NAMES[rating]}: {MEANINGS[rating]}"
    if intervals is not None and rating in intervals:
        tip += f"; it comes back in {format_interval(intervals[rating])}"
    return tip


def when(due: datetime, now: datetime, tz: tzinfo) -> str:
    """``in 10m (2025-01-06 09:10)`` on the learner's day of `now`; ``tomorrow (2025-01-07)`` or ``in 3 days
    (2025-01-09)`` on a later one (a question is due on a day, from its 4 am rollover); ``now`` when `due` is
    not in the future."""
    if due <= now:
        return "now"
    day = due_day(due, now, tz)
    if day is not None:
        return f"{day} ({day_start(due, tz).astimezone(tz).strftime('%Y-%m-%d')})"
    return f"in {format_interval(due - now)} ({due.astimezone(tz).strftime('%Y-%m-%d %H:%M')})"


def heading(verdict: Verdict) -> str:
    """The verdict's words with its mark: ``✓ Right`` or ``✗ Not quite``."""
    return f"{'✓' if verdict.right else '✗'} {verdict.word}"


def option_note(*, right: bool, chosen: bool) -> str:
    """What an option was, in the list under a graded question."""
    if right:
        return "your answer, right" if chosen else "the right answer"
    return "your answer"


def problem_text(err: StoreError | OSError) -> str:
    """What went wrong with the progress database, in one sentence for the learner."""
    if isinstance(err, StoreError):
        message = str(err)
    else:  # an OS error the store did not translate, e.g. a folder on the way that may not be searched
        where = err.filename if err.filename is not None else "the progress database"
        reason = err.strerror or type(err).__name__
        message = f"{where} cannot be used ({reason}); check the permissions of its folder"
    return message if message.endswith((".", "!", "?")) else f"{message}."


def error_html(err: StoreError | OSError, *, unsaved: bool) -> str:
    """A database problem for the learner; with `unsaved`, that nothing was saved and how to try again."""
    tail = " Nothing was saved; press the button again once it is fixed." if unsaved else ""
    return f"<p><b>✗ Progress database problem:</b> {html.escape(problem_text(err))}{tail}</p>"


def unwritable_html(err: StoreError | OSError) -> str:
    """Why no answer could be saved, said before the first question is asked."""
    return (
        f"<p><b>✗ Your answers cannot be saved:</b> {html.escape(problem_text(err))} Fix this first, then "
        "run this cell again.</p>"
    )


def unexpected_html(err: Exception) -> str:
    """A bug, not a database problem: say so plainly rather than let the click fail in silence."""
    detail = html.escape(f"{type(err).__name__}: {err}")
    return (
        f"<p><b>✗ Could not save this answer</b> ({detail}). Nothing was saved. This is a bug in the course: "
        "please report it with this message.</p>"
    )


def html_text(fragment: str) -> str:
    """The words of an HTML fragment made here (tags dropped, entities read): for the live region."""
    return (
        " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())
        .replace(" .", ".")
        .replace(" :", ":")
    )


def verdict_html(sentence: str) -> str:
    """The checker's sentence on the learner's code, as the review widget words it ("✓ Right: ...")."""
    right = sentence.startswith("✓")
    words = html.escape(sentence.removeprefix("✓").removeprefix("✗").strip())
    return f"<p><b>{'✓ Right' if right else '✗ Not quite'}:</b> {words}</p>"
