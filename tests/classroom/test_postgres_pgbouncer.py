"""The class database behind PgBouncer as docs/classroom.md configures it (transaction pooling, one server
connection per learner, idle server connections closed after ``server_idle_timeout``), against Debian's
``pgbouncer`` in front of the ``postgres_server`` cluster (tests/pgbouncer_server.py).

A server connection PgBouncer closed between two answers must not matter: the store prepares no statement
(one prepared on the closed connection does not exist on the next) and keeps nothing else across
transactions. And no error from the store reaches a learner as a traceback: one the learner cannot mend
keeps the answer on their computer and says so.
"""

from __future__ import annotations

import io
import random
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fixed_clock import T0
from pgbouncer_server import IDLE_TIMEOUT_S, PgBouncer
from postgres_server import PostgresServer, learner_password
from store_helpers import AGAIN, GOOD, assert_schedule_is_the_log_replayed, steps_memory

from course import load_bank
from course.terminal.cli import main
from course.widgets import LiveAnswerWidget, LiveProjectorWidget
from course.widgets._texts import html_text
from scheduler import LogEntry, Rating

postgres = pytest.importorskip("scheduler.postgres")

BANK = load_bank()
CHOICES = [question for question in BANK.questions("01") if question.kind == "choice"][:7]
NOW = "2026-03-02T12:00:00+00:00"
AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)


