"""A classroom's shared store on PostgreSQL (psycopg 3): every learner's progress in one database, each row
belonging to the database role that wrote it, each learner kept to their own rows by the server itself.

``install(admin_url)`` creates (or migrates) the schema, the roles ``course_learner`` and
``course_instructor`` and the row-level security policies; ``add_learner`` and ``add_instructor`` create
login roles in those groups. ``PostgresStore.open(url)`` then opens a learner's store: the learner is the
role the URL logs in as. It implements ``scheduler.Storage`` with the same records and promises as the
SQLite ``Store``: times leave as aware UTC datetimes to the millisecond (kept as integer milliseconds), every
write is one transaction serialized per learner (``pg_advisory_xact_lock``), ``snapshot()`` is one
REPEATABLE READ READ ONLY transaction.

Errors are StoreErrors: StoreUnavailableError (no server, or the connection lost), StoreLockedError (a lock
not granted within ``lock_timeout_ms``), StoreAccessError (``AccessDeniedError``: the role may not do that),
StoreCorruptError (not a course database, or a damaged one), StoreNotFoundError (no such database, or the
course not installed in it), StoreVersionError (a newer schema).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from scheduler._errors import (
    StoreAccessError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    StoreUnavailableError,
    StoreVersionError,
)
from scheduler._memory import Memory
from scheduler._merging import Key, plan
from scheduler._postgres_schema import (
    APPLICATION,
    INSTRUCTOR_ROLE,
    LEARNER_ROLE,
    MIGRATIONS,
    SCHEMA,
    SCHEMA_VERSION,
    TABLE_COLUMNS,
    access_statements,
)
from scheduler._records import (
    Answer,
    CardState,
    CramReview,
    DueItems,
    LogEntry,
    Merged,
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
    check_answer,
    check_id,
    check_time,
    entry_key,
    read_settings,
    review_from_row,
    settings_change,
    stored_memory,
)
from scheduler._time import from_ms, require_aware, to_ms

__all__ = [
    "AccessDeniedError",
    "NotInstalledError",
    "PostgresStore",
    "SchemaTooOldError",
    "add_instructor",
    "add_learner",
    "describe",
    "install",
    "schema_version",
]

# Every query says so too, RLS aside: an instructor's (or an admin's) own store is theirs only. The column's
# collation "C" (a role name's) lets this use the indexes.
_MINE = "learner = current_user::text"
_LOCK_CLASS = int.from_bytes(b"AtCs", "big")  # advisory locks: (this, hashtext(learner)) per learner
_INSTALL_LOCK = _LOCK_CLASS << 8  # one bigint key: install and migrations, one at a time


class NotInstalledError(StoreNotFoundError):
    """The database exists but the course's schema is not installed in it (``install`` does that)."""

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        self.detail = detail
        StoreError.__init__(
            self,
            path,
            f"{os.fspath(path)} has no course progress tables ({detail}); whoever runs the class database "
            "installs them with scheduler.postgres.install(admin_url)",
        )


class AccessDeniedError(StoreAccessError):
    """The server refused the connection's role this access (a wrong password, a role that is not a
    learner, a write by an instructor): ``reason`` is "denied", ``detail`` the server's words."""

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        self.reason = "denied"
        self.detail = detail
        StoreError.__init__(
            self,
            path,
            f"{os.fspath(path)} refused this access ({detail}); ask whoever runs the class database to check "
            "your role",
        )


class SchemaTooOldError(StoreError):
    """The database holds an older schema than this code's, which only ``install`` (an administrator) may
    migrate."""

    def __init__(self, path: str | os.PathLike[str], found: int, known: int) -> None:
        self.found = found
        self.known = known
        super().__init__(
            path,
            f"{os.fspath(path)} has an older schema ({found}; this version uses {known}); whoever runs the "
            "class database upgrades it with scheduler.postgres.install(admin_url)",
        )


def with_learner(url: str, learner: str | None) -> str:
    """``url``, logging in as ``learner`` when it names no role (a URL that names one is left as it is)."""
    if learner is None or conninfo_to_dict(url).get("user"):
        return url
    return make_conninfo(url, user=learner)


