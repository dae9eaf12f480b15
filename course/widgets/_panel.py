"""The question panel the quiz, the review and the practice widgets are made of.

The panel shows one question at a time and grades it by the rules of `course.bank` (a new order of the
options each time a question is shown; wrong = Again, right = Good unless the learner picks Hard or Easy);
what happens to an answer (where it is saved, which question comes next) is left to the subclass. An answer
is saved exactly once, as soon as its rating is known: a wrong auto-graded answer at "Check" or "Run and
check" (it can only be Again), a right one on "Next" (Good unless the learner picked Hard or Easy: the log
is append-only, so it waits for the final rating, and the hint above the ratings says so), a recall answer
when a rating button is pressed. What happened to the last answer stays in view under the next question, or
under the summary after the last one. A code answer is run apart from the kernel, in a process limited to
`CODE_SECONDS` and `CODE_MEMORY` (`course.checkers.run_code_limited`, on whatever thread the widget's callback
runs), and graded by its card's checker: right or wrong as the auto-graded kinds, the checker's sentence said,
and a worked solution shown after the attempt. A syntax error is shown with its line and saves nothing (a slip
of the keys, not a lapse of memory): the learner fixes it and runs it again. How it looks and behaves in the
browser is `course.widgets._chrome`.
"""

from __future__ import annotations

import contextlib
import html
import random
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, tzinfo
from types import MappingProxyType
from typing import TYPE_CHECKING

import ipywidgets as widgets

from course.bank import (
    NAMES,
    RECALL_RATINGS,
    Kind,
    Presentation,
    Question,
    Verdict,
    final_rating,
    grade_choice,
    grade_number,
    inline_html,
    plain_text,
    present,
    to_html,
)
from course.lessons import lesson_title
from course.progress import PROBLEMS, StoreSource, local_tz, sent_note, waiting_note
from course.widgets._chrome import (
    CHROME,
    OPTION_CLASS,
    ROOT_CLASS,
    STATUS_CLASS,
    SUMMARY_CLASS,
    focus,
    focus_here,
)
from course.widgets._clock import Clock, duration_ms, read_clock, real_clock
from course.widgets._code import CodeAnswer
from course.widgets._texts import (
    RECALL_HINT,
    RIGHT_HINT,
    error_html,
    heading,
    html_text,
    option_note,
    rating_label,
    rating_tooltip,
    unexpected_html,
    unwritable_html,
)
from course.widgets._typed import TypedAnswer
from scheduler import Rating

if TYPE_CHECKING:
    from course.checkers import CodeVerdict

__all__ = ["CODE_MEMORY", "CODE_SECONDS", "CONTROLS", "QuestionPanel", "option_rows"]

CODE_SECONDS = 10.0  # a learner's code still running after this long is stopped and said to be
CODE_MEMORY = 1 << 30  # ... and one that holds more memory than this (run_code_limited)


def run_learner_code(code: str, question: Question) -> CodeVerdict:
    """Grade `code`, a learner's answer to code question `question`, apart from the kernel, within
    `CODE_SECONDS` and `CODE_MEMORY` (read as it runs: the tests change them)."""
    from course.checkers import run_code_limited  # numpy and the checkers: only once code is run

    assert question.function is not None and question.checker is not None  # a code question's own
    return run_code_limited(
        code,
        question.function,
        question.checker,
        seconds=CODE_SECONDS,
        memory_bytes=CODE_MEMORY,
        starter=question.starter,
    )