@pytest.fixture
def database(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """A class database (installed through the cluster's own socket) with learners ana and cy and the
    instructor teacher."""
    for name in (
        "COURSE_DB",
        "COURSE_LEARNER",
        "JUPYTERHUB_USER",
        "PGUSER",
        "PGPASSWORD",
        "PGCONNECT_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    name = postgres_server.create_database()
    admin = postgres_server.admin_url(name)
    postgres.install(admin)
    for learner in ("ana", "cy"):
        postgres.add_learner(admin, learner, password=learner_password(learner))
    postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
    return name


def idle_closed(pooler: PgBouncer, database: str, role: str) -> int:
    """How many of `role`'s server connections PgBouncer has closed for being idle so far."""
    log = pooler.log.read_text(encoding="utf-8", errors="replace")
    return sum(f" {database}/{role}@" in line and "server idle timeout" in line for line in log.splitlines())


def wait_idle_closed(pooler: PgBouncer, database: str, role: str, before: int) -> None:
    """Wait until PgBouncer closed one more of `role`'s idle server connections than `before`."""
    time.sleep(IDLE_TIMEOUT_S)
    deadline = time.monotonic() + 30
    while idle_closed(pooler, database, role) <= before:
        assert time.monotonic() < deadline, f"PgBouncer closed no idle server connection of {role}"
        time.sleep(0.1)


def test_the_store_works_across_server_connections_closed_while_idle(
    pgbouncer: PgBouncer, database: str
) -> None:
    url = pgbouncer.learner_url(database, "ana")
    with postgres.PostgresStore.open(url, memory=steps_memory()) as store:
        store.enroll("01", T0)
        for minute in range(8):  # every statement more often than psycopg's prepare threshold (5)
            store.record(f"q{minute % 2}", GOOD, T0 + timedelta(minutes=minute))
            with store.snapshot():
                assert len(store.reviews()) == minute + 1
                store.cards()
        before = idle_closed(pgbouncer, database, "ana")
        wait_idle_closed(pgbouncer, database, "ana", before)
        store.record("q0", AGAIN, T0 + timedelta(minutes=9))  # "prepared statement "_pg3_..." does not exist"
        with store.snapshot():
            assert len(store.reviews()) == 9
        store.merge([LogEntry("q2", Rating.GOOD, T0 + timedelta(minutes=10), None)], [], {"02": T0})
        assert store.enrolled() == {"01": T0, "02": T0}
        assert_schedule_is_the_log_replayed(store)
    teacher = postgres.LiveRoom.open(pgbouncer.learner_url(database, "teacher"))
    screen = LiveProjectorWidget(CHOICES, ("01",), room=teacher, clock=lambda: AT, every=None, bank=BANK)
    ana = LiveAnswerWidget(room=postgres.LiveRoom.open(url), clock=lambda: AT, every=None, bank=BANK)
    try:
        screen.start()
        for index in range(len(CHOICES)):
            if index == len(CHOICES) - 1:  # the last answer after a server connection closed while idle
                wait_idle_closed(pgbouncer, database, "ana", idle_closed(pgbouncer, database, "ana"))
            ana.refresh()
            assert ana.presentation is not None and ana.question == CHOICES[index]
            ana.answer_choice(ana.presentation.right_position)
            assert html_text(ana.notice.value).startswith("Sent: ")
            screen.refresh()
            assert html_text(screen.tally.value) == "1 answered"
            screen.next()
    finally:
        ana.close()
        ana.room.close()
        teacher.close()


class WaitsForTheIdleTimeout(io.StringIO):
    """The learner's input; before line `at` is read, PgBouncer closes their idle server connection."""

    def __init__(self, text: str, pooler: PgBouncer, database: str, role: str, at: int) -> None:
        super().__init__(text)
        self.pooler, self.database, self.role, self.at, self.read = pooler, database, role, at, 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.read += 1
        if self.read == self.at:
            before = idle_closed(self.pooler, self.database, self.role)
            wait_idle_closed(self.pooler, self.database, self.role, before)
        return super().readline(size)


def review(url: str, stdin: io.StringIO) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    arguments = ["review", "--db", url, "--now", NOW]
    status = main(arguments, stdin=stdin, stdout=out, stderr=err, rng=random.Random(0))
    return status, out.getvalue(), err.getvalue()


def test_a_terminal_review_behind_pgbouncer_saves_the_answer_after_an_idle_timeout(
    pgbouncer: PgBouncer, database: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    url = pgbouncer.learner_url(database, "cy")
    with postgres.PostgresStore.open(url) as store:
        store.enroll("01", AT - timedelta(days=1))
    answers = "?\n" * 6 + "?\n1\n"  # "?": Again; the seventh is recalled, then rated
    stdin = WaitsForTheIdleTimeout(answers + "q\n", pgbouncer, database, "cy", at=7)
    status, said, err = review(url, stdin)
    assert (status, err) == (0, "")
    assert said.count("Saved: ") == 7 and "Kept on this computer" not in said
    assert said.endswith("Stopped (you typed q): 7 answers saved.\n")
    with postgres.PostgresStore.open(url) as store:
        assert len(store.reviews()) == 7


def test_a_failure_the_learner_cannot_mend_keeps_the_answer_and_says_so(
    postgres_server: PostgresServer,
    pgbouncer: PgBouncer,
    database: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """An error the store has no name for (here a constraint an administrator added) is no traceback: the
    answer is kept on the learner's computer, the learner is told why, and it is sent once that is put
    right."""
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    url = pgbouncer.learner_url(database, "cy")
    with postgres.PostgresStore.open(url) as store:
        store.enroll("01", AT - timedelta(days=1))
    import psycopg

    with psycopg.connect(postgres_server.admin_url(database), autocommit=True) as admin:
        admin.execute("ALTER TABLE course.review_log ADD CONSTRAINT held_back CHECK (rating < 0) NOT VALID")
        status, said, err = review(url, io.StringIO("1\nq\n"))
        admin.execute("ALTER TABLE course.review_log DROP CONSTRAINT held_back")
    assert (status, err) == (0, "")
    location = postgres.describe(url)
    assert (
        f"Kept on this computer: {location} refused this (SQLSTATE 23514: new row for relation "
        '"review_log" violates check constraint "held_back"); ask whoever runs the class database to look '
        "at it. It is sent once that is put right (your next answer or session tries again); nothing is "
        "lost.\n"
    ) in said
    assert said.endswith(
        "Stopped (you typed q): 1 answer saved.\n1 answer waits on this computer to be sent to the class "
        "database: it is sent as soon as the database can be reached (your next answer or session).\n"
    )
    status, said, err = review(url, io.StringIO("q\n"))
    assert (status, err) == (0, "")
    assert said.startswith("1 answer kept while the class database was unreachable was sent.\n")
    with postgres.PostgresStore.open(url) as store:
        assert [review.rating for review in store.reviews()] == [Rating.AGAIN]
