"""`review()`: what is due across the enrolled lessons, one question at a time (a `scheduler.Session`)."""

from __future__ import annotations

import html
import random
from datetime import datetime, timedelta, tzinfo
from typing import Any

import ipywidgets as widgets

from course.bank import NAMES, Bank, Question, load_bank
from course.lessons import lesson_title
from course.progress import (
    PROBLEMS,
    Keeper,
    Outlook,
    StoreLike,
    StoreSource,
    due_again,
    next_steps,
    note_for,
    outlook,
    sent_note,
)
from course.widgets._chrome import view_bundle
from course.widgets._clock import Clock
from course.widgets._panel import QuestionPanel
from course.widgets._texts import error_html, when
from scheduler import (
    ASKED_AGAIN_WITHIN,
    Item,
    Limits,
    Rating,
    Session,
    Storage,
    StoreNotFoundError,
    format_interval,
)

__all__ = ["NO_PROGRESS", "ReviewWidget", "review"]

TEXT = (
    "Review of the questions due from your enrolled lessons. "
    "Run this cell in JupyterLab to start the review; each answer updates your review schedule."
)
NO_PROGRESS = "No progress yet: answer a lesson's quiz first."


class ReviewWidget(QuestionPanel):
    """A review session over every enrolled lesson. `root` is the widget to display.

    It reads the progress database when it starts (never creating it) and holds it until the session's
    summary. An answer that makes a question due within the hour (a same-day step) brings it back before the
    session ends. "Check again" starts a new session: the end of a
    session says when that serves more (learning steps that came due meanwhile), or what today's limits hold
    back.
    """

    def __init__(
        self,
        bank: Bank,
        *,
        store: StoreLike = None,
        clock: Clock | None = None,
        limits: Limits | None = None,
        tz: tzinfo | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(clock, tz, rng)
        self.bank = bank
        self.items = bank.items()
        self.limits = limits if limits is not None else Limits()
        self.source = StoreSource(store)
        self.session: Session | None = None
        self.due_count = 0
        self.new_count = 0
        self._item: Item | None = None
        self.keeper = Keeper(self.source, create=False)  # where each answer goes
        self.refresh_button = widgets.Button(
            description="Check again",
            tooltip="Look again for questions that are due",
        )
        self.refresh_button.on_click(lambda _b: self.start())
        self.title.value = "<h3>Review</h3>"
        self.start()

    def __repr__(self) -> str:
        return TEXT

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        return TEXT

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, TEXT)

    # -- session ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """(Re)start: read what is due now and show the first question, or say why there is none."""
        self._close()
        self.session = None
        self.results = []
        self.notice.value = ""
        self.progress.value = ""
        problem = self._begin(self._now())
        if problem is not None:
            self._close()
            self._finish_view(problem + self._outbox_html(), (self.refresh_button,))
            return
        self._advance()
        if self.question is not None:  # (a summary says itself what was sent)
            sent = sent_note(self.source.take_sent())  # kept answers sent as the session took the database
            if sent:
                self.notice.value = f"<p>{html.escape(sent)}</p>"

    def _begin(self, at: datetime) -> str | None:
        """Hold the database and make the session of what is due at `at`; or say why there is none (HTML)."""
        try:
            store = self.source.hold(create=False)
        except StoreNotFoundError:
            return f"<p>{NO_PROGRESS}</p>"
        except PROBLEMS as err:
            return error_html(err, unsaved=False)
        try:
            if not store.enrolled() and not store.nudges():  # nudged: a card a mistake brought back
                return f"<p>{NO_PROGRESS}</p>"
            unwritable = self._unwritable()  # before a question is asked, as the terminal does
            if unwritable is not None:
                return unwritable
            self.session = Session(self.keeper, self.items, at, self.tz, self.limits)
            self.keeper.remember()  # on a class database: the cards that kept answers are scheduled from
        except PROBLEMS as err:
            return error_html(err, unsaved=False)
        self.due_count = self.session.due_count
        self.new_count = self.session.new_count
        return None

    @property
    def _store(self) -> Storage | None:
        """The database the running session holds (`_finish` reads what comes next from it)."""
        return self.source.held

    def _close(self) -> None:
        """End the session's hold on the database (closed if this widget opened it)."""
        self.source.release()

    def _advance(self) -> None:
        session = self.session
        assert session is not None
        item = session.next()
        if item is None:
            self._finish()
            return
        self._item = item
        question = self.bank[item.id]
        lesson = f"{question.lesson}, {lesson_title(question.lesson)}"
        self.progress.value = (
            f"<b>{session.remaining} left</b> (this session: {self.due_count} due now, {self.new_count} new; "
            f"{len(self.results)} answered). From lesson {html.escape(lesson)}."
        )
        self._show(question)

    def _intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        assert self.session is not None and self._item is not None
        return self.session.intervals(self._item, at)

    def _save(self, question: Question, rating: Rating, at: datetime, duration: int) -> str:
        assert self.session is not None and self._item is not None
        review = self.session.answer(self._item, rating, at, duration)
        kept = self.keeper.take_kept()
        if kept is not None:
            note = note_for(kept)
        elif review.due - at <= ASKED_AGAIN_WITHIN:
            note = f"Saved: {NAMES[rating]}. It comes back later in this session."
        else:
            note = f"Saved: {NAMES[rating]}. It comes back in {format_interval(review.due - at)}."
        return note

    def _finish(self) -> None:
        at = self._now()
        lines = []
        if self.results:
            n = len(self.results)
            remembered = sum(rating != Rating.AGAIN for _, rating in self.results)
            self.progress.value = f"<b>Session done: {n} answer{'' if n == 1 else 's'}</b>"
            lines.append(f"<p><b>{remembered} of {n} remembered.</b></p>")
        try:
            assert self._store is not None
            lines.append(self._outlook_html(outlook(self._store, self.items, at, self.tz, self.limits), at))
        except PROBLEMS as err:
            lines.append(error_html(err, unsaved=False))
        lines.append(self._outbox_html())
        self._close()
        self._finish_view("".join(lines), (self.refresh_button,))

    def _outlook_html(self, view: Outlook, at: datetime) -> str:
        """What comes next (`course.progress`'s sentences): more due now (Check again), what today's limits
        hold back, or the next review."""
        if view.due_now:
            them = "it" if view.due_now == 1 else "them"
            again = html.escape(due_again(view.due_now), quote=False)
            return f"<p>{again} Press <b>Check again</b> to answer {them}.</p>"
        steps = next_steps(
            view,
            at,
            answered=bool(self.results),
            next_due=lambda due: f"Next review: {when(due, at, self.tz)}.",
            unscheduled=None,
        )
        return "".join(f"<p>{html.escape(step, quote=False)}</p>" for step in steps)


def review(
    *,
    store: StoreLike = None,
    clock: Clock | None = None,
    limits: Limits | None = None,
    rng: random.Random | None = None,
) -> ReviewWidget:
    """The review session for a notebook cell: ``review()``.

    `store`: a store (a `scheduler.Store`, a class database's ``PostgresStore``) or a path; default
    `course.progress.db_path()` (``$COURSE_DB`` if set). On a class database an answer that cannot reach the
    server is kept on this computer and sent when it is back (`course.progress`).
    `clock`: a function returning the current time as an aware datetime (default: the real clock).
    `limits`: a `scheduler.Limits` (new questions and reviews per day).
    `rng`: where the order of each question's options is drawn from (default: a fresh `random.Random`).
    """
    return ReviewWidget(load_bank(), store=store, clock=clock, limits=limits, rng=rng)
