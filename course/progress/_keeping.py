"""`Keeper`: the one object every answer goes through, from the quiz, the review, practice and the terminal.

A `scheduler.Session` or `scheduler.CramSession` saves each answer itself (``record``, ``record_cram``) and
moves on only when that returns; the quiz saves its answers with `save_quiz_answer`. All of them are given a
`Keeper`, which is a ``scheduler.Storage``: on a progress file it passes every call to the database its
`StoreSource` holds (opening it when first needed). On a class database it also sends what waits in the
outbox before each answer, and when the database does not take the answer (``StoreUnavailableError``: it
cannot be reached or did not answer in time; or any other ``StoreError`` but the outbox's own: a failure the
learner cannot mend) it keeps the answer in the outbox and returns as if it were saved, so the session goes
on; `take_kept` then says why, for the learner's note (`note_for`). A kept review's due date is worked out
here from the cards read when the session started (`remember`), as the database will when it gets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, tzinfo
from types import TracebackType

from course.progress._outbox import OUTBOX_ERRORS, Kept, note_for, sent_note, waiting_note
from course.progress._source import StoreSource
from scheduler import (
    Answer,
    CardState,
    CramReview,
    DueItems,
    LogEntry,
    Memory,
    Merged,
    Nudge,
    PredictionEvent,
    Rating,
    Review,
    Settings,
    Storage,
    StoreError,
    StoreUnavailableError,
    due_from,
)

__all__ = ["Keeper", "QuizSave"]


@dataclass(frozen=True)
class QuizSave:
    """What became of a quiz's answer: saved as a review (`review`), or as practice because the question was
    already due on a later day (`practice`, `due_on` that day); `kept` is why it waits in the outbox instead
    (None when the database took it)."""

    review: Review | None
    practice: bool
    due_on: datetime | None
    kept: StoreError | None


class Keeper:
    """Saves each answer to the database of `source`, or keeps it when a class database cannot take it.

    The database is the one `source` holds, else taken (opened) with `create` when first needed; `release`
    (or leaving a ``with`` block) ends that hold."""

    def __init__(self, source: StoreSource, *, create: bool) -> None:
        self.source = source
        self._create = create
        self._cards: dict[str, CardState] = {}
        self._kept: StoreError | None = None
        self._remembered = False
        self.kept = False  # whether the last answer `notes` spoke of was kept rather than saved

    def _store(self) -> Storage:
        held = self.source.held
        return held if held is not None else self.source.hold(create=self._create)

    # -- what only the Keeper does ------------------------------------------------------------------------
    def start(self) -> None:
        """Take the database now (a class database: sending what an earlier session kept, if it can) and
        `remember` its cards: what a terminal session does before its first question."""
        self._store()
        self.remember()

    def remember(self) -> None:
        """Read every card now, for the due dates of answers kept later (a class database only)."""
        if self.source.outbox is not None:
            self._cards = self._store().cards()
            self._remembered = True

    def take_kept(self) -> StoreError | None:
        """Why the last answer was kept rather than saved; None when it was saved. Cleared by reading it."""
        kept, self._kept = self._kept, None
        return kept

    def notes(self) -> list[str]:
        """What to tell the learner after an answer: kept answers just sent; this answer kept."""
        kept = self.take_kept()
        self.kept = kept is not None
        said = [sent_note(self.source.take_sent())]
        if kept is not None:
            said.append(note_for(kept))
        return [note for note in said if note]

    def waiting(self) -> str:
        """What waits on this computer to be sent, for the end of a session ("" for nothing)."""
        try:
            return waiting_note(self.source.waiting())
        except (StoreError, OSError) as problem:
            return str(problem)

    def release(self) -> None:
        """End the hold on the database (closed if it was opened here)."""
        self.source.release()

    def _keeps(self, problem: StoreError) -> bool:
        """Whether an answer the database did not take is kept: only on a class database, never for the
        outbox's own problems; when the database was never opened, only if it cannot be reached (else
        opening it says what is wrong)."""
        if self.source.outbox is None or isinstance(problem, OUTBOX_ERRORS):
            return False
        return self.source.held is not None or isinstance(problem, StoreUnavailableError)

    def _sending(self) -> Storage:
        """The database, once what waits in the outbox is sent (its `StoreError` otherwise)."""
        store = self._store()
        self.source.send_pending()
        return store

    def save_quiz_answer(
        self,
        deck: str,
        item_id: str,
        rating: Rating,
        at: datetime,
        duration_ms: int,
        *,
        tz: tzinfo,
        due_seen: datetime | None,
    ) -> QuizSave:
        """A quiz's answer: `deck` enrolled, then the answer saved as a review; as practice when the question
        is already due on a later day (its schedule unchanged). On a class database that cannot take it, kept:
        as practice if the quiz last read it due on a later day (`due_seen`). The database is released at
        the end."""
        self._kept = None
        try:
            store = self._sending()
            store.enroll(deck, at)
            card = store.card(item_id)
            due_on = None if card is None else due_from(card.due, card.last_review, tz)
            if due_on is not None and due_on > at:
                store.record_cram(item_id, rating, at, duration_ms)
                return QuizSave(None, True, due_on, None)
            review = store.record(item_id, rating, at, duration_ms)
            return QuizSave(review, False, None, None)
        except StoreError as err:
            if not self._keeps(err):
                raise
            practice = due_seen is not None and due_seen > at
            self.source.keep(Kept(LogEntry(item_id, rating, at, duration_ms), practice, deck))
            return QuizSave(None, practice, due_seen if practice else None, err)
        finally:
            self.release()

    # -- scheduler.Storage ----------------------------------------------------------------------------------
    @property
    def memory(self) -> Memory:
        return self._store().memory

    @property
    def location(self) -> str:
        return self._store().location

    def check_writable(self) -> None:
        self._store().check_writable()

    def snapshot(self) -> AbstractContextManager[Storage]:
        return self._store().snapshot()

    def record(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        self._kept = None
        try:
            store = self._sending()
            review = store.record(item_id, rating, at, duration_ms)
            memory = store.memory
        except StoreError as err:
            held = self.source.held
            if held is None or not self._keeps(err):
                raise  # never opened: no session could have started
            self.source.keep(Kept(LogEntry(item_id, rating, at, duration_ms)))
            self._kept = err
            memory = held.memory
            review = None
        if review is not None and not self._remembered:
            return review
        card = memory.review(self._cards.get(item_id), item_id, rating, at)
        self._cards[item_id] = card
        return review if review is not None else Review(item_id, rating, at, duration_ms, card.due)

    def record_cram(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> None:
        self._kept = None
        try:
            self._sending().record_cram(item_id, rating, at, duration_ms)
        except StoreError as err:
            if not self._keeps(err):
                raise
            self.source.keep(Kept(LogEntry(item_id, rating, at, duration_ms), practice=True))
            self._kept = err

    def enroll(self, deck: str, at: datetime) -> None:
        self._store().enroll(deck, at)

    def nudge(self, nudge: Nudge) -> Nudge:
        """Pass the nudge to the database; on a class database that cannot take it, it is not kept (a nudge
        only brings a card forward: the card's own schedule still brings it back)."""
        return self._store().nudge(nudge)

    def nudges(self, start: datetime | None = None, end: datetime | None = None) -> list[Nudge]:
        return self._store().nudges(start, end)

    def predict(self, prediction: PredictionEvent) -> PredictionEvent:
        """Pass the prediction to the database (an event: no card changes)."""
        return self._store().predict(prediction)

    def predictions(
        self, start: datetime | None = None, end: datetime | None = None
    ) -> list[PredictionEvent]:
        return self._store().predictions(start, end)

    def merge(
        self,
        answers: Sequence[LogEntry],
        practice: Sequence[LogEntry],
        decks: Mapping[str, datetime],
        nudges: Sequence[Nudge] = (),
        predictions: Sequence[PredictionEvent] = (),
    ) -> Merged:
        return self._store().merge(answers, practice, decks, nudges, predictions)

    def enrolled(self) -> dict[str, datetime]:
        return self._store().enrolled()

    def card(self, item_id: str) -> CardState | None:
        """The item's card; while a class database cannot be read, the one worked out here, if cards were
        read (`remember`)."""
        try:
            return self._store().card(item_id)
        except StoreError as err:
            if not self._remembered or isinstance(err, OUTBOX_ERRORS):
                raise
            return self._cards.get(item_id)

    def cards(self) -> dict[str, CardState]:
        return self._store().cards()

    def reviews(self, item_id: str | None = None) -> list[Review]:
        return self._store().reviews(item_id)

    def cram_reviews(self) -> list[CramReview]:
        return self._store().cram_reviews()

    def rebuild_cache(self) -> None:
        self._store().rebuild_cache()

    def due_times(self) -> dict[str, datetime]:
        return self._store().due_times()

    def due_by(self, until: datetime) -> DueItems:
        return self._store().due_by(until)

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        return self._store().answers(start, end)

    def review_counts(self) -> dict[str, int]:
        return self._store().review_counts()

    def settings(self) -> Settings:
        return self._store().settings()

    def save_settings(self, settings: Settings, at: datetime) -> None:
        self._store().save_settings(settings, at)

    def close(self) -> None:
        """Release the database (see `release`); the Keeper can take it again later."""
        self.release()

    def __enter__(self) -> Keeper:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.release()
