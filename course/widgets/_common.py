"""What the quiz and the review widgets share: the clock, the progress database, and the question panel.

The panel shows one question at a time and grades it by the rules of `course.presenting` (a new order of the
options each time a question is shown; wrong = Again, right = Good unless the learner picks Hard or Easy);
what happens to an answer (where it is saved, which question comes next) is left to the subclass. An answer
is saved exactly once, as soon as its rating is known: a wrong auto-graded answer at "Check" (it can only be
Again), a right one on "Next" (Good unless the learner picked Hard or Easy: the log is append-only, so it
waits for the final rating, and the notice says that it is not saved yet), a recall answer when a rating
button is pressed. What happened to the last answer stays in view under the next question, or under the
summary after the last one.
"""

from __future__ import annotations

import contextlib
import html
import os
import random
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from course.bank import Question
from course.lessons import lesson_title
from course.presenting import (
    RECALL_RATINGS,
    Presentation,
    Verdict,
    final_rating,
    grade_choice,
    grade_number,
    present,
)
from course.progress import db_path, local_tz, open_store, require_file
from course.ratings import MEANINGS, NAMES
from course.widgets._render import to_html
from scheduler import Rating, Store, StoreError, format_interval

Clock = Callable[[], datetime]
StoreLike = Store | str | os.PathLike[str] | None

# What the database problems caught where the learner acts: the store's own, and OS errors met on the way.
PROBLEMS = (StoreError, OSError)
RECALL_HINT = (
    f"<p><b>Again</b>: {MEANINGS[Rating.AGAIN]}. <b>Hard</b>: {MEANINGS[Rating.HARD]} "
    f"(it still counts as remembered). <b>Good</b>: {MEANINGS[Rating.GOOD]}. <b>Easy</b>: at once. "
    "Each button shows when the question comes back.</p>"
)
RIGHT_HINT = (
    "<p>Saved as <b>Good</b> when you press Next. Choose <b>Hard</b> if it took effort (it still counts as "
    "remembered) or <b>Easy</b> if it came at once.</p>"
)
# Shown after Check on a right answer: it is saved only on Next, so that Hard or Easy can be chosen first.
RIGHT_NOTE = "✓ Right, not saved yet: choose Hard, Good or Easy if you like, then press {button} to save it."


def real_clock() -> datetime:
    """The default clock: now, in UTC."""
    return datetime.now(timezone.utc)


def read_clock(clock: Clock) -> datetime:
    """Call `clock` and check what it returns: an aware datetime, converted to UTC."""
    now = clock()
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"clock() must return a timezone-aware datetime, got {now!r}")
    return now.astimezone(timezone.utc)


def duration_ms(start: datetime, end: datetime) -> int:
    """Whole milliseconds from `start` to `end` (0 if the clock went backwards)."""
    return max(0, round((end - start).total_seconds() * 1000))


def rating_label(rating: Rating, intervals: Mapping[Rating, timedelta] | None) -> str:
    """A rating button's text: ``Good (10m)``, or just ``Good`` when the interval is unknown."""
    if intervals is None or rating not in intervals:
        return NAMES[rating]
    return f"{NAMES[rating]} ({format_interval(intervals[rating])})"


def rating_tooltip(rating: Rating, intervals: Mapping[Rating, timedelta] | None) -> str:
    tip = f"{NAMES[rating]}: {MEANINGS[rating]}"
    if intervals is not None and rating in intervals:
        tip += f"; it comes back in {format_interval(intervals[rating])}"
    return tip


def when(due: datetime, now: datetime, tz: tzinfo) -> str:
    """``in 10m (2025-01-06 09:10)``, or ``now`` when `due` is not in the future."""
    if due <= now:
        return "now"
    return f"in {format_interval(due - now)} ({due.astimezone(tz).strftime('%Y-%m-%d %H:%M')})"


