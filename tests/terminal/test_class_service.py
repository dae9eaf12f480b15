"""The course on a class service: ``COURSE_DB`` set to the service's URL (``https://HUB/services/course/``
on a hub) and the kernel's ``$JUPYTERHUB_API_TOKEN`` are all a learner's side needs (no database URL, role or
password). The terminal's commands and the Keeper every answer goes through use it like a class database,
and an answer given while the service cannot be reached waits in the outbox and is sent when it is back.

Against a real PostgreSQL; the service runs in a thread of this process (tokens from a table), the commands
in this process too (`course.terminal.cli.main`).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from postgres_server import PostgresServer, learner_password
from service_server import ServiceThread, StaticTokens

from course.bank import load_bank
from course.progress import Keeper, StoreSource
from course.terminal.cli import main
from scheduler import Rating

postgres = pytest.importorskip("scheduler.postgres")
service_module = pytest.importorskip("scheduler.service._server")

SERVICE = "class_service"
NOW = datetime(2026, 12, 1, 10, tzinfo=timezone.utc)


class Klass:
    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.name = server.create_database()
        admin = server.admin_url(self.name)
        postgres.install(admin)
        postgres.add_learner(admin, "ana")
        postgres.add_service(admin, SERVICE, password=learner_password(SERVICE))
        self.pool = postgres.ClassPool.open(server.url(SERVICE, learner_password(SERVICE), self.name))
        self.tokens = {"ana-token": "ana"}
        self.thread = self.start()

    def start(self, port: int | None = None) -> ServiceThread:
        service = service_module.ClassService(self.pool, StaticTokens(self.tokens))
        return ServiceThread(service, port=port).start()

    def answers(self) -> list[tuple[str, Rating]]:
        with postgres.ClassPool.open(self.server.url(SERVICE, learner_password(SERVICE), self.name)) as pool:
            store = postgres.PostgresStore.serving(pool, "ana")
            return [(review.item_id, review.rating) for review in store.reviews()]


@pytest.fixture
def klass(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Klass]:
    for name in ("COURSE_LEARNER", "PGUSER", "PGPASSWORD"):
        monkeypatch.delenv(name, raising=False)
    made = Klass(postgres_server)
    monkeypatch.setenv("COURSE_DB", made.thread.url)
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "ana-token")
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    try:
        yield made
    finally:
        made.thread.stop()
        made.pool.close()


def run(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*args, "--now", NOW.isoformat()], stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_the_terminal_reviews_through_the_service(klass: Klass) -> None:
    status, out, err = run("stats")
    assert (status, err) == (0, "")
    assert f"Progress file:    {klass.thread.url} as ana\n" in out
    question = load_bank().questions("00")[0]
    with Keeper(StoreSource(None), create=True) as keeper:
        keeper.enroll("00", NOW)
        keeper.record(question.id, Rating.GOOD, NOW)
    assert klass.answers() == [(question.id, Rating.GOOD)]
    status, out, _ = run("stats")
    assert "Lessons started:  00" in out and "Reviews in total: 1\n" in out


def test_an_answer_given_while_the_service_is_down_waits_and_is_sent(klass: Klass) -> None:
    first, second = (question.id for question in load_bank().questions("00")[:2])
    keeper = Keeper(StoreSource(None), create=True)
    keeper.start()
    keeper.record(first, Rating.GOOD, NOW)
    klass.thread.stop()
    keeper.record(second, Rating.EASY, NOW)  # kept: the service does not answer
    kept = keeper.take_kept()
    assert kept is not None and "the class service did not answer" in str(kept)
    assert klass.answers() == [(first, Rating.GOOD)]
    keeper.release()
    klass.thread = klass.start(klass.thread.port)
    with Keeper(StoreSource(None), create=True) as again:  # the service is back: the kept answer goes first
        again.start()
        assert [note for note in again.notes() if "sent" in note]
    assert klass.answers() == [(first, Rating.GOOD), (second, Rating.EASY)]


def test_the_class_report_asks_for_the_database_itself_not_the_service(klass: Klass) -> None:
    status, out, err = run("class-report", "--db", klass.thread.url)
    assert (status, out) == (2, "")
    assert err == (
        f"{klass.thread.url} is the class service, which acts for learners only: the projector and the "
        "class report need the class database's own URL, postgresql://INSTRUCTOR@HOST/course, in COURSE_DB "
        "or --db\n"
    )
