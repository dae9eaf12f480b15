"""Whether the course is installed in a database, and which version of its schema: what opening a store, a
live room and ``install`` read first, and the errors for a database without the course or with an older one;
also the error for a write the class's row limit refused (`RowLimitError`, `row_limit_error`).
"""

from __future__ import annotations

import os
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from scheduler._errors import StoreCorruptError, StoreError, StoreNotFoundError
from scheduler.postgres._connection import connected, describe, first_line, translated
from scheduler.postgres._schema import APPLICATION, ROW_LIMIT_SQLSTATE, SCHEMA
from scheduler.postgres._sql import LOCK_TIMEOUT_MS, transaction

__all__ = [
    "NotInstalledError",
    "RowLimitError",
    "SchemaTooOldError",
    "read_version",
    "row_limit_error",
    "schema_version",
]


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


class RowLimitError(StoreError):
    """The server refused a write that would take the learner over the class's limit of rows
    (`scheduler.postgres._schema.LEARNER_ROW_LIMIT` unless the administrator set another); nothing of it was
    kept. ``limit``: the class's limit (None when the server did not say)."""

    def __init__(self, path: str | os.PathLike[str], limit: int | None) -> None:
        self.limit = limit
        said = "its limit" if limit is None else f"the class's limit of {limit:,} rows"
        super().__init__(
            path,
            f"{os.fspath(path)} keeps no more of this learner's rows: they have reached {said} (answers, "
            "practice answers, nudges, predictions, cards, decks, settings and rooms joined, all together), "
            "and nothing of this was saved; whoever runs the class database can raise the limit, with "
            "scheduler.postgres.install(admin_url, row_limit=...)",
        )


def row_limit_error(where: str, exc: BaseException) -> RowLimitError | None:
    """The `RowLimitError` that ``exc`` (a psycopg error) is, None when it is not the row limit's refusal."""
    if not isinstance(exc, psycopg.Error) or exc.sqlstate != ROW_LIMIT_SQLSTATE:
        return None
    detail = exc.diag.message_detail or ""
    return RowLimitError(where, int(detail) if detail.isdigit() else None)


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
        raise StoreCorruptError(where, f"its version table is not ours: {first_line(exc)}") from exc
    if len(rows) != 1 or rows[0][0] != APPLICATION or not isinstance(rows[0][1], int) or rows[0][1] < 0:
        raise StoreCorruptError(where, f"its version table holds {rows!r}, not a course schema version")
    return int(rows[0][1])


def schema_version(url: str) -> int | None:
    """The course schema version installed in the database at ``url`` (None when not installed)."""
    where = describe(url)
    with (
        connected(url, where) as connection,
        translated(where, LOCK_TIMEOUT_MS),
        transaction(connection, lock_timeout_ms=LOCK_TIMEOUT_MS, read_only=True),
    ):
        return read_version(connection, where)
