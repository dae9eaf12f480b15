"""``python -m course class-report FILE...``: a class's report from its learners' exported progress."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from course.terminal.cli import main
from scheduler import Rating, Store

NOW = "2026-03-02T12:00:00+00:00"
AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
DOT, MIX = "01-scale-dot-vs-cosine", "01-mixture-in-range"


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


def course(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*map(str, args)], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def exported(tmp_path: Path, name: str, answers: list[tuple[str, float, Rating]]) -> Path:
    """`name`'s progress file: lesson 01 enrolled 10 days ago, then `answers` (question, days ago, rating)."""
    db = tmp_path / f"{name}.sqlite3"
    with Store.open(db) as store:
        store.enroll("01", AT - timedelta(days=10))
        for question, days_ago, rating in answers:
            store.record(question, rating, AT - timedelta(days=days_ago))
    file = tmp_path / f"{name}.jsonl"
    assert course("export-progress", file, "--db", db, "--now", NOW)[0] == 0
    return file


def test_a_report_on_two_learners_files(tmp_path: Path) -> None:
    ana = exported(tmp_path, "ana", [(DOT, 9, Rating.AGAIN), (MIX, 9, Rating.GOOD), (DOT, 5, Rating.GOOD)])
    ben = exported(tmp_path, "ben", [(DOT, 9, Rating.AGAIN), (MIX, 9, Rating.GOOD)])
    before = ana.read_bytes()
    status, out, err = course("class-report", ana, ben, "--top", "1", "--now", NOW)
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "Class report: 2 learners; true retention 100.0%.",  # ana remembered her one review
        "Due in the next 7 days (today first, overdue included): 3 0 1 0 0 0 0.",
        "Lessons, most missed first:",
        "   40% missed  lesson 01, Similarity and softmax (5 answers by 2 learners)",
        "Questions, most missed first (1 of 2):",
        f"   67% missed  {DOT}  (3 answers by 2 learners)",
        "Revisit (missed in 50% or more of the answers):",
        "  lesson 01, section 2. The dot product as a compatibility score: "
        "01-similarity-and-softmax.ipynb#2.-The-dot-product-as-a-compatibility-score",
    ]
    assert ana.read_bytes() == before  # only read


def test_a_missing_or_foreign_file_reports_nothing(tmp_path: Path) -> None:
    ana = exported(tmp_path, "ana", [(DOT, 9, Rating.GOOD)])
    other = tmp_path / "notes.jsonl"
    other.write_text("hello\n", encoding="utf-8")
    status, out, err = course("class-report", ana, other, "--now", NOW)
    assert (status, out) == (2, "")
    assert err.startswith(f"{other}") and err.endswith("\nNothing was reported.\n")
    status, out, err = course("class-report", ana, tmp_path / "ana.jsonl", "--now", NOW)
    assert (status, out, err) == (2, "", "two files name the same learner: ana (rename one)\n")


def test_without_files_it_needs_a_class_database(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COURSE_DB", str(tmp_path / "progress.sqlite3"))
    assert course("class-report", "--now", NOW) == (
        2,
        "",
        "class-report needs the learners' progress files (python -m course export-progress FILE, one per "
        "learner) or a class database: --db or COURSE_DB set to postgresql://...\n",
    )