def describe(url: str) -> str:
    """``url`` as errors show it: no password, no other options."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "a PostgreSQL database (unreadable URL)"
    user = parts.get("user") or ""
    host = str(parts.get("host") or "")
    database = parts.get("dbname") or user
    port = parts.get("port")
    if host.startswith("/") or not host:
        where = f"postgresql://{user}@/{database}" + (f"?host={host}" if host else "")
    else:
        where = f"postgresql://{user}@{host}{f':{port}' if port else ''}/{database}"
    return where


def _translate(where: str, exc: BaseException, lock_timeout_ms: int, opened: bool) -> StoreError | None:
    """The StoreError a psycopg error means, or None for one that is a bug here."""
    if isinstance(exc, pg_errors.LockNotAvailable):
        return StoreLockedError(where, lock_timeout_ms / 1000)
    if isinstance(
        exc,
        (
            pg_errors.InsufficientPrivilege,
            pg_errors.InvalidAuthorizationSpecification,
            pg_errors.InvalidPassword,
        ),
    ):
        return AccessDeniedError(where, _first_line(exc))
    if isinstance(exc, pg_errors.InvalidCatalogName):
        return StoreNotFoundError(where)
    if isinstance(
        exc,
        (
            pg_errors.UndefinedTable,
            pg_errors.UndefinedColumn,
            pg_errors.UndefinedFunction,
            pg_errors.DatatypeMismatch,
            pg_errors.DataCorrupted,
            pg_errors.IndexCorrupted,
        ),
    ):
        return StoreCorruptError(where, _first_line(exc), opened)
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        state = exc.sqlstate or ""
        if not state or state.startswith(("08", "57P")):
            message = _first_line(exc)
            if "password authentication failed" in message or (
                "role" in message and "does not exist" in message
            ):
                return AccessDeniedError(where, message)
            if "database" in message and "does not exist" in message:
                return StoreNotFoundError(where)
            return StoreUnavailableError(where, message)
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # libpq's connection errors start with "connection failed: connection to server ... failed:"
    return "; ".join(lines[:2]) if lines else type(exc).__name__


@contextmanager
def translated(where: str, lock_timeout_ms: int = 0, opened: bool = False) -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        error = _translate(where, exc, lock_timeout_ms, opened)
        if error is None:
            raise
        raise error from exc


CONNECT_TIMEOUT_S = 10  # how long to wait for the server unless the URL or $PGCONNECT_TIMEOUT says


def connect_options(url: str, environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The options `connect` adds to ``url``: autocommit, and a connect timeout unless the URL
    (``connect_timeout=``) or ``$PGCONNECT_TIMEOUT`` sets one (an explicit option would override both)."""
    options: dict[str, Any] = {"autocommit": True}
    try:
        named = "connect_timeout" in conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        named = False  # unreadable: psycopg.connect says why
    if not named and not environ.get("PGCONNECT_TIMEOUT"):
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    return options


def connect(url: str, where: str) -> psycopg.Connection[Any]:
    with translated(where):
        return psycopg.connect(url, **connect_options(url))


def _card_row(card: CardState, due: int, log_seq: int) -> tuple[object, ...]:
    return (
        card.item_id,
        CARD_STATE_CODES[card.state],
        card.step,
        card.stability,
        card.difficulty,
        due,
        None if card.last_review is None else to_ms(card.last_review),
        card.reps,
        card.lapses,
        log_seq,
    )


_PUT_CARD = (
    f"INSERT INTO {SCHEMA}.cards ({CARD_COLUMNS}, log_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (learner, item_id) DO UPDATE SET state = excluded.state, step = excluded.step, "
    "stability = excluded.stability, difficulty = excluded.difficulty, due = excluded.due, "
    "last_review = excluded.last_review, reps = excluded.reps, lapses = excluded.lapses, "
    "log_seq = excluded.log_seq"
)


# Installing: the schema, the roles, the policies.


