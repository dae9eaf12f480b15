"""`live()`: a learner's side of a live class review, in the learner's own kernel.

It follows one room of the class database: the room named (``live(room=...)``, or ``$COURSE_ROOM``), else
the room of the one session running (several running: it lists their rooms, each with a button to join, and
waits for the learner's choice); a session started in another room never moves it. It shows the question the
instructor asks now, with the options in the projector's order and labels, and sends
the learner's answer, which may be changed until the instructor reveals it; then it says whether it was right,
with the explanation. It looks at the class database every second (`Poller`). Live answers are kept apart
from the learner's schedule.

A code question shows a code box (`course.widgets._code`, the starter code in it): "Run and check" runs the
code apart from the learner's kernel, by the card's checker (`course.checkers.run_code_limited`, within
`CODE_SECONDS` and `CODE_MEMORY`), and shows the checker's sentence (a syntax error is shown and sends
nothing); only what `course.classroom.code_answer` makes of the verdict is sent (a number: passed, which of
the card's named mistakes, or another), never the code. The learner may change the code and run it again until
the reveal, which shows the worked solution.

When the class database cannot be reached (or does not answer within its deadline), an answer is kept in the
widget and sent at the next look that reaches it; the learner is told both times, and told if the question
closed meanwhile. While the widget looks in the background (a `Poller`), a click never waits for the class
database: the answer is sent from a thread of its own, and the widget says what became of it.
"""

from __future__ import annotations

import html
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from course.bank import Bank, Kind, Presentation, Question, load_bank, plain_text, to_html
from course.classroom import (
    LIVE_KINDS,
    PASSED,
    answer_of,
    class_url,
    code_answer,
    is_right,
    mistake_label,
    numeric_answer,
    open_room,
    presentation_of,
    right_text,
    room_of,
    rooms_text,
    shown_answer,
)
from course.widgets._chrome import CHROME, LIVE_CLASS, ROOT_CLASS, STATUS_CLASS, focus_here, view_bundle
from course.widgets._clock import Clock, read_clock, real_clock
from course.widgets._code import CodeAnswer
from course.widgets._panel import option_rows
from course.widgets._poller import Poller
from course.widgets._texts import html_text, verdict_html
from course.widgets._typed import TypedAnswer
from scheduler import StoreError, StoreUnavailableError

if TYPE_CHECKING:  # psycopg: only for a class database, and only the types here
    from scheduler.postgres import LiveRoom, LiveState

__all__ = ["NO_CLASS_DB", "LiveAnswerWidget", "live"]

NO_CLASS_DB = (
    "Live class review needs the class database: your instructor's JupyterHub sets COURSE_DB to it. "
    "On your own, there is no live session to join."
)
TEXT = (
    "Live class review: run this cell in JupyterLab during class to answer the questions your instructor "
    "asks; your answers are counted on the projector, not in your review schedule."
)


