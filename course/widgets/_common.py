"""What the quiz and the review widgets share: the clock, the progress database, and the question panel.

The panel shows one question at a time and grades it by the rules of `course.presenting` (a new order of the
options each time a question is shown; wrong = Again, right = Good unless the learner picks Hard or Easy);
what happens to an answer (where it is saved, which question comes next) is left to the subclass. An answer
is saved exactly once, as soon as its rating is known: a wrong auto-graded answer at "Check" (it can only be
Again), a right one on "Next" (Good unless the learner picked Hard or Easy: the log is append-only, so it
waits for the final rating, and the hint above the ratings says so), a recall answer when a rating button is
pressed. What happened to the last answer stays in view under the next question, or under the summary after
the last one.

In the browser: the widget's text has the notebook's size and a clearly visible focus ring (`CHROME`, a
style sheet and a tiny script in a hidden child). The script marks the widget's root and every control in it
with ``data-lm-suppress-shortcuts`` (keys pressed in the quiz belong to it, not to JupyterLab's notebook
shortcuts; Lumino looks at the focused element first), names each option button with its text, groups the
rating radio buttons, makes `QuestionPanel.status` (visually hidden) a polite live region that says what just
happened, moves the focus to the summary at the end, and says what to do when a click gets no answer from
the kernel (it was restarted or stopped: run the cell again).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import random
import re
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
from course.progress import db_path, local_tz, open_store, path_source, require_file, require_folder
from course.ratings import MEANINGS, NAMES
from course.widgets._render import plain_text, to_html
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
    "<p>Saved as <b>Good</b> when you press {button}. Choose <b>Hard</b> if it took effort (it still counts "
    "as remembered) or <b>Easy</b> if it came at once.</p>"
)
# The CSS classes the chrome's style sheet and script look for.
ROOT_CLASS = "course-widget"
OPTION_CLASS = "course-option"  # an option button: the script names it with its tooltip (the option's text)
STATUS_CLASS = "course-status"  # the live region (visually hidden)
SUMMARY_CLASS = "course-summary"  # the summary at the end, focused when it appears
STALE_CLASS = "course-stale"  # where the script says that the kernel does not answer
STALE_TEXT = (
    "Nothing happened? This quiz is not connected to a running kernel any more (it was restarted or "
    "stopped). Run this cell again (Shift+Enter) to start it again."
)
STALE_AFTER_MS = 4000
_STYLE = f"""<style>
.{ROOT_CLASS} {{ --jp-widgets-font-size: var(--jp-content-font-size1, 14px);
  font-size: var(--jp-content-font-size1, 14px); }}
.{ROOT_CLASS} .widget-html-content, .{ROOT_CLASS} .widget-htmlmath-content, .{ROOT_CLASS} .widget-label,
.{ROOT_CLASS} .widget-radio-box label, .{ROOT_CLASS} .jupyter-button, .{ROOT_CLASS} input {{
  font-size: var(--jp-content-font-size1, 14px); }}
