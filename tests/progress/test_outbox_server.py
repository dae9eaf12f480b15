"""Whose kept answers go where, against the real PostgreSQL of the ``postgres_server`` fixture (and Debian's
PgBouncer in front of it): the answers a learner's computer kept while the class database could not be reached
are sent to that learner's rows whatever the URL's spelling (another host or port, PgBouncer, a role named
by the environment), and never to another learner's, even when learners share an outbox folder; files of
the naming before are found and sent to their learner.

The class database goes away under a session by closing the TCP proxy (tests/tcp_proxy.py) the session
connects through.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from pgbouncer_server import PgBouncer
from postgres_server import PostgresServer, free_port, learner_password
from tcp_proxy import TcpProxy

from course.progress import Kept
from course.progress._outbox import Outbox, OutboxOwnerError, Owner, legacy_path, outbox_path
from course.terminal.cli import main
from scheduler import LogEntry, Rating

postgres = pytest.importorskip("scheduler.postgres")

LEARNERS = ("ana", "ana b", "ana_b", "ben")
DOT = "01-scale-dot-vs-cosine"


@dataclass
class Class:
    server: PostgresServer
    name: str
    outbox: Path

    def direct(self, role: str | None) -> str:
        """``role``'s URL to the cluster's socket (None: a URL that names no role, nor a password)."""
        if role is None:
            return self.server.url("", None, self.name).replace("postgresql://@", "postgresql://")
        return self.server.learner_url(self.name, role)

    def practice(self, role: str) -> list[tuple[str, Rating]]:
        with postgres.PostgresStore.open(self.direct(role)) as store:
            return [(r.item_id, r.rating) for r in store.cram_reviews()]


@pytest.fixture
def klass(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Class:
    """A class database with LEARNERS; one outbox folder for everyone (``$COURSE_OUTBOX``)."""
    for name in (
        "COURSE_DB",
        "COURSE_LEARNER",
        "JUPYTERHUB_USER",
        "PGUSER",
        "PGPASSWORD",
        "PGCONNECT_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    database = postgres_server.create_database()
    admin = postgres_server.admin_url(database)
    postgres.install(admin)
    for name in LEARNERS:
        postgres.add_learner(admin, name, password=learner_password(name))
    return Class(postgres_server, database, tmp_path / "outbox")


@pytest.fixture
def proxy(postgres_server: PostgresServer) -> Iterator[TcpProxy]:
    with TcpProxy(postgres_server.port) as forwarding:
        yield forwarding


class Closes(io.StringIO):
    """The learner's input; the proxy the session connects through closes before line `at` is read."""

    def __init__(self, text: str, proxy: TcpProxy, at: int) -> None:
        super().__init__(text)
        self.proxy, self.at, self.read = proxy, at, 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.read += 1
        if self.read == self.at:
            self.proxy.close()
        return super().readline(size)


def cram(url: str, stdin: io.StringIO) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["cram", "01", "--db", url], stdin=stdin, stdout=out, stderr=err, rng=random.Random(0))
    return status, out.getvalue(), err.getvalue()


KEPT = "Kept on this computer: the class database cannot be reached ("
SENT = "1 answer kept while the class database was unreachable was sent.\n"


def keep_one(url: str, proxy: TcpProxy) -> None:
    """A practice session through `proxy` (`url`): the first answer logged, the second kept."""
    status, said, err = cram(url, Closes("1\n1\nq\n", proxy, at=2))
    assert (status, err) == (0, "")
    assert said.count("Logged as practice: Again.") == 1 and said.count(KEPT) == 1, said


