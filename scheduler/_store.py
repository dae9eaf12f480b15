"""One SQLite file per learner: an append-only review log (the truth), a card cache, a cram log, decks.

Every write is ``BEGIN IMMEDIATE ... COMMIT`` in WAL mode, so several kernels and terminals can share it;
a missing file may be created by the first write rather than by opening (``defer_create``). Reads that
must agree with each other run inside ``Store.snapshot()``, one read transaction.
Times are stored as integer milliseconds since the Unix epoch (UTC); ``record`` rounds ``at`` down to the
millisecond so the Review it returns is exactly what a later read gives back.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from types import TracebackType
from typing import Any

from scheduler._bulk import paused_gc
from scheduler._due_times import DueTimes, brought_forward
from scheduler._errors import StoreAccessError, StoreCorruptError, StoreNotFoundError
from scheduler._failures import from_os_error, no_room, translate
from scheduler._memory import Memory
from scheduler._merging import Tail, incoming, merge_plan
from scheduler._opening import MISSING, enable_wal, inspect, migrate
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
    State,
)
from scheduler._rows import (
    CARD_COLUMNS,
    CARD_STATE_CODES,
    RATINGS,
    REVIEW_COLUMNS,
    STATE_CODES,
    STATES,
    card_from_row,
    card_row,
    check_answer,
    check_id,
    check_nudge,
    check_prediction,
    check_time,
    new_nudge_rows,
    new_prediction_rows,
    prediction_from_row,
    read_settings,
    replayed_cards,
    review_from_row,
    settings_change,
    stored_memory,
)
from scheduler._time import from_ms, require_aware, to_ms

__all__ = ["Store"]

_PUT_CARD = f"INSERT OR REPLACE INTO cards ({CARD_COLUMNS}, log_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)  # as in _time.from_ms
_ONE_MS = timedelta(milliseconds=1)


# The nudges not answered since (an item answered after a nudge is no longer brought forward by it): each
# item's earliest due time among them.
_PENDING_NUDGES = (
    "SELECT n.item_id, MIN(n.due) FROM nudge_log n LEFT JOIN cards c ON c.item_id = n.item_id "
    "WHERE c.last_review IS NULL OR n.nudged_at > c.last_review GROUP BY n.item_id"
)
_ADD_PREDICTION = "INSERT INTO prediction_log (item_id, predicted_at, answer, right) VALUES (?, ?, ?, ?)"
_REVIEW_VALUES = ("item_id", "rating", "reviewed_at", "duration_ms", "due", "state_before")
_PRACTICE_VALUES = ("item_id", "rating", "reviewed_at", "duration_ms")


def _rewrite(
    connection: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    rows: Sequence[tuple[Any, ...]],
    tail: Tail[Any],
) -> None:
    """A log (``rows``: id first, in log order) rewritten from the ``tail``'s start: its rows from there
    deleted and the tail's inserted in their place."""
    if tail.start < len(rows):
        connection.execute(f"DELETE FROM {table} WHERE id >= ?", (rows[tail.start][0],))
    connection.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", tail.rows
    )


