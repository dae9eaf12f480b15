"""Live class sessions in the classroom database: an instructor asks one item at a time, each learner answers
it from their own kernel, the instructor's screen counts the answers as they arrive and then reveals.

A `LiveRoom` is one connection, as whoever the URL logs in as. The server enforces who does what (row-level
security, `scheduler.postgres._schema`): an instructor starts and runs their own sessions; learners read the
sessions and write their own answer to the question asked now, until it is revealed; an instructor reads every
answer, a learner only their own. Live answers are kept in their own table: they change nobody's schedule.
A session runs in a room (the instructor's own, named after their role, unless ``start`` names another): at
most one runs in a room (`RoomBusyError`), and a learner follows a room (``state(room=...)``), so that two
instructors teaching at once do not collide.

A learner answers only in a room they joined (``join``; answering joins the session's room first, in the same
transaction): the server refuses any other answer. An instructor sees who joined a room (``members``) and
removes one (``remove``): their answers in the room's running session are deleted, and they cannot answer
there nor join it again (`RemovedFromRoomError`).

Sessions are opaque here: an item id and a ``layout`` string the instructor's side chooses (e.g. the order the
options are shown in). An answer is an option's index or a number (`ANSWER_PATTERN`, checked by the server
too): no other text a learner writes is kept.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from scheduler._errors import StoreAccessError, StoreError, StoreVersionError
from scheduler._live_records import LiveAnswers, LiveState, QuestionClosedError
from scheduler._time import from_ms, require_aware, to_ms
from scheduler.postgres._connection import AccessDeniedError, Deadline, connect, describe, timeout_of
from scheduler.postgres._connection import translated as translated_errors
from scheduler.postgres._pool import ClassPool
from scheduler.postgres._schema import ANSWER_PATTERN, LIVE_COLUMNS, MAX_ANSWER, SCHEMA, SCHEMA_VERSION
from scheduler.postgres._sql import LOCK_TIMEOUT_MS, transaction
from scheduler.postgres._version import NotInstalledError, SchemaTooOldError, read_version, row_limit_error

__all__ = [
    "MAX_ROOM",
    "LiveAnswers",
    "LiveRoom",
    "LiveState",
    "QuestionClosedError",
    "RemovedFromRoomError",
    "RoomBusyError",
    "RoomMember",
]

MAX_ROOM = 63  # characters in a room's name
_ANSWER = re.compile(ANSWER_PATTERN)

_STATE = (
    "SELECT id, instructor, title, position, item_id, layout, revealed_at IS NOT NULL, "
    f"ended_at IS NOT NULL, started_at, room FROM {SCHEMA}.live_session"
)


# The answers an instructor counts: none of a learner removed from the session's room (an answer the removal
# could not delete, one the learner held a lock on, is not counted either)
_NOT_REMOVED = (
    f"NOT EXISTS (SELECT 1 FROM {SCHEMA}.live_member m JOIN {SCHEMA}.live_session s ON s.room = m.room "
    "WHERE s.id = a.session_id AND m.learner = a.learner AND m.removed)"
)
# A learner joins a room: their row added, or kept as it is (a removed learner's stays removed)
_JOIN = (
    f"INSERT INTO {SCHEMA}.live_member (room, joined_at) VALUES (%s, %s) "
    "ON CONFLICT (room, learner) DO NOTHING"
)
_REMOVED = f"SELECT removed FROM {SCHEMA}.live_member WHERE room = %s AND learner = current_user::text"


@dataclass(frozen=True)
class RoomMember:
    """A learner who joined a room: when (first), and whether an instructor removed them."""

    learner: str
    joined_at: datetime
    removed: bool


class RemovedFromRoomError(StoreAccessError):
    """An instructor removed this learner from the room: they cannot answer there, nor join it again."""

    def __init__(self, where: str, room: str) -> None:
        self.reason = "removed"
        self.room = room
        StoreError.__init__(
            self,
            where,
            f"{where}: an instructor removed you from room {room!r}, so you can neither join it again nor "
            "answer there; ask your instructor",
        )


class RoomBusyError(StoreError):
    """A session started in a room where another instructor's session runs: at most one runs in a room."""

    def __init__(self, where: str, room: str, session: int, instructor: str) -> None:
        self.room = room
        self.instructor = instructor
        super().__init__(
            where,
            f"room {room!r} has a live session running (session {session}, started by {instructor}); "
            f"choose another room, or ask {instructor} to end theirs",
        )