def test_answers_kept_through_one_spelling_are_sent_through_another(
    klass: Class, proxy: TcpProxy, pgbouncer: PgBouncer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept while the URL named no role (the hub's user name did) and went to 127.0.0.1 at a proxy's port;
    sent once the class moved behind PgBouncer, at another port, with the role in the URL."""
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    monkeypatch.setenv("PGPASSWORD", learner_password("ana"))
    keep_one(klass.server.tcp_url("", None, klass.name, proxy.port).replace("//@", "//"), proxy)
    monkeypatch.delenv("JUPYTERHUB_USER")
    monkeypatch.delenv("PGPASSWORD")
    assert len(list(klass.outbox.glob("outbox-*.jsonl"))) == 1
    status, said, err = cram(pgbouncer.learner_url(klass.name, "ana"), io.StringIO("q\n"))
    assert (status, err) == (0, "") and said.startswith(SENT)
    assert klass.practice("ana") == [(DOT, Rating.AGAIN), ("01-weighted-average-shape", Rating.AGAIN)]
    assert outbox_path(Owner("ana", klass.name), klass.outbox).read_bytes() == b""


def test_learners_sharing_an_outbox_folder_send_only_their_own(
    klass: Class, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two learners whose names a file name cannot tell apart, named by ``$PGUSER`` (the URL, the same for
    both, names no role), keep an answer each in the same folder; each sends their own, to their own rows."""
    port = free_port()
    url = klass.server.tcp_url("", None, klass.name, port).replace("//@", "//")
    for learner in ("ana b", "ana_b"):
        monkeypatch.setenv("PGUSER", learner)
        monkeypatch.setenv("PGPASSWORD", learner_password(learner))
        with TcpProxy(postgres_server.port, port=port) as proxy:
            keep_one(url, proxy)
    assert len(list(klass.outbox.glob("outbox-*.jsonl"))) == 2
    for learner in ("ana b", "ana_b"):
        monkeypatch.setenv("PGUSER", learner)
        monkeypatch.setenv("PGPASSWORD", learner_password(learner))
        with TcpProxy(postgres_server.port, port=port):
            status, said, err = cram(url, io.StringIO("q\n"))
        assert (status, err) == (0, "") and said.startswith(SENT), learner
        assert klass.practice(learner) == [(DOT, Rating.AGAIN), ("01-weighted-average-shape", Rating.AGAIN)]


def test_files_of_the_naming_before_are_found_and_sent_to_their_learner_only(klass: Class) -> None:
    old = f"postgresql://ana@db.old.example:5432/{klass.name}"  # the class before it moved
    answer = Kept(LogEntry(DOT, Rating.HARD, T0, 1000), practice=True)
    Outbox(legacy_path(old, "ana", klass.outbox)).keep(answer)
    Outbox(legacy_path(old.replace("ana@", "ben@"), "ben", klass.outbox)).keep(answer)
    here = postgres.describe(klass.direct("ana b"))  # "ana b": only the file of this very location is hers
    Outbox(legacy_path(here, "ana b", klass.outbox)).keep(answer)
    Outbox(legacy_path(old.replace("ana@", "ana b@"), "ana b", klass.outbox)).keep(answer)
    for learner in ("ana", "ana b"):
        status, said, err = cram(klass.direct(learner), io.StringIO("q\n"))
        assert (status, err) == (0, "") and said.startswith(SENT), learner
        assert klass.practice(learner) == [(DOT, Rating.HARD)]
    # ana_b's name is what "ana b"'s became in the naming before: the file of another host might be either's
    status, said, err = cram(klass.direct("ana_b"), io.StringIO("q\n"))
    assert (status, err) == (0, "") and not said.startswith(SENT)
    assert klass.practice("ana_b") == klass.practice("ben") == []
    left = sorted(path.name for path in klass.outbox.glob("outbox-*.jsonl") if path.stat().st_size)
    assert left == sorted(
        legacy_path(old.replace("ana@", f"{learner}@"), learner, klass.outbox).name
        for learner in ("ben", "ana b")
    )


def test_nothing_is_sent_to_a_store_that_logs_in_as_another_learner(klass: Class) -> None:
    anas = Outbox(outbox_path(Owner("ana", klass.name), klass.outbox), Owner("ana", klass.name))
    anas.keep(Kept(LogEntry(DOT, Rating.GOOD, T0 + timedelta(minutes=1), None)))
    before = anas.path.read_bytes()
    with postgres.PostgresStore.open(klass.direct("ben")) as ben:
        with pytest.raises(OutboxOwnerError, match="not 'ben', whom the store logs in as"):
            anas.send(ben, learner=ben.learner)
        assert ben.reviews() == []
    assert anas.path.read_bytes() == before
