"""Fixtures shared by the tests (plain helpers are in fixed_clock.py and store_helpers.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixed_clock import Clock
from pgbouncer_server import PgBouncer, require_pgbouncer
from postgres_server import PostgresServer, require_postgres
from store_helpers import exact_store

from scheduler import Store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    """An open store at ``db``, fuzz off so due dates are exact."""
    with exact_store(db) as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster of this test process's own, on a unix socket in a temporary folder and on
    127.0.0.1 at a free port, removed at the end (skipped without PostgreSQL's binaries, failed on CI); tests
    make their own databases in it."""
    server = PostgresServer(require_postgres(), tcp=True)
    try:
        server.start()
        yield server
    finally:
        with contextlib.suppress(RuntimeError):  # never started, or stopped by a test that failed
            server.stop()
        server.remove()


@pytest.fixture(scope="session")
def pgbouncer(postgres_server: PostgresServer) -> Iterator[PgBouncer]:
    """Debian's PgBouncer in front of ``postgres_server``, in transaction mode as docs/classroom.md says
    (skipped without it, failed on CI)."""
    pooler = PgBouncer(postgres_server, require_pgbouncer())
    try:
        pooler.start()
        yield pooler
    finally:
        pooler.stop()
        pooler.remove()