class LiveRoom:
    """A connection to the class database for live sessions. Use `LiveRoom.open`; close it (or use
    ``with``). One handle may be used from several threads, one call at a time. A connection lost while idle
    is reopened by the next call; one lost during a call makes that call raise StoreUnavailableError, as does
    a call that runs past ``timeout_s`` (a `Deadline`: the connect timeout unless `open` is told)."""

    def __init__(
        self, url: str, timeout_s: float | None = None, lock_timeout_ms: int = LOCK_TIMEOUT_MS
    ) -> None:
        self._url = url
        self.lock_timeout_ms = lock_timeout_ms
        self.location = describe(url)
        self.timeout_s = timeout_of(url) if timeout_s is None else float(timeout_s)
        self.user = ""
        self._connection: psycopg.Connection[Any] | None = None
        self._pool: ClassPool | None = None  # a class service's: each transaction borrows a connection
        self._role: str | None = None  # on a pool: the learner each transaction runs as
        self._lock = threading.RLock()

    @classmethod
    def open(
        cls, url: str, *, timeout_s: float | None = None, lock_timeout_ms: int = LOCK_TIMEOUT_MS
    ) -> LiveRoom:
        """Connect to the class database at ``url`` (a libpq URL, as for `PostgresStore.open`).
        NotInstalledError without the course's schema, SchemaTooOldError before live sessions were added.
        ``timeout_s`` bounds each call (default: the connect timeout); a lock not granted within
        ``lock_timeout_ms`` (only an administrator can hold one against the class) is a StoreLockedError."""
        room = cls(url, timeout_s, lock_timeout_ms)
        try:
            with room._transaction() as connection:
                found = read_version(connection, room.location)
                if found is None:
                    raise NotInstalledError(room.location, f"no schema {SCHEMA}")
                if found > SCHEMA_VERSION:
                    raise StoreVersionError(room.location, found, SCHEMA_VERSION)
                if found < SCHEMA_VERSION:
                    raise SchemaTooOldError(room.location, found, SCHEMA_VERSION)
                for table, columns in LIVE_COLUMNS.items():
                    connection.execute(f"SELECT {columns} FROM {SCHEMA}.{table} LIMIT 0".encode())
        except BaseException:
            room.close()
            raise
        return room

    @classmethod
    def serving(cls, pool: ClassPool, learner: str) -> LiveRoom:
        """The live room as ``learner`` sees it, on a class service's ``pool`` (each call borrows a
        connection and runs as the learner, ``SET LOCAL ROLE``): what a learner's kernel reaches through the
        service. The learner must be one of the class's (``PostgresStore.serving`` checks it)."""
        room = cls("", pool.timeout_s)
        room.location = f"{pool.location} as {learner}"
        room._pool, room._role, room.user = pool, learner, learner
        return room

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> LiveRoom:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction. A connection found lost at its BEGIN (nothing done yet) is reopened once; on a
        class service's pool, a connection borrowed for it."""
        if self._pool is not None:
            with (
                _translated(self.location, self.lock_timeout_ms),
                self._pool.connection() as connection,
                Deadline(connection, self.timeout_s, self.location),
                transaction(connection, lock_timeout_ms=self.lock_timeout_ms, role=self._role),
            ):
                yield connection
            return
        with self._lock, _translated(self.location, self.lock_timeout_ms):
            for attempt in (1, 2):
                connection = self._connected()
                stack = ExitStack()
                deadline = stack.enter_context(Deadline(connection, self.timeout_s, self.location))
                try:
                    # BEGIN and its settings (search path pinned, lock timeout): the first round trip
                    stack.enter_context(transaction(connection, lock_timeout_ms=self.lock_timeout_ms))
                except psycopg.OperationalError:
                    if deadline.fired:  # no answer: not lost, cut off (the deadline's error)
                        with stack:
                            raise
                    stack.close()
                    connection.close()
                    if attempt == 2:
                        raise
                    continue
                try:
                    with stack:
                        yield connection
                except psycopg.OperationalError:
                    connection.close()  # lost midway: the next call reconnects
                    raise
                return

    def _connected(self) -> psycopg.Connection[Any]:
        connection = self._connection
        if connection is None or connection.closed:
            connection = self._connection = connect(self._url, self.location, self.timeout_s)
            with Deadline(connection, self.timeout_s, self.location):
                row = connection.execute(b"SELECT current_user").fetchone()
            self.user = str(row[0]) if row is not None else ""
        return connection

    # -- the instructor ----------------------------------------------------------------------------------
    def start(self, title: str, at: datetime, room: str | None = None) -> LiveState:
        """Start a session called ``title`` in ``room`` (default: the instructor's own, named after their
        role), no question asked yet; this instructor's sessions still running (a projector whose kernel was
        restarted) end now. RoomBusyError when another instructor's session runs in that room;
        AccessDeniedError unless an instructor."""
        if not isinstance(title, str) or not title.strip():
            raise ValueError(f"title must be a non-empty str, got {title!r}")
        if room is not None:
            _check_room(room)
        when = to_ms(require_aware(at, "at"))
        with self._transaction() as connection:
            connection.execute(
                f"UPDATE {SCHEMA}.live_session SET ended_at = %s WHERE instructor = current_user::text "
                "AND ended_at IS NULL".encode(),
                (when,),
            )
            busy = connection.execute(
                f"{_STATE} WHERE room = COALESCE(%s, current_user::text) AND ended_at IS NULL".encode(),
                (room,),
            ).fetchone()
            if busy is not None:
                taken = _live_state(busy)
                raise RoomBusyError(self.location, taken.room, taken.session, taken.instructor)
            try:
                row = connection.execute(
                    f"INSERT INTO {SCHEMA}.live_session (title, started_at, room) "
                    "VALUES (%s, %s, COALESCE(%s, current_user::text)) RETURNING id".encode(),
                    (title, when, room),
                ).fetchone()
            except pg_errors.UniqueViolation:  # started there meanwhile
                raise RoomBusyError(self.location, room or self.user, 0, "another instructor") from None
            assert row is not None
            state = self._state(connection, int(row[0]))
        assert state is not None
        return state

    def ask(self, session: int, item_id: str, at: datetime, layout: str = "") -> LiveState:
        """Ask ``item_id`` as the session's next question (the one before is closed to answers)."""
        if not isinstance(item_id, str) or not item_id:
            raise ValueError(f"item_id must be a non-empty str, got {item_id!r}")
        return self._update(
            session,
            "position = position + 1, item_id = %s, layout = %s, asked_at = %s, revealed_at = NULL",
            (item_id, layout, to_ms(require_aware(at, "at"))),
        )

    def reveal(self, session: int, at: datetime) -> LiveState:
        """Close the question asked now to answers: its answer may be shown."""
        return self._update(
            session, "revealed_at = COALESCE(revealed_at, %s)", (to_ms(require_aware(at, "at")),)
        )

    def end(self, session: int, at: datetime) -> LiveState:
        """End the session: nothing more is asked or answered."""
        return self._update(session, "ended_at = COALESCE(ended_at, %s)", (to_ms(require_aware(at, "at")),))

    def _update(self, session: int, assignments: str, parameters: tuple[object, ...]) -> LiveState:
        """Change the instructor's running `session`; it as changed, read in the same transaction."""
        with self._transaction() as connection:
            cursor = connection.execute(
                f"UPDATE {SCHEMA}.live_session SET {assignments} WHERE id = %s AND ended_at IS NULL "
                "AND instructor = current_user::text".encode(),
                (*parameters, session),
            )
            state = self._state(connection, session)
        if cursor.rowcount == 1 and state is not None:
            return state
        if state is None:
            raise ValueError(f"no live session {session}")
        if state.ended:
            raise QuestionClosedError(self.location, session, state.position)
        raise AccessDeniedError(self.location, f"live session {session} is run by {state.instructor}")

    def answers(self, session: int, position: int) -> LiveAnswers:
        """The answers to question ``position`` of ``session`` (an instructor sees the class's; a learner
        their own)."""
        with self._transaction() as connection:
            rows = connection.execute(
                f"SELECT answer FROM {SCHEMA}.live_answer a WHERE session_id = %s AND position = %s "
                f"AND {_NOT_REMOVED} ORDER BY answered_at, learner".encode(),
                (session, position),
            ).fetchall()
        return _tally(str(answer) for (answer,) in rows)

    def results(self, session: int) -> list[tuple[int, str, LiveAnswers]]:
        """Every question the session asked, in order: (position, item id, its answers). A question nobody
        answered is not listed."""
        with self._transaction() as connection:
            rows = connection.execute(
                f"SELECT position, item_id, answer FROM {SCHEMA}.live_answer a WHERE session_id = %s "
                f"AND {_NOT_REMOVED} ORDER BY position, answered_at, learner".encode(),
                (session,),
            ).fetchall()
        grouped: dict[tuple[int, str], list[str]] = {}
        for position, item_id, answer in rows:
            grouped.setdefault((int(position), str(item_id)), []).append(str(answer))
        return [(position, item_id, _tally(given)) for (position, item_id), given in grouped.items()]

    # -- everyone ----------------------------------------------------------------------------------------
    def state(self, session: int | None = None, *, room: str | None = None) -> LiveState | None:
        """Session ``session``; else the session running in ``room``; else, named neither, the one session
        running (ValueError, naming their rooms, when several run). None if there is none."""
        with self._transaction() as connection:
            if session is not None:
                return self._state(connection, session)
            if room is not None:
                row = connection.execute(
                    f"{_STATE} WHERE room = %s AND ended_at IS NULL ORDER BY started_at DESC, id DESC "
                    "LIMIT 1".encode(),
                    (room,),
                ).fetchone()
                return None if row is None else _live_state(row)
            running = self._running(connection)
        if len(running) > 1:
            rooms = ", ".join(repr(state.room) for state in running)
            raise ValueError(f"{len(running)} live sessions are running, in rooms {rooms}: name the room")
        return running[0] if running else None

    def open_sessions(self) -> list[LiveState]:
        """The sessions running now, one per room, by room."""
        with self._transaction() as connection:
            return self._running(connection)

    @staticmethod
    def _running(connection: psycopg.Connection[Any]) -> list[LiveState]:
        rows = connection.execute(f"{_STATE} WHERE ended_at IS NULL ORDER BY room, id".encode()).fetchall()
        return [_live_state(row) for row in rows]

    @staticmethod
    def _state(connection: psycopg.Connection[Any], session: int) -> LiveState | None:
        row = connection.execute(f"{_STATE} WHERE id = %s".encode(), (session,)).fetchone()
        return None if row is None else _live_state(row)

    # -- a learner ---------------------------------------------------------------------------------------
    def answer(self, state: LiveState, answer: str, at: datetime) -> None:
        """Give (or change) this learner's answer to the question ``state`` shows. QuestionClosedError when
        that question no longer takes answers (the server refuses it too)."""
        if not isinstance(answer, str) or len(answer) > MAX_ANSWER or not _ANSWER.match(answer):
            raise ValueError(
                "answer must be an option's index or a number (digits, a sign, a point, an exponent; at most "
                f"{MAX_ANSWER} characters), got {answer!r}"
            )
        if state.item_id is None:
            raise ValueError(f"live session {state.session} has asked no question yet")
        when = to_ms(require_aware(at, "at"))
        with self._transaction() as connection:
            now = self._state(connection, state.session)
            if now is None or not now.open or (now.position, now.item_id) != (state.position, state.item_id):
                raise QuestionClosedError(self.location, state.session, state.position)
            self._join(connection, now.room, when)
            connection.execute(
                f"INSERT INTO {SCHEMA}.live_answer (session_id, position, item_id, answer, answered_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session_id, position, learner) "
                "DO UPDATE SET answer = EXCLUDED.answer, answered_at = EXCLUDED.answered_at".encode(),
                (state.session, state.position, state.item_id, answer, when),
            )

    def join(self, room: str, at: datetime) -> None:
        """Join ``room`` as this learner (joining again changes nothing): an answer is accepted only in a room
        joined. RemovedFromRoomError when an instructor removed this learner from it; AccessDeniedError
        for a role that is not a learner."""
        _check_room(room)
        when = to_ms(require_aware(at, "at"))
        with self._transaction() as connection:
            self._join(connection, room, when)

    def _join(self, connection: psycopg.Connection[Any], room: str, when: int) -> None:
        """This learner a member of ``room``, in the caller's transaction (RemovedFromRoomError when
        removed)."""
        found = connection.execute(_REMOVED.encode(), (room,)).fetchone()
        if found is None:
            connection.execute(_JOIN.encode(), (room, when))
            found = connection.execute(_REMOVED.encode(), (room,)).fetchone()
        if found is not None and found[0]:
            raise RemovedFromRoomError(self.location, room)

    def members(self, room: str) -> list[RoomMember]:
        """Who joined ``room``, in the order they joined (an instructor sees every learner; a learner only
        themselves)."""
        _check_room(room)
        with self._transaction() as connection:
            rows = connection.execute(
                f"SELECT learner, joined_at, removed FROM {SCHEMA}.live_member WHERE room = %s "
                "ORDER BY joined_at, learner".encode(),
                (room,),
            ).fetchall()
        return [RoomMember(str(learner), from_ms(int(at)), bool(removed)) for learner, at, removed in rows]

    def remove(self, room: str, learner: str) -> None:
        """Remove ``learner`` from ``room`` (an instructor): their answers in the room's running session are
        deleted, and they can neither answer there nor join it again. ValueError for a learner who never
        joined it; AccessDeniedError unless an instructor."""
        _check_room(room)
        if not isinstance(learner, str) or not learner:
            raise ValueError(f"learner must be a non-empty str, got {learner!r}")
        with self._transaction() as connection:
            cursor = connection.execute(
                f"UPDATE {SCHEMA}.live_member SET removed = true WHERE room = %s AND learner = %s".encode(),
                (room, learner),
            )
        if cursor.rowcount != 1:
            raise ValueError(f"{learner!r} has not joined room {room!r}")

    def my_answer(self, session: int, position: int) -> str | None:
        """This learner's answer to question ``position`` of ``session``, if any."""
        with self._transaction() as connection:
            row = connection.execute(
                f"SELECT answer FROM {SCHEMA}.live_answer WHERE session_id = %s AND position = %s "
                "AND learner = current_user::text".encode(),
                (session, position),
            ).fetchone()
        return None if row is None else str(row[0])


