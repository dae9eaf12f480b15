"""The storage interface: what serving and statistics need from a learner's store, in the package's records.

``Store`` (SQLite) implements it; another store (e.g. a classroom server) implements the same methods and
passes ``tests/scheduler/test_store_contract.py``. Every time is an aware UTC datetime, every state a
``State``; what a store keeps underneath (integer milliseconds, integer codes) never leaves it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from types import TracebackType
from typing import Protocol

from scheduler._memory import Memory
from scheduler._records import (
    Answer,
    CardState,
    CramReview,
    DueItems,
    LogEntry,
    Merged,
    Nudge,
    PredictionEvent,
    Rating,
    Review,
    Settings,
)

__all__ = ["Storage"]


class Storage(Protocol):
    """A learner's progress: an append-only review log (the truth), the schedule rebuilt from it, a cram log
    and enrolled decks.

    Nudges (``nudge``) are a log of their own: ``due_by`` reports those not answered since
    (``DueItems.nudged``). Predictions (``predict``) are another, which nothing else reads: no card, no
    schedule and no statistic changes with them.

    Promises: the log is only ever appended to (``merge`` aside: it inserts, keeping every row and their
    relative order), and read back in the order written; every card is what a
    replay of its log gives; concurrent writers lose nothing; failures are ``StoreError`` subclasses.
    """

    @property
    def memory(self) -> Memory:
        """The FSRS model the schedule is computed with."""
        ...

    @property
    def location(self) -> str:
        """Where the store is, as messages show it (a file's path; a server's address without password)."""
        ...

    def check_writable(self) -> None:
        """Raise a ``StoreError`` unless an answer could be saved now (e.g. read-only, locked, its disk full);
        writes nothing."""
        ...

    def snapshot(self) -> AbstractContextManager[Storage]:
        """A block in which every read sees one consistent state of the store; writing inside it is
        refused."""
        ...

    def record(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        """Append a scheduled answer to the log and update the item's card, atomically."""
        ...

    def record_cram(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> None:
        """Log a practice answer; the schedule is never changed by it."""
        ...

    def enroll(self, deck: str, at: datetime) -> None:
        """Put ``deck``'s new items into the schedule; enrolling again keeps the first date."""
        ...

    def nudge(self, nudge: Nudge) -> Nudge:
        """Ask to see an item again by ``nudge.due`` (an event of its own: no card changes); returns it as
        kept, times to the millisecond."""
        ...

    def nudges(self, start: datetime | None = None, end: datetime | None = None) -> list[Nudge]:
        """Nudges made at ``start <= nudged_at < end`` (either bound optional), in the order made."""
        ...

    def predict(self, prediction: PredictionEvent) -> PredictionEvent:
        """Log a guess committed before its outcome was shown (an event of its own: no card changes); returns
        it as kept, its time to the millisecond. A ValueError naming the field (nothing written) for one a
        store cannot hold."""
        ...

    def predictions(
        self, start: datetime | None = None, end: datetime | None = None
    ) -> list[PredictionEvent]:
        """Predictions made at ``start <= predicted_at < end`` (either bound optional), in the order made."""
        ...

    def merge(
        self,
        answers: Sequence[LogEntry],
        practice: Sequence[LogEntry],
        decks: Mapping[str, datetime],
        nudges: Sequence[Nudge] = (),
        predictions: Sequence[PredictionEvent] = (),
    ) -> Merged:
        """Add another log's answers, practice answers, decks, nudges and predictions not present yet,
        atomically: each new answer after every row answered at or before it, every card then what a replay
        of its log gives; a nudge or a prediction is present when one the same in every field (times to the
        millisecond) is."""
        ...

    def enrolled(self) -> dict[str, datetime]:
        """Enrolled decks and when, oldest first."""
        ...

    def card(self, item_id: str) -> CardState | None:
        """The item's card, or None before its first answer."""
        ...

    def cards(self) -> dict[str, CardState]:
        """Every card, by item id."""
        ...

    def reviews(self, item_id: str | None = None) -> list[Review]:
        """Log rows in log order, of one item or of all."""
        ...

    def cram_reviews(self) -> list[CramReview]:
        """Practice answers in the order given."""
        ...

    def rebuild_cache(self) -> None:
        """Recompute every card by replaying the log."""
        ...

    def due_times(self) -> dict[str, datetime]:
        """When each item with a card is due, or earlier where a nudge not answered since brings it
        forward; an item never answered but nudged too (what the due queue serves)."""
        ...

    def due_by(self, until: datetime) -> DueItems:
        """The items due at or before ``until``, earliest first, and every item with a card, read together."""
        ...

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        """Scheduled answers with ``start <= reviewed_at < end`` (either bound optional), in log order."""
        ...

    def review_counts(self) -> dict[str, int]:
        """How many scheduled answers each answered item has."""
        ...

    def settings(self) -> Settings:
        """The learner's scheduling settings (``Settings()`` when none were saved)."""
        ...

    def save_settings(self, settings: Settings, at: datetime) -> None:
        """Replace the settings, atomically; ``memory`` is then the model they describe and every card what a
        replay of its log with it gives, due dates kept from the log. ValueError for settings refused: a
        desired retention outside ``RETENTION_RANGE``, parameters ``Memory`` refuses."""
        ...

    def close(self) -> None:
        """Release the store; it is not used again."""
        ...

    def __enter__(self) -> Storage: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None: ...