def inline_html(text: str) -> str:
    """Markdown to HTML without the paragraph around a one-paragraph text (for list entries)."""
    rendered = to_html(text)
    if rendered.startswith("<p>") and rendered.endswith("</p>") and rendered.count("<p>") == 1:
        return rendered[3:-4]
    return rendered


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
    tail = " Nothing was saved; press the button again once it is fixed." if unsaved else ""
    return f"<p><b>✗ Progress database problem:</b> {html.escape(problem_text(err))}{tail}</p>"


def unexpected_html(err: Exception) -> str:
    """A bug, not a database problem: say so plainly rather than let the click fail in silence."""
    detail = html.escape(f"{type(err).__name__}: {err}")
    return (
        f"<p><b>✗ Could not save this answer</b> ({detail}). Nothing was saved. This is a bug in the course: "
        "please report it with this message.</p>"
    )


def _heading(verdict: Verdict) -> str:
    """The verdict's words with its mark: ``✓ Right`` or ``✗ Not quite``."""
    return f"{'✓' if verdict.right else '✗'} {verdict.word}"


def focus(widget: widgets.Widget | None) -> None:
    """Move the keyboard focus to `widget` (ipywidgets 8; 7.7 has no focus and keeps it where it was)."""
    method = getattr(widget, "focus", None)
    if callable(method):
        method()


def view_bundle(root: widgets.Widget, text: str) -> dict[str, Any]:
    """A display bundle: the live widget view, and `text` as the stable plain-text form nbval compares."""
    return {
        "text/plain": text,
        "application/vnd.jupyter.widget-view+json": {
            "version_major": 2,
            "version_minor": 0,
            "model_id": root.model_id,
        },
    }


class StoreSource:
    """Where the progress database is: an open `Store` (used as is, never closed here) or a path.

    A path is opened only when needed and closed again right after, so nothing is held between answers. A
    path that names a folder (``COURSE_DB`` or `store`) is not an error here: it is raised, as a
    ``StoreError``, where the database is used, so that the widget shows it.
    """

    def __init__(self, store: StoreLike) -> None:
        self.store: Store | None = None
        self._path: Path | None = None
        self._problem: StoreError | None = None
        if isinstance(store, Store):
            self.store = store
            self._path = Path(store.path)
            return
        try:
            self._path = db_path() if store is None else require_file(Path(store).expanduser(), "store")
        except StoreError as err:
            self._problem = err

    @property
    def path(self) -> Path:
        """The database file; the `StoreError` found when it was chosen, if any."""
        if self._problem is not None:
            raise self._problem
        assert self._path is not None
        return self._path

    def exists(self) -> bool:
        """Whether the file exists. True when that cannot be told (a folder on the way may not be searched):
        opening it then says why."""
        if self.store is not None:
            return True
        try:
            self.path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError:
            return True
        return True

    def open_store(self, *, create: bool) -> Store:
        """The database: the given `Store`, or the file opened (the caller closes it). Raises `StoreError`."""
        if self.store is not None:
            return self.store
        return open_store(self.path, create=create)

    @contextlib.contextmanager
    def open(self, *, create: bool) -> Iterator[Store]:
        """The database for one `with` block, closed at its end if it was opened here."""
        store = self.open_store(create=create)
        try:
            yield store
        finally:
            if store is not self.store:
                store.close()