class QuestionPanel:
    """One question at a time: prompt, answer controls, feedback, ratings, Next.

    Subclasses implement `_intervals` (labels of the rating buttons), `_save` (record one answer and return a
    note for the learner) and `_advance` (show the next question or the end). They may replace the hints shown
    above the rating buttons (`recall_hint`, `right_hint`: "{rating}", the rating Next saves, follows the
    learner's choice) and what is said after a right answer (`unsaved_note`) or another rating's choice
    (`chosen_note`).

    Grading and the option order follow `course.bank`: each question shown draws a new order of its
    options from `rng` (a `random.Random`; default a fresh one), kept while it is on screen, so displaying the
    widget again changes nothing. `option_buttons` are in the order shown, labelled A, B, C...
    """

    source: StoreSource  # where answers are saved: set by each widget
    recall_hint: str = RECALL_HINT
    right_hint: str = RIGHT_HINT  # "{button}": Next or Finish; "{rating}": the rating it saves
    unsaved_note: str = "Not saved yet: press {button} to save it."  # said after a right answer
    chosen_note: str = "Saved as {rating} when you press {button}."  # said when another rating is picked

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
        self.code: CodeAnswer | None = None  # a code question's box and "Run and check"
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
        self.code = None
        self.rating_buttons = {}
        self.rating_choice = None
        self.prompt.remove_class(SUMMARY_CLASS)
        self.prompt.value = to_html(question.prompt)
        self.feedback.value = ""
        self.rating_area.children = ()
        self.answer_area.children = CONTROLS[Kind(question.kind)](self, question)
        # To the question, never to an answer control: a habitual Enter or Shift+Enter must not answer it.
        if self._shown_once:  # not when the cell first runs: that would pull focus out of the notebook
            focus_here(self.prompt)
        self._shown_once = True

    # The answer controls of each kind of question (`course.bank`), registered in `CONTROLS` below.

    def _choice_controls(self, question: Question) -> tuple[widgets.Widget, ...]:
        """One button per option, in the order presented, each beside its text."""
        assert self.presentation is not None  # drawn by `_show` just before
        self.option_buttons, rows = option_rows(self.presentation, self._on_option)
        return rows

    def _numeric_controls(self, question: Question) -> tuple[widgets.Widget, ...]:
        """A text box, the unit and Check. Only Enter or Check grades, on the text typed (`TypedAnswer`);
        leaving the box (Tab to Check) does not."""
        typed = TypedAnswer(
            self._on_check, unit=question.unit, label="Check", tooltip="Check your answer (or press Enter)"
        )
        self.number_input, self.check_button = typed.box, typed.button
        return (typed.row,)

    def _code_controls(self, question: Question) -> tuple[widgets.Widget, ...]:
        """A code box prefilled with the starter, its keys, and "Run and check". Only Shift+Enter or the
        button runs the code, exactly as typed (`CodeAnswer`)."""
        assert question.function is not None and question.starter is not None  # a code question's own
        self.code = CodeAnswer(self._on_run, function=question.function, starter=question.starter)
        return (self.code.row,)

    def _recall_controls(self, question: Question) -> tuple[widgets.Widget, ...]:
        """Show answer: the learner recalls first, then grades themselves."""
        self.show_button = widgets.Button(
            description="Show answer",
            tooltip="Recall the answer first, then show it and grade yourself",
        )
        self.show_button.on_click(self._on_show_answer)
        return (self.show_button,)

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
            focus_here(self.prompt)
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
        said = f"<b>{heading(verdict)}.</b>"
        if not verdict.right:
            said += f" The answer is {verdict.answer}."
        self._graded(verdict, said, f"<ul>{''.join(lines)}</ul>")

    def _on_check(self, typed: str) -> None:
        """Grade `typed`, the text in the number box when Enter or Check was pressed."""
        question = self.question
        if question is None or self.answered_at is not None or self.number_input is None:
            return
        text = typed.strip()
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
            said = f"<b>{heading(verdict)}:</b> {expected}."
        else:
            said = f"<b>{heading(verdict)}.</b> You answered {html.escape(text)}; the answer is {expected}."
        self._graded(verdict, f"<p>{said}</p>")

    def _on_run(self, code: str) -> None:
        """Run `code`, the text in the code box when Shift+Enter or "Run and check" was pressed, and grade it
        by the question's checker (`course.checkers.run_code_limited`: never a traceback, one sentence)."""
        question = self.question
        if question is None or self.answered_at is not None or self.code is None:
            return
        function, checker, solution = question.function, question.checker, question.solution
        assert function is not None and checker is not None and solution is not None  # a code question's
        self.answered_at = self._now()  # the learner's time ends here, not after the code has run
        self.code.show(code)
        self.code.disable()
        self.notice.value = "<p>Running your code…</p>"
        try:
            result = run_learner_code(code, question)
        except KeyboardInterrupt:  # Kernel → Interrupt: not an answer
            self._not_run(
                "<p><b>Your code was stopped</b> before it finished (the kernel was interrupted). Nothing "
                "was saved: change it and run it again.</p>"
            )
            return
        except Exception as err:  # a bug in the course, not in the learner's code: say so, let them retry
            detail = html.escape(f"{type(err).__name__}: {err}")
            self._not_run(
                f"<p><b>✗ Could not run your code</b> ({detail}). Nothing was saved. This is a bug in the "
                "course: please report it with this message.</p>"
            )
            return
        if result.retry:  # a syntax error: a slip of the keys, not a lapse of memory
            sentence = html.escape(result.sentence.removeprefix("✗").strip())
            self._not_run(f"<p><b>✗ {sentence}</b> Nothing was saved: fix it and run it again.</p>")
            return
        verdict = Verdict(result.ok, solution, code)
        sentence = html.escape(result.sentence.strip().removeprefix("✓").removeprefix("✗").strip())
        said = f"<p><b>{heading(verdict)}:</b> {sentence}</p>"
        compare = "A worked solution, to compare with yours:" if verdict.right else "A worked solution:"
        shown = to_html(str(question.answer))  # the solution, as a fenced code block
        self._graded(verdict, said, f"<p><b>{compare}</b></p>{shown}")

    def _not_run(self, why: str) -> None:
        """The code was not judged: say `why` (HTML), and let the learner edit it and run it again."""
        self.answered_at = None
        if self.code is not None:
            self.code.box.disabled = self.code.button.disabled = False
        self.notice.value = why
        self._announce(html_text(why))

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
            hint = widgets.HTMLMath(self._right_hint(verdict.rating))
            self.rating_choice.observe(lambda _change: self._chosen(hint), names="value")
            self.rating_area.children = (hint, self.rating_choice, self.next_button)
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

    def _right_hint(self, rating: Rating) -> str:
        """What the hint above a right answer's ratings says: the rating Next will save, and the others."""
        return self.right_hint.format(button=self.next_button.description, rating=NAMES[rating])

    def _chosen(self, hint: widgets.HTMLMath) -> None:
        """The learner picked another rating for a right answer: say what Next will save now."""
        if self.rating_choice is None or self.saved is not None:
            return
        rating = Rating(self.rating_choice.value)
        hint.value = self._right_hint(rating)
        self._announce(self.chosen_note.format(rating=NAMES[rating], button=self.next_button.description))

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
        # Anything else is a bug; a widget callback's exception would otherwise vanish into the console.
        except Exception as err:
            self.notice.value = unexpected_html(err)
            self._announce(html_text(self.notice.value))
            return False
        sent = sent_note(self.source.take_sent())  # kept answers sent on the way: say so
        note = f"{sent} {note}" if sent else note
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
    def _unwritable(self) -> str | None:
        """Why an answer could not be saved now (HTML), checked before a question is asked; None if it can."""
        try:
            self.source.check_writable()
        except PROBLEMS as err:
            return unwritable_html(err)
        return None

    def _outbox_html(self) -> str:
        """What a summary says of the answers kept while the class database could not be reached: those
        sent since the last note, those still waiting (tried once more first); "" when there are none."""
        if self.source.outbox is not None:
            with contextlib.suppress(*PROBLEMS):  # not now: they wait (an unreadable outbox is said below)
                self.source.send_pending()
        notes, problem = [sent_note(self.source.take_sent())], ""
        try:
            notes.append(waiting_note(self.source.waiting()))
        except PROBLEMS as err:
            problem = error_html(err, unsaved=False)
        return "".join(f"<p>{html.escape(note)}</p>" for note in notes if note) + problem

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
        if self.code is not None:
            self.code.disable()

    def _label_next(self) -> None:
        """Subclasses may say where Next leads (e.g. "Finish" on the last question)."""

    def _explanation(self, question: Question) -> str:
        title = lesson_title(question.lesson)
        lesson, section = html.escape(question.lesson), html.escape(question.section)
        see = f"See: lesson {lesson} ({html.escape(title)}), section “{section}”."
        return f"{to_html(question.explanation)}<p><i>{see}</i></p>"


