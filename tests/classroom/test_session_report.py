"""``python -m course session-report``: past class review sessions, as shown at their end."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

from fixed_clock import T0

from course.bank import load_bank
from course.classroom import ClassReviewLog, class_review_lines
from course.terminal import cli

BANK = load_bank()


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["session-report", *args], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def two_sessions(path: Path) -> None:
    q1, q2 = BANK.questions("02")[:2]
    with ClassReviewLog.open(path) as log:
        first = log.start(["02"], 10, T0)
        log.record(first, q1.id, 2, T0)
        second = log.start(["02"], 12, T0 + timedelta(days=1))
        log.record(second, q2.id, 12, T0 + timedelta(days=1))


def test_every_session_is_reported_oldest_first_and_last_keeps_the_latest(tmp_path):
    path = tmp_path / "class-sessions.sqlite3"
    two_sessions(path)
    with ClassReviewLog.open(path) as log:
        first, second = log.sessions()
    status, out, err = run("--sessions", str(path))
    assert (status, err) == (0, "")
    assert (
        out
        == "\n".join(class_review_lines(first, BANK))
        + "\n\n"
        + "\n".join(class_review_lines(second, BANK))
        + "\n"
    )
    status, out, _ = run("--sessions", str(path), "--last", "1")
    assert (status, out) == (0, "\n".join(class_review_lines(second, BANK)) + "\n")


def test_the_environment_names_the_file(tmp_path, monkeypatch):
    path = tmp_path / "env.sqlite3"
    with ClassReviewLog.open(path):
        pass
    monkeypatch.setenv("COURSE_SESSIONS", str(path))
    assert run() == (0, f"No class review session in {path}.\n", "")


def test_a_missing_or_unusable_file_is_reported_and_left_as_it_is(tmp_path):
    missing = tmp_path / "missing.sqlite3"
    assert run("--sessions", str(missing)) == (
        2,
        "",
        f"{missing}: no class session has been recorded here yet\n",
    )
    assert not missing.exists()
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"garbage" * 100)
    status, out, err = run("--sessions", str(corrupt))
    assert (status, out) == (2, "")
    assert err.startswith(f"{corrupt}: is not a class-session file (")
    assert corrupt.read_bytes() == b"garbage" * 100