@contextmanager
def _translated(where: str, lock_timeout_ms: int) -> Iterator[None]:
    """psycopg's errors as StoreErrors (`translated_errors`), the row limit's refusal as `RowLimitError`."""
    try:
        with translated_errors(where, lock_timeout_ms):
            yield
    except StoreError as err:
        refused = row_limit_error(where, err.__cause__) if err.__cause__ is not None else None
        if refused is not None:
            raise refused from err.__cause__
        raise


def _tally(answers: Iterable[str]) -> LiveAnswers:
    counts = Counter(answers)  # in the order first given
    return LiveAnswers(dict(sorted(counts.items(), key=lambda pair: -pair[1])))  # stable: ties keep it


def _live_state(row: tuple[Any, ...]) -> LiveState:
    session, instructor, title, position, item_id, layout, revealed, ended, started, room = row
    return LiveState(
        int(session),
        str(instructor),
        str(title),
        int(position),
        None if item_id is None else str(item_id),
        str(layout),
        bool(revealed),
        bool(ended),
        from_ms(int(started)),
        str(room),
    )


def _check_room(room: object) -> None:
    if not _is_room(room):
        raise ValueError(
            f"a room is named by 1 to {MAX_ROOM} characters, none of them a control character, got {room!r}"
        )


def _is_room(room: object) -> bool:
    return (
        isinstance(room, str)
        and 1 <= len(room) <= MAX_ROOM
        and not any(ord(character) < 32 or ord(character) == 127 for character in room)
    )
