"""`live_projector(*lessons)`: the instructor's side of a live class review, on the projector.

Start begins a session in the class database (as the instructor's role), in a room (the instructor's own,
named after their role, unless `room` names another: two instructors teaching at once do not collide), and
asks the first question; each learner answers in their own notebook (`live()`, which follows that room).
The projector shows, as the answers arrive (it looks every second), how many have answered and how many
chose each option (or typed each number: only answers the question can have are counted, so nothing else a
learner writes reaches the projector); Reveal (Space) closes the question and marks the right answer; Next
(→) asks the next one; End (or Next after the last) ends the session and ranks the questions by miss rate,
with the sections to revisit. Live answers are kept apart from every learner's schedule.

A code question is answered by code each learner runs beside their own kernel: the projector shows how many
passed and the named mistakes the class made, most common first, by their labels ("causal mask: transposed"),
then how many made another; the reveal shows the card's worked solution. No learner's code reaches the class
database, so none can reach the projector. The end of the session lists each code card's mistakes too.
"""

from __future__ import annotations

import html
import random
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from course.bank import Bank, Kind, Presentation, Question, inline_html, load_bank, present, to_html
from course.classroom import (
    PASSED,
    class_url,
    code_tally_text,
    counted,
    instructor_url,
    is_right,
    layout_text,
    live_questions,
    open_room,
    option_counts,
    right_text,
    session_summary,
)
from course.lessons import lesson_id
from course.widgets._chrome import CHROME, ROOT_CLASS, STATUS_CLASS, view_bundle
from course.widgets._class_review import summary_html
from course.widgets._clock import Clock, read_clock, real_clock
from course.widgets._live_answer import NO_CLASS_DB
from course.widgets._poller import Poller
from course.widgets._projector import CLASS_CLASS, projector_chrome
from scheduler import StoreError

if TYPE_CHECKING:  # psycopg: only for a class database, and only the types here
    from scheduler.postgres import LiveAnswers, LiveRoom, LiveState

__all__ = ["LiveProjectorWidget", "live_prediction", "live_projector"]

_BARS = """<style>
.course-live-row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.2em 0.5em; margin: 0.15em 0;
  font-size: 24px; max-width: 100%; }
.course-live-tally p, .course-live-answer p { font-size: 24px; }
.course-live-bars { align-self: stretch; }
.course-live-bars > .widget-htmlmath-content { flex: 1 1 auto; min-width: 0; }
.course-live-text { flex: 1 1 55%; min-width: min(100%, 12em); max-width: 100%; overflow-wrap: anywhere; }
.course-live-bar { flex: 1 0 30%; min-width: 2em; background: #eee; height: 0.9em; border: 1px solid #000;
  box-sizing: border-box; }
.course-live-bar > span { display: block; height: 100%; background: #2166ac; }
.course-live-right .course-live-bar > span { background: #00441b; }
.course-live-right { font-weight: 700; color: #00441b; }
.course-live-count { flex: 0 0 auto; min-width: 2em; text-align: right; white-space: nowrap; }
</style>"""
# A row wraps where the widget is narrow (320 px): its text takes the whole line, the bar and count the next;
# a long number typed breaks anywhere rather than run past the widget.
# Space reveals, the right arrow (or Page Down) asks the next question.
_KEYS = {" ": "course-reveal", "ArrowRight": "course-next", "PageDown": "course-next"}
_CHROME = projector_chrome(
    _KEYS, "Live class review: Space reveals the answer, the right arrow asks the next question", _BARS
)