.{ROOT_CLASS} .widget-html-content, .{ROOT_CLASS} .widget-htmlmath-content {{ line-height: 1.5; }}
.{ROOT_CLASS} button:focus-visible, .{ROOT_CLASS} input:focus-visible,
.{ROOT_CLASS} [tabindex]:focus-visible {{
  outline: 2px solid var(--jp-brand-color1, #1976d2) !important; outline-offset: 2px !important; }}
.{STATUS_CLASS} {{ position: absolute !important; width: 1px !important; height: 1px !important;
  margin: -1px !important; padding: 0 !important; overflow: hidden !important; clip: rect(0 0 0 0) !important;
  white-space: nowrap !important; border: 0 !important; }}
.{STALE_CLASS}:empty {{ display: none; }}
.{STALE_CLASS} {{ margin: 0.5em 0; padding: 0.5em; border-left: 4px solid var(--jp-warn-color1, #f57c00); }}
</style>"""
# Runs once, when the hidden chrome child is rendered (an image that fails to load: script tags set through
# innerHTML do not run). `this` is the image; everything it touches is inside the widget's root.
_SCRIPT = f"""(function (img) {{
var root = img.closest('.{ROOT_CLASS}');
if (!root || root.hasAttribute('data-lm-suppress-shortcuts')) return;
root.setAttribute('data-lm-suppress-shortcuts', 'true');
var stale = document.createElement('div');
stale.className = '{STALE_CLASS}';
stale.setAttribute('role', 'alert');
root.appendChild(stale);
var timer = null;
function tidy() {{
  root.querySelectorAll('button, input, select, textarea, [tabindex]').forEach(function (el) {{
    if (!el.hasAttribute('data-lm-suppress-shortcuts')) el.setAttribute('data-lm-suppress-shortcuts', 'true');
  }});
  root.querySelectorAll('.widget-radio-box').forEach(function (box) {{
    var group = box.querySelector('input[name]');
    var name = group ? group.name : 'course-radio-' + Math.random().toString(36).slice(2);
    box.querySelectorAll('input[type=radio]:not([name])').forEach(function (r) {{ r.name = name; }});
  }});
  root.querySelectorAll('button.{OPTION_CLASS}[title]').forEach(function (b) {{
    if (b.getAttribute('aria-label') !== b.title) b.setAttribute('aria-label', b.title);
  }});
  root.querySelectorAll('.{STATUS_CLASS}:not([role])').forEach(function (s) {{
    s.setAttribute('role', 'status'); s.setAttribute('aria-live', 'polite');
    s.setAttribute('aria-atomic', 'true');
  }});
  root.querySelectorAll('[data-seen]:not(.{SUMMARY_CLASS})').forEach(function (el) {{
    el.removeAttribute('data-seen');
  }});
  var summary = root.querySelector('.{SUMMARY_CLASS}:not([data-seen])');
  if (summary) {{
    summary.setAttribute('data-seen', '');
    summary.setAttribute('tabindex', '-1');
    var now = document.activeElement;
    if (!now || now === document.body || root.contains(now)) summary.focus();
  }}
}}
new MutationObserver(function (records) {{
  if (records.some(function (r) {{ return !stale.contains(r.target) && r.type !== 'attributes'; }})) {{
    clearTimeout(timer); timer = null; stale.textContent = '';
  }}
  tidy();
}}).observe(root, {{subtree: true, childList: true, characterData: true, attributes: true,
  attributeFilter: ['title', 'class']}});
function waiting(event) {{
  var t = event.target;
  var act = event.type === 'click' ? t.closest && t.closest('button') :
    (event.key === 'Enter' && t.tagName === 'INPUT' && t.type === 'text' ? t : null);
  if (!act || act.disabled || timer !== null) return;
  timer = setTimeout(function () {{
    timer = null; stale.textContent = {json.dumps(STALE_TEXT)};
  }}, {STALE_AFTER_MS});
}}
root.addEventListener('click', waiting, true);
root.addEventListener('keydown', waiting, true);
tidy();
}})(this)"""
CHROME = f'{_STYLE}<img alt="" hidden src="data:," onerror="{html.escape(_SCRIPT)}">'


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


def option_note(*, right: bool, chosen: bool) -> str:
    """What an option was, in the list under a graded question."""
    if right:
        return "your answer, right" if chosen else "the right answer"
    return "your answer"


def html_text(fragment: str) -> str:
    """The words of an HTML fragment made here (tags dropped, entities read): for the live region."""
    return (
        " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())
        .replace(" .", ".")
        .replace(" :", ":")
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

    A path is opened only when needed and closed again right after, so nothing is held between answers, and
    nothing is created before the first answer is saved. A path that names a folder (``COURSE_DB`` or
    `store`), or a file in a folder that does not exist (only the per-user default folder is created, with
    the file), is not an error here: it is raised, as a ``StoreError`` naming the path, where the database is
    used, so that the widget shows it.
    """

    def __init__(self, store: StoreLike) -> None:
        self.store: Store | None = None
        self._path: Path | None = None
        self._problem: StoreError | None = None
        self._named_by = "store"
        if isinstance(store, Store):
            self.store = store
            self._path = Path(store.path)
            return
        if store is None:
            self._named_by = path_source()
        try:
            path = db_path() if store is None else require_file(Path(store).expanduser(), "store")
            self._path = require_folder(path, self._named_by)
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
        """The database: the given `Store`, or the file opened (the caller closes it); opening creates no file
        (with ``create``, the first write does). Raises `StoreError`."""
        if self.store is not None:
            return self.store
        return open_store(self.path, create=create, named_by=self._named_by)

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
    above the rating buttons (`recall_hint`, `right_hint`) and what is said after a right answer
    (`unsaved_note`).

    Grading and the option order follow `course.presenting`: each question shown draws a new order of its
    options from `rng` (a `random.Random`; default a fresh one), kept while it is on screen, so displaying the
    widget again changes nothing. `option_buttons` are in the order shown, labelled A, B, C...
    """

    recall_hint: str = RECALL_HINT
    right_hint: str = RIGHT_HINT  # "{button}": the Next button's label (Next or Finish)
    unsaved_note: str = "Not saved yet: press {button} to save it."  # said after a right answer

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
        # What just happened, in one short sentence, for screen readers (a polite live region, not shown).
        self.status = widgets.HTML()
        self.status.add_class(STATUS_CLASS)
        self.chrome = widgets.HTML(CHROME, layout=widgets.Layout(display="none"))
        self.root = widgets.VBox(
            [
                self.chrome,
                self.title,
                self.progress,
                self.prompt,
                self.answer_area,
                self.feedback,
                self.rating_area,
                self.notice,
                self.status,
            ],
            layout=widgets.Layout(max_width="60em"),
        )
        self.root.add_class(ROOT_CLASS)
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
        self.rating_choice: widgets.RadioButtons | None = None
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

    def _announce(self, *parts: str) -> None:
        """Say `parts` (plain text; empty ones left out) in the live region; cleared first, so that the same
        words are said again."""
        self.status.value = ""
        self.status.value = f"<p>{html.escape(' '.join(part for part in parts if part))}</p>"

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
        self.prompt.remove_class(SUMMARY_CLASS)
        self.prompt.value = to_html(question.prompt)
        self.feedback.value = ""
        self.rating_area.children = ()
        if question.kind == "choice":
            rows = []
            for position, shown in enumerate(self.presentation.shown()):
                # The tooltip is the accessible name too (the chrome's script copies it to aria-label).
                button = widgets.Button(
                    description=f"Answer {shown.label}",
                    tooltip=f"Answer {shown.label}: {plain_text(shown.option.text)}",
                    layout=widgets.Layout(width="auto", min_width="7em"),
                )
                button.add_class(OPTION_CLASS)
                button.on_click(lambda _b, p=position: self._on_option(p))
                self.option_buttons.append(button)
                rows.append(widgets.HBox([button, widgets.HTMLMath(inline_html(shown.option.text))]))
            self.answer_area.children = tuple(rows)
        elif question.kind == "numeric":
            # Only Enter (the box's "submit" message) or Check grades; leaving the box (Tab to Check) does
            # not. The value follows every keystroke, so it has arrived when Enter's message does.
            self.number_input = widgets.Text(
                description="Answer:",
                placeholder="a number, e.g. 64 or 0.125",
                continuous_update=True,
            )
            self.number_input.on_msg(self._on_text_message)
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
        """Replace the question by `summary` (HTML); what happened to the last answer stays in view.

        After the learner's last action (not when the cell first runs) the summary takes the focus (the
        chrome's script) and is said in the live region."""
        self.question = self.presentation = self.verdict = None
        last, self._last_note = self._last_note, None
        self.notice.value = f"<p><i>Last question: {html.escape(last)}</i></p>" if last else ""
        self.prompt.value = summary
        if self._shown_once:
            self.prompt.add_class(SUMMARY_CLASS)
            self._announce(html_text(summary))
        self._shown_once = True
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
            note = (
                f" <i>({option_note(right=shown.right, chosen=shown.chosen)})</i>"
                if shown.right or shown.chosen
                else ""
            )
            text, why = inline_html(shown.option.text), inline_html(shown.option.why)
            lines.append(f"<li>{mark} <b>{shown.label}.</b> {text}{note}: {why}</li>")
        said = f"<b>{_heading(verdict)}.</b>"
        if not verdict.right:
            said += f" The answer is {verdict.answer}."
        self._graded(verdict, said, f"<ul>{''.join(lines)}</ul>")

    def _on_text_message(self, _widget: widgets.Widget, content: dict[str, Any], _buffers: object) -> None:
        """The number box's messages: Enter sends ``{"event": "submit"}`` (ipywidgets 7.7 and 8)."""
        if content.get("event") == "submit":
            self._on_check()

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
            self._announce(html_text(self.notice.value))
            return
        self.answered_at = self._now()
        expected = html.escape(verdict.answer)
        if verdict.right:
            said = f"<b>{_heading(verdict)}:</b> {expected}."
        else:
            said = f"<b>{_heading(verdict)}.</b> You answered {html.escape(text)}; the answer is {expected}."
        self._graded(verdict, f"<p>{said}</p>")

    def _graded(self, verdict: Verdict, said: str, details: str = "") -> None:
        """Show the verdict (`said`, HTML, also said in the live region), the `details` (HTML) and the
        explanation; save a wrong answer now, offer the ratings for a right one (`Verdict.ratings`, its own
        rating preselected)."""
        question = self.question
        assert question is not None and self.answered_at is not None
        self.verdict = verdict
        self.notice.value = ""
        self._disable_answer()
        self.feedback.value = said + details + self._explanation(question)
        if verdict.right:
            intervals = self._safe_intervals(question, self.answered_at)
            # Real radio buttons: the chosen rating is announced as checked (toggle buttons say nothing).
            self.rating_choice = widgets.RadioButtons(
                options=[(rating_label(r, intervals), r) for r in verdict.ratings],
                value=verdict.rating,
                description="Save as:",
            )
            self._label_next()
            button = self.next_button.description
            self.rating_area.children = (
                widgets.HTMLMath(self.right_hint.format(button=button)),
                self.rating_choice,
                self.next_button,
            )
            # the notice may hold a problem met on the way, or that the answer is practice
            self._announce(
                html_text(said), html_text(self.notice.value), self.unsaved_note.format(button=button)
            )
        else:
            self.rating_area.children = (self.next_button,)
            saved = self._try_save(verdict.rating)
            self._label_next()
            if saved:
                self._announce(f"{html_text(said)} {self._last_note}")
        focus(self.next_button)

    def _on_show_answer(self, _button: widgets.Button | None = None) -> None:
        question = self.question
        if question is None or self.answered_at is not None:
            return
        self.answered_at = self._now()
        self._disable_answer()
        answer = to_html(str(question.answer))
        self.feedback.value = f"<p><b>Answer:</b></p>{answer}{self._explanation(question)}"
        before = self.notice.value
        intervals = self._safe_intervals(question, self.answered_at)
        met = html_text(self.notice.value) if self.notice.value != before else ""  # a problem, or practice
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
        self._announce(
            "Answer shown below. How well did you remember it? Choose Again, Hard, Good or Easy.", met
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
            self._announce(html_text(self.notice.value))
            return False
        except (
            Exception
        ) as err:  # a widget callback's exception would otherwise vanish into the browser console
            self.notice.value = unexpected_html(err)
            self._announce(html_text(self.notice.value))
            return False
        self.saved = rating
        self.results.append((question.id, rating))
        if self.rating_choice is not None:
            self.rating_choice.disabled = True
        for button in self.rating_buttons.values():
            button.disabled = True
        self.notice.value = f"<p>{html.escape(note)}</p>"
        self._last_note = note
        self._announce(note)
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