def read_version(connection: psycopg.Connection[Any], where: str) -> int | None:
    """The schema version installed (0: the version table and nothing else yet), None when the course is not
    installed; StoreCorruptError for a ``course`` schema that is not ours."""
    (namespace,) = connection.execute("SELECT to_regnamespace(%s) IS NOT NULL", (SCHEMA,)).fetchone() or (
        False,
    )
    if not namespace:
        return None
    (table,) = connection.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{SCHEMA}.course_schema",)
    ).fetchone() or (False,)
    if not table:
        (others,) = connection.execute(
            "SELECT count(*) FROM pg_class WHERE relnamespace = to_regnamespace(%s)", (SCHEMA,)
        ).fetchone() or (0,)
        if others:
            raise StoreCorruptError(where, f"schema {SCHEMA} holds tables of another program")
        return None
    try:
        rows = connection.execute(f"SELECT application, version FROM {SCHEMA}.course_schema").fetchall()
    except (pg_errors.UndefinedColumn, pg_errors.DatatypeMismatch) as exc:
        raise StoreCorruptError(where, f"its version table is not ours: {_first_line(exc)}") from exc
    if len(rows) != 1 or rows[0][0] != APPLICATION or not isinstance(rows[0][1], int) or rows[0][1] < 0:
        raise StoreCorruptError(where, f"its version table holds {rows!r}, not a course schema version")
    return int(rows[0][1])


def schema_version(url: str) -> int | None:
    """The course schema version installed in the database at ``url`` (None when not installed)."""
    where = describe(url)
    with connect(url, where) as connection, translated(where):
        return read_version(connection, where)


@dataclass(frozen=True)
class ClassRecords:
    """What a class report reads, per learner: the answers in log order and when each item is due."""

    answers: dict[str, list[Answer]]
    due_times: dict[str, dict[str, datetime]]


def class_records(url: str) -> ClassRecords:
    """Every learner's answers and due times, read in one snapshot by a connection that may read the whole
    class (an instructor's: row-level security shows a learner only their own rows, so a learner gets
    theirs alone). Learners who enrolled but never answered have empty lists."""
    where = describe(url)
    with connect(url, where) as connection, translated(where):
        if read_version(connection, where) is None:
            raise NotInstalledError(where, f"no schema {SCHEMA}")
        with connection.transaction():
            connection.execute(b"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            answers: dict[str, list[Answer]] = {
                learner: []
                for (learner,) in connection.execute(
                    f"SELECT DISTINCT learner FROM {SCHEMA}.decks ORDER BY learner".encode()
                )
            }
            for learner, item_id, reviewed_at, rating, state in connection.execute(
                f"SELECT learner, item_id, reviewed_at, rating, state_before FROM {SCHEMA}.review_log "
                "ORDER BY learner, seq".encode()
            ):
                answers.setdefault(learner, []).append(
                    Answer(item_id, from_ms(reviewed_at), RATINGS[rating], STATES[state])
                )
            due: dict[str, dict[str, datetime]] = {learner: {} for learner in answers}
            for learner, item_id, when in connection.execute(
                f"SELECT learner, item_id, due FROM {SCHEMA}.cards".encode()
            ):
                due.setdefault(learner, {})[item_id] = from_ms(when)
    return ClassRecords(answers, due)


def _create_group(connection: psycopg.Connection[Any], name: str) -> None:
    exists = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    if exists is None:
        connection.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(name)))


