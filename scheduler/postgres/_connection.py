"""Connecting to the class database: reading its URL without ever showing the password, the options every
connection gets, a deadline on every call, and what psycopg's errors mean as StoreErrors.

A URL is read once, by `read_url`: one libpq cannot read, or one that libpq would read otherwise than it was
meant (an ``@`` or ``/`` left in a password splits it elsewhere, and a piece of the password would become the
host, the port or the database), is a `MalformedURLError` saying why in words of its own, never quoting the
URL. `describe` shows a URL as errors do: the role, the host, the port and the database, never a password.

Every connection is autocommit, prepares no statement (``prepare_threshold=None``: a pooler such as PgBouncer
in transaction mode hands each transaction to any server connection, where a statement prepared on another
does not exist) and carries TCP keepalives and ``tcp_user_timeout``. Every call on it runs under a `Deadline`:
past it, the connection's socket is shut down from a watchdog thread, which ends the call at once however the
network failed (a silent partition included), and the call raises StoreUnavailableError ("no answer from the
server within N s"). The deadline is, unless a caller says otherwise, the connect timeout: the URL's
``connect_timeout``, else ``$PGCONNECT_TIMEOUT``, else `CONNECT_TIMEOUT_S`.
"""

from __future__ import annotations

import contextlib
import getpass
import math
import os
import re
import socket
import threading
import time
from collections.abc import Iterator, Mapping
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
)
from scheduler.postgres._sql import role_name_problem

__all__ = [
    "BULK_TIMEOUT_S",
    "CONNECT_TIMEOUT_S",
    "UNREADABLE",
    "AccessDeniedError",
    "Deadline",
    "MalformedURLError",
    "StoreRefusedError",
    "bulk_timeout",
    "check_role_name",
    "connect",
    "connect_options",
    "connected",
    "describe",
    "first_line",
    "login",
    "password_clause",
    "read_url",
    "timeout_of",
    "translate",
    "translated",
    "with_learner",
]

CONNECT_TIMEOUT_S = 10  # connecting, and each call, unless the URL or $PGCONNECT_TIMEOUT says
UNREADABLE = "a PostgreSQL database (unreadable URL)"  # what errors name a URL by when it cannot be read
_URI = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


class MalformedURLError(StoreError):
    """The class database's URL cannot be read as it was meant; ``detail`` says why without quoting any of
    it (a piece of it may be a password)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(
            UNREADABLE,
            f"the class database's URL cannot be read ({detail}); correct it (in a password, write @ as %40, "
            "/ as %2F, % as %25 and a space as %20)",
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


class StoreRefusedError(StoreError):
    """The server failed a request for a reason no other StoreError names (``detail``: its words and
    SQLSTATE); the request's transaction was rolled back: nothing of it was saved."""

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        self.detail = detail
        super().__init__(
            path,
            f"{os.fspath(path)} refused this ({detail}); ask whoever runs the class database to look at it",
        )


# -- reading a URL ---------------------------------------------------------------------------------------

# libpq's words for what it cannot read, each in words that quote nothing of the URL
_LIBPQ_PROBLEMS = (
    ("invalid percent-encoded token", "a % not followed by two hexadecimal digits"),
    ("forbidden value %00", "a %00, which no value may hold"),
    ('looking for matching "]"', "an IPv6 host opened with [ and not closed with ]"),
    ("IPv6 host address may not be empty", "an empty IPv6 host, []"),
    ("unexpected spaces found", "a space"),
    ("unexpected character", "an unexpected character after the host"),
    ("key/value separator", "a query parameter that is not one name=value"),
    ("invalid URI query parameter", "a query parameter libpq does not know"),
    ("invalid connection option", "an option libpq does not know"),
    ("unterminated quoted string", "a quoted value not closed"),
    ('missing "="', "an option without ="),
)


def read_url(url: str) -> dict[str, Any]:
    """The options of the libpq URL (or ``key=value`` string) ``url``; MalformedURLError when libpq cannot
    read it, or would read it otherwise than it was meant: more than one ``@``, or an ``@`` after the first
    ``/`` (an ``@`` or ``/`` in the user name or password, which must be written ``%40``, ``%2F``)."""
    if not isinstance(url, str):
        raise MalformedURLError(f"a URL is a str, not {type(url).__name__}")
    if _URI.match(url):
        rest = url.split("://", 1)[1]
        ats = rest.count("@")
        end = min((index for index in (rest.find("@"), rest.find("/")) if index >= 0), default=-1)
        if ats > 1 or (ats == 1 and rest[end] != "@"):
            raise MalformedURLError("an @ or / in its user name or password")
    try:
        return conninfo_to_dict(url)
    except psycopg.Error as exc:
        said = str(exc)
        detail = next((words for key, words in _LIBPQ_PROBLEMS if key in said), "libpq cannot read it")
        raise MalformedURLError(detail) from None


