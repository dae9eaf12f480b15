"""The terminal on a class database: ``--db`` or ``COURSE_DB`` set to ``postgresql://...`` opens the
learner's own rows there (the learner from the URL, else ``$COURSE_LEARNER`` or ``$JUPYTERHUB_USER``), against
the real PostgreSQL of the ``postgres_server`` fixture."""

from __future__ import annotations

import io
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
from postgres_server import PostgresServer, learner_password

from course.terminal.cli import main
from scheduler import Rating, postgres

NOW = "2026-03-02T12:00:00+00:00"
AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
DOT = "01-scale-dot-vs-cosine"


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    for name in ("COURSE_DB", "COURSE_LEARNER", "JUPYTERHUB_USER", "PGUSER", "PGPASSWORD"):
        monkeypatch.delenv(name, raising=False)


def course(*args: str | Path, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*map(str, args)], stdin=io.StringIO(stdin), stdout=out, stderr=err, rng=random.Random(0))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def server(postgres_server: PostgresServer) -> tuple[PostgresServer, str]:
    """A class database with learners ana and cy (cy enrolled in lesson 01 with one answer due) and the
    instructor teacher."""
    database = postgres_server.create_database()
    admin = postgres_server.admin_url(database)
    postgres.install(admin)
    for name in ("ana", "cy"):
        postgres.add_learner(admin, name, password=learner_password(name))
    postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
    with postgres.PostgresStore.open(postgres_server.learner_url(database, "cy")) as store:
        store.enroll("01", AT - timedelta(days=21))
        store.record(DOT, Rating.GOOD, AT - timedelta(days=20))  # a first Good: due 3 to 6 days later
    return postgres_server, database


def test_stats_and_settings_on_the_class_database(server: tuple[PostgresServer, str]) -> None:
    cluster, database = server
    url = cluster.learner_url(database, "cy")
    status, out, err = course("stats", "--db", url, "--now", NOW)
    assert (status, err) == (0, "")
    assert f"Progress file:    postgresql://cy@/{database}" in out
    assert "Due now:          1" in out
    assert course("settings", "--retention", "0.9", "--db", url, "--now", NOW)[0] == 0
    with postgres.PostgresStore.open(url) as store:
        assert store.settings().desired_retention == 0.9


