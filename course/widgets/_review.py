"""`review()`: what is due across the enrolled lessons, one question at a time (a `scheduler.Session`)."""

from __future__ import annotations

import html
from datetime import datetime, timedelta, tzinfo
from typing import Any

import ipywidgets as widgets

from course.bank import Bank, Question
from course.lessons import LESSONS
from course.widgets._common import (
    NAMES,
    Clock,
    QuestionPanel,
    StoreLike,
    StoreSource,
    error_html,
    view_bundle,
    when,
)
from scheduler import (
    Item,
    Limits,
    Rating,
    Session,
    Store,
    StoreError,
    StoreNotFoundError,
    due_queue,
    format_interval,
)

__all__ = ["NO_PROGRESS", "ReviewWidget", "review"]

TEXT = (
    "Review of the questions due from your enrolled lessons. "
    "Answer them in JupyterLab; each answer updates your review schedule."
)
NO_PROGRESS = "No progress yet: answer a lesson's quiz first."


class ReviewWidget(QuestionPanel):
    """A review session over every enrolled lesson. `root` is the widget to display.

    It reads the progress database when it starts (never creating it) and keeps it open for the session.
    Again answers come back before the session ends. "Check again" starts a new session.
    """

    def __init__(
        self,
        bank: Bank,
        *,
        store: StoreLike = None,
        clock: Clock | None = None,
        limits: Limits | None = None,
        tz: tzinfo | None = None,
    ) -> None:
        super().__init__(clock, tz)
        self.bank = bank
        self.items = bank.items()
        self.limits = limits if limits is not None else Limits()
        self.source = StoreSource(store)
        self.session: Session | None = None
        self.due_count = 0
        self.new_count = 0
        self._store: Store | None = None
        self._item: Item | None = None
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
        at = self._now()
        try:
            store = self._open()
        except StoreNotFoundError:
            self._finish_view(f"<p>{NO_PROGRESS}</p>", (self.refresh_button,))
            return
        except StoreError as err:
            self._finish_view(error_html(err, unsaved=False), (self.refresh_button,))
            return
        try:
            if not store.enrolled():
                self._close()
                self._finish_view(f"<p>{NO_PROGRESS}</p>", (self.refresh_button,))
                return
            queue = due_queue(store, self.items, at, self.tz, self.limits)
            cards = store.cards()
            self.due_count = sum(item.id in cards for item in queue)
            self.new_count = len(queue) - self.due_count
            self.session = Session(store, self.items, at, self.tz, self.limits)
        except StoreError as err:
            self._close()
            self._finish_view(error_html(err, unsaved=False), (self.refresh_button,))
            return
        self._advance()

    def _open(self) -> Store:
        if self.source.store is not None:
            self._store = self.source.store
            return self._store
        from course.progress import open_store

        self._store = open_store(self.source.path, create=False)
        return self._store

    def _close(self) -> None:
        """Close the database if this widget opened it."""
        if self._store is not None and self.source.store is None:
            self._store.close()
        self._store = None

    def _advance(self) -> None:
        session = self.session
        assert session is not None
        item = session.next()
        if item is None:
            self._finish()
            return
        self._item = item
        question = self.bank[item.id]
        lesson = f"{question.lesson}, {LESSONS.get(question.lesson, (question.lesson, ''))[0]}"
        self.progress.value = (
            f"<b>{session.remaining} left</b> (this session: {self.due_count} due, {self.new_count} new; "
            f"{len(self.results)} answered). From lesson {html.escape(lesson)}."
        )
        self._show(question)

    def _intervals(self, question: Question, at: datetime) -> dict[Rating, timedelta] | None:
        assert self.session is not None and self._item is not None
        return self.session.intervals(self._item, at)

    def _save(self, question: Question, rating: Rating, at: datetime, duration: int) -> str:
        assert self.session is not None and self._item is not None
        review = self.session.answer(self._item, rating, at, duration)
        if rating == Rating.AGAIN:
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
        else:
            lines.append("<p>Nothing is due right now.</p>")
        try:
            store = self._store
            assert store is not None
            ids = {item.id for item in self.items}
            dues = [card.due for item_id, card in store.cards().items() if item_id in ids]
        except StoreError as err:
            lines.append(error_html(err, unsaved=False))
            dues = []
        if dues:
            first = min(dues)
            if first <= at:
                lines.append("<p>Today's review limit is reached; the rest comes back tomorrow.</p>")
            else:
                lines.append(f"<p>Next review: {when(first, at, self.tz)}.</p>")
        self._close()
        self._finish_view("".join(lines), (self.refresh_button,))


def review(
    *, store: StoreLike = None, clock: Clock | None = None, limits: Limits | None = None
) -> ReviewWidget:
    """The review session for a notebook cell: ``review()``.

    `store`: a `scheduler.Store` or a path; default `course.progress.db_path()` (``$COURSE_DB`` if set).
    `clock`: a function returning the current time as an aware datetime (default: the real clock).
    `limits`: a `scheduler.Limits` (new questions and reviews per day).
    """
    from course.bank import load_bank

    return ReviewWidget(load_bank(), store=store, clock=clock, limits=limits)