def describe(url: str) -> str:
    """``url`` as errors show it: no password, no other options (`UNREADABLE` for one `read_url` refuses)."""
    try:
        parts = read_url(url)
    except MalformedURLError:
        return UNREADABLE
    user = parts.get("user") or ""
    host = str(parts.get("host") or "")
    database = parts.get("dbname") or user
    port = parts.get("port")
    if host.startswith("/") or not host:
        where = f"postgresql://{user}@/{database}" + (f"?host={host}" if host else "")
    else:
        where = f"postgresql://{user}@{host}{f':{port}' if port else ''}/{database}"
    return where


def login(url: str, environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """The role and the database that ``url`` logs in to, by libpq's defaults: the URL's user, else
    ``$PGUSER``, else the operating system's user; the URL's database, else ``$PGDATABASE``, else the role.
    MalformedURLError for a URL `read_url` refuses."""
    parts = read_url(url)
    user = str(parts.get("user") or environ.get("PGUSER") or _system_user())
    return user, str(parts.get("dbname") or environ.get("PGDATABASE") or user)


def _system_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name known (a container without one)
        return ""


def timeout_of(url: str, environ: Mapping[str, str] = os.environ) -> float:
    """The connect timeout, in seconds: the URL's ``connect_timeout``, else ``$PGCONNECT_TIMEOUT``, else
    `CONNECT_TIMEOUT_S` (for 0 or less too: libpq's "no timeout" is no deadline here). It is also each call's
    deadline unless the caller says. MalformedURLError for a value that is not a number."""
    value = read_url(url).get("connect_timeout") or environ.get("PGCONNECT_TIMEOUT") or CONNECT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        raise MalformedURLError("a connect_timeout that is not a number of seconds") from None
    return seconds if seconds > 0 else float(CONNECT_TIMEOUT_S)


def connect_options(url: str, environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The options `connect` adds to ``url``: autocommit; no prepared statements (``prepare_threshold``
    None: PgBouncer in transaction mode); a connect timeout unless the URL (``connect_timeout=``) or
    ``$PGCONNECT_TIMEOUT`` sets one; TCP keepalives (after 30 s idle, every 10 s, 3 lost) and
    ``tcp_user_timeout`` (the connect timeout, in ms) unless the URL sets them. An explicit option would
    override the URL's."""
    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}
    try:
        named = read_url(url)
    except MalformedURLError:
        return options  # `connect` says why
    if "connect_timeout" not in named and not environ.get("PGCONNECT_TIMEOUT"):
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    options.update({name: value for name, value in _KEEPALIVES.items() if name not in named})
    if "tcp_user_timeout" not in named:
        with contextlib.suppress(MalformedURLError):
            options["tcp_user_timeout"] = round(timeout_of(url, environ) * 1000)
    return options


def connect(url: str, where: str, timeout_s: float | None = None) -> psycopg.Connection[Any]:
    """A connection to ``url`` with `connect_options` (with ``timeout_s``, a caller's deadline, as the
    connect timeout and ``tcp_user_timeout`` too: at least 2 s to connect, as libpq has it); StoreErrors only
    (MalformedURLError for a URL that cannot be read), none of whose messages or causes quote the URL."""
    read_url(url)
    timeout_of(url)
    options = connect_options(url)
    if timeout_s is not None:
        options.update(connect_timeout=max(2, math.ceil(timeout_s)), tcp_user_timeout=round(timeout_s * 1000))
    try:
        return psycopg.connect(url, **options)
    except psycopg.Error as exc:
        raise translate(where, exc) from None  # libpq's words are in the message; its traceback adds none


BULK_TIMEOUT_S = 600  # what an administrator's or an instructor's call may take beyond the connect timeout


def bulk_timeout(url: str) -> float:
    """The deadline of an administrator's or an instructor's call (installing, adding a role, the class
    report, which reads the whole class): `BULK_TIMEOUT_S` more than a learner's."""
    return BULK_TIMEOUT_S + timeout_of(url)


@contextlib.contextmanager
def connected(url: str, where: str, seconds: float | None = None) -> Iterator[psycopg.Connection[Any]]:
    """A connection for the block (closed at its end), its errors translated, under one `Deadline` of
    ``seconds`` (default: `timeout_of`)."""
    bound = timeout_of(url) if seconds is None else seconds
    with connect(url, where) as connection, translated(where), Deadline(connection, bound, where):
        yield connection


def password_clause(connection: psycopg.Connection[Any], role: str, password: str | None) -> sql.Composable:
    """`` PASSWORD '<SCRAM-SHA-256 verifier>'`` for ``CREATE ROLE``/``ALTER ROLE`` (empty without a
    password): the verifier is computed here, as ``psql``'s ``\\password`` does, so that the password itself
    never reaches the server, its log or its statistics."""
    if password is None:
        return sql.SQL("")
    verifier = connection.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256")
    return sql.SQL(" PASSWORD {}").format(sql.Literal(verifier.decode("ascii")))


# -- errors ----------------------------------------------------------------------------------------------


def first_line(exc: BaseException) -> str:
    """An error's first lines as one ("; "-joined): libpq's connection errors start with "connection failed:
    connection to server ... failed:" and say why on the next."""
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines[:2]) if lines else type(exc).__name__


