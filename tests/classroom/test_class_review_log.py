"""course.classroom: the class-session file, and a session's report (ranking, sections to revisit)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0

from course.bank import load_bank
from course.classroom import (
    ClassReviewLog,
    ClassReviewLogError,
    class_review_lines,
    class_reviews_path,
    ranked,
    section_link,
    to_revisit,
)
from course.classroom._class_review import ENV_VAR, FILE_NAME, Tally
from course.progress import default_path

BANK = load_bank()
Q1, Q2, Q3 = BANK.questions("02")[:3]


@pytest.fixture
def log(tmp_path: Path):
    with ClassReviewLog.open(tmp_path / FILE_NAME) as opened:
        yield opened


def test_the_path_is_the_option_then_the_environment_then_beside_the_progress_file(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv("COURSE_DB", raising=False)  # no progress file named: beside the per-user one
    assert class_reviews_path() == default_path().parent / "class-sessions.sqlite3"
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env.sqlite3"))
    assert class_reviews_path() == tmp_path / "env.sqlite3"
    assert class_reviews_path(tmp_path / "cli.sqlite3") == tmp_path / "cli.sqlite3"


def test_a_session_keeps_its_counts_in_the_order_asked_and_a_new_count_replaces_the_old(log):
    session = log.start(["02"], 24, T0)
    log.record(session, Q2.id, 20, T0 + timedelta(minutes=1))
    log.record(session, Q1.id, 6, T0 + timedelta(minutes=2))
    assert log.record(session, Q2.id, 18, T0 + timedelta(minutes=3)) == Tally(
        Q2.id, 18, 24, T0 + timedelta(minutes=3)
    )
    (stored,) = log.sessions()
    assert (stored.id, stored.started, stored.room, stored.lessons) == (session, T0, 24, ("02",))
    assert stored.tallies == (
        Tally(Q2.id, 18, 24, T0 + timedelta(minutes=3)),
        Tally(Q1.id, 6, 24, T0 + timedelta(minutes=2)),
    )


def test_sessions_are_listed_oldest_first_and_last_keeps_the_latest(log):
    first, second = log.start(["01"], 10, T0), log.start(["02", "03"], 12, T0 + timedelta(days=1))
    assert [s.id for s in log.sessions()] == [first, second]
    assert [s.id for s in log.sessions(last=1)] == [second]
    assert log.sessions(last=0) == []
    assert log.sessions()[1].lessons == ("02", "03")


def test_counts_outside_the_room_and_rooms_under_one_are_refused(log):
    with pytest.raises(ValueError, match=r"^room must be at least 1 person, got 0$"):
        log.start(["01"], 0, T0)
    session = log.start(["01"], 5, T0)
    with pytest.raises(ValueError, match=r"^right must be from 0 to the room's 5, got 6$"):
        log.record(session, Q1.id, 6, T0)
    with pytest.raises(ValueError, match=r"^no class session 99 in "):
        log.record(99, Q1.id, 1, T0)
    with pytest.raises(ValueError, match=r"^times must be timezone-aware$"):
        log.start(["01"], 5, T0.replace(tzinfo=None))


def test_a_file_that_is_not_a_class_session_file_is_reported_and_left_as_it_is(tmp_path):
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is not a database" * 100)
    with pytest.raises(
        ClassReviewLogError, match=r"corrupt.sqlite3: is not a class-session file \(file is not a"
    ):
        ClassReviewLog.open(corrupt)
    assert corrupt.read_bytes() == b"this is not a database" * 100
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE review (id INTEGER)")
    with pytest.raises(
        ClassReviewLogError, match=r"other.sqlite3: is not a class-session file \(other tables\)"
    ):
        ClassReviewLog.open(other)
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 2")
    with pytest.raises(
        ClassReviewLogError,
        match=r"newer.sqlite3: was written by a newer course \(format 2; this course reads 1\): upgrade$",
    ):
        ClassReviewLog.open(newer)
    with pytest.raises(
        ClassReviewLogError, match=r"missing.sqlite3: no class session has been recorded here yet$"
    ):
        ClassReviewLog.open(tmp_path / "missing.sqlite3", create=False)
    assert not (tmp_path / "missing.sqlite3").exists()


def test_a_locked_file_is_reported_not_overwritten(tmp_path):
    path = tmp_path / FILE_NAME
    with ClassReviewLog.open(path) as log:
        session = log.start(["01"], 5, T0)
    log = ClassReviewLog.open(path, timeout=0.05)  # do not wait the default 5 s in a test
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")  # another program is writing: reading works, writing waits
        with pytest.raises(ClassReviewLogError, match=r"cannot be written \(database is locked\)$"):
            log.record(session, Q1.id, 3, T0)
        blocker.execute("ROLLBACK")
        blocker.execute("BEGIN EXCLUSIVE")  # ... and now nothing can be read either
        with pytest.raises(ClassReviewLogError, match=r"cannot be read \(database is locked\)$"):
            log.record(session, Q1.id, 3, T0)
        with pytest.raises(ClassReviewLogError, match=r"cannot be read \(database is locked\)$"):
            ClassReviewLog.open(path, timeout=0.05)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        log.close()
    with ClassReviewLog.open(path) as log:
        assert log.sessions()[0].tallies == ()


def test_the_ranking_puts_the_most_missed_first_and_ties_in_the_order_asked(log):
    session = log.start(["02"], 20, T0)
    for question, right in ((Q1, 15), (Q2, 5), (Q3, 15)):
        log.record(session, question.id, right, T0)
    log.record(session, "retired-question", 0, T0)  # no longer in the bank: left out
    rows = ranked(log.sessions()[0], BANK)
    assert [(row.question.id, row.right, row.miss_rate) for row in rows] == [
        (Q2.id, 5, 0.75),
        (Q1.id, 15, 0.25),
        (Q3.id, 15, 0.25),
    ]
    assert to_revisit(rows) == [("02", Q2.section)]


def test_a_section_link_is_the_notebook_and_the_heading_as_jupyterlab_anchors_it():
    assert section_link("02", "5. Why divide by √d_k: the variance of q·k") == (
        "02-scaled-dot-product-attention.ipynb#5.-Why-divide-by-√d_k:-the-variance-of-q·k"
    )


def test_the_report_says_what_was_missed_and_where_to_look(log):
    session = log.start(["02"], 20, T0)
    log.record(session, Q1.id, 15, T0)
    log.record(session, Q2.id, 5, T0)
    assert class_review_lines(log.sessions()[0], BANK) == [
        f"Class review {session}, 2025-03-10 09:00 UTC: room of 20, lessons 02.",
        "2 questions counted, most missed first:",
        f"   75% missed (5 of 20 right)  {Q2.id}  (lesson 02, {Q2.section})",
        f"   25% missed (15 of 20 right)  {Q1.id}  (lesson 02, {Q1.section})",
        "Revisit (missed by 50% or more):",
        f"  lesson 02, section {Q2.section}: {section_link('02', Q2.section)}",
    ]


def test_the_report_of_a_session_without_counts_or_misses(log):
    empty = log.start(["01"], 3, T0)
    assert class_review_lines(log.sessions()[0], BANK) == [
        f"Class review {empty}, 2025-03-10 09:00 UTC: room of 3, lessons 01.",
        "No question was counted.",
    ]
    good = log.start(["02"], 4, T0)
    log.record(good, Q1.id, 4, T0)
    assert class_review_lines(log.sessions()[1], BANK)[-1] == (
        "Nothing to revisit: every question was answered right by more than 50%."
    )
