"""`cram(*lessons)`: practise every question of some lessons, whether due or not (a `scheduler.CramSession`).

Practice answers are logged apart (`Store.record_cram`) and never change the review schedule.
"""

from __future__ import annotations

import html
import random
from collections.abc import Sequence
from datetime import datetime, timedelta, tzinfo
from typing import Any

import ipywidgets as widgets

from course.bank import MEANINGS, NAMES, Bank, Question, load_bank
from course.lessons import lesson_id, lesson_title
from course.progress import Keeper, StoreLike, StoreSource, note_for
from course.widgets._chrome import view_bundle
from course.widgets._clock import Clock
from course.widgets._panel import QuestionPanel
from scheduler import CramSession, Item, Rating

__all__ = ["PRACTICE_NOTE", "CramWidget", "cram"]

PRACTICE_NOTE = "Practice: answers are logged apart and do not change your review schedule."
CRAM_RECALL_HINT = (
    f"<p><b>Again</b>: {MEANINGS[Rating.AGAIN]}; it comes back before this practice ends. <b>Hard</b>: "
    f"{MEANINGS[Rating.HARD]} (it still counts as remembered). <b>Good</b>: {MEANINGS[Rating.GOOD]}. "
    "<b>Easy</b>: at once. Practice answers do not change your review schedule.</p>"
)
CRAM_RIGHT_HINT = (
    "<p>Logged as <b>{rating}</b> when you press {button}. <b>Hard</b>: it took effort (it still counts as "
    "remembered); <b>Good</b>: remembered; <b>Easy</b>: it came at once. Practice answers do not change your "
    "review schedule.</p>"
)


def practice_lessons(bank: Bank, lessons: Sequence[str | int]) -> tuple[str, ...]:
    """The lessons to practise, in course order: those named ("2" and 2 mean "02"), or all when none are.

    A lesson without questions in `bank` is a ValueError naming the lessons that have some (`lesson_id`).
    """
    known = bank.lessons()
    if not lessons:
        return known
    chosen = {lesson_id(raw, known) for raw in lessons}
    return tuple(lesson for lesson in known if lesson in chosen)


def _lessons_text(lessons: Sequence[str]) -> str:
    return f"lesson{'' if len(lessons) == 1 else 's'} {', '.join(lessons)}"