def translate(where: str, exc: psycopg.Error, lock_timeout_ms: int = 0, opened: bool = False) -> StoreError:
    """The StoreError a psycopg error means: every one is one, so that none reaches a learner as a
    traceback (StoreRefusedError for one no other names)."""
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
        return AccessDeniedError(where, first_line(exc))
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
        return StoreCorruptError(where, first_line(exc), opened)
    if isinstance(exc, pg_errors.QueryCanceled):  # statement_timeout, or cancelled by an administrator
        return StoreUnavailableError(where, first_line(exc))
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        state = exc.sqlstate or ""
        if not state or state.startswith(("08", "57P")):
            message = first_line(exc)
            if "password authentication failed" in message or (
                "role" in message and "does not exist" in message
            ):
                return AccessDeniedError(where, message)
            if "database" in message and "does not exist" in message:
                return StoreNotFoundError(where)
            return StoreUnavailableError(where, message)
    state = f"SQLSTATE {exc.sqlstate}: " if exc.sqlstate else ""
    return StoreRefusedError(where, state + (exc.diag.message_primary or first_line(exc)))


@contextlib.contextmanager
def translated(where: str, lock_timeout_ms: int = 0, opened: bool = False) -> Iterator[None]:
    """psycopg's errors in the block raised as the StoreErrors they mean (`translate`)."""
    try:
        yield
    except psycopg.Error as exc:
        raise translate(where, exc, lock_timeout_ms, opened) from exc


# -- deadlines -------------------------------------------------------------------------------------------


class Deadline:
    """``with Deadline(connection, seconds, where):`` the calls in the block end within ``seconds``: past
    that, the watchdog shuts the connection's socket down (the call in progress fails at once, whatever the
    network does), the connection is closed (the next call reconnects) and the block raises
    StoreUnavailableError. A block that finished as the deadline came returns as it was; its connection is
    closed all the same. ``fired`` says whether the deadline came."""

    def __init__(self, connection: psycopg.Connection[Any], seconds: float, where: str) -> None:
        self.connection = connection
        self.seconds = seconds
        self.where = where
        self.at = 0.0
        self.fired = False
        self._socket: socket.socket | None = None

    def __enter__(self) -> Deadline:
        try:
            # a duplicate of the connection's socket: the same socket even if the connection closes its fd
            self._socket = socket.socket(fileno=os.dup(self.connection.fileno()))
        except (psycopg.Error, OSError):  # closed already (the call says so), or no socket to shut
            return self
        self.at = time.monotonic() + self.seconds
        _WATCHDOG.arm(self)
        return self

    def cut(self) -> None:
        """The deadline came (the watchdog calls this, holding its lock)."""
        self.fired = True
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._socket is None:
            return
        _WATCHDOG.disarm(self)  # from here on it cannot fire
        self._socket.close()
        self._socket = None
        if not self.fired:
            return
        self.connection.close()
        if isinstance(error, psycopg.Error):
            raise StoreUnavailableError(
                self.where, f"no answer from the server within {self.seconds:g} s"
            ) from None


class _Watchdog:
    """One daemon thread that cuts the connections whose deadline passed."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._armed: dict[int, Deadline] = {}
        self._thread: threading.Thread | None = None

    def arm(self, deadline: Deadline) -> None:
        with self._condition:
            self._armed[id(deadline)] = deadline
            if self._thread is None or not self._thread.is_alive():  # the first, or in a forked child
                self._thread = threading.Thread(target=self._run, name="course-db-deadlines", daemon=True)
                self._thread.start()
            self._condition.notify()

    def disarm(self, deadline: Deadline) -> None:
        with self._condition:
            self._armed.pop(id(deadline), None)

    def _run(self) -> None:
        with self._condition:
            while True:
                now = time.monotonic()
                for key, deadline in list(self._armed.items()):
                    if deadline.at <= now:
                        del self._armed[key]
                        deadline.cut()
                soonest = min((deadline.at for deadline in self._armed.values()), default=None)
                self._condition.wait(None if soonest is None else max(0.0, soonest - now))


_WATCHDOG = _Watchdog()


def with_learner(url: str, learner: str | None) -> str:
    """``url``, logging in as ``learner`` when it names no role (a URL that names one is left as it is).
    AccessDeniedError for a name no learner can have (over 63 bytes: PostgreSQL would cut it to another)."""
    if read_url(url).get("user") or learner is None:  # MalformedURLError for one that cannot be read
        return url
    check_role_name(describe(url), learner)
    return make_conninfo(url, user=learner)


def check_role_name(where: str, name: str) -> None:
    """AccessDeniedError (naming ``where``) for a role name no learner can have (`role_name_problem`)."""
    problem = role_name_problem(name)
    if problem is not None:
        raise AccessDeniedError(where, f"{problem}; no learner of the class has it")