def option_rows(
    presentation: Presentation, pick: Callable[[int], None]
) -> tuple[list[widgets.Button], tuple[widgets.Widget, ...]]:
    """A choice question's options in the order presented: one button per option ("Answer A"), each beside its
    text; a click calls `pick` with the shown position. The buttons, and the rows to display."""
    buttons, rows = [], []
    for position, shown in enumerate(presentation.shown()):
        # The tooltip is the accessible name too (the chrome's script copies it to aria-label).
        button = widgets.Button(
            description=f"Answer {shown.label}",
            tooltip=f"Answer {shown.label}: {plain_text(shown.option.text)}",
            layout=widgets.Layout(width="auto", min_width="7em"),
        )
        button.add_class(OPTION_CLASS)
        button.on_click(lambda _b, p=position: pick(p))
        buttons.append(button)
        rows.append(widgets.HBox([button, widgets.HTMLMath(inline_html(shown.option.text))]))
    return buttons, tuple(rows)


CONTROLS: Mapping[Kind, Callable[[QuestionPanel, Question], tuple[widgets.Widget, ...]]] = MappingProxyType(
    {
        Kind.CHOICE: QuestionPanel._choice_controls,
        Kind.NUMERIC: QuestionPanel._numeric_controls,
        Kind.RECALL: QuestionPanel._recall_controls,
        Kind.CODE: QuestionPanel._code_controls,
    }
)
"""How the widgets show each kind of question (`course.bank`): one method per kind, building its controls."""
