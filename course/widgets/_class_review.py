"""`class_review(*lessons, room=N)`: a quiz review for a whole room, on the projector, driven by the keyboard.

One question at a time in large type. Space reveals the options (choice questions), then the answer and its
explanation; the right arrow (or Page Down, what presentation clickers send) goes to the next question, the
left arrow (or Page Up) back. The instructor types how many got it right (a show of hands: a count out of
the room) and presses Enter: the count is saved at once to the class-session file (`course.classroom`),
never to any learner's schedule. Finish shows the questions ranked by miss rate and the sections to
revisit, with links.

Showing the widget writes nothing: the session is created with its first count.
"""

from __future__ import annotations

import html
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from course.bank import (
    Bank,
    Kind,
    Presentation,
    Question,
    answer_text,
    inline_html,
    load_bank,
    present,
    to_html,
)
from course.classroom import (
    ClassReview,
    ClassReviewLog,
    ClassReviewLogError,
    class_reviews_path,
    ranked,
    section_link,
    to_revisit,
)
from course.lessons import lesson_id
from course.widgets._chrome import CHROME, ROOT_CLASS, STATUS_CLASS, view_bundle
from course.widgets._clock import Clock, read_clock, real_clock
from course.widgets._projector import CLASS_CLASS, COUNT_CLASS, projector_chrome

__all__ = ["ClassReviewWidget", "class_review", "summary_html"]

_KEYS = {
    " ": "course-reveal",
    "ArrowRight": "course-next",
    "PageDown": "course-next",
    "ArrowLeft": "course-previous",
    "PageUp": "course-previous",
}
_CHROME = projector_chrome(
    _KEYS, "Class review: Space reveals, the arrows move between questions, type the count then Enter"
)


