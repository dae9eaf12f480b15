"""`quiz(lesson)`: a lesson's self-check questions, one at a time; each answer is saved to the schedule."""

from __future__ import annotations

import html
import random
from collections.abc import Sequence
from datetime import datetime, timedelta, tzinfo
from typing import Any

from course.bank import NAMES, Question, load_bank
from course.lessons import lesson_id, lesson_title
from course.progress import PROBLEMS, Keeper, StoreLike, StoreSource, note_for
from course.widgets._chrome import view_bundle
from course.widgets._clock import Clock
from course.widgets._panel import QuestionPanel
from course.widgets._texts import error_html, when
from scheduler import Rating, StoreUnavailableError, due_from, format_interval

__all__ = ["QuizWidget", "quiz"]


class QuizWidget(QuestionPanel):
    """The quiz of one lesson. `root` is the widget to display; the other attributes are for tests.

    Showing it reads nothing and writes nothing. The first answer opens the progress database (creating it if
    needed), enrolls the lesson and saves the answer with the time from `clock`. A question that is already
    scheduled and not yet due is saved as practice, which leaves its schedule unchanged.
    """

    def __init__(
        self,
        lesson: str,
        questions: Sequence[Question],
        *,
        store: StoreLike = None,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(clock, tz, rng)
        self.lesson = lesson
        self.questions = tuple(questions)
        self.source = StoreSource(store)
        self.keeper = Keeper(self.source, create=True)  # where each answer goes
        self.practice: list[str] = []  # ids of the questions answered as practice
        self._dues: dict[str, datetime | None] = {}  # when each question was due, as last read
        self.index = 0
        title = lesson_title(lesson)
        self.title.value = f"<h3>Quiz: lesson {html.escape(lesson)}, {html.escape(title)}</h3>"
        if self.questions:
            self._show_current()
            # a progress file that cannot take an answer is said at once (a class database is not asked here:
            # showing the quiz connects to nothing, and its outbox keeps answers it cannot take)
            if self.source.outbox is None:
                self.notice.value = self._unwritable() or ""
        else:
            self.progress.value = ""
            self._finish_view(f"<p>Lesson {html.escape(lesson)} has no quiz questions yet.</p>")

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        n = len(self.questions)
        return (
            f"Quiz for lesson {self.lesson}: {n} question{'' if n == 1 else 's'}. "
            "Run this cell in JupyterLab to start the quiz; each answer is saved to your review schedule."
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    # -- flow ---------------------------------------------------------------------------------------------
    def _show_current(self) -> None:
        self.progress.value = f"<b>Question {self.index + 1} / {len(self.questions)}</b>"
        self._show(self.questions[self.index])

    def _label_next(self) -> None:
        last = self.index == len(self.questions) - 1
        self.next_button.description = "Finish" if last else "Next"
        self.next_button.tooltip = "Save and see your results" if last else "Save and go to the next question"

    def _advance(self) -> None:
        self.index += 1
        if self.index < len(self.questions):
            self._show_current()
        else:
            self._finish()

    def _intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        try:
            return self._read_intervals(question, at)
        except StoreUnavailableError:
            if self.source.outbox is None:
                raise
        self.notice.value = (
            "<p>The class database cannot be reached right now: your answer will be kept on this computer "
            "and sent when it is back.</p>"
        )
        return None

    def _read_intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        # With no file yet, opening creates nothing (the first save does): a store without settings. Either
        # way the intervals are those of the learner's settings (store.memory).
        with self.source.lease(create=True) as store:
            card = store.card(question.id)
            due_on = None if card is None else due_from(card.due, card.last_review, self.tz)
            self._dues[question.id] = due_on  # due on the learner's day: an interval from its rollover
            if due_on is not None and due_on > at:  # practice: no interval to show, the schedule stays
                due = html.escape(when(due_on, at, self.tz))
                self.notice.value = (
                    f"<p>Practice: this question is already scheduled, next review {due}; "
                    "your answer is saved as practice and leaves its schedule unchanged.</p>"
                )
                return None
            return store.memory.preview(card, question.id, at)

    def _save(self, question: Question, rating: Rating, at: datetime, duration: int) -> str:
        saved = self.keeper.save_quiz_answer(
            self.lesson, question.id, rating, at, duration, tz=self.tz, due_seen=self._dues.get(question.id)
        )
        if saved.practice:
            self.practice.append(question.id)
        if saved.kept is not None:
            return note_for(saved.kept)
        if saved.review is None:
            assert saved.due_on is not None
            return (
                f"Saved as practice ({NAMES[rating]}): this question is already scheduled, next review "
                f"{when(saved.due_on, at, self.tz)}; practice leaves its schedule unchanged."
            )
        return f"Saved: {NAMES[rating]}. It comes back in {format_interval(saved.review.due - at)}."

    def _finish(self) -> None:
        n = len(self.questions)
        right = sum(rating != Rating.AGAIN for _, rating in self.results)
        self.progress.value = f"<b>Done: {n} / {n}</b>"
        lines = [f"<p><b>{right} of {n} right.</b></p>"]
        if self.practice:
            k = len(self.practice)
            lines.append(
                f"<p>{k} answer{' was' if k == 1 else 's were'} practice: already scheduled questions keep "
                "their schedule.</p>"
            )
        at = self._now()
        try:
            if self.source.exists():
                with self.source.lease(create=False) as store:
                    ids = {q.id for q in self.questions}
                    cards = [card for item_id, card in store.cards().items() if item_id in ids]
                    dues = [due_from(card.due, card.last_review, self.tz) for card in cards]
                if dues:
                    first = html.escape(when(min(dues), at, self.tz))
                    lines.append(f"<p>Next review of this lesson: {first}, in the review notebook.</p>")
        except PROBLEMS as err:
            lines.append(error_html(err, unsaved=False))
        self._finish_view("".join(lines) + self._outbox_html())


def quiz(
    lesson: str | int,
    *,
    store: StoreLike = None,
    clock: Clock | None = None,
    rng: random.Random | None = None,
) -> QuizWidget:
    """The quiz of `lesson` ("00".."09"; "2" and 2 mean "02"), for a notebook cell: ``quiz("02")``.

    `store`: a store (a `scheduler.Store`, a class database's ``PostgresStore``) or a path; default
    `course.progress.db_path()` (``$COURSE_DB`` if set). On a class database an answer that cannot reach the
    server is kept on this computer and sent when it is back (`course.progress`).
    `clock`: a function returning the current time as an aware datetime (default: the real clock).
    `rng`: where the order of each question's options is drawn from (default: a fresh `random.Random`).
    ValueError for an unknown lesson or one without questions yet.
    """
    bank = load_bank()
    chosen = lesson_id(lesson, bank.lessons())
    return QuizWidget(chosen, bank.questions(chosen), store=store, clock=clock, rng=rng)