class LiveProjectorWidget:
    """A live session over `questions` (choice, numeric and code ones: `course.classroom.LIVE_KINDS`). `root`
    is the widget to display; `refresh` reads the answers to the question asked now (the poller calls it every
    `every` seconds; tests call it). `room` is a `scheduler.postgres.LiveRoom`, default one opened on
    `class_url(db)` as the instructor."""

    def __init__(
        self,
        questions: Sequence[Question],
        lessons: Sequence[str],
        *,
        db: str | None = None,
        room: LiveRoom | None = None,
        room_name: str | None = None,
        title: str | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        every: float | None = 1.0,
        bank: Bank | None = None,
        run: Callable[[], str] | None = None,
    ) -> None:
        if not questions:
            raise ValueError("no choice, numeric or code questions to ask live in these lessons")
        self.questions = tuple(questions)
        self.lessons = tuple(lessons)
        self.bank = bank or load_bank()
        self.url = None if room is not None else class_url(db)
        self.room = room
        self.room_name = room_name  # the room the session runs in (None: the instructor's own)
        self.title = title or f"Lesson{'s' if len(self.lessons) > 1 else ''} {', '.join(self.lessons)}"
        self.clock = clock or real_clock
        self.rng = rng or random.Random()
        self.every = every
        self.run = run  # a prediction asked live: runs the prompt's cells on Reveal, gives what they print
        self.first_round: tuple[int, int] | None = (
            None  # a prediction asked again: round 1's (right, answered)
        )
        self.state: LiveState | None = None  # the session asked now
        self.index = -1
        self.presentation: Presentation | None = None
        self.counts: dict[str, int] = {}
        self.poller: Poller | None = None
        self._lock = threading.RLock()
        self.header = widgets.HTML()
        self.prompt = widgets.HTMLMath()
        self.prompt.add_class("course-class-prompt")
        self.tally = widgets.HTML()
        self.tally.add_class("course-live-tally")
        self.bars = widgets.HTMLMath()
        self.bars.add_class("course-live-bars")  # the whole width, a numeric question's short rows too
        self.answer = widgets.HTMLMath()
        self.answer.add_class("course-live-answer")
        self.notice = widgets.HTML()
        self.status = widgets.HTML()
        self.status.add_class(STATUS_CLASS)
        self.start_button = self._button(
            "Start", "Start the live session and ask the first question", "start"
        )
        self.reveal_button = self._button(
            "Reveal", "Close the question and show the answer (Space)", "reveal"
        )
        self.next_button = self._button("Next ▶", "Ask the next question (→)", "next")
        self.end_button = self._button("End", "End the session and rank the questions", "end")
        bar = widgets.HBox(
            [self.start_button, self.reveal_button, self.next_button, self.end_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.root = widgets.VBox(
            [
                widgets.HTML(CHROME, layout=widgets.Layout(display="none")),
                widgets.HTML(_CHROME, layout=widgets.Layout(display="none")),
                self.header,
                self.prompt,
                self.tally,
                self.bars,
                self.answer,
                bar,
                self.notice,
                self.status,
            ]
        )
        self.root.add_class(ROOT_CLASS)
        self.root.add_class(CLASS_CLASS)
        n = len(self.questions)
        self.header.value = f"<b>Live class review · {html.escape(self.title)}</b> · {n} questions"
        if self.url is None and self.room is None:
            self.prompt.value = f"<p>{html.escape(NO_CLASS_DB)}</p>"
        else:
            self.prompt.value = f"<p>Press Start to begin{self._in_room()}. {self._joining()}</p>"
        self._buttons()

    def _button(self, label: str, tooltip: str, name: str) -> widgets.Button:
        button = widgets.Button(description=label, tooltip=tooltip)
        button.add_class(f"course-{name}")
        button.on_click(lambda _b: getattr(self, name)())
        return button

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        n, lessons = len(self.questions), ", ".join(self.lessons)
        return (
            f"Live class review: {n} question{'' if n == 1 else 's'} from {lessons}. Run this cell in "
            "JupyterLab on the class database and press Start; learners answer with live() in their own "
            "notebooks."
        )

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    def _now(self) -> datetime:
        return read_clock(self.clock)

    def _in_room(self) -> str:
        return "" if self.room_name is None else f" in room “{html.escape(self.room_name)}”"

    def _joining(self) -> str:
        """How learners join (HTML): ``live()``, or naming the room while several sessions run."""
        room = self.room_name if self.state is None else self.state.room
        named = "your room" if room is None else f"“{html.escape(room)}”"
        call = "" if room is None else f'<code>live(room="{html.escape(room)}")</code>'
        return "Learners join with <code>live()</code> in a notebook" + (
            f", or {call} while other rooms run sessions too." if call else f", in {named}."
        )

    def _room(self) -> LiveRoom:
        if self.room is None:
            assert self.url is not None
            self.room = open_room(instructor_url(self.url))
        return self.room

    def _problem(self, err: StoreError) -> None:
        self.notice.value = f"<p><b>Class database problem:</b> {html.escape(str(err))}</p>"
        self.status.value = f"<p>{html.escape(str(err))}</p>"

    # -- running the session ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the session in the class database and ask the first question."""
        with self._lock:
            if self.state is not None or (self.url is None and self.room is None):
                return
            try:
                self.state = self._room().start(self.title, self._now(), self.room_name)
            except StoreError as err:
                self._problem(err)
                return
            self._ask(0)
            if self.every is not None:
                self.poller = Poller(self.refresh, self.every).start()

    def _ask(self, index: int) -> None:
        question = self.questions[index]
        again = self._asked_again(index) and self.presentation is not None
        # asked again, in the same order: the room's letters mean what they meant in the first round
        presentation = self.presentation if again and self.presentation else present(question, self.rng)
        assert self.state is not None  # a question is asked in a session started
        try:
            if again:  # round 1's tally, for the reveal
                counts = self._counted(self._room().answers(self.state.session, self.state.position))
                right = sum(n for answer, n in counts.items() if is_right(question, answer))
                self.first_round = (right, sum(counts.values()))
            self.state = self._room().ask(
                self.state.session, question.id, self._now(), layout_text(presentation)
            )
        except StoreError as err:
            self._problem(err)
            return
        self.index, self.presentation, self.counts = index, presentation, {}
        self.notice.value = self.answer.value = ""
        n = len(self.questions)
        what = f"question {index + 1} / {n}"
        if question.card is not None:  # a prediction: predict, discuss, predict again, then run
            what = "prediction, again after the discussion" if self._asked_again(index) else "prediction"
        self.header.value = (
            f"<b>Live session {self.state.session} · {html.escape(self.title)} · "
            f"{what}</b> · lesson {html.escape(question.lesson)}, "
            f"{html.escape(question.section)} · room “{html.escape(self.state.room)}”"
        )
        self.prompt.value = to_html(question.prompt)
        self._draw()
        self._buttons()
        self.status.value = f"<p>Question {index + 1} of {n} asked.</p>"

    def _asked_again(self, index: int) -> bool:
        """Whether the question at `index` is the one before it asked again (a prediction's second round)."""
        return 0 < index < len(self.questions) and self.questions[index].id == self.questions[index - 1].id

    def _asked_next(self) -> bool:
        """Whether the question asked now is asked again next (a prediction before the discussion)."""
        return self._asked_again(self.index + 1)

    def refresh(self) -> bool:
        """Read the answers to the question asked now and redraw the distribution. True while the session
        runs (the poller stops at False)."""
        with self._lock:
            if self.state is None or self.state.ended:
                return False
            try:
                self.counts = self._counted(self._room().answers(self.state.session, self.state.position))
            except StoreError as err:
                self._problem(err)
                return True
            self.notice.value = ""
            self._draw()
            return True

    def _counted(self, answers: LiveAnswers) -> dict[str, int]:
        """The answers to the question asked now that it can have (`course.classroom.counted`); none before a
        question is shown."""
        if self.presentation is None:
            return {}
        return counted(self.presentation.question, answers.counts)

    def _draw(self) -> None:
        if self.presentation is None:
            return
        answered = sum(self.counts.values())
        passed = (
            f" · {self.counts.get(PASSED, 0)} of {answered} passed"
            if self.presentation.question.kind == Kind.CODE
            else ""
        )
        self.tally.value = f"<p><b>{answered} answered</b>{passed}</p>"
        revealed = bool(self.state is not None and self.state.revealed)
        rows = []
        for row in option_counts(self.presentation, self.counts):
            width = 0 if not answered else round(100 * row.count / answered)
            right = revealed and row.right
            mark = " ✓" if right else ""
            text = (
                f"<b>{html.escape(row.label)}.</b> {inline_html(row.text)}"
                if row.text
                else html.escape(row.label)
            )
            rows.append(
                f'<div class="course-live-row{" course-live-right" if right else ""}">'
                f'<span class="course-live-text">{text}{mark}</span>'
                f'<span class="course-live-bar"><span style="width: {width}%"></span></span>'
                f'<span class="course-live-count">{row.count}</span></div>'
            )
        self.bars.value = "".join(rows)

    def reveal(self) -> None:
        """Close the question to answers and show the right answer and its explanation."""
        with self._lock:
            if self.state is None or self.state.revealed or self.state.ended or self._asked_next():
                return  # a prediction is revealed after its second round only
            try:
                self.state = self._room().reveal(self.state.session, self._now())
                self.counts = self._counted(self._room().answers(self.state.session, self.state.position))
            except StoreError as err:
                self._problem(err)
                return
            assert self.presentation is not None
            question = self.presentation.question
            said = html.escape(right_text(self.presentation))
            if question.kind == Kind.CODE:  # the card's worked solution, a code block: never a learner's code
                self.answer.value = (
                    f"<p><b>A worked solution:</b></p>{to_html(str(question.answer))}"
                    f"{to_html(question.explanation)}"
                )
            else:
                self.answer.value = (
                    f"{self._rounds_html()}{self._ran_html()}<p><b>Answer: {said}.</b></p>"
                    f"{to_html(question.explanation)}"
                )
            self._draw()
            self._buttons()
            self.status.value = f"<p>Answer: {html.escape(right_text(self.presentation))}.</p>"

    def _rounds_html(self) -> str:
        """A prediction asked twice: how many were right before and after the discussion."""
        if self.first_round is None or not self._asked_again(self.index):
            return ""
        assert self.presentation is not None
        question = self.presentation.question
        right = sum(n for answer, n in self.counts.items() if is_right(question, answer))
        before, answered = self.first_round
        return (
            f"<p>Before the discussion: {before} of {answered} right; "
            f"after it: {right} of {sum(self.counts.values())}.</p>"
        )

    def _ran_html(self) -> str:
        """What the prompt's cells print when run now, on Reveal (a prediction asked live)."""
        if self.run is None or self.presentation is None or self.presentation.question.card is None:
            return ""
        try:
            printed = self.run()
        except Exception as err:  # the lesson's cell raised: said on the projector, the session goes on
            printed = f"{type(err).__name__}: {err}"
        return f"<p><b>The cell, run now:</b></p><pre>{html.escape(printed.rstrip())}</pre>"

    def next(self) -> None:
        """Ask the next question (the one asked now closes); after the last, end the session."""
        with self._lock:
            if self.state is None or self.state.ended:
                return
            if self.index + 1 < len(self.questions):
                self._ask(self.index + 1)
            else:
                self.end()

    def end(self) -> None:
        """End the session and rank its questions by miss rate, with the sections to revisit."""
        with self._lock:
            if self.state is None or self.state.ended:
                return
            if self.poller is not None:
                self.poller.stop()
            try:
                room = self._room()
                self.state = room.end(self.state.session, self._now())
                results = room.results(self.state.session)
            except StoreError as err:
                self._problem(err)
                return
            asked = [(item_id, answers.counts) for _, item_id, answers in results]
            summary = session_summary(
                self.state.session, self.state.started_at, self.lessons, asked, self.bank, self._now()
            )
            self.prompt.value = f"<p><b>Live session {self.state.session} ended.</b></p>"
            self.tally.value = self.bars.value = ""
            self.answer.value = (
                summary_html(summary, self.bank) + self._mistakes_html(asked)
                if summary.tallies
                else "<p>Nobody answered a question.</p>"
            )
            self._buttons()
            self.status.value = "<p>Session ended: the questions are ranked below.</p>"

    def _mistakes_html(self, asked: Sequence[tuple[str, dict[str, int]]]) -> str:
        """The code cards the session asked and the class answered, each with how many passed and the named
        mistakes made (`course.classroom.code_tally_text`); "" when it asked none."""
        items = []
        for item_id, given in asked:
            question = self.bank.get(item_id)
            if question is None or question.kind != Kind.CODE:
                continue
            counts = counted(question, given)
            if counts:
                items.append(
                    f"<li>{html.escape(question.id)} (lesson {html.escape(question.lesson)}, "
                    f"{html.escape(question.section)}): {html.escape(code_tally_text(question, counts))}</li>"
                )
        return f"<h3>Code cards: the mistakes made</h3><ul>{''.join(items)}</ul>" if items else ""

    def _buttons(self) -> None:
        running = self.state is not None and not self.state.ended
        ready = self.url is not None or self.room is not None
        self.start_button.disabled = not ready or self.state is not None
        # a prediction is revealed after its second round only (predict, discuss, predict again)
        self.reveal_button.disabled = (
            self.state is None or self.state.ended or self.state.revealed or self._asked_next()
        )
        self.next_button.disabled = not running
        self.end_button.disabled = not running
        last = self.index + 1 >= len(self.questions)
        again = running and self._asked_next()
        self.next_button.description = "Finish" if running and last else "Ask again ▶" if again else "Next ▶"


def live_projector(
    *lessons: str | int,
    room: str | None = None,
    db: str | None = None,
    title: str | None = None,
    clock: Clock | None = None,
    rng: random.Random | None = None,
) -> LiveProjectorWidget:
    """A live class review of the choice, numeric and code questions of `lessons`, run by the instructor on
    the projector: ``live_projector("01", "02")``, in the instructor's own room (named after their role) or in
    `room` (``live_projector("01", room="Hall B")``; learners join it with ``live()``, or ``live(room="Hall
    B")`` while other rooms run sessions too). The class database is `db` or ``$COURSE_DB`` (the
    instructor's role). ValueError for an unknown lesson or lessons without such questions."""
    if not lessons:
        raise ValueError('name at least one lesson: live_projector("01")')
    bank = load_bank()
    chosen = [lesson_id(lesson, bank.lessons()) for lesson in lessons]
    questions = live_questions(bank, chosen)
    return LiveProjectorWidget(
        questions, chosen, db=db, room_name=room, title=title, clock=clock, rng=rng, bank=bank
    )


def live_prediction(
    prediction_id: str,
    *,
    room: str | None = None,
    db: str | None = None,
    clock: Clock | None = None,
    rng: random.Random | None = None,
    run: Callable[[], str] | None = None,
) -> LiveProjectorWidget:
    """Peer instruction on one Predict prompt, on the projector: ``live_prediction("02-predict-variance")``.
    Start asks the room to predict (learners answer with ``live()``); after the discussion, Ask again asks the
    same prediction once more; Reveal runs the prompt's cells in this kernel (its lesson's cells after the
    widget, the check cell last, from the instructor notebook; `run` replaces that), shows what they print,
    the two rounds' counts and the answer. KeyError for an unknown prediction."""
    bank = load_bank()
    question = bank.prediction(prediction_id)
    title = f"Prediction {question.id}"
    return LiveProjectorWidget(
        (question, question),
        (question.lesson,),
        db=db,
        room_name=room,
        title=title,
        clock=clock,
        rng=rng,
        bank=bank,
        run=run if run is not None else _cells_runner(question),
    )


def _cells_runner(question: Question, namespace: dict[str, Any] | None = None) -> Callable[[], str]:
    """Run the cells that answer `question` in `namespace` (default this kernel's: the instructor's lesson
    notebook, run up to its prompt), and give what they print."""

    def run() -> str:
        import contextlib
        import io

        from course.publishing import INSTRUCTOR_DIR, answer_cells

        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:
            shell = None
        names = namespace if namespace is not None else shell.user_ns if shell is not None else {}
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            for source in answer_cells(question, INSTRUCTOR_DIR):
                exec(compile(source, f"<{question.id}>", "exec"), names)
        return printed.getvalue()

    return run
