"""A classroom's shared store on PostgreSQL (psycopg 3): every learner's progress in one database, each row
belonging to the database role that wrote it, each learner kept to their own rows by the server itself.

``install(admin_url)`` (`scheduler.postgres._roles`) creates (or migrates) the schema, the roles
``course_learner`` and ``course_instructor`` and the row-level security policies; ``add_learner`` and
``add_instructor`` create login roles in those groups. ``PostgresStore.open(url)`` then opens a learner's
store: the learner is the role the URL logs in as. It implements ``scheduler.Storage`` with the same records
and promises as the SQLite ``Store``: times leave as aware UTC datetimes to the millisecond (kept as integer
milliseconds), every write is one transaction serialized per learner (by locking the learner's own row of
``write_lock``, which nobody else can see or lock), ``snapshot()`` is one REPEATABLE READ READ ONLY
transaction. Every transaction pins the search path and sets a lock timeout and a statement timeout
(`scheduler.postgres._sql`); the store never deletes a row (learners may not: `scheduler.postgres._schema`).

Errors are StoreErrors, every psycopg error one of them (`scheduler.postgres._connection`):
StoreUnavailableError (no server, the connection lost, or no answer within the call's deadline,
``timeout_s``), StoreLockedError (a lock not granted within ``lock_timeout_ms``), StoreAccessError
(``AccessDeniedError``: the role may not do that), StoreCorruptError (not a course database, or a damaged
one), StoreNotFoundError (no such database, or the course not installed in it), StoreVersionError (a newer
schema), RowLimitError (a write that would take the learner over the class's row limit: nothing of it kept),
StoreRefusedError (anything else the server refused), MalformedURLError (a URL that cannot be read:
it quotes none of it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone, tzinfo
from types import TracebackType
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from scheduler._errors import StoreCorruptError, StoreError, StoreVersionError
from scheduler._memory import Memory
from scheduler._merging import incoming
from scheduler._records import (
    CardState,
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
    REVIEW_COLUMNS,
    STATE_CODES,
    card_from_row,
    card_row,
    check_answer,
    check_id,
    check_nudge,
    check_prediction,
    check_time,
    new_nudge_rows,
    new_prediction_rows,
    read_settings,
    replayed_cards,
    review_from_row,
    settings_change,
    stored_memory,
)
from scheduler._time import from_ms, to_ms
from scheduler.postgres._connection import (
    CONNECT_TIMEOUT_S,
    AccessDeniedError,
    Deadline,
    check_role_name,
    connect,
    describe,
    first_line,
    login,
    timeout_of,
    translate,
    translated,
)
from scheduler.postgres._merge import merge
from scheduler.postgres._pool import ClassPool
from scheduler.postgres._reading import Reading
from scheduler.postgres._schema import LEARNER_ROLE, SCHEMA, SCHEMA_VERSION, TABLE_COLUMNS
from scheduler.postgres._sql import STATEMENT_TIMEOUT_MS, local_settings, read_once, transaction
from scheduler.postgres._version import NotInstalledError, SchemaTooOldError, read_version, row_limit_error

__all__ = ["PostgresStore"]

# Every query says so too, RLS aside: an instructor's (or an admin's) own store is theirs only. The column's
# collation "C" (a role name's) lets this use the indexes.
_MINE = "learner = current_user::text"
_PREDICTION_COLUMNS = 'item_id, predicted_at, answer, "right"'  # RIGHT is a keyword: the column is quoted
_ADD_PREDICTION = (
    f"INSERT INTO {SCHEMA}.prediction_log ({_PREDICTION_COLUMNS}) VALUES (%s, %s, %s, %s)".encode()
)
_PREDICTED = f"SELECT {_PREDICTION_COLUMNS} FROM {SCHEMA}.prediction_log WHERE {_MINE}".encode()
# A write's first statement: the learner's own row of write_lock, locked (created at the first write) until
# the transaction ends. Row-level security hides it from everyone else, who therefore cannot lock it.
_TAKE_WRITE_LOCK = (
    f"INSERT INTO {SCHEMA}.write_lock AS w (writes) VALUES (1) "
    "ON CONFLICT (learner) DO UPDATE SET writes = w.writes + 1"
)


# Whether a role is a learner of the class: a login role in course_learner and in no other role (not the group
# itself, which the service group is a member of through every learner; not a learner made an instructor too,
# whose rights a service acting as it would have), with no privileged attribute.
_A_LEARNER = (
    "SELECT r.rolcanlogin AND NOT (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication "
    "OR r.rolbypassrls) AND ARRAY(SELECT g.rolname::text FROM pg_auth_members m JOIN pg_roles g "
    "ON g.oid = m.roleid WHERE m.member = r.oid) = ARRAY[%s] FROM pg_roles r WHERE r.rolname = %s"
)

_PUT_CARD = (
    f"INSERT INTO {SCHEMA}.cards ({CARD_COLUMNS}, log_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (learner, item_id) DO UPDATE SET state = excluded.state, step = excluded.step, "
    "stability = excluded.stability, difficulty = excluded.difficulty, due = excluded.due, "
    "last_review = excluded.last_review, reps = excluded.reps, lapses = excluded.lapses, "
    "log_seq = excluded.log_seq"
)


class PostgresStore(Reading):
    """A learner's progress in the class database. ``PostgresStore.open(url)``; use it as a context manager.

    One handle may be used from several threads, one call at a time (a lock serializes them), like the
    SQLite ``Store``. A connection lost (the server restarted) is reopened by the next call; the call that
    found it lost raises StoreUnavailableError. Each call ends within ``timeout_s`` (a `Deadline`): past it
    the call raises StoreUnavailableError, however the network failed. ``learner`` is the role logged in as,
    ``database`` the database as the URL names it (with libpq's defaults). Its reads of the learner's rows
    (``cards``, ``reviews``, ``due_by``, ``answers``, ``nudges``, ...) are `Reading`'s
    (`scheduler.postgres._reading`), each one query through ``_read``.
    """

    def __init__(
        self, url: str, where: str, memory: Memory, lock_timeout_ms: int, timeout_s: float = CONNECT_TIMEOUT_S
    ) -> None:
        self._url = url
        self.location = where
        self.memory = memory
        self.lock_timeout_ms = lock_timeout_ms
        self.timeout_s = timeout_s
        self.learner = ""
        self.database = ""
        self._connection: psycopg.Connection[Any] | None = None
        self._pool: ClassPool | None = None  # a class service's pool: each call borrows a connection
        self._role: str | None = None  # on a pool: the learner each transaction runs as (SET LOCAL ROLE)
        self._held: psycopg.Connection[Any] | None = None  # the snapshot's connection, while one is open
        self._lock = threading.RLock()
        self._closed = False
        self._opened = False
        self._snapshots = 0

    @classmethod
    def open(
        cls,
        url: str,
        *,
        learner: str | None = None,
        memory: Memory | None = None,
        create: bool = True,
        lock_timeout_ms: int = 5000,
        timeout_s: float | None = None,
        tz: tzinfo = timezone.utc,
    ) -> PostgresStore:
        """Open the store of the learner that ``url`` (a libpq URL: ``postgresql://user:password@host/db``, a
        unix socket's folder as ``?host=/folder``) logs in as; ``learner``, when given, must be that role.
        ``timeout_s`` bounds each call (default: the connect timeout, `timeout_of`); MalformedURLError for a
        URL that cannot be read, saying why without quoting it.

        The course's tables are installed by ``install``, never by a learner: a database without them is a
        StoreNotFoundError (``NotInstalledError``) whatever ``create`` says; ``create`` is there for the
        same calls as ``Store.open`` (a learner's store exists as soon as the course is installed). ``tz``:
        the learner's time zone, in which FSRS counts their days (unused when ``memory`` is given).
        """
        if isinstance(lock_timeout_ms, bool) or not isinstance(lock_timeout_ms, int) or lock_timeout_ms < 0:
            raise ValueError(f"lock_timeout_ms must be a non-negative int, got {lock_timeout_ms!r}")
        del create
        if timeout_s is None:
            timeout_s = timeout_of(url)
        elif isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
        memory_used = memory if memory is not None else Memory(tz=tz)
        store = cls(url, describe(url), memory_used, lock_timeout_ms, float(timeout_s))
        role, store.database = login(url)
        for name in (role, learner):
            if name is not None:
                check_role_name(store.location, name)  # a role PostgreSQL would cut is nobody's
        try:
            with store._lock:
                connection = store._connect()
                with translated(store.location, lock_timeout_ms), store._deadline(connection):
                    store._check_schema(connection)
                if learner is not None and learner != store.learner:
                    raise AccessDeniedError(
                        store.location,
                        f"this connection logs in as {store.learner!r}, not as the learner {learner!r}",
                    )
            if memory is None:
                store.memory = store._stored_memory()
        except BaseException:
            store.close()
            raise
        store._opened = True
        return store

    @classmethod
    def serving(
        cls,
        pool: ClassPool,
        learner: str,
        *,
        memory: Memory | None = None,
        lock_timeout_ms: int = 5000,
        timeout_s: float | None = None,
        tz: tzinfo = timezone.utc,
    ) -> PostgresStore:
        """The store of ``learner`` on a class service's ``pool``: each call borrows a connection and runs
        as the learner (``SET LOCAL ROLE``), so the server's row-level security holds it to their rows, as
        if they had logged in themselves; the pool's connections are shared by every learner.
        AccessDeniedError for a role that is not a learner of the class (a service acts for learners only)."""
        if isinstance(lock_timeout_ms, bool) or not isinstance(lock_timeout_ms, int) or lock_timeout_ms < 0:
            raise ValueError(f"lock_timeout_ms must be a non-negative int, got {lock_timeout_ms!r}")
        if not isinstance(learner, str) or not learner:
            raise ValueError(f"learner must be a non-empty str, got {learner!r}")
        store = cls(
            "", f"{pool.location} as {learner}", memory or Memory(tz=tz), lock_timeout_ms, pool.timeout_s
        )
        if timeout_s is not None:
            store.timeout_s = float(timeout_s)
        check_role_name(store.location, learner)
        store._pool, store._role, store.learner, store.database = pool, learner, learner, ""
        try:
            with (
                store._lock,
                store._translated(),
                store._borrowed() as connection,
                store._deadline(connection),
            ):
                found = read_once(
                    connection, _A_LEARNER, (LEARNER_ROLE, learner), lock_timeout_ms=lock_timeout_ms
                )
                if found != [(True,)]:  # asked as the service itself, before acting as anyone
                    raise AccessDeniedError(store.location, f"{learner!r} is not a learner of this class")
                store._check_schema(connection)
            if memory is None:
                store.memory = store._stored_memory()
        except BaseException:
            store.close()
            raise
        store._opened = True
        return store

    def check_schema(self) -> None:
        """Check again that the database holds this course's schema at this version (what opening checks):
        a class service does so when a learner's kernel opens its store."""
        with self._lock, self._translated(), self._borrowed() as connection, self._deadline(connection):
            self._check_schema(connection)

    @contextmanager
    def _borrowed(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection for one call: the snapshot's while one is open, else the store's own (connected
        when needed) or, on a class service's pool, one borrowed for the call."""
        if self._held is not None:
            yield self._held
        elif self._pool is None:
            yield self._connected()
        else:
            if self._closed:
                raise psycopg.InterfaceError("the store is closed")
            with self._pool.connection() as connection:
                yield connection

    def _connect(self) -> psycopg.Connection[Any]:
        connection = connect(self._url, self.location, self.timeout_s)
        try:
            with translated(self.location, self.lock_timeout_ms), self._deadline(connection):
                row = connection.execute("SELECT current_user").fetchone()
                assert row is not None
        except BaseException:
            connection.close()
            raise
        if self.learner and row[0] != self.learner:
            connection.close()
            raise AccessDeniedError(self.location, f"reconnected as {row[0]!r}, not {self.learner!r}")
        self.learner = str(row[0])
        self._connection = connection
        return connection

    def _check_schema(self, connection: psycopg.Connection[Any]) -> None:
        with transaction(connection, lock_timeout_ms=self.lock_timeout_ms, read_only=True, role=self._role):
            version = read_version(connection, self.location)
            if version is None:
                raise NotInstalledError(self.location, f"no schema {SCHEMA}")
            if version > SCHEMA_VERSION:
                raise StoreVersionError(self.location, version, SCHEMA_VERSION)
            if version < SCHEMA_VERSION:
                raise SchemaTooOldError(self.location, version, SCHEMA_VERSION)
            for table, columns in TABLE_COLUMNS.items():
                try:
                    connection.execute(f"SELECT {columns} FROM {SCHEMA}.{table} LIMIT 0".encode())
                except (pg_errors.UndefinedTable, pg_errors.UndefinedColumn) as exc:
                    raise StoreCorruptError(self.location, first_line(exc)) from exc

    def _connected(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise psycopg.InterfaceError("the store is closed")
        connection = self._connection
        if connection is None or connection.closed:
            self._connection = None
            connection = self._connect()
        return connection

    def check_writable(self) -> None:
        """AccessDeniedError unless this role may add answers (an instructor may not); writes nothing."""
        with self._lock, self._translated(), self._borrowed() as connection, self._deadline(connection):
            query = f"SELECT has_table_privilege('{SCHEMA}.review_log', 'INSERT')"
            found = read_once(connection, query, lock_timeout_ms=self.lock_timeout_ms, role=self._role)
            row = next(iter(found), None)
        if row is None or not row[0]:
            raise AccessDeniedError(
                self.location, f"{self.learner} may read but not save answers or settings"
            )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except psycopg.Error as exc:
            refused = row_limit_error(self.location, exc)  # over the class's row limit: said as such
            if refused is not None:
                raise refused from exc
            raise translate(self.location, exc, self.lock_timeout_ms, self._opened) from exc

    def _deadline(self, connection: psycopg.Connection[Any], scale: float = 1.0) -> Deadline:
        """The bound on one call (`timeout_s`, times `scale` for a large merge)."""
        return Deadline(connection, self.timeout_s * scale, self.location)

    @contextmanager
    def snapshot(self) -> Iterator[PostgresStore]:
        """Every read inside the block sees one state of the store (one REPEATABLE READ READ ONLY
        transaction, its snapshot taken at the first read); blocks nest; writing inside is refused."""
        with self._lock:
            if self._snapshots:
                self._snapshots += 1
                try:
                    yield self
                finally:
                    self._snapshots -= 1
                return
            with self._translated(), self._borrowed() as connection:
                with self._deadline(connection):
                    settings = local_settings(self.lock_timeout_ms, STATEMENT_TIMEOUT_MS, self._role)
                    connection.execute(
                        f"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; {settings}".encode()
                    )
                self._snapshots, self._held = 1, connection
                try:
                    yield self
                finally:
                    self._snapshots, self._held = 0, None
                    if not connection.closed:
                        try:
                            with self._deadline(connection):
                                connection.execute(b"ROLLBACK")  # it only read
                        except (psycopg.Error, StoreError):
                            connection.close()  # lost meanwhile: the next call reconnects

    @contextmanager
    def _write(self, scale: float = 1.0) -> Iterator[psycopg.Connection[Any]]:
        with self._lock, self._translated():
            if self._snapshots:
                raise RuntimeError("cannot write inside PostgresStore.snapshot(); write after the block ends")
            with (
                self._borrowed() as connection,
                self._deadline(connection, scale),
                transaction(connection, lock_timeout_ms=self.lock_timeout_ms, role=self._role),
            ):
                connection.execute(_TAKE_WRITE_LOCK.encode())  # one writer per learner, at a time
                yield connection

    def _read(self, query: str, parameters: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._translated(), self._borrowed() as connection, self._deadline(connection):
            if self._snapshots:  # in the snapshot's transaction, its settings made
                return connection.execute(query.encode(), parameters).fetchall()
            return read_once(
                connection, query, parameters, lock_timeout_ms=self.lock_timeout_ms, role=self._role
            )

    # Writing.

    def record(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        """Append a scheduled answer to the learner's log and update the item's card, in one transaction."""
        rating, at = check_answer(item_id, rating, at, duration_ms)
        with self._write() as connection:
            before = self._current(connection, item_id)
            after = self.memory.review(before, item_id, rating, at)
            due = to_ms(after.due)
            row = connection.execute(
                f"INSERT INTO {SCHEMA}.review_log "
                "(seq, item_id, rating, reviewed_at, duration_ms, due, state_before) VALUES ("
                f"(SELECT COALESCE(MAX(seq), 0) + 1 FROM {SCHEMA}.review_log WHERE {_MINE}), "
                "%s, %s, %s, %s, %s, %s) RETURNING seq".encode(),
                (
                    item_id,
                    int(rating),
                    to_ms(at),
                    duration_ms,
                    due,
                    STATE_CODES[State.NEW] if before is None else CARD_STATE_CODES[before.state],
                ),
            ).fetchone()
            assert row is not None
            connection.execute(_PUT_CARD.encode(), card_row(after, row[0]))
        return Review(item_id, rating, at, duration_ms, from_ms(due))

    def _current(self, connection: psycopg.Connection[Any], item_id: str) -> CardState | None:
        """The card before a new answer: the cached one if it covers the whole log, else a replay."""
        row = connection.execute(
            f"SELECT MAX(seq) FROM {SCHEMA}.review_log WHERE {_MINE} AND item_id = %s".encode(), (item_id,)
        ).fetchone()
        last = None if row is None else row[0]
        if last is None:
            return None
        card = connection.execute(
            f"SELECT {CARD_COLUMNS}, log_seq FROM {SCHEMA}.cards WHERE {_MINE} AND item_id = %s".encode(),
            (item_id,),
        ).fetchone()
        if card is not None and card[9] == last:
            return card_from_row(card)
        rows = connection.execute(
            f"SELECT {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {_MINE} AND item_id = %s "
            "ORDER BY seq".encode(),
            (item_id,),
        ).fetchall()
        return self.memory.replay(item_id, [review_from_row(row) for row in rows])

    def record_cram(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> None:
        """Log a practice answer in its own table; the schedule is never changed by it."""
        rating, at = check_answer(item_id, rating, at, duration_ms)
        with self._write() as connection:
            connection.execute(
                f"INSERT INTO {SCHEMA}.cram_log (seq, item_id, rating, reviewed_at, duration_ms) VALUES ("
                f"(SELECT COALESCE(MAX(seq), 0) + 1 FROM {SCHEMA}.cram_log WHERE {_MINE}), "
                "%s, %s, %s, %s)".encode(),
                (item_id, int(rating), to_ms(at), duration_ms),
            )

    def enroll(self, deck: str, at: datetime) -> None:
        """Put ``deck``'s new items into the schedule; enrolling again keeps the first date."""
        check_id(deck, "deck")
        at_ms = to_ms(check_time(at, "at"))
        with self._write() as connection:
            connection.execute(
                f"INSERT INTO {SCHEMA}.decks (deck, enrolled_at) VALUES (%s, %s) "
                "ON CONFLICT (learner, deck) DO NOTHING".encode(),
                (deck, at_ms),
            )

    def nudge(self, nudge: Nudge) -> Nudge:
        """Append a nudge to the learner's nudge log (no card changes; see `Nudge`); returns it as kept."""
        nudge = check_nudge(nudge)
        with self._write() as connection:
            connection.execute(
                f"INSERT INTO {SCHEMA}.nudge_log (item_id, nudged_at, due, reason) "
                "VALUES (%s, %s, %s, %s)".encode(),
                (nudge.item_id, to_ms(nudge.nudged_at), to_ms(nudge.due), nudge.reason),
            )
        return nudge

    def predict(self, prediction: PredictionEvent) -> PredictionEvent:
        """Append a prediction to the learner's prediction log (no card changes; see `PredictionEvent`);
        returns it as kept."""
        prediction = check_prediction(prediction)
        with self._write() as connection:
            connection.execute(_ADD_PREDICTION, new_prediction_rows([prediction], set())[0])
        return prediction

    def merge(
        self,
        answers: Sequence[LogEntry],
        practice: Sequence[LogEntry],
        decks: Mapping[str, datetime],
        nudges: Sequence[Nudge] = (),
        predictions: Sequence[PredictionEvent] = (),
    ) -> Merged:
        """Merge another log into this learner's, in one transaction, as ``Store.merge`` does: answers and
        practice answers not present yet go in by time, every present row kept in its order; the due dates
        from each item's first new answer on are recomputed and every card rebuilt; a deck keeps its
        earliest date; nudges and predictions not present yet are appended."""
        given = incoming(answers, practice, decks)
        wanted = [check_nudge(nudge) for nudge in nudges]
        guesses = [check_prediction(prediction) for prediction in predictions]
        size = len(answers) + len(practice) + len(wanted) + len(guesses)
        with self._write(1 + size / 500) as connection:  # a minute for 5,000
            plan = merge(connection, self.memory, given)
            if plan.reviews is not None:
                self._rebuild(connection)
            present = connection.execute(
                f"SELECT item_id, nudged_at, due, reason FROM {SCHEMA}.nudge_log WHERE {_MINE}".encode()
            ).fetchall()
            added = new_nudge_rows(wanted, set(present))
            guessed = new_prediction_rows(guesses, set(connection.execute(_PREDICTED).fetchall()))
            with connection.cursor() as cursor:
                if added:
                    cursor.executemany(
                        f"INSERT INTO {SCHEMA}.nudge_log (item_id, nudged_at, due, reason) "
                        "VALUES (%s, %s, %s, %s)".encode(),
                        added,
                    )
                if guessed:
                    cursor.executemany(_ADD_PREDICTION, guessed)
        return replace(plan.merged, nudges=len(added), predictions=len(guessed))

    def rebuild_cache(self) -> None:
        """Recompute every card of the learner's by replaying the log."""
        with self._write() as connection:
            self._rebuild(connection)

    def _rebuild(self, connection: psycopg.Connection[Any]) -> None:
        """Every card of an item in the log rewritten from it, in place (a learner deletes nothing; a card
        with no answer in the log, which only an administrator's deleting answers leaves, stays)."""
        rows = connection.execute(
            f"SELECT seq, {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {_MINE} "
            'ORDER BY item_id COLLATE "C", seq'.encode()
        ).fetchall()
        cards = [card_row(card, seq) for card, seq in replayed_cards(self.memory, rows)]
        if cards:
            with connection.cursor() as cursor:
                cursor.executemany(_PUT_CARD.encode(), cards)

    # Settings.

    def settings(self) -> Settings:
        """The learner's scheduling settings (``Settings()`` when none were saved); StoreCorruptError when a
        stored one cannot be read."""
        rows = self._read(f"SELECT name, value FROM {SCHEMA}.settings WHERE {_MINE} ORDER BY name")
        return read_settings(rows, self.location)

    def save_settings(self, settings: Settings, at: datetime) -> None:
        """Replace the learner's settings, in one transaction; ``memory`` is then the model they describe and
        every card is rebuilt from the log with it (due dates kept from the log). ValueError (nothing
        written) for settings refused."""
        memory, rows = settings_change(self.memory, settings, at)
        with self._lock:
            previous = self.memory
            try:
                with self._write() as connection:
                    # every setting not given is unset (JSON null reads as absent), in place: no DELETE
                    connection.execute(
                        f"UPDATE {SCHEMA}.settings SET value = 'null', set_at = %s WHERE {_MINE} "
                        "AND value <> 'null' AND name <> ALL(%s)".encode(),
                        (to_ms(at), [name for name, _, _ in rows]),
                    )
                    if rows:
                        with connection.cursor() as cursor:
                            cursor.executemany(
                                f"INSERT INTO {SCHEMA}.settings (name, value, set_at) VALUES (%s, %s, %s) "
                                "ON CONFLICT (learner, name) DO UPDATE SET value = excluded.value, "
                                "set_at = excluded.set_at".encode(),
                                rows,
                            )
                    self.memory = memory
                    self._rebuild(connection)
            except BaseException:
                self.memory = previous
                raise

    def _stored_memory(self) -> Memory:
        return stored_memory(self.memory, self.settings(), self.location)