def test_a_review_saves_to_the_learners_rows_named_by_jupyterhub(
    server: tuple[PostgresServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, database = server
    no_user = cluster.url("cy", None, database).replace("postgresql://cy@", "postgresql://@")
    monkeypatch.setenv("COURSE_DB", no_user)
    monkeypatch.setenv("JUPYTERHUB_USER", "cy")
    monkeypatch.setenv("PGPASSWORD", learner_password("cy"))
    status, out, err = course("review", "--now", NOW, stdin="1\nq\n")
    assert (status, err) == (0, "")
    assert "Saved: Again. Next review in 2d." in out  # a lapse: FSRS's interval at the default 0.85
    with postgres.PostgresStore.open(cluster.learner_url(database, "cy")) as store:
        assert [review.rating for review in store.reviews()] == [Rating.GOOD, Rating.AGAIN]
    with postgres.PostgresStore.open(cluster.learner_url(database, "ana")) as store:
        assert store.reviews() == []  # nothing went to anyone else


def test_an_instructor_saves_nothing_and_a_missing_course_is_reported(
    server: tuple[PostgresServer, str],
) -> None:
    cluster, database = server
    teacher = cluster.learner_url(database, "teacher")
    status, out, err = course("settings", "--retention", "0.9", "--db", teacher, "--now", NOW)
    assert (status, out) == (2, "")  # refused before anything is changed (issue 20, item 4)
    assert err.endswith(
        " refused this access (teacher may read but not save answers or settings); ask whoever runs "
        "the class database to check your role\nNothing was changed.\n"
    )
    with postgres.PostgresStore.open(teacher) as store, pytest.raises(postgres.AccessDeniedError) as refused:
        store.check_writable()
    assert refused.value.detail == "teacher may read but not save answers or settings"
    bare = cluster.create_database()
    status, out, err = course("stats", "--db", cluster.admin_url(bare), "--now", NOW)
    assert (status, out) == (2, "")
    assert "scheduler.postgres.install" in err and "no progress file" not in err
    assert quote(learner_password("teacher"), safe="") not in err  # no password in a message


def test_the_widgets_open_the_class_database_that_course_db_names(
    server: tuple[PostgresServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from course.progress import StoreSource

    cluster, database = server
    monkeypatch.setenv("COURSE_DB", cluster.learner_url(database, "cy"))
    source = StoreSource(None)
    assert source.exists()
    with source.lease(create=True) as store:
        assert store.location == f"postgresql://cy@/{database}?host={cluster.folder}"
        assert [review.item_id for review in store.reviews()] == [DOT]
    assert source.held is None


class StopsTheServer(io.StringIO):
    """The learner's input; the server stops before line `stop_at` is read, and starts again before
    `start_at`."""

    def __init__(self, text: str, server: PostgresServer, stop_at: int, start_at: int) -> None:
        super().__init__(text)
        self.server, self.stop_at, self.start_at, self.read = server, stop_at, start_at, 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.read += 1
        if self.read == self.stop_at:
            self.server.stop()
        if self.read == self.start_at:
            self.server.start()
        return super().readline(size)


def test_a_review_keeps_answers_while_the_server_is_down_and_sends_them_next_time(
    server: tuple[PostgresServer, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cluster, database = server
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    url = cluster.learner_url(database, "cy")
    stdin = StopsTheServer("1\n1\nq\n", cluster, stop_at=2, start_at=99)
    out, err = io.StringIO(), io.StringIO()
    try:
        status = main(
            ["review", "--db", url, "--now", NOW], stdin=stdin, stdout=out, stderr=err, rng=random.Random(0)
        )
    finally:
        cluster.start()
    said = out.getvalue()
    assert status == 0 and err.getvalue() == ""
    assert "Saved: Again. Next review in 2d." in said  # the first answer, before the server stopped
    kept = re.search(
        r"^Kept on this computer: the class database cannot be reached \((.+)\)\. It is sent when "
        r"the database is back; nothing is lost\.$",
        said,
        re.MULTILINE,
    )
    assert kept is not None, said  # why: as libpq says it (the server was shut down under the connection)
    assert said.endswith(
        "Stopped (you typed q): 2 answers saved.\n1 answer waits on this computer to be sent to the class "
        "database: it is sent as soon as the database can be reached (your next answer or session).\n"
    )
    with postgres.PostgresStore.open(url) as store:
        assert [r.item_id for r in store.reviews()] == [DOT, DOT]  # the kept one is not there yet
    status, said, err = course("review", "--db", url, "--now", NOW, stdin="q\n")  # the next session
    assert (status, err) == (0, "")
    assert said.startswith("1 answer kept while the class database was unreachable was sent.\n")
    with postgres.PostgresStore.open(url) as store:
        assert [(r.item_id, r.rating) for r in store.reviews()] == [
            (DOT, Rating.GOOD),
            (DOT, Rating.AGAIN),
            ("01-weighted-average-shape", Rating.AGAIN),
        ]


def test_practice_keeps_answers_while_the_server_is_down(
    server: tuple[PostgresServer, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cluster, database = server
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    url = cluster.learner_url(database, "cy")
    out, err = io.StringIO(), io.StringIO()
    stdin = StopsTheServer("1\n1\nq\n", cluster, stop_at=2, start_at=3)  # back at the third prompt
    try:
        status = main(["cram", "01", "--db", url], stdin=stdin, stdout=out, stderr=err, rng=random.Random(0))
    finally:
        if stdin.read < 3:
            cluster.start()
    said = out.getvalue()
    assert (status, err.getvalue()) == (0, "")
    assert said.count("Logged as practice: Again.") == 1  # the first; the second was kept
    assert "Kept on this computer: the class database cannot be reached (" in said
    assert said.endswith(  # sent with the next answer or session, not while the learner reads a prompt
        "Stopped (you typed q): 2 practice answers logged.\n1 answer waits on this computer to be sent to "
        "the class database: it is sent as soon as the database can be reached (your next answer or "
        "session).\n"
    )
    status, said, err = course("cram", "01", "--db", url, stdin="q\n")
    assert said.startswith("1 answer kept while the class database was unreachable was sent.\n")
    with postgres.PostgresStore.open(url) as store:
        assert [r.item_id for r in store.cram_reviews()] == [DOT, "01-weighted-average-shape"]