class CramWidget(QuestionPanel):
    """Practice over every question of `lessons`, in bank order. `root` is the widget to display.

    Showing it reads nothing and writes nothing. The first answer opens the progress database (creating it if
    needed, but enrolling nothing) and keeps it open until the practice ends; every answer is logged with
    `Store.record_cram` at the time from `clock`. An Again answer comes back before the practice ends.
    """

    recall_hint = CRAM_RECALL_HINT
    right_hint = CRAM_RIGHT_HINT
    unsaved_note = "Not logged yet: press {button} to log it as practice."
    chosen_note = "Logged as {rating} when you press {button}."

    def __init__(
        self,
        bank: Bank,
        lessons: Sequence[str | int] = (),
        *,
        store: StoreLike = None,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        rng: random.Random | None = None,
    ) -> None:
        chosen = practice_lessons(bank, lessons)
        super().__init__(clock, tz, rng)
        self.bank = bank
        self.lessons = chosen
        self.items: list[Item] = [item for item in bank.items() if item.deck in chosen]
        self.source = StoreSource(store)
        self.session: CramSession | None = None  # made at the first answer, when the database is held
        self.keeper = Keeper(self.source, create=True)  # where each answer goes
        self.restart_button = widgets.Button(
            description="Practise again",
            tooltip="Go through the same questions again from the start",
        )
        self.restart_button.on_click(lambda _b: self.start())
        heading = html.escape(f"Practice of {_lessons_text(chosen)}" if chosen else "Practice")
        self.title.value = f"<h3>{heading}</h3><p><i>{PRACTICE_NOTE}</i></p>"
        self.start()

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        n = len(self.items)
        where = f" for {_lessons_text(self.lessons)}" if self.lessons else ""
        return (
            f"Practice{where}: {n} question{'' if n == 1 else 's'}. "
            "Run this cell in JupyterLab to start; practice answers do not change your review schedule."
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    # -- flow ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        """(Re)start from the first question, once it is clear that answers can be logged; nothing is read
        or written until the first answer."""
        self.source.release()
        self.session = None
        self.results = []
        self._last_note = None
        self.notice.value = ""
        if not self.items:
            self.progress.value = ""
            self._finish_view("<p>There are no questions to practise yet.</p>")
            return
        unwritable = self._unwritable()  # before a question is asked, as the terminal does
        if unwritable is not None:
            self.progress.value = ""
            self._finish_view(unwritable, (self.restart_button,))
            return
        self._advance()

    def _current(self) -> Item | None:
        if self.session is not None:
            return self.session.next()
        return self.items[0] if self.items else None

    def _remaining(self) -> int:
        return self.session.remaining if self.session is not None else len(self.items)

    def _advance(self) -> None:
        item = self._current()
        if item is None:
            self._finish()
            return
        question = self.bank[item.id]
        done = len(self.results)
        title = lesson_title(question.lesson)
        progress = (
            f"<b>Question {done + 1} / {done + self._remaining()}</b>. "
            f"From lesson {html.escape(question.lesson)}, {html.escape(title)}."
        )
        if any(question_id == item.id for question_id, _ in self.results):
            progress += " <i>Again: you missed it earlier in this practice.</i>"
        self.progress.value = progress
        self._show(question)

    def _label_next(self) -> None:
        last = self.verdict is not None and self.verdict.right and self._remaining() == 1
        self.next_button.description = "Finish" if last else "Next"
        self.next_button.tooltip = (
            "Log it and see your results" if last else "Log it and go to the next question"
        )

    def _intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        return None  # practice moves no schedule: the buttons show no intervals

    def _save(self, question: Question, rating: Rating, at: datetime, duration: int) -> str:
        if self.session is None:  # the database is held from this first answer (the Keeper takes it)
            self.session = CramSession(self.keeper, self.items)
        item = self.session.next()
        assert item is not None and item.id == question.id
        self.session.answer(item, rating, at, duration)
        kept = self.keeper.take_kept()
        if kept is not None:
            return note_for(kept)
        if rating == Rating.AGAIN:
            return "Logged as practice: Again. It comes back before the end of this practice."
        return f"Logged as practice: {NAMES[rating]}."

    def _finish(self) -> None:
        first: dict[str, Rating] = {}
        for question_id, rating in self.results:
            first.setdefault(question_id, rating)
        right = sum(rating != Rating.AGAIN for rating in first.values())
        n = len(self.results)
        self.progress.value = f"<b>Practice done: {n} answer{'' if n == 1 else 's'}</b>"
        summary = (
            f"<p><b>{right} of {len(first)} right the first time.</b> "
            f"{n} answer{' was' if n == 1 else 's were'} logged as practice; "
            "your review schedule is unchanged.</p>"
        )
        summary += self._outbox_html()
        self.source.release()
        self._finish_view(summary, (self.restart_button,))


def cram(
    *lessons: str | int,
    store: StoreLike = None,
    clock: Clock | None = None,
    rng: random.Random | None = None,
) -> CramWidget:
    """Practice of every question of `lessons` (default: every lesson with questions), for a notebook cell:
    ``cram("02", "03")``. Answers are logged apart and never change the review schedule; nothing is enrolled.

    `store`: a store (a `scheduler.Store`, a class database's ``PostgresStore``) or a path; default
    `course.progress.db_path()` (``$COURSE_DB`` if set). On a class database an answer that cannot reach the
    server is kept on this computer and sent when it is back (`course.progress`).
    `clock`: a function returning the current time as an aware datetime (default: the real clock).
    `rng`: where the order of each question's options is drawn from (default: a fresh `random.Random`).
    """
    return CramWidget(load_bank(), lessons, store=store, clock=clock, rng=rng)