class QuestionPanel:
    """One question at a time: prompt, answer controls, feedback, ratings, Next.

    Subclasses implement `_intervals` (labels of the rating buttons), `_save` (record one answer and return a
    note for the learner) and `_advance` (show the next question or the end). They may replace the hints shown
    above the rating buttons (`recall_hint`, `right_hint`) and the notice after a right answer (`right_note`).

    Grading and the option order follow `course.presenting`: each question shown draws a new order of its
    options from `rng` (a `random.Random`; default a fresh one), kept while it is on screen, so displaying the
    widget again changes nothing. `option_buttons` are in the order shown, labelled A, B, C...
    """

    recall_hint: str = RECALL_HINT
    right_hint: str = RIGHT_HINT
    right_note: str = RIGHT_NOTE

    def __init__(self, clock: Clock | None, tz: tzinfo | None, rng: random.Random | None = None) -> None:
        if tz is None:
            tz = local_tz()
        self._clock: Clock = clock if clock is not None else real_clock
        self._rng = rng if rng is not None else random.Random()
        self.tz = tz
        self.title = widgets.HTML()
        self.progress = widgets.HTML()
        self.notice = widgets.HTMLMath()
        self.prompt = widgets.HTMLMath()
        self.answer_area = widgets.VBox()
        self.feedback = widgets.HTMLMath()
        self.rating_area = widgets.VBox()
        self.next_button = widgets.Button(description="Next", tooltip="Go to the next question")
        self.next_button.on_click(self._on_next)
        self.root = widgets.VBox(
            [
                self.title,
                self.progress,
                self.prompt,
                self.answer_area,
                self.feedback,
                self.rating_area,
                self.notice,
            ],
            layout=widgets.Layout(max_width="60em"),
        )
        # The current question and what happened to it.
        self.question: Question | None = None
        self.presentation: Presentation | None = None  # how it is shown: the order of its options
        self.verdict: Verdict | None = None  # a graded choice or numeric answer
        self.shown_at: datetime | None = None
        self.answered_at: datetime | None = None
        self.option_buttons: list[widgets.Button] = []
        self.number_input: widgets.Text | None = None
        self.check_button: widgets.Button | None = None
        self.show_button: widgets.Button | None = None
        self.rating_buttons: dict[Rating, widgets.Button] = {}
        self.rating_choice: widgets.ToggleButtons | None = None
        self.saved: Rating | None = None  # the rating saved for the current question, once saved
        self.results: list[tuple[str, Rating]] = []
        # What happened to the previous answer, shown under the next question.
        self._last_note: str | None = None
        self._shown_once = False

    # -- to implement -------------------------------------------------------------------------------------
    def _intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        raise NotImplementedError

    def _save(self, question: Question, rating: Rating, at: datetime, duration: int) -> str:
        raise NotImplementedError

    def _advance(self) -> None:
        raise NotImplementedError

    # -- showing ------------------------------------------------------------------------------------------
    def _now(self) -> datetime:
        return read_clock(self._clock)

    def _show(self, question: Question) -> None:
        """Show `question`, ready to be answered; its answer time is measured from now."""
        previous, self._last_note = self._last_note, None
        self.notice.value = f"<p><i>Previous question: {html.escape(previous)}</i></p>" if previous else ""
        self.question = question
        self.presentation = present(question, self._rng)
        self.verdict = None
        self.shown_at = self._now()
        self.answered_at = None
        self.saved = None
        self.option_buttons = []
        self.number_input = self.check_button = self.show_button = None
        self.rating_buttons = {}
        self.rating_choice = None
        self.prompt.value = to_html(question.prompt)
        self.feedback.value = ""
        self.rating_area.children = ()
        if question.kind == "choice":
            rows = []
            for position, shown in enumerate(self.presentation.shown()):
                button = widgets.Button(
                    description=f"Answer {shown.label}",
                    tooltip=f"Answer {shown.label}: {shown.option.text}",
                    layout=widgets.Layout(width="auto", min_width="7em"),
                )
                button.on_click(lambda _b, p=position: self._on_option(p))
                self.option_buttons.append(button)
                rows.append(widgets.HBox([button, widgets.HTMLMath(inline_html(shown.option.text))]))
            self.answer_area.children = tuple(rows)
        elif question.kind == "numeric":
            # Enter checks the answer: without continuous updates the value arrives on Enter (or when the box
            # loses focus), on ipywidgets 7.7 and 8 alike; Text.on_submit is deprecated in both.
            self.number_input = widgets.Text(
                description="Answer:",
                placeholder="a number, e.g. 64 or 0.125",
                continuous_update=False,
            )
            self.number_input.observe(self._on_check, names="value")
            self.check_button = widgets.Button(
                description="Check", tooltip="Check your answer (or press Enter)"
            )
            self.check_button.on_click(self._on_check)
            unit = widgets.HTML(html.escape(question.unit))
            self.answer_area.children = (widgets.HBox([self.number_input, unit, self.check_button]),)
        else:
            self.show_button = widgets.Button(
                description="Show answer",
                tooltip="Recall the answer first, then show it and grade yourself",
            )
            self.show_button.on_click(self._on_show_answer)
            self.answer_area.children = (self.show_button,)
        first = self.option_buttons[0] if self.option_buttons else (self.number_input or self.show_button)
        if self._shown_once:  # not when the cell first runs: that would pull focus out of the notebook
            focus(first)
        self._shown_once = True

    def _finish_view(self, summary: str, extra: tuple[widgets.Widget, ...] = ()) -> None:
        """Replace the question by `summary` (HTML); what happened to the last answer stays in view."""
        self.question = self.presentation = self.verdict = None
        last, self._last_note = self._last_note, None
        self.notice.value = f"<p><i>Last question: {html.escape(last)}</i></p>" if last else ""
        self.prompt.value = summary
        self.answer_area.children = extra
        self.feedback.value = ""
        self.rating_area.children = ()

    # -- answering ----------------------------------------------------------------------------------------
    def _on_option(self, position: int) -> None:
        """Grade the option shown at `position` (0 = the first shown, labelled A)."""
        if self.presentation is None or self.question is None or self.answered_at is not None:
            return
        self.answered_at = self._now()
        verdict = grade_choice(self.presentation, position)
        lines = []
        for shown in verdict.options:
            mark = "✓" if shown.right else ("✗" if shown.chosen else "·")
            notes = []
            if shown.right:
                notes.append("the right answer")
            if shown.chosen:
                notes.append("your answer")
            note = f" <i>({', '.join(notes)})</i>" if notes else ""
            text, why = inline_html(shown.option.text), inline_html(shown.option.why)
            lines.append(f"<li>{mark} <b>{shown.label}.</b> {text}{note}: {why}</li>")
        said = f"<b>{_heading(verdict)}.</b>"
        if not verdict.right:
            said += f" The answer is {verdict.answer}."
        self._graded(verdict, f"{said}<ul>{''.join(lines)}</ul>")

    def _on_check(self, _event: object = None) -> None:
        """Check the typed number (the Check button, or Enter in the box)."""
        question = self.question
        if question is None or self.answered_at is not None or self.number_input is None:
            return
        text = self.number_input.value.strip()
        try:
            verdict = grade_number(question, text)
        except ValueError:
            shown = html.escape(repr(text)) if text else "Nothing typed"
            self.notice.value = f"<p>✗ {shown}: type a number, e.g. 64 or 0.125.</p>"
            return
        self.answered_at = self._now()
        expected = html.escape(verdict.answer)
        if verdict.right:
            said = f"<b>{_heading(verdict)}:</b> {expected}."
        else:
            said = f"<b>{_heading(verdict)}.</b> You answered {html.escape(text)}; the answer is {expected}."
        self._graded(verdict, f"<p>{said}</p>")

    def _graded(self, verdict: Verdict, said: str) -> None:
        """Show the verdict (`said`, HTML) and the explanation; save a wrong answer now, offer the ratings for
        a right one (`Verdict.ratings`, its own rating preselected)."""
        question = self.question
        assert question is not None and self.answered_at is not None
        self.verdict = verdict
        self.notice.value = ""
        self._disable_answer()
        self.feedback.value = said + self._explanation(question)
        if verdict.right:
            intervals = self._safe_intervals(question, self.answered_at)
            self.rating_choice = widgets.ToggleButtons(
                options=[(rating_label(r, intervals), r) for r in verdict.ratings],
                value=verdict.rating,
                tooltips=[rating_tooltip(r, intervals) for r in verdict.ratings],
                description="Save as:",
            )
            self.rating_area.children = (
                widgets.HTMLMath(self.right_hint),
                self.rating_choice,
                self.next_button,
            )
            self._label_next()
            note = self.right_note.format(button=self.next_button.description)
            self.notice.value += f"<p>{html.escape(note)}</p>"
        else:
            self.rating_area.children = (self.next_button,)
            self._try_save(verdict.rating)
            self._label_next()
        focus(self.next_button)

    def _on_show_answer(self, _button: widgets.Button | None = None) -> None:
        question = self.question
        if question is None or self.answered_at is not None:
            return
        self.answered_at = self._now()
        self._disable_answer()
        answer = to_html(str(question.answer))
        self.feedback.value = f"<p><b>Answer:</b></p>{answer}{self._explanation(question)}"
        intervals = self._safe_intervals(question, self.answered_at)
        for rating in RECALL_RATINGS:
            button = widgets.Button(
                description=rating_label(rating, intervals),
                tooltip=rating_tooltip(rating, intervals),
                layout=widgets.Layout(width="auto", min_width="7em"),
            )
            button.on_click(lambda _b, r=rating: self._on_rating(r))
            self.rating_buttons[rating] = button
        self.rating_area.children = (
            widgets.HTMLMath(self.recall_hint),
            widgets.HBox(list(self.rating_buttons.values())),
        )
        focus(self.rating_buttons[Rating.GOOD])

    def _on_rating(self, rating: Rating) -> None:
        if self.question is None or self.answered_at is None or self.saved is not None:
            return
        if self._try_save(rating):
            self._advance()

    def _on_next(self, _button: widgets.Button | None = None) -> None:
        if self.question is None or self.answered_at is None:
            return
        if self.saved is None:
            if self.verdict is None:  # a recall answer is saved by its rating buttons
                return
            chosen = Rating(self.rating_choice.value) if self.rating_choice is not None else None
            if not self._try_save(final_rating(self.verdict.right, chosen)):
                return
        self._advance()

    def _try_save(self, rating: Rating) -> bool:
        question, start, end = self.question, self.shown_at, self.answered_at
        assert question is not None and start is not None and end is not None
        try:
            note = self._save(question, rating, end, duration_ms(start, end))
        except PROBLEMS as err:
            self.notice.value = error_html(err, unsaved=True)
            return False
        except (
            Exception
        ) as err:  # a widget callback's exception would otherwise vanish into the browser console
            self.notice.value = unexpected_html(err)
            return False
        self.saved = rating
        self.results.append((question.id, rating))
        if self.rating_choice is not None:
            self.rating_choice.disabled = True
        for button in self.rating_buttons.values():
            button.disabled = True
        self.notice.value = f"<p>{html.escape(note)}</p>"
        self._last_note = note
        return True

    # -- helpers ------------------------------------------------------------------------------------------
    def _safe_intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        try:
            return self._intervals(question, at)
        except PROBLEMS as err:
            self.notice.value = error_html(err, unsaved=False)
            return None

    def _disable_answer(self) -> None:
        for button in self.option_buttons:
            button.disabled = True
        for control in (self.number_input, self.check_button, self.show_button):
            if control is not None:
                control.disabled = True

    def _label_next(self) -> None:
        """Subclasses may say where Next leads (e.g. "Finish" on the last question)."""

    def _explanation(self, question: Question) -> str:
        title = lesson_title(question.lesson)
        lesson, section = html.escape(question.lesson), html.escape(question.section)
        see = f"See: lesson {lesson} ({html.escape(title)}), section “{section}”."
        return f"{to_html(question.explanation)}<p><i>{see}</i></p>"