class LiveAnswerWidget:
    """A learner's view of a live session. `root` is the widget to display; `refresh` looks at the class
    database once (the poller calls it every `every` seconds; tests call it). `room` is a
    `scheduler.postgres.LiveRoom`, default one opened on `class_url(db)`. With `background` (default: when it
    polls) an answer is sent from a thread, never from the click's (the kernel's) own: `wait_sent` waits for
    it."""

    def __init__(
        self,
        *,
        db: str | None = None,
        session: int | None = None,
        room: LiveRoom | None = None,
        room_name: str | None = None,
        clock: Clock | None = None,
        every: float | None = 1.0,
        bank: Bank | None = None,
        background: bool | None = None,
    ) -> None:
        self.bank = bank or load_bank()
        self.background = every is not None if background is None else background
        self._unusable: StoreError | None = None  # why the class database cannot be used, if it cannot
        try:
            self.url = None if room is not None else class_url(db)
        except StoreError as err:  # a learner's name the class database cannot have: said below
            self.url, self._unusable = None, err
        self.room = room
        self.follow = session
        self.joined = room_name  # the room followed (None: not chosen yet)
        self._choosing: tuple[tuple[str, str, str], ...] = ()  # the rooms offered, while several run
        self.clock = clock or real_clock
        self.state: LiveState | None = None  # the session shown
        self.question: Question | None = None
        self.presentation: Presentation | None = None
        self.mine: str | None = None  # this learner's answer to the question shown, as recorded
        self.pending: str | None = None  # an answer kept here until the class database is back
        self.sending: str | None = None  # an answer a thread is sending now (`background`)
        self._sender: threading.Thread | None = None
        self.revealed = False
        self.ended: set[int] = set()  # sessions seen to end
        self.verdicts: dict[int, bool] = {}  # position -> right, for the questions answered and revealed
        self._lock = threading.RLock()  # held while the class database is used: never taken by a click
        self._trouble = False  # the last look could not reach the class database
        self.header = widgets.HTML()
        self.prompt = widgets.HTMLMath()
        self.answer_area = widgets.VBox()
        self.feedback = widgets.HTMLMath()
        self.notice = widgets.HTML()
        self.status = widgets.HTML()
        self.status.add_class(STATUS_CLASS)
        self.option_buttons: list[widgets.Button] = []
        self.number_input: widgets.Text | None = None
        self.code: CodeAnswer | None = None  # a code question's box and "Run and check"
        self.sentence: str | None = None  # the checker's sentence on the code last run (never sent)
        self.root = widgets.VBox(
            [
                widgets.HTML(CHROME, layout=widgets.Layout(display="none")),
                self.header,
                self.prompt,
                self.answer_area,
                self.feedback,
                self.notice,
                self.status,
            ],
            layout=widgets.Layout(max_width="60em"),
        )
        self.root.add_class(ROOT_CLASS)
        self.root.add_class(LIVE_CLASS)  # its option buttons are a choice one may change: pressed or not
        self.poller: Poller | None = None
        if self.url is None and self.room is None:
            self.header.value = "<h3>Live class review</h3>"
            self.prompt.value = f"<p>{html.escape(NO_CLASS_DB)}</p>"
            return
        self._waiting()
        self.refresh()
        if every is not None:
            self.poller = Poller(self.refresh, every).start()

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        return TEXT

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    def close(self) -> None:
        """Stop looking at the class database and close the connection."""
        if self.poller is not None:
            self.poller.stop()
        if self.room is not None and self.url is not None:
            self.room.close()

    def _now(self) -> datetime:
        return read_clock(self.clock)

    def _room(self) -> LiveRoom:
        if self._unusable is not None:
            raise self._unusable
        if self.room is None:
            assert self.url is not None
            self.room = open_room(self.url)
        return self.room

    # -- following the session ----------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Look at the class database once: send a kept answer, show a new question, a reveal or the end.
        Returns True (keep looking)."""
        with self._lock:
            try:
                room = self._room()
                state = self._look(room)
                if self._trouble:  # reached again: the problem shown is over
                    self._trouble = False
                    self.notice.value = ""
                self._send_pending(room)
                if state is None and self.state is not None and self.state.session not in self.ended:
                    state = room.state(self.state.session)  # ended since the last look
                self._follow(room, state)
            except StoreError as err:
                self._trouble = True
                said = "cannot be reached" if isinstance(err, StoreUnavailableError) else "cannot be used"
                self.notice.value = (
                    f"<p><b>The class database {said}</b> ({html.escape(str(err))}). "
                    "Trying again every second.</p>"
                )
            return True

    def _look(self, room: LiveRoom) -> LiveState | None:
        """The session followed now: the one named; else the one running in the room joined; else (no room
        chosen) the one session running, whose room is joined from now on. None while there is none, or while
        several run and the learner has not chosen (they are offered)."""
        if self.follow is not None:
            return room.state(self.follow)
        if self.joined is not None:
            return room.state(room=self.joined)
        running = room.open_sessions()
        if len(running) == 1:
            self._offer(())
            self.joined = running[0].room
            return running[0]
        self._offer(tuple(running))
        return None

    def _offer(self, running: tuple[LiveState, ...]) -> None:
        """Show the rooms of the sessions `running` (several), each with a button that joins it; () when
        there is nothing to choose (any more)."""
        offered = tuple((state.room, state.instructor, state.title) for state in running)
        if offered == self._choosing:
            return
        self._choosing = offered
        if not running:
            self._waiting()
            return
        self.header.value = "<h3>Live class review</h3>"
        self.prompt.value = f"<p>{html.escape(rooms_text(running))}</p>"
        buttons = []
        for state in running:
            button = widgets.Button(description=f"Join {state.room}", tooltip=f"Follow room {state.room}")
            button.on_click(lambda _b, chosen=state.room: self.join(chosen))
            buttons.append(button)
        self.answer_area.children = (widgets.HBox(buttons, layout=widgets.Layout(flex_flow="row wrap")),)
        self._announce(rooms_text(running))

    def join(self, room: str) -> None:
        """Follow `room` from now on (a button of the rooms offered): at the next look, or now when the
        widget does not look by itself."""
        self.joined, self._choosing = room, ()
        self.answer_area.children = ()
        self.prompt.value = f"<p>Joining room “{html.escape(room)}”…</p>"
        if self.poller is None:
            self.refresh()

    def _follow(self, room: LiveRoom, state: LiveState | None) -> None:
        if state is None:
            if self.state is None or self.state.session in self.ended:
                return
            self._waiting()
            return
        if state.ended:
            if state.session not in self.ended:
                self.ended.add(state.session)
                if self.state is not None and self.state.position == state.position and not self.revealed:
                    self._reveal(state)
                self._end()
            return
        new = self.state is None or (self.state.session, self.state.position) != (
            state.session,
            state.position,
        )
        if new:
            self.notice.value = self._moved_on()
        self.state = state
        if new and state.item_id is not None:
            self._show(room, state)
        elif state.item_id is None:
            self._started(state)
        if state.revealed and not self.revealed:
            self._reveal(state)

    def _moved_on(self) -> str:
        """The instructor moved on without revealing the question shown: its verdict, as a note (HTML)."""
        question, presentation = self.question, self.presentation
        if (
            self.revealed
            or self.state is None
            or question is None
            or presentation is None
            or self.mine is None
        ):
            return ""
        right = is_right(question, self.mine)
        self.verdicts[self.state.position] = right
        if question.kind == Kind.CODE:
            return f"<p><i>Previous question: {html.escape(_code_said(question, self.mine))}.</i></p>"
        answer = html.escape(right_text(presentation))
        said = "✓ right" if right else f"✗ you answered {html.escape(shown_answer(presentation, self.mine))}"
        return f"<p><i>Previous question: {said}; the answer was {answer}.</i></p>"

    def _waiting(self) -> None:
        self.header.value = "<h3>Live class review</h3>"
        self.prompt.value = "<p>Waiting for your instructor to start a live session…</p>"
        self.answer_area.children = ()
        self.feedback.value = ""

    def _started(self, state: LiveState) -> None:
        self.header.value = f"<h3>Live class review: {html.escape(state.title)}</h3>"
        self.prompt.value = "<p>The session has started: the first question comes in a moment.</p>"

    def _show(self, room: LiveRoom, state: LiveState) -> None:
        self.question = None if state.item_id is None else self.bank.find(state.item_id)
        self.revealed = False
        self.pending = None
        self.option_buttons, self.number_input, self.code, self.sentence = [], None, None, None
        self.feedback.value = ""
        self.header.value = (
            f"<h3>Live class review: {html.escape(state.title)}</h3><p><b>Question {state.position}</b></p>"
        )
        if self.question is None or self.question.kind not in LIVE_KINDS:
            self.presentation = None
            self.prompt.value = (
                "<p>This question is not in your copy of the course: answer on the projector.</p>"
            )
            self.answer_area.children = ()
            return
        self.presentation = presentation_of(self.question, state.layout)
        self.mine = room.my_answer(state.session, state.position)  # after a kernel restart: still yours
        self.prompt.value = to_html(self.question.prompt)
        self.answer_area.children = self._controls(self.question, self.presentation)
        self._mark_mine()
        if self.question.kind == Kind.CODE and self.mine is not None:  # the code itself was never kept
            self.notice.value = (
                f"<p>Sent already: {html.escape(shown_answer(self.presentation, self.mine))}. Run your code "
                "again to change it.</p>"
            )
        self._announce(f"Question {state.position}: {plain_text(self.question.prompt)}")
        focus_here(self.prompt)  # the last question's buttons are gone: the focus goes to the new question

    def _controls(self, question: Question, presentation: Presentation) -> tuple[widgets.Widget, ...]:
        if question.kind == Kind.NUMERIC:
            tooltip = "Send your answer (or press Enter)"
            typed = TypedAnswer(self.answer_number, unit=question.unit, label="Send", tooltip=tooltip)
            self.number_input = typed.box
            return (typed.row,)
        if question.kind == Kind.CODE:
            assert question.function is not None and question.starter is not None  # a code question's own
            self.code = CodeAnswer(self.answer_code, function=question.function, starter=question.starter)
            return (self.code.row,)
        self.option_buttons, rows = option_rows(presentation, self.answer_choice)
        return rows

    # -- answering ----------------------------------------------------------------------------------------
    def answer_choice(self, position: int) -> None:
        """Send the option shown at `position` (0 = A)."""
        if self.presentation is not None and self.question is not None and self.question.kind == Kind.CHOICE:
            self._send(answer_of(self.presentation, position))

    def answer_number(self, typed: str | None = None) -> None:
        """Send the number typed: `typed`, the text in the box when Enter or Send was pressed (default: the
        box's value)."""
        if self.number_input is None or self.question is None:
            return
        text = (self.number_input.value if typed is None else typed).strip()
        try:
            answer = numeric_answer(self.question, text)  # the number, written one way
        except ValueError:
            shown = html.escape(repr(text)) if text else "Nothing typed"
            self.notice.value = f"<p>✗ {shown}: type a number, e.g. 64 or 0.125.</p>"
            self._announce(html_text(self.notice.value))
            return
        self._send(answer)

    def answer_code(self, code: str | None = None) -> None:
        """Run `code` (default: the code box's) here by the card's checker, show its sentence, and send what
        it makes of the verdict (`course.classroom.code_answer`: a number, never the code)."""
        question, state = self.question, self.state
        if self.code is None or question is None or state is None or self.revealed:
            return
        function, checker = question.function, question.checker
        assert function is not None and checker is not None  # a code question's own
        code = self.code.box.value if code is None else code
        self.code.show(code)
        self.code.disable()  # while it runs
        try:
            from course.widgets._panel import run_learner_code

            verdict = run_learner_code(code, question)
        except KeyboardInterrupt:  # Kernel → Interrupt: nothing to send
            self._not_run(
                "<p><b>Your code was stopped</b> before it finished (the kernel was interrupted). Nothing "
                "was sent: change it and run it again.</p>"
            )
            return
        except Exception as err:  # a bug in the course, not in the learner's code: say so, let them retry
            detail = html.escape(f"{type(err).__name__}: {err}")
            self._not_run(
                f"<p><b>✗ Could not run your code</b> ({detail}). Nothing was sent. This is a bug in the "
                "course: please report it with this message.</p>"
            )
            return
        if self.code is None or self.revealed or not _same_question(self.state, state):
            return  # the question closed while the code ran: nothing to send
        if verdict.retry:  # a syntax error: a slip of the keys
            sentence = html.escape(verdict.sentence.removeprefix("✗").strip())
            self._not_run(f"<p><b>✗ {sentence}</b> Nothing was sent: fix it and run it again.</p>")
            return
        self.code.box.disabled = self.code.button.disabled = False  # it may be changed until the reveal
        self.sentence = verdict.sentence.strip()
        self.feedback.value = verdict_html(self.sentence)
        self._send(code_answer(question, verdict.ok, self.sentence))

    def _not_run(self, why: str) -> None:
        """The code was not judged: say `why` (HTML), and let the learner edit it and run it again."""
        if self.code is not None:
            self.code.box.disabled = self.code.button.disabled = False
        self.notice.value = why
        self._announce(html_text(why))

    def _send(self, answer: str) -> None:
        state, presentation = self.state, self.presentation
        if state is None or self.revealed or presentation is None:
            return
        label, at = shown_answer(presentation, answer), self._now()
        if not self.background:
            with self._lock:
                self._deliver(state, answer, label, at)
            return
        self.sending = answer  # the latest click's: an earlier one's thread, still waiting, sends nothing
        self.notice.value = f"<p>Sending: {html.escape(label)}…</p>"
        self._mark_mine()
        self._announce(html_text(self.notice.value))
        sender = threading.Thread(
            target=self._deliver_later, args=(state, answer, label, at), name="course-live-send", daemon=True
        )
        self._sender = sender
        sender.start()

    def wait_sent(self, timeout: float | None = None) -> bool:
        """Wait (at most `timeout` seconds) until the answer being sent has been sent or has failed; whether
        it has."""
        sender = self._sender
        if sender is not None:
            sender.join(timeout)
        return sender is None or not sender.is_alive()

    def _deliver_later(self, state: LiveState, answer: str, label: str, at: datetime) -> None:
        with self._lock:
            if self.sending != answer:
                return  # a later click's answer replaced it
            try:
                self._deliver(state, answer, label, at)
            finally:
                if self.sending == answer:
                    self.sending = None

    def _deliver(self, state: LiveState, answer: str, label: str, at: datetime) -> None:
        """Send `answer` to the question `state` shows, and say what became of it (holding `_lock`)."""
        from scheduler.postgres import QuestionClosedError

        try:
            self._room().answer(state, answer, at)
        except QuestionClosedError:
            self.notice.value = "<p>Too late: this question is closed, your answer was not counted.</p>"
        except StoreUnavailableError as err:
            self.pending = answer
            self.notice.value = (
                "<p><b>Not sent yet:</b> the class database cannot be reached "
                f"({html.escape(str(err))}). Your answer {html.escape(label)} is kept here and sent "
                "as soon as it is back.</p>"
            )
        except StoreError as err:
            self.notice.value = f"<p><b>Not sent:</b> {html.escape(str(err))}</p>"
        else:
            self.mine, self.pending = answer, None
            change = "Run your code again to change it" if self.code is not None else "You can change it"
            kept = " (your code stays in your notebook)" if self.code is not None else ""
            self.notice.value = (
                f"<p>Sent: {html.escape(label)}{kept}. {change} until the answer is revealed.</p>"
            )
        self._mark_mine()
        self._announce(html_text(self.notice.value))

    def _send_pending(self, room: LiveRoom) -> None:
        from scheduler.postgres import QuestionClosedError

        if self.sending is not None:  # an answer being sent now replaces the one kept
            return
        if self.pending is None or self.state is None or self.presentation is None:
            return
        label = shown_answer(self.presentation, self.pending)
        try:
            room.answer(self.state, self.pending, self._now())
        except QuestionClosedError:
            self.pending = None
            self.notice.value = (
                f"<p>Your answer {html.escape(label)} could not be counted: the question closed before the "
                "class database was back.</p>"
            )
            return
        self.mine, self.pending = self.pending, None
        self.notice.value = (
            f"<p>Sent: {html.escape(label)} (kept while the class database was unreachable).</p>"
        )
        self._mark_mine()

    def _mark_mine(self) -> None:
        chosen = next((one for one in (self.sending, self.pending, self.mine) if one is not None), None)
        for position, button in enumerate(self.option_buttons):
            picked = self.presentation is not None and chosen == answer_of(self.presentation, position)
            button.button_style = "info" if picked else ""
        if self.number_input is not None and chosen is not None and not self.number_input.value:
            self.number_input.value = chosen

    # -- the reveal and the end ---------------------------------------------------------------------------
    def _reveal(self, state: LiveState) -> None:
        self.revealed = True
        focus_here(self.feedback)  # the buttons are disabled: the focus goes to what the reveal says
        for button in self.option_buttons:
            button.disabled = True
        if self.number_input is not None:
            self.number_input.disabled = True
        if self.code is not None:
            self.code.disable()
        question, presentation = self.question, self.presentation
        if question is None or presentation is None:
            return
        if question.kind == Kind.CODE:
            self._reveal_code(state, question, presentation)
            return
        answer = html.escape(right_text(presentation))
        if self.mine is None:
            said = f"<b>The answer is {answer}.</b> You did not answer this one."
        else:
            right = is_right(question, self.mine)
            self.verdicts[state.position] = right
            yours = html.escape(shown_answer(presentation, self.mine))
            said = (
                f"<b>✓ Right: {answer}.</b>"
                if right
                else f"<b>✗ You answered {yours}; the answer is {answer}.</b>"
            )
        see = f"See: lesson {html.escape(question.lesson)}, section “{html.escape(question.section)}”."
        self.feedback.value = f"<p>{said}</p>{to_html(question.explanation)}<p><i>{see}</i></p>"
        self._announce(html_text(f"<p>{said}</p>"))

    def _reveal_code(self, state: LiveState, question: Question, presentation: Presentation) -> None:
        """A code question's reveal: the verdict on the code sent, the worked solution, the explanation."""
        if self.mine is None:
            said = "<b>You did not send an answer to this one.</b> A worked solution:"
        else:
            self.verdicts[state.position] = self.mine == PASSED
            compare = " to compare with yours" if self.mine == PASSED else ""
            said = f"<b>{html.escape(_code_said(question, self.mine))}.</b> A worked solution{compare}:"
        verdict = "" if self.sentence is None else verdict_html(self.sentence)
        see = f"See: lesson {html.escape(question.lesson)}, section “{html.escape(question.section)}”."
        self.feedback.value = (
            f"{verdict}<p>{said}</p>{to_html(str(question.answer))}{to_html(question.explanation)}"
            f"<p><i>{see}</i></p>"
        )
        self._announce(html_text(f"<p>{said}</p>"))

    def _end(self) -> None:
        answered, right = len(self.verdicts), sum(self.verdicts.values())
        self.answer_area.children = ()
        self.prompt.value = (
            f"<p><b>The live session has ended.</b> You answered {answered} question"
            f"{'' if answered == 1 else 's'}, {right} right. These answers are not in your review schedule: "
            "the lessons' quizzes and the review notebook keep that.</p>"
        )
        self.verdicts = {}
        self._announce(html_text(self.prompt.value))

    def _announce(self, text: str) -> None:
        self.status.value = ""
        self.status.value = f"<p>{html.escape(text)}</p>"


def _same_question(now: LiveState | None, then: LiveState) -> bool:
    """Whether the session shown `now` still asks the question it asked `then`."""
    return now is not None and (now.session, now.position) == (then.session, then.position)


def _code_said(question: Question, mine: str) -> str:
    """What became of the learner's code answer `mine` (as recorded), in words: "✓ Your code passed", or
    "✗ Your code did not pass", with the named mistake's label when it names one."""
    if mine == PASSED:
        return "✓ Your code passed"
    label = mistake_label(question, mine)
    return "✗ Your code did not pass" + ("" if label is None else f": {label}")


def live(
    session: int | None = None,
    *,
    room: str | None = None,
    db: str | None = None,
    clock: Clock | None = None,
) -> LiveAnswerWidget:
    """Join the live class review: ``live()`` follows the live session running in the class database
    (``$COURSE_DB``, or `db`), and stays in its room; while sessions run in several rooms it lists them, to
    join one. ``live(room="Hall B")`` (or ``$COURSE_ROOM``) follows that room; `session` names one session.
    Without a class database it says so."""
    return LiveAnswerWidget(db=db, session=session, room_name=room_of(room), clock=clock)