class Store:
    """A learner's progress database. Create one with ``Store.open(path)``; use it as a context manager.

    One Store may be used from several threads, one call at a time (a lock serializes them): Jupyter runs
    widget callbacks on a thread other than the one that ran the cell that opened the store.

    Errors are StoreErrors: StoreLockedError, StoreAccessError (disk full, read-only, cannot be opened, I/O
    error), StoreCorruptError (damaged), plus StoreNotFoundError and StoreVersionError from ``open``.
    """

    def __init__(
        self, connection: sqlite3.Connection | None, path: Path, memory: Memory, busy_timeout_ms: int
    ) -> None:
        self._connection = connection  # None until the file exists (a store opened on a missing file)
        self._closed = False
        self._lock = threading.RLock()
        self.path = path
        self.memory = memory
        self.busy_timeout_ms = busy_timeout_ms
        self._opened = False  # set once open() is done: decides how a damaged file is reported
        self._snapshots = 0  # depth of nested snapshot() blocks (on the thread holding the lock)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        memory: Memory | None = None,
        busy_timeout_ms: int = 5000,
        defer_create: bool = False,
        tz: tzinfo = timezone.utc,
    ) -> Store:
        """Open (or create) the store at ``path``; nothing is written before the file is known to be ours.

        With ``create=True`` a missing file is created with its missing folders: here, or with
        ``defer_create=True`` by the first write (``record``, ``record_cram``, ``enroll``), every read until
        then seeing an empty store, so that a session that saves nothing leaves nothing behind. With
        ``create=False`` a missing file is a StoreNotFoundError. ``tz`` is the learner's time zone, in which
        FSRS counts their days (``Memory``); ``memory``, when given, is used as it is, stored settings unread.
        """
        path = Path(path)
        if isinstance(busy_timeout_ms, bool) or not isinstance(busy_timeout_ms, int) or busy_timeout_ms < 0:
            raise ValueError(f"busy_timeout_ms must be a non-negative int, got {busy_timeout_ms!r}")
        store = cls(None, path, memory if memory is not None else Memory(tz=tz), busy_timeout_ms)
        if not store._connect(create=create and not defer_create) and not create:
            raise StoreNotFoundError(path)
        if memory is None:
            try:
                store.memory = store._stored_memory()
            except BaseException:
                store.close()
                raise
        store._opened = True
        return store

    def _connect(self, *, create: bool) -> bool:
        """Connect to the file (creating it when ``create``); False when it is missing and not created."""
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        if self._connection is not None:
            return True
        path = self.path
        if inspect(path, self.busy_timeout_ms) == MISSING:
            if not create:
                return False
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise from_os_error(path, exc) from exc
        try:
            connection = sqlite3.connect(
                os.fspath(path),
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise (translate(path, exc, self.busy_timeout_ms) or StoreCorruptError(path, str(exc))) from exc
        opened, self._opened = self._opened, False  # problems found while setting up: reported as opening
        try:
            with self._translated():
                enable_wal(connection, self.busy_timeout_ms)
                connection.execute("PRAGMA synchronous = NORMAL")
                migrate(connection, path)
        except BaseException:
            connection.close()
            raise
        finally:
            self._opened = opened
        self._connection = connection
        return True

    @property
    def exists(self) -> bool:
        """Whether the file is open (False for a store opened on a missing file that nothing wrote yet)."""
        return self._connection is not None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._connection is not None:
                self._connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({os.fspath(self.path)!r})"

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            error = translate(self.path, exc, self.busy_timeout_ms, self._opened)
            if error is None:
                raise
            raise error from exc

    @contextmanager
    def snapshot(self) -> Iterator[Store]:
        """Read a consistent state: every read inside the block sees the store as it was at its first read,
        whatever other programs write meanwhile (one read transaction). Blocks nest; other threads using
        this Store wait until the block ends; writing inside it is refused."""
        with self._lock:
            if self._snapshots:
                self._snapshots += 1
                try:
                    yield self
                finally:
                    self._snapshots -= 1
                return
            with self._translated():
                connected = self._connect(create=False)
                if connected:
                    self._connection.execute("BEGIN")  # type: ignore[union-attr]  # deferred: taken at first read
            self._snapshots = 1
            try:
                yield self  # with no file yet, every read in the block sees an empty store
            finally:
                self._snapshots = 0
                if self._connection is not None and self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")  # it only read: nothing to keep

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._translated():
            if self._snapshots:
                raise RuntimeError("cannot write inside Store.snapshot(); write after the block ends")
            self._connect(create=True)
            connection = self._connection
            assert connection is not None
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    @property
    def location(self) -> str:
        """The file's path, as messages show it."""
        return os.fspath(self.path)

    def check_writable(self) -> None:
        """Raise unless an answer could be written now: StoreAccessError for a file (or folder, or disk) that
        cannot be written, a disk without room for one more answer included ("full"), StoreLockedError when
        another program holds the write lock past the busy timeout. Writes nothing: the probe changes the
        file's header to what it already is, and rolls that back. With no file yet, the folder that the first
        write would create it in is checked instead."""
        with self._lock, self._translated():
            if self._snapshots:
                raise RuntimeError("cannot probe writing inside Store.snapshot(); probe after the block ends")
            if not self._connect(create=False):
                folder = next((parent for parent in self.path.parents if parent.exists()), None)
                if folder is not None and not os.access(folder, os.W_OK):
                    raise StoreAccessError(self.path, "read-only")
                if folder is not None and no_room(folder):
                    raise StoreAccessError(self.path, "full")
                return
            if no_room(self.path.parent):
                raise StoreAccessError(self.path, "full")
            connection = self._connection
            assert connection is not None
            connection.execute("BEGIN IMMEDIATE")
            try:
                version = int(connection.execute("PRAGMA user_version").fetchone()[0])
                connection.execute(f"PRAGMA user_version = {version}")
            finally:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")

    def _read(self, sql: str, parameters: tuple[object, ...] = ()) -> list[tuple]:  # type: ignore[type-arg]
        with self._lock, self._translated():
            if self._connection is None and (self._snapshots or not self._connect(create=False)):
                return []  # no file yet: an empty store
            assert self._connection is not None
            return self._connection.execute(sql, parameters).fetchall()

    def record(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        """Answer ``item_id`` with ``rating`` at ``at``: append to the log and update the card, atomically."""
        rating, at = check_answer(item_id, rating, at, duration_ms)
        with self._write() as connection:
            before = self._current(connection, item_id)
            after = self.memory.review(before, item_id, rating, at)
            due = to_ms(after.due)
            log_id = connection.execute(
                "INSERT INTO review_log (item_id, rating, reviewed_at, duration_ms, due, state_before) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    item_id,
                    int(rating),
                    to_ms(at),
                    duration_ms,
                    due,
                    STATE_CODES[State.NEW] if before is None else CARD_STATE_CODES[before.state],
                ),
            ).lastrowid
            connection.execute(_PUT_CARD, card_row(after, log_id))  # type: ignore[arg-type]
        return Review(item_id, rating, at, duration_ms, from_ms(due))

    def _current(self, connection: sqlite3.Connection, item_id: str) -> CardState | None:
        """The card before a new answer: the cache row if it covers the whole log, else a replay."""
        (last_id,) = connection.execute(
            "SELECT MAX(id) FROM review_log WHERE item_id = ?", (item_id,)
        ).fetchone()
        if last_id is None:
            return None
        row = connection.execute(
            f"SELECT {CARD_COLUMNS}, log_id FROM cards WHERE item_id = ?", (item_id,)
        ).fetchone()
        if row is not None and row[9] == last_id:
            return card_from_row(row)
        rows = connection.execute(
            f"SELECT {REVIEW_COLUMNS} FROM review_log WHERE item_id = ? ORDER BY id", (item_id,)
        ).fetchall()
        return self.memory.replay(item_id, [review_from_row(row) for row in rows])

    def record_cram(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> None:
        """Log a practice answer in its own table; the schedule is never changed by it."""
        rating, at = check_answer(item_id, rating, at, duration_ms)
        with self._write() as connection:
            connection.execute(
                "INSERT INTO cram_log (item_id, rating, reviewed_at, duration_ms) VALUES (?, ?, ?, ?)",
                (item_id, int(rating), to_ms(at), duration_ms),
            )

    def enroll(self, deck: str, at: datetime) -> None:
        """Put ``deck``'s new items into the schedule; enrolling again keeps the first date."""
        check_id(deck, "deck")
        at_ms = to_ms(check_time(at, "at"))
        with self._write() as connection:
            connection.execute("INSERT OR IGNORE INTO decks (deck, enrolled_at) VALUES (?, ?)", (deck, at_ms))

    def nudge(self, nudge: Nudge) -> Nudge:
        """Ask to see ``nudge.item_id`` again by ``nudge.due``: append it to the nudge log (no card changes;
        see `Nudge`). Returns it as kept (times to the millisecond); a ValueError (nothing written) for one
        a store cannot hold."""
        nudge = check_nudge(nudge)
        with self._write() as connection:
            connection.execute(
                "INSERT INTO nudge_log (item_id, nudged_at, due, reason) VALUES (?, ?, ?, ?)",
                (nudge.item_id, to_ms(nudge.nudged_at), to_ms(nudge.due), nudge.reason),
            )
        return nudge

    def nudges(self, start: datetime | None = None, end: datetime | None = None) -> list[Nudge]:
        """Nudges made at ``start <= nudged_at < end`` (either bound optional), in the order made."""
        low = -1 if start is None else to_ms(require_aware(start, "start"))
        high = None if end is None else to_ms(require_aware(end, "end"))
        rows = self._read(
            "SELECT item_id, nudged_at, due, reason FROM nudge_log WHERE nudged_at >= ?"
            + ("" if high is None else " AND nudged_at < ?")
            + " ORDER BY id",
            (low,) if high is None else (low, high),
        )
        return [Nudge(item_id, from_ms(at), from_ms(due), reason) for item_id, at, due, reason in rows]

    def predict(self, prediction: PredictionEvent) -> PredictionEvent:
        """Append ``prediction`` to the prediction log (no card changes; see `PredictionEvent`). Returns it as
        kept (its time to the millisecond); a ValueError (nothing written) for one a store cannot hold."""
        prediction = check_prediction(prediction)
        with self._write() as connection:
            connection.execute(_ADD_PREDICTION, new_prediction_rows([prediction], set())[0])
        return prediction

    def predictions(
        self, start: datetime | None = None, end: datetime | None = None
    ) -> list[PredictionEvent]:
        """Predictions made at ``start <= predicted_at < end`` (either bound optional), in the order made."""
        low = -1 if start is None else to_ms(require_aware(start, "start"))
        high = None if end is None else to_ms(require_aware(end, "end"))
        rows = self._read(
            "SELECT item_id, predicted_at, answer, right FROM prediction_log WHERE predicted_at >= ?"
            + ("" if high is None else " AND predicted_at < ?")
            + " ORDER BY id",
            (low,) if high is None else (low, high),
        )
        return [prediction_from_row(row) for row in rows]

    def merge(
        self,
        answers: Sequence[LogEntry],
        practice: Sequence[LogEntry],
        decks: Mapping[str, datetime],
        nudges: Sequence[Nudge] = (),
        predictions: Sequence[PredictionEvent] = (),
    ) -> Merged:
        """Merge another log into this one, in one transaction: the answers and practice answers not present
        yet (same item, rating, time and duration) and the decks. Nothing present is lost or reordered:
        each new answer goes after every row answered at or before it, and the due dates of an item's rows
        from its first new answer on are recomputed, then every card is rebuilt, so the schedule is what
        answering everything in that order gives (``scheduler._merging.merge_plan``, as the classroom store
        merges). A deck keeps its earliest date. The only write that inserts into the log rather than
        appending to it. Every entry and deck is checked (a ValueError: nothing written) before the file is
        touched, so a missing one is never created for a merge refused. The ``nudges`` and ``predictions``
        not present yet (the same in every field, times to the millisecond) are appended."""
        given = incoming(answers, practice, decks)
        wanted = [check_nudge(nudge) for nudge in nudges]
        guesses = [check_prediction(prediction) for prediction in predictions]
        with self._write() as connection:
            reviews = connection.execute(
                "SELECT id, item_id, rating, reviewed_at, duration_ms, due, state_before "
                "FROM review_log ORDER BY id"
            ).fetchall()
            practiced = connection.execute(
                "SELECT id, item_id, rating, reviewed_at, duration_ms FROM cram_log ORDER BY id"
            ).fetchall()
            enrolled = dict(connection.execute("SELECT deck, enrolled_at FROM decks").fetchall())
            merge = merge_plan(self.memory, given, reviews, practiced, enrolled)
            if merge.reviews is not None:
                _rewrite(connection, "review_log", _REVIEW_VALUES, reviews, merge.reviews)
                self._rebuild(connection)
            if merge.practice is not None:
                _rewrite(connection, "cram_log", _PRACTICE_VALUES, practiced, merge.practice)
            connection.executemany(
                "INSERT OR REPLACE INTO decks (deck, enrolled_at) VALUES (?, ?)", merge.decks.items()
            )
            present = set(connection.execute("SELECT item_id, nudged_at, due, reason FROM nudge_log"))
            added = new_nudge_rows(wanted, present)
            connection.executemany(
                "INSERT INTO nudge_log (item_id, nudged_at, due, reason) VALUES (?, ?, ?, ?)", added
            )
            predicted = connection.execute("SELECT item_id, predicted_at, answer, right FROM prediction_log")
            guessed = new_prediction_rows(guesses, set(predicted))
            connection.executemany(_ADD_PREDICTION, guessed)
        return replace(merge.merged, nudges=len(added), predictions=len(guessed))

    def settings(self) -> Settings:
        """The learner's scheduling settings (``Settings()`` for a file without any, or no file yet).
        StoreCorruptError when a stored setting cannot be read."""
        return read_settings(self._read("SELECT name, value FROM settings ORDER BY name"), self.path)

    def save_settings(self, settings: Settings, at: datetime) -> None:
        """Replace the learner's settings with ``settings``, set at ``at``, in one transaction; then
        ``memory`` is the model they describe (this store's other Memory options kept) and every card is
        rebuilt from the log with it. Due dates stay what the log says: a change applies from each item's
        next answer. A ValueError (nothing written) for a desired retention outside ``RETENTION_RANGE`` or
        parameters that ``Memory`` refuses; ``fitted_at`` is kept to the millisecond."""
        memory, rows = settings_change(self.memory, settings, at)
        with self._lock:
            previous = self.memory
            try:
                with self._write() as connection:
                    connection.execute("DELETE FROM settings")
                    connection.executemany(
                        "INSERT INTO settings (name, value, set_at) VALUES (?, ?, ?)", rows
                    )
                    self.memory = memory
                    self._rebuild(connection)
            except BaseException:
                self.memory = previous
                raise

    def _stored_memory(self) -> Memory:
        """The Memory the stored settings describe; StoreCorruptError when they cannot be used."""
        return stored_memory(self.memory, self.settings(), self.path)

    def enrolled(self) -> dict[str, datetime]:
        rows = self._read("SELECT deck, enrolled_at FROM decks ORDER BY enrolled_at, deck")
        return {deck: from_ms(at) for deck, at in rows}

    def card(self, item_id: str) -> CardState | None:
        rows = self._read(f"SELECT {CARD_COLUMNS} FROM cards WHERE item_id = ?", (item_id,))
        return card_from_row(rows[0]) if rows else None

    def cards(self) -> dict[str, CardState]:
        return {
            row[0]: card_from_row(row)
            for row in self._read(f"SELECT {CARD_COLUMNS} FROM cards ORDER BY item_id")
        }

    def reviews(self, item_id: str | None = None) -> list[Review]:
        """Log rows in log order, of one item or of all."""
        if item_id is None:
            rows = self._read(f"SELECT {REVIEW_COLUMNS} FROM review_log ORDER BY id")
        else:
            rows = self._read(
                f"SELECT {REVIEW_COLUMNS} FROM review_log WHERE item_id = ? ORDER BY id", (item_id,)
            )
        return [review_from_row(row) for row in rows]

    def cram_reviews(self) -> list[CramReview]:
        rows = self._read("SELECT item_id, rating, reviewed_at, duration_ms FROM cram_log ORDER BY id")
        return [CramReview(item_id, Rating(rating), from_ms(at), ms) for item_id, rating, at, ms in rows]

    def rebuild_cache(self) -> None:
        """Drop the card cache and rebuild it by replaying the whole log (nothing to do without a file)."""
        with self._lock, self._translated():
            if not self._connect(create=False):
                return
        with self._write() as connection:
            self._rebuild(connection)

    def _rebuild(self, connection: sqlite3.Connection) -> None:
        connection.execute("DELETE FROM cards")
        rows = connection.execute(
            f"SELECT id, {REVIEW_COLUMNS} FROM review_log ORDER BY item_id, id"
        ).fetchall()
        connection.executemany(
            _PUT_CARD, [card_row(card, log_id) for card, log_id in replayed_cards(self.memory, rows)]
        )

    # Narrow queries for serving and statistics (see Storage).

    def due_times(self) -> dict[str, datetime]:
        """When each item with a card is due, or brought forward by a nudge not answered since (an item
        never answered but nudged too): what the due queue serves."""
        epoch, one_ms = _EPOCH, _ONE_MS  # from_ms, inlined: this runs once per card
        with self.snapshot():
            rows = self._read("SELECT item_id, due FROM cards")
            nudged = self._read(_PENDING_NUDGES)
        times = {item_id: epoch + one_ms * due for item_id, due in rows}
        return brought_forward(times, nudged)

    def due_by(self, until: datetime) -> DueItems:
        """The items due at or before ``until``, and every item with a card, from one read of the cards."""
        until_ms = to_ms(require_aware(until, "until"))
        with self.snapshot():
            rows = self._read("SELECT item_id, due FROM cards ORDER BY due")  # by the cards_by_due index
            nudged = self._read(_PENDING_NUDGES)
        due = {item_id: when for item_id, when in rows if when <= until_ms}
        return DueItems(
            DueTimes(due),
            frozenset([item_id for item_id, _ in rows]),
            {item_id: from_ms(when) for item_id, when in nudged if when <= until_ms},
        )

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        """Scheduled answers with ``start <= reviewed_at < end`` (either bound optional), in log order."""
        where = []
        parameters = []
        if start is not None:
            where.append("reviewed_at >= ?")
            parameters.append(to_ms(require_aware(start, "start")))
        if end is not None:
            where.append("reviewed_at < ?")
            parameters.append(to_ms(require_aware(end, "end")))
        # Answer(...) and from_ms inlined, with every name they use local: this runs once per row
        epoch, one_ms, new, answer, ratings, states = (
            _EPOCH,
            _ONE_MS,
            tuple.__new__,
            Answer,
            RATINGS,
            STATES,
        )
        with paused_gc():
            rows = self._read(
                "SELECT item_id, reviewed_at, rating, state_before FROM review_log"
                + (" WHERE " + " AND ".join(where) if where else "")
                + " ORDER BY id",
                tuple(parameters),
            )
            return [
                new(answer, (item_id, epoch + one_ms * at, ratings[rating], states[state]))
                for item_id, at, rating, state in rows
            ]

    def review_counts(self) -> dict[str, int]:
        """How many scheduled answers each answered item has."""
        return dict(self._read("SELECT item_id, COUNT(*) FROM review_log GROUP BY item_id"))