class ClassReviewWidget:
    """The class review of `questions` for a room of `room`. `root` is the widget to display; `stage` is 0
    (the prompt), 1 (the options shown), 2 (the answer shown); the other attributes are for tests."""

    def __init__(
        self,
        questions: Sequence[Question],
        lessons: Sequence[str],
        room: int,
        *,
        sessions: str | Path | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        bank: Bank | None = None,
    ) -> None:
        if room < 1:
            raise ValueError(f"room must be at least 1 person, got {room}")
        if not questions:
            raise ValueError("no questions to review")
        self.questions = tuple(questions)
        self.lessons = tuple(lessons)
        self.room = room
        self.path = class_reviews_path(sessions)
        self.clock = clock or real_clock
        self.bank = bank or load_bank()
        rng = rng or random.Random()
        self.presentations = [present(question, rng) for question in self.questions]
        self.counts: dict[str, int] = {}
        self.session: int | None = None
        self.index = 0
        self.stage = 0
        self.header = widgets.HTML()
        self.prompt = widgets.HTMLMath()
        self.prompt.add_class("course-class-prompt")
        self.options = widgets.VBox()
        self.answer = widgets.HTMLMath()
        self.reveal_button = self._button(
            "Reveal", "Show the options, then the answer (Space)", "course-reveal"
        )
        self.previous_button = self._button("◀ Previous", "The previous question (←)", "course-previous")
        self.next_button = self._button("Next ▶", "The next question (→)", "course-next")
        self.finish_button = self._button("Finish", "End the session and rank the questions", "course-finish")
        # a text box, empty until counted: a count of 0 typed is a change (a number box starting at 0 took
        # none), and a count over the room is refused in words (a bounded box clipped it silently)
        self.count = widgets.Text(
            value="",
            placeholder="0 to " + str(room),
            description="Got it right:",
            continuous_update=False,
            style={"description_width": "initial"},
        )
        # the box's width is the style sheet's (`PROJECTOR_STYLE`): its label and box wrap on a narrow screen
        self.count.add_class(COUNT_CLASS)
        self.count.observe(self._on_count, names="value")
        self.saved = widgets.HTML()
        self.status = widgets.HTML()
        self.status.add_class(STATUS_CLASS)
        self.summary = widgets.HTMLMath()
        bar = widgets.HBox(
            [self.previous_button, self.reveal_button, self.next_button, self.finish_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        of_room = widgets.HTML(f"of {room}")
        of_room.add_class("course-class-of")
        tally = widgets.HBox([self.count, of_room, self.saved])
        self.root = widgets.VBox(
            [
                widgets.HTML(CHROME, layout=widgets.Layout(display="none")),
                widgets.HTML(_CHROME, layout=widgets.Layout(display="none")),
                self.header,
                self.prompt,
                self.options,
                self.answer,
                tally,
                bar,
                self.summary,
                self.status,
            ]
        )
        self.root.add_class(ROOT_CLASS)
        self.root.add_class(CLASS_CLASS)
        self._show()

    def _button(self, label: str, tooltip: str, css: str) -> widgets.Button:
        button = widgets.Button(description=label, tooltip=tooltip)
        button.add_class(css)
        button.on_click(lambda _b: self._act(css))
        return button

    def _act(self, css: str) -> None:
        {
            "course-reveal": self.reveal,
            "course-previous": self.previous,
            "course-next": self.next,
            "course-finish": self.finish,
        }[css]()

    # -- text ---------------------------------------------------------------------------------------------
    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        n, lessons = len(self.questions), ", ".join(self.lessons)
        plural = "s" if len(self.lessons) > 1 else ""
        return (
            f"Class review: {n} question{'' if n == 1 else 's'} from lesson{plural} {lessons}, room of "
            f"{self.room}. Run this cell in JupyterLab to start; Space reveals, the arrows move."
        )

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    # -- moving -------------------------------------------------------------------------------------------
    def reveal(self) -> None:
        """The next step of the current question: its options (choice), then its answer."""
        question = self.questions[self.index]
        last = 2
        self.stage = min(last, self.stage + (1 if question.kind == Kind.CHOICE else 2))
        self._show()

    def next(self) -> None:
        if self.index < len(self.questions) - 1:
            self.index += 1
            self.stage = 0
            self._show()

    def previous(self) -> None:
        if self.index > 0:
            self.index -= 1
            self.stage = 0
            self._show()

    def _show(self) -> None:
        question = self.questions[self.index]
        presentation = self.presentations[self.index]
        n = len(self.questions)
        self.header.value = (
            f"<b>Class review · question {self.index + 1} / {n}</b> · lesson {html.escape(question.lesson)}, "
            f"{html.escape(question.section)}"
        )
        self.prompt.value = to_html(question.prompt)
        self.options.children = self._option_views(presentation) if self.stage >= 1 else ()
        self.answer.value = self._answer_html(question, presentation) if self.stage == 2 else ""
        self.reveal_button.disabled = self.stage == 2
        self.previous_button.disabled = self.index == 0
        self.next_button.disabled = self.index == n - 1
        self.count.unobserve(self._on_count, names="value")
        counted = self.counts.get(question.id)
        self.count.value = "" if counted is None else str(counted)
        self.count.send_state("value")  # also over a digit typed but not saved, which the box still shows
        self.count.observe(self._on_count, names="value")
        self.saved.value = self._saved_text(question)
        stage = ("the question", "the options", "the answer")[self.stage]
        self.status.value = f"Question {self.index + 1} of {n}: showing {stage}."

    def _option_views(self, presentation: Presentation) -> tuple[widgets.Widget, ...]:
        views = []
        for shown in presentation.shown():
            right = self.stage == 2 and shown.right
            mark = " ✓" if right else ""
            view = widgets.HTMLMath(f"<b>{shown.label}.</b> {inline_html(shown.option.text)}{mark}")
            view.add_class("course-class-option")
            if right:
                view.add_class("course-class-right")
            views.append(view)
        return tuple(views)

    def _answer_html(self, question: Question, presentation: Presentation) -> str:
        if question.kind == Kind.CHOICE:
            said = f"Answer: {presentation.right_label}."
        elif question.kind == Kind.NUMERIC:
            said = f"Answer: {html.escape(answer_text(question))}."
        elif question.kind == Kind.CODE:  # a worked solution: a code block, which no paragraph may hold
            return f"<p><b>Answer:</b></p>{to_html(str(question.answer))}{to_html(question.explanation)}"
        else:
            said = f"Answer: {to_html(str(question.answer))}"
        return f"<p><b>{said}</b></p>{to_html(question.explanation)}"

    def _saved_text(self, question: Question) -> str:
        if question.id not in self.counts:
            return "<i>not counted yet: type the count, then Enter</i>"
        return f"saved: {self.counts[question.id]} of {self.room} right"

    # -- counting -----------------------------------------------------------------------------------------
    def _on_count(self, change: dict[str, Any]) -> None:
        typed = str(change["new"]).strip()
        if not typed:
            return
        if not typed.isascii() or not typed.isdigit():
            self._refuse(
                f"{typed!r} is not a count: type how many got it right, a whole number from 0 to {self.room}"
            )
        elif int(typed) > self.room:
            self._refuse(f"{int(typed)} is more than the room of {self.room}: type how many got it right")
        else:
            self.record(int(typed))

    def _refuse(self, why: str) -> None:
        self.saved.value = f"<b>Not saved:</b> {html.escape(why)}"
        self.status.value = f"Not saved: {why}."

    def record(self, right: int) -> None:
        """Save that `right` of the room got the current question right (a new count replaces the old)."""
        question = self.questions[self.index]
        at = read_clock(self.clock)
        try:
            with ClassReviewLog.open(self.path) as log:
                if self.session is None:
                    self.session = log.start(self.lessons, self.room, at)
                log.record(self.session, question.id, right, at)
        except (ClassReviewLogError, OSError) as err:
            self.saved.value = f"<b>Not saved:</b> {html.escape(str(err))}"
            self.status.value = f"Not saved: {err}"
            return
        self.counts[question.id] = right
        self.saved.value = self._saved_text(question)
        self.status.value = f"Saved: {right} of {self.room} right."

    # -- the end ------------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Show the questions ranked by miss rate and the sections to revisit."""
        if self.session is None:
            self.summary.value = "<p>No question was counted, so there is nothing to rank.</p>"
            self.status.value = "No question was counted."
            return
        try:
            with ClassReviewLog.open(self.path, create=False) as log:
                session = next(s for s in log.sessions() if s.id == self.session)
        except (ClassReviewLogError, OSError) as err:
            self.summary.value = f"<p><b>The session cannot be read:</b> {html.escape(str(err))}</p>"
            return
        self.summary.value = summary_html(session, self.bank)
        self.status.value = "Session finished: the questions are ranked below."


def summary_html(session: ClassReview, bank: Bank) -> str:
    """The end of a session as HTML: the ranking table, and the sections to revisit as links."""
    rows = ranked(session, bank)
    lines = [
        "<h3>Most missed first</h3><table><tr><th>missed</th><th>right</th><th>question</th></tr>",
        *(
            f"<tr><td>{row.miss_rate:.0%}</td><td>{row.right} of {row.room}</td>"
            f"<td>{inline_html(row.question.prompt)}</td></tr>"
            for row in rows
        ),
        "</table>",
    ]
    revisit = to_revisit(rows)
    if revisit:
        links = "".join(
            f'<li><a href="{html.escape(section_link(lesson, section))}">lesson {html.escape(lesson)}, '
            f"{html.escape(section)}</a></li>"
            for lesson, section in revisit
        )
        lines.append(f"<h3>Revisit</h3><ul>{links}</ul>")
    else:
        lines.append("<p>Nothing to revisit: more than half the room got every question right.</p>")
    return "".join(lines)


def class_review(
    *lessons: str | int,
    room: int,
    sessions: str | Path | None = None,
    clock: Clock | None = None,
    rng: random.Random | None = None,
) -> ClassReviewWidget:
    """A class review of the questions of `lessons` ("01", 2, ...) for a room of `room` people:
    ``class_review("01", "02", room=24)``. `sessions`: the class-session file (default
    `course.classroom.class_reviews_path()`). ValueError for an unknown lesson or a room under 1."""
    if not lessons:
        raise ValueError('name at least one lesson: class_review("01", room=24)')
    bank = load_bank()
    chosen = [lesson_id(lesson, bank.lessons()) for lesson in lessons]
    questions = [question for lesson in chosen for question in bank.questions(lesson)]
    return ClassReviewWidget(questions, chosen, room, sessions=sessions, clock=clock, rng=rng, bank=bank)
