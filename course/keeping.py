"""The store a session on a class database writes through: what cannot reach the server is kept locally.

A `scheduler.Session` or `scheduler.CramSession` saves each answer itself (``record``, ``record_cram``) and
moves on only when that returns. On a class database the review and the practice give their session a
`KeepingStore` instead of the database: it sends what waits in the outbox before each answer, and when the
database does not take the answer (``StoreUnavailableError``: it cannot be reached or did not answer in
time; or any other ``StoreError`` but the outbox's own: a failure the learner cannot mend) it keeps the
answer in the outbox and returns as if it were saved, so the session goes on; `take_kept` then says why, for
the learner's note (`course.outbox.note_for`). A kept review's due
date is worked out here from the cards read when the session started, as the database will when it gets it.
Everything else is the database's own method.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from course.outbox import OUTBOX_ERRORS, Kept
from course.store_source import StoreSource
from scheduler import CardState, LogEntry, Rating, Review, Storage, StoreError, StoreUnavailableError

__all__ = ["KeepingStore"]


class KeepingStore:
    """Writes to the database of `source` (held, else taken with `create`), keeping what cannot be sent.

    `storage` is this object as the sessions take it (a ``scheduler.Storage``: the methods not defined here
    are the database's)."""

    def __init__(self, source: StoreSource, *, create: bool) -> None:
        assert source.outbox is not None, "only a class database keeps answers"
        self._source = source
        self._create = create
        self._cards: dict[str, CardState] = {}
        self._kept: StoreError | None = None
        self._remembered = False

    @property
    def storage(self) -> Storage:
        return cast("Storage", self)

    def _store(self) -> Storage:
        held = self._source.held
        return held if held is not None else self._source.hold(create=self._create)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store(), name)

    def remember(self) -> None:
        """Read every card now, for the due dates of answers kept later (the session's database is held)."""
        self._cards = self._store().cards()
        self._remembered = True

    def card(self, item_id: str) -> CardState | None:
        """The item's card; while the database cannot be read, the one worked out here, if cards were read
        (`remember`)."""
        try:
            return self._store().card(item_id)
        except StoreError as err:
            if not self._remembered or isinstance(err, OUTBOX_ERRORS):
                raise
            return self._cards.get(item_id)

    def take_kept(self) -> StoreError | None:
        """Why the last answer was kept rather than saved; None when it was saved. Cleared by reading it."""
        kept, self._kept = self._kept, None
        return kept

    def _keeps(self, problem: StoreError) -> bool:
        """Whether an answer the database did not take is kept: never for the outbox's own problems; when
        the database was never opened, only if it cannot be reached (else opening it says what is wrong)."""
        if isinstance(problem, OUTBOX_ERRORS):
            return False
        return self._source.held is not None or isinstance(problem, StoreUnavailableError)

    def _sending(self) -> Storage:
        """The database, once what waits in the outbox is sent (its `StoreError` otherwise)."""
        store = self._store()
        self._source.send_pending()
        return store

    def record(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        self._kept = None
        try:
            store = self._sending()
            review = store.record(item_id, rating, at, duration_ms)
            memory = store.memory
        except StoreError as err:
            held = self._source.held
            if held is None or not self._keeps(err):
                raise  # never opened: no session could have started
            self._source.keep(Kept(LogEntry(item_id, rating, at, duration_ms)))
            self._kept = err
            memory = held.memory
            review = None
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
            self._source.keep(Kept(LogEntry(item_id, rating, at, duration_ms), practice=True))
            self._kept = err
