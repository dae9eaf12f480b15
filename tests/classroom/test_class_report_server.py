"""``python -m course class-report`` read from a class database: the instructor sees the class, a learner
only themselves (row-level security), against the real PostgreSQL of the ``postgres_server`` fixture."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from postgres_server import PostgresServer, learner_password

from course.terminal.cli import main
from scheduler import PredictionEvent, Rating, postgres

NOW = "2026-03-02T12:00:00+00:00"
AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
DOT, MIX = "01-scale-dot-vs-cosine", "01-mixture-in-range"
PREDICTION = "00-predict-dot-product"


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.delenv("COURSE_DB", raising=False)


def course(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*map(str, args)], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def urls(postgres_server: PostgresServer) -> dict[str, str]:
    """A class database: ana and ben answered lesson 01, cy enrolled only; teacher is the instructor."""
    database = postgres_server.create_database()
    admin = postgres_server.admin_url(database)
    postgres.install(admin)
    for name in ("ana", "ben", "cy"):
        postgres.add_learner(admin, name, password=learner_password(name))
    postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
    url = {name: postgres_server.learner_url(database, name) for name in ("ana", "ben", "cy", "teacher")}
    answers = {
        "ana": [(DOT, 9, Rating.AGAIN), (MIX, 9, Rating.GOOD), (DOT, 5, Rating.GOOD)],
        "ben": [(DOT, 9, Rating.AGAIN), (MIX, 9, Rating.GOOD)],
        "cy": [],
    }
    for name, rows in answers.items():
        with postgres.PostgresStore.open(url[name]) as store:
            store.enroll("01", AT - timedelta(days=10))
            for question, days_ago, rating in rows:
                store.record(question, rating, AT - timedelta(days=days_ago))
    return url


def test_the_instructor_reads_the_whole_class(urls: dict[str, str]) -> None:
    status, out, err = course("class-report", "--db", urls["teacher"], "--top", "1", "--now", NOW)
    assert (status, err) == (0, "")
    assert out.splitlines()[:4] == [
        "Class report: 2 learners; true retention 100.0%.",  # cy enrolled but has not answered
        "Due in the next 7 days (today first, overdue included): 3 0 1 0 0 0 0.",
        "Lessons, most missed first:",
        "   40% missed  lesson 01, Similarity and softmax (5 answers by 2 learners)",
    ]
    records = postgres.class_records(urls["teacher"])
    assert sorted(records.answers) == ["ana", "ben", "cy"]
    assert [len(records.answers[name]) for name in ("ana", "ben", "cy")] == [3, 2, 0]


def test_a_learner_connection_reports_on_that_learner_alone(urls: dict[str, str]) -> None:
    status, out, err = course("class-report", "--db", urls["ben"], "--now", NOW)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == "Class report: 1 learner; true retention not yet (no reviews)."
    assert sorted(postgres.class_records(urls["ben"]).answers) == ["ben"]


def test_the_report_lists_the_predictions_the_class_got_wrong_most_often(urls: dict[str, str]) -> None:
    """Issue 37: each learner's first commit counts (a later one comes after the answer was shown); the
    instructor reads every learner's predictions, a learner only their own."""
    made = {
        "ana": [("10", False), ("12", True)],  # wrong first, then right once the answer was shown
        "ben": [("12", True)],
    }
    for name, rows in made.items():
        with postgres.PostgresStore.open(urls[name]) as store:
            for hours, (answer, right) in enumerate(rows, start=1):
                store.predict(PredictionEvent(PREDICTION, AT - timedelta(hours=hours), answer, right))
    status, out, err = course("class-report", "--db", urls["teacher"], "--now", NOW)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    at = lines.index("Predictions, most often wrong first (1 of 1):")
    assert lines[at + 1] == f"   50% wrong   {PREDICTION}  (2 learners)"
    assert sorted(postgres.class_records(urls["teacher"]).predictions) == ["ana", "ben"]
    assert sorted(postgres.class_records(urls["ben"]).predictions) == ["ben"]