def install(admin_url: str, *, migrations: Sequence[Sequence[str]] = MIGRATIONS) -> int:
    """Create or migrate the course's schema in the database at ``admin_url`` (a role that may create roles
    and owns, or may create in, that database), in one transaction under an advisory lock: the groups
    ``course_learner`` and ``course_instructor`` (NOLOGIN), schema ``course``, its tables and indexes,
    row-level security (enabled and forced) with its policies, and the grants. Running it again does nothing
    new. Returns the schema version now installed. StoreVersionError for a database of a newer schema,
    StoreCorruptError for a ``course`` schema that is not ours. ``migrations`` is for tests of migrating."""
    where = describe(admin_url)
    known = len(migrations)
    with connect(admin_url, where) as connection, translated(where):
        for attempt in range(3):
            try:
                with connection.transaction():
                    connection.execute("SELECT pg_advisory_xact_lock(%s)", (_INSTALL_LOCK,))
                    _create_group(connection, LEARNER_ROLE)
                    _create_group(connection, INSTRUCTOR_ROLE)
                    version = read_version(connection, where)
                    if version is None:
                        connection.execute(
                            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(SCHEMA))
                        )
                        connection.execute(
                            f"CREATE TABLE {SCHEMA}.course_schema (application TEXT NOT NULL, "
                            "version INTEGER NOT NULL CHECK (version >= 0))"
                        )
                        connection.execute(
                            f"INSERT INTO {SCHEMA}.course_schema (application, version) VALUES (%s, 0)",
                            (APPLICATION,),
                        )
                        version = 0
                    if version > known:
                        raise StoreVersionError(where, version, known)
                    for migration in migrations[version:]:
                        for statement in migration:
                            connection.execute(statement.encode())
                    connection.execute(f"UPDATE {SCHEMA}.course_schema SET version = %s", (known,))
                    for statement in access_statements(known):
                        connection.execute(statement.encode())
                return known
            except pg_errors.UniqueViolation:  # a role created meanwhile by an install in another database
                if attempt == 2:
                    raise
    raise AssertionError("unreachable")


def _add_member(admin_url: str, name: str, password: str | None, group: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    where = describe(admin_url)
    role = sql.Identifier(name)
    secret = sql.SQL("") if password is None else sql.SQL(" PASSWORD {}").format(sql.Literal(password))
    with connect(admin_url, where) as connection, translated(where):
        if connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (group,)).fetchone() is None:
            raise NotInstalledError(where, f"no role {group}")
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_INSTALL_LOCK,))
            exists = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
            verb = sql.SQL("ALTER ROLE" if exists else "CREATE ROLE")
            connection.execute(sql.SQL("{} {} LOGIN{}").format(verb, role, secret))
            connection.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), role))


def add_learner(admin_url: str, name: str, password: str | None = None) -> None:
    """Create the login role ``name`` in ``course_learner`` (or make an existing role one, its password
    replaced when given): a learner whose rows carry ``name``."""
    _add_member(admin_url, name, password, LEARNER_ROLE)


def add_instructor(admin_url: str, name: str, password: str | None = None) -> None:
    """Create the login role ``name`` in ``course_instructor``: it reads every learner's rows, writes none."""
    _add_member(admin_url, name, password, INSTRUCTOR_ROLE)


