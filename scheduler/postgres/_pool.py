"""A class service's pool of server connections (psycopg_pool), shared by every learner it serves.

The service logs in as its own role (``add_service``: a member of ``course_service``) and runs each of a
learner's transactions as that learner (``SET LOCAL ROLE``, `scheduler.postgres._sql`), so that the server's
row-level security holds each transaction to one learner's rows while the server connections stay as few as
the pool's size, however large the class: ``PostgresStore.serving(pool, learner)`` is a learner's store on
it. A connection goes back to the pool after each call (a snapshot: after the block); nothing of a
learner's stays on it (every setting is ``SET LOCAL``). A connection is checked before it is lent, so that
after a restart of the server no request fails on a connection it closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from scheduler._errors import StoreUnavailableError
from scheduler.postgres._connection import (
    AccessDeniedError,
    connect_options,
    connected,
    describe,
    read_url,
    timeout_of,
    translated,
)
from scheduler.postgres._schema import SCHEMA, SCHEMA_VERSION, SERVICE_ROLE
from scheduler.postgres._sql import LOCK_TIMEOUT_MS, transaction
from scheduler.postgres._version import NotInstalledError, SchemaTooOldError, read_version

__all__ = ["ClassPool"]


class ClassPool:
    """At most ``max_size`` server connections for every learner a class service serves.

    ``ClassPool.open(url)`` with the service role's URL checks the schema once; `connection` lends one
    connection for a block (waiting up to ``timeout_s`` for one to be free: StoreUnavailableError after
    that). ``peak`` is the most connections it has held at once.
    """

    def __init__(self, pool: ConnectionPool[Any], where: str, timeout_s: float) -> None:
        self._pool = pool
        self.location = where
        self.timeout_s = timeout_s
        self.max_size = pool.max_size
        self.peak = 0

    @classmethod
    def open(
        cls, url: str, *, min_size: int = 2, max_size: int = 10, timeout_s: float | None = None
    ) -> ClassPool:
        """A pool of ``min_size`` to ``max_size`` connections to ``url`` (the service role's), the schema
        checked: NotInstalledError, SchemaTooOldError or StoreVersionError as a learner's store says them;
        AccessDeniedError for a role that is not a class service."""
        for name, value in (("min_size", min_size), ("max_size", max_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if min_size > max_size:
            raise ValueError(f"min_size must be at most max_size, got {min_size} > {max_size}")
        read_url(url)
        where = describe(url)
        bound = timeout_of(url) if timeout_s is None else float(timeout_s)
        pool: ConnectionPool[Any] = ConnectionPool(
            url,
            kwargs=connect_options(url),
            min_size=min_size,
            max_size=max_size,
            open=False,
            timeout=bound,
            check=ConnectionPool.check_connection,  # a connection the server dropped is not lent (issue 35)
        )
        opened = cls(pool, where, bound)
        with connected(url, where, bound) as probe:  # the server's refusal said as it is, at once
            opened._check(probe)
        try:
            with translated(where, LOCK_TIMEOUT_MS):
                pool.open(wait=True, timeout=bound)
        except PoolTimeout as exc:
            pool.close()
            raise StoreUnavailableError(where, "no connection to the server within the time allowed") from exc
        except BaseException:
            pool.close()
            raise
        return opened

    def _check(self, connection: psycopg.Connection[Any]) -> None:
        with transaction(connection, lock_timeout_ms=LOCK_TIMEOUT_MS):
            version = read_version(connection, self.location)
            if version is None:
                raise NotInstalledError(self.location, f"no schema {SCHEMA}")
            if version < SCHEMA_VERSION:
                raise SchemaTooOldError(self.location, version, SCHEMA_VERSION)
            row = connection.execute(
                "SELECT pg_has_role(current_user, %s, 'MEMBER')", (SERVICE_ROLE,)
            ).fetchone()
        if row is None or not row[0]:
            raise AccessDeniedError(
                self.location, f"this role is not a class service (not in {SERVICE_ROLE})"
            )

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """One connection of the pool for the block, given back at its end (closed if the block broke it)."""
        try:
            with self._pool.connection(timeout=self.timeout_s) as connection:
                self.peak = max(self.peak, self._pool.get_stats().get("pool_size", 0))
                yield connection
        except PoolTimeout as exc:
            raise StoreUnavailableError(
                self.location, "every connection of the class service was busy for the time allowed"
            ) from exc

    def stats(self) -> dict[str, int]:
        """psycopg_pool's counters (``pool_size``, ``requests_waiting``, ...)."""
        return dict(self._pool.get_stats())

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> ClassPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ClassPool({self.location!r})"
