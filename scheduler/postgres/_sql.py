"""How the classroom database's code talks to the server so that nothing another role did can change what its
statements mean or make them wait forever: every statement runs in a transaction (or a one-round-trip query)
that first pins ``search_path`` to ``pg_catalog, pg_temp`` (so no function, operator or table a learner
creates, in ``public`` or anywhere, is ever found by name) and sets a ``lock_timeout`` and a
``statement_timeout``, all ``SET LOCAL``: nothing outlives the transaction (a pooler in transaction mode
carries nothing over). Also the rule for role names (PostgreSQL cuts them to 63 bytes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

__all__ = [
    "LOCK_TIMEOUT_MS",
    "MAX_ROLE_BYTES",
    "REPORT_TIMEOUT_MS",
    "SEARCH_PATH",
    "STATEMENT_TIMEOUT_MS",
    "local_settings",
    "quoted_role",
    "read_once",
    "role_name_problem",
    "transaction",
]

SEARCH_PATH = "pg_catalog, pg_temp"  # pg_temp last: a temporary table never shadows a name either
LOCK_TIMEOUT_MS = 5000  # how long a read or a live look waits for a table or row lock
STATEMENT_TIMEOUT_MS = 60_000  # how long one statement of a learner's, or a live look, may run
REPORT_TIMEOUT_MS = 600_000  # the class report reads the whole class
MAX_ROLE_BYTES = 63  # NAMEDATALEN - 1: PostgreSQL cuts a longer name


def quoted_role(name: str) -> str:
    """``name`` as an SQL identifier (double quotes, inner ones doubled): what ``SET ROLE`` takes."""
    if "\x00" in name:
        raise ValueError("a role's name holds no NUL character")
    return '"' + name.replace('"', '""') + '"'


def local_settings(lock_timeout_ms: int, statement_timeout_ms: int, role: str | None = None) -> str:
    """The ``SET LOCAL`` statements every transaction starts with (utility statements: nothing in them is
    looked up by name before the search path is pinned); with ``role``, first ``SET LOCAL ROLE`` to it: the
    transaction runs as that role (a class service acting for a learner), and the server's row-level
    security holds it to that role's rows."""
    for value in (lock_timeout_ms, statement_timeout_ms):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"a timeout must be a non-negative int of milliseconds, got {value!r}")
    acting = "" if role is None else f"SET LOCAL ROLE {quoted_role(role)}; "
    return (
        f"{acting}SET LOCAL search_path = {SEARCH_PATH}; SET LOCAL lock_timeout = {lock_timeout_ms}; "
        f"SET LOCAL statement_timeout = {statement_timeout_ms}"
    )


@contextmanager
def transaction(
    connection: psycopg.Connection[Any],
    *,
    lock_timeout_ms: int,
    statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
    read_only: bool = False,
    repeatable: bool = False,
    role: str | None = None,
) -> Iterator[psycopg.Connection[Any]]:
    """One transaction on an autocommit ``connection``: BEGIN and the settings in one round trip (as
    ``role`` when given), then the block's statements, COMMIT (ROLLBACK when the block raises). A COMMIT the
    server turns into a ROLLBACK (the transaction had failed) raises."""
    mode = " ISOLATION LEVEL REPEATABLE READ" if repeatable else ""
    mode += " READ ONLY" if read_only else ""
    settings = local_settings(lock_timeout_ms, statement_timeout_ms, role)
    connection.execute(f"BEGIN{mode}; {settings}".encode())
    try:
        yield connection
    except BaseException:
        if not connection.closed:
            try:
                connection.execute(b"ROLLBACK")
            except psycopg.Error:
                connection.close()  # lost meanwhile: whoever reconnects starts clean
        raise
    cursor = connection.execute(b"COMMIT")
    if cursor.statusmessage != "COMMIT":
        raise psycopg.errors.InFailedSqlTransaction("the transaction failed and was rolled back")


def read_once(
    connection: psycopg.Connection[Any],
    query: str,
    parameters: Sequence[object] = (),
    *,
    lock_timeout_ms: int,
    statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
    role: str | None = None,
) -> list[tuple[Any, ...]]:
    """The rows of one read, in one round trip: the settings (as ``role`` when given) and the query sent
    together (the simple query protocol, ``parameters`` bound by psycopg on this side, quoted as literals),
    as one implicit transaction."""
    cursor = psycopg.ClientCursor(connection)
    try:
        settings = local_settings(lock_timeout_ms, statement_timeout_ms, role)
        cursor.execute(f"{settings}; {query}", parameters or None)  # None: a % in the query stays one
        while cursor.nextset():
            pass  # the SET LOCALs' results, then the query's: the last
        return cursor.fetchall()
    finally:
        cursor.close()


def role_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a role's name as given (None when it can): over 63 bytes in UTF-8 PostgreSQL
    would cut it, so that two names could become one role."""
    size = len(name.encode("utf-8"))
    if size <= MAX_ROLE_BYTES:
        return None
    cut = name.encode("utf-8")[:MAX_ROLE_BYTES].decode("utf-8", errors="ignore")  # at a character's end
    return (
        f"the name {name!r} is {size} bytes in UTF-8, over PostgreSQL's {MAX_ROLE_BYTES} for a role name (it "
        f"would be cut to {cut!r})"
    )