class PostgresStore:
    """A learner's progress in the class database. ``PostgresStore.open(url)``; use it as a context manager.

    One handle may be used from several threads, one call at a time (a lock serializes them), like the
    SQLite ``Store``. A connection lost (the server restarted) is reopened by the next call; the call that
    found it lost raises StoreUnavailableError.
    """

    def __init__(self, url: str, where: str, memory: Memory, lock_timeout_ms: int) -> None:
        self._url = url
        self.location = where
        self.memory = memory
        self.lock_timeout_ms = lock_timeout_ms
        self.learner = ""
        self._connection: psycopg.Connection[Any] | None = None
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
    ) -> PostgresStore:
        """Open the store of the learner that ``url`` (a libpq URL: ``postgresql://user:password@host/db``, a
        unix socket's folder as ``?host=/folder``) logs in as; ``learner``, when given, must be that role.

        The course's tables are installed by ``install``, never by a learner: a database without them is a
        StoreNotFoundError (``NotInstalledError``) whatever ``create`` says; ``create`` is there for the
        same calls as ``Store.open`` (a learner's store exists as soon as the course is installed).
        """
        if isinstance(lock_timeout_ms, bool) or not isinstance(lock_timeout_ms, int) or lock_timeout_ms < 0:
            raise ValueError(f"lock_timeout_ms must be a non-negative int, got {lock_timeout_ms!r}")
        del create
        store = cls(url, describe(url), memory if memory is not None else Memory(), lock_timeout_ms)
        try:
            with store._lock:
                connection = store._connect()
                with translated(store.location, lock_timeout_ms):
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

    def _connect(self) -> psycopg.Connection[Any]:
        connection = connect(self._url, self.location)
        try:
            with translated(self.location, self.lock_timeout_ms):
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
                raise StoreCorruptError(self.location, _first_line(exc)) from exc

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
        with self._lock, self._translated():
            row = (
                self._connected()
                .execute(f"SELECT has_table_privilege('{SCHEMA}.review_log', 'INSERT')".encode())
                .fetchone()
            )
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
            error = _translate(self.location, exc, self.lock_timeout_ms, self._opened)
            if error is None:
                raise
            raise error from exc

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
            with self._translated():
                connection = self._connected()
                connection.execute(b"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._snapshots = 1
            try:
                yield self
            finally:
                self._snapshots = 0
                if not connection.closed:
                    try:
                        connection.execute(b"ROLLBACK")  # it only read
                    except psycopg.Error:
                        connection.close()  # lost meanwhile: the next call reconnects

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        with self._lock, self._translated():
            if self._snapshots:
                raise RuntimeError("cannot write inside PostgresStore.snapshot(); write after the block ends")
            connection = self._connected()
            with connection.transaction():
                # per transaction (SET LOCAL), so that a pooler in transaction mode carries nothing over
                connection.execute(
                    "SELECT set_config('lock_timeout', %s, true)", (f"{self.lock_timeout_ms}ms",)
                )
                connection.execute("SELECT pg_advisory_xact_lock(%s, hashtext(current_user))", (_LOCK_CLASS,))
                yield connection

    def _read(self, query: str, parameters: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._translated():
            return self._connected().execute(query.encode(), parameters).fetchall()

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
            connection.execute(_PUT_CARD.encode(), _card_row(after, due, row[0]))
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

    def merge(
        self, answers: Sequence[LogEntry], practice: Sequence[LogEntry], decks: Mapping[str, datetime]
    ) -> Merged:
        """Merge another log into this learner's, in one transaction, as ``Store.merge`` does: answers and
        practice answers not present yet go in by time, every present row kept in its order; the due dates
        from each item's first new answer on are recomputed and every card rebuilt; a deck keeps its
        earliest date."""
        fresh_answers = [entry_key(entry) for entry in answers]
        fresh_practice = [entry_key(entry) for entry in practice]
        dates = {check_id(deck, "deck"): to_ms(check_time(at, "at")) for deck, at in decks.items()}
        with self._write() as connection:
            added, skipped = self._merge_reviews(connection, fresh_answers)
            added_practice, skipped_practice = self._merge_cram(connection, fresh_practice)
            added_decks = self._merge_decks(connection, dates)
        return Merged(added, added_practice, added_decks, skipped + skipped_practice)

    def _merge_reviews(self, connection: psycopg.Connection[Any], incoming: list[Key]) -> tuple[int, int]:
        rows = connection.execute(
            "SELECT seq, item_id, rating, reviewed_at, duration_ms, due, state_before "
            f"FROM {SCHEMA}.review_log WHERE {_MINE} ORDER BY seq".encode()
        ).fetchall()
        merge = plan([(row[0], (row[1], row[2], row[3], row[4])) for row in rows], incoming)
        if not merge.added:
            return 0, merge.skipped
        merged, start = merge.merged, merge.start
        kept = {row[0]: row for row in rows}
        touched = {key[0] for row_id, key in merged[start:] if row_id is None}
        history: dict[str, list[Review]] = {item_id: [] for item_id in touched}
        for row in rows[:start]:
            if row[1] in touched:
                history[row[1]].append(review_from_row(row[1:6]))
        if start < len(rows):
            first_seq = int(rows[start][0])
            connection.execute(
                f"DELETE FROM {SCHEMA}.review_log WHERE {_MINE} AND seq >= %s".encode(), (first_seq,)
            )
        else:
            first_seq = int(rows[-1][0]) + 1 if rows else 1
        recompute: set[str] = set()
        inserts = []
        for offset, (row_id, key) in enumerate(merged[start:]):
            item_id = key[0]
            if row_id is None:
                recompute.add(item_id)
            if row_id is None or item_id in recompute:
                due, before = self._redo(history[item_id], key)
            else:
                due, before = kept[row_id][5], kept[row_id][6]
            if item_id in history:
                history[item_id].append(review_from_row((*key[:4], due)))
            inserts.append((first_seq + offset, *key, due, before))
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {SCHEMA}.review_log "
                "(seq, item_id, rating, reviewed_at, duration_ms, due, state_before) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)".encode(),
                inserts,
            )
        self._rebuild(connection)
        return merge.added, merge.skipped

    def _redo(self, history: list[Review], key: Key) -> tuple[int, int]:
        item_id, rating, at, _ = key
        before = self.memory.replay(item_id, history) if history else None
        after = self.memory.review(before, item_id, Rating(rating), from_ms(at))
        state = STATE_CODES[State.NEW] if before is None else CARD_STATE_CODES[before.state]
        return to_ms(after.due), state

    @staticmethod
    def _merge_cram(connection: psycopg.Connection[Any], incoming: list[Key]) -> tuple[int, int]:
        rows = connection.execute(
            f"SELECT seq, item_id, rating, reviewed_at, duration_ms FROM {SCHEMA}.cram_log WHERE {_MINE} "
            "ORDER BY seq".encode()
        ).fetchall()
        merge = plan([(row[0], (row[1], row[2], row[3], row[4])) for row in rows], incoming)
        if not merge.added:
            return 0, merge.skipped
        if merge.start < len(rows):
            first_seq = int(rows[merge.start][0])
            connection.execute(
                f"DELETE FROM {SCHEMA}.cram_log WHERE {_MINE} AND seq >= %s".encode(), (first_seq,)
            )
        else:
            first_seq = int(rows[-1][0]) + 1 if rows else 1
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {SCHEMA}.cram_log (seq, item_id, rating, reviewed_at, duration_ms) "
                "VALUES (%s, %s, %s, %s, %s)".encode(),
                [(first_seq + offset, *key) for offset, (_, key) in enumerate(merge.merged[merge.start :])],
            )
        return merge.added, merge.skipped

    @staticmethod
    def _merge_decks(connection: psycopg.Connection[Any], dates: Mapping[str, int]) -> int:
        known = dict(
            connection.execute(
                f"SELECT deck, enrolled_at FROM {SCHEMA}.decks WHERE {_MINE}".encode()
            ).fetchall()
        )
        for deck, at in dates.items():
            if deck not in known or at < known[deck]:
                connection.execute(
                    f"INSERT INTO {SCHEMA}.decks (deck, enrolled_at) VALUES (%s, %s) "
                    "ON CONFLICT (learner, deck) DO UPDATE SET enrolled_at = excluded.enrolled_at".encode(),
                    (deck, at),
                )
        return sum(deck not in known for deck in dates)

    def rebuild_cache(self) -> None:
        """Recompute every card of the learner's by replaying the log."""
        with self._write() as connection:
            self._rebuild(connection)

    def _rebuild(self, connection: psycopg.Connection[Any]) -> None:
        connection.execute(f"DELETE FROM {SCHEMA}.cards WHERE {_MINE}".encode())
        rows = connection.execute(
            f"SELECT seq, {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {_MINE} "
            'ORDER BY item_id COLLATE "C", seq'.encode()
        ).fetchall()
        cards = []
        start = 0
        while start < len(rows):
            end = start
            item_id = rows[start][1]
            while end < len(rows) and rows[end][1] == item_id:
                end += 1
            card = self.memory.replay(item_id, [review_from_row(row[1:]) for row in rows[start:end]])
            cards.append(_card_row(card, to_ms(card.due), rows[end - 1][0]))
            start = end
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
                    connection.execute(f"DELETE FROM {SCHEMA}.settings WHERE {_MINE}".encode())
                    if rows:
                        with connection.cursor() as cursor:
                            cursor.executemany(
                                f"INSERT INTO {SCHEMA}.settings (name, value, set_at) "
                                "VALUES (%s, %s, %s)".encode(),
                                rows,
                            )
                    self.memory = memory
                    self._rebuild(connection)
            except BaseException:
                self.memory = previous
                raise

    def _stored_memory(self) -> Memory:
        return stored_memory(self.memory, self.settings(), self.location)

    # Reading.

    def enrolled(self) -> dict[str, datetime]:
        rows = self._read(
            f"SELECT deck, enrolled_at FROM {SCHEMA}.decks WHERE {_MINE} "
            'ORDER BY enrolled_at, deck COLLATE "C"'
        )
        return {deck: from_ms(at) for deck, at in rows}

    def card(self, item_id: str) -> CardState | None:
        rows = self._read(
            f"SELECT {CARD_COLUMNS} FROM {SCHEMA}.cards WHERE {_MINE} AND item_id = %s", (item_id,)
        )
        return card_from_row(rows[0]) if rows else None

    def cards(self) -> dict[str, CardState]:
        rows = self._read(
            f'SELECT {CARD_COLUMNS} FROM {SCHEMA}.cards WHERE {_MINE} ORDER BY item_id COLLATE "C"'
        )
        return {row[0]: card_from_row(row) for row in rows}

    def reviews(self, item_id: str | None = None) -> list[Review]:
        """Log rows in log order, of one item or of all."""
        if item_id is None:
            rows = self._read(f"SELECT {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {_MINE} ORDER BY seq")
        else:
            rows = self._read(
                f"SELECT {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {_MINE} AND item_id = %s "
                "ORDER BY seq",
                (item_id,),
            )
        return [review_from_row(row) for row in rows]

    def cram_reviews(self) -> list[CramReview]:
        rows = self._read(
            f"SELECT item_id, rating, reviewed_at, duration_ms FROM {SCHEMA}.cram_log WHERE {_MINE} "
            "ORDER BY seq"
        )
        return [CramReview(item_id, RATINGS[rating], from_ms(at), ms) for item_id, rating, at, ms in rows]

    def due_times(self) -> dict[str, datetime]:
        return {
            item_id: from_ms(due)
            for item_id, due in self._read(f"SELECT item_id, due FROM {SCHEMA}.cards WHERE {_MINE}")
        }

    def due_by(self, until: datetime) -> DueItems:
        """The items due at or before ``until``, earliest first, and every item with a card (one read)."""
        until_ms = to_ms(require_aware(until, "until"))
        rows = self._read(
            f'SELECT item_id, due FROM {SCHEMA}.cards WHERE {_MINE} ORDER BY due, item_id COLLATE "C"'
        )
        due = {item_id: from_ms(when) for item_id, when in rows if when <= until_ms}
        return DueItems(due, frozenset([item_id for item_id, _ in rows]))

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        """Scheduled answers with ``start <= reviewed_at < end`` (either bound optional), in log order."""
        where = [_MINE]
        parameters: list[object] = []
        if start is not None:
            where.append("reviewed_at >= %s")
            parameters.append(to_ms(require_aware(start, "start")))
        if end is not None:
            where.append("reviewed_at < %s")
            parameters.append(to_ms(require_aware(end, "end")))
        rows = self._read(
            f"SELECT item_id, reviewed_at, rating, state_before FROM {SCHEMA}.review_log "
            f"WHERE {' AND '.join(where)} ORDER BY seq",
            tuple(parameters),
        )
        return [
            Answer(item_id, from_ms(at), RATINGS[rating], STATES[state])
            for item_id, at, rating, state in rows
        ]

    def review_counts(self) -> dict[str, int]:
        return dict(
            self._read(f"SELECT item_id, COUNT(*) FROM {SCHEMA}.review_log WHERE {_MINE} GROUP BY item_id")
        )
