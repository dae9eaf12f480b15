"""The terminal on a class database: ``--db`` or ``COURSE_DB`` set to ``postgresql://...`` opens the
learner's own rows there (the learner from the URL, else ``$COURSE_LEARNER`` or ``$JUPYTERHUB_USER``), against
the real PostgreSQL of the ``postgres_server`` fixture."""

from __future__ import annotations

import io
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
from postgres_server import PostgresServer, learner_password

from course.cli import main
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
        store.enroll("01", AT - timedelta(days=10))
        store.record(DOT, Rating.GOOD, AT - timedelta(days=9))
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
    assert "Saved: Again. Next review in 1d." in out
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
    assert (status, out) == (2, "")
    assert "refused this access (permission denied" in err
    with postgres.PostgresStore.open(teacher) as store, pytest.raises(postgres.AccessDeniedError) as refused:
        store.check_writable()
    assert refused.value.detail == "teacher may read but not save answers"
    bare = cluster.create_database()
    status, out, err = course("stats", "--db", cluster.admin_url(bare), "--now", NOW)
    assert (status, out) == (2, "")
    assert "scheduler.postgres.install" in err and "no progress file" not in err
    assert quote(learner_password("teacher"), safe="") not in err  # no password in a message


def test_the_widgets_open_the_class_database_that_course_db_names(
    server: tuple[PostgresServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from course.widgets._store_source import StoreSource

    cluster, database = server
    monkeypatch.setenv("COURSE_DB", cluster.learner_url(database, "cy"))
    source = StoreSource(None)
    assert source.exists()
    with source.lease(create=True) as store:
        assert store.location == f"postgresql://cy@/{database}?host={cluster.folder}"
        assert [review.item_id for review in store.reviews()] == [DOT]
    assert source.held is None
