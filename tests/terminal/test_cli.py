"""``python -m course`` end to end: real subprocesses, a temporary progress file, answers fed on stdin."""

from __future__ import annotations

import io
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bank_samples import bank_text
from store_helpers import disk_with, full, pin_steps, steps_memory

from course.bank import figures, lint, load_bank
from course.terminal import cli
from scheduler import Memory, Nudge, PredictionEvent, Rating, Store
from scheduler._failures import ROOM_FOR_A_WRITE

ROOT = Path(__file__).resolve().parents[2]
T = datetime(2025, 3, 3, 10, 0, tzinfo=timezone.utc)  # a Monday
NOW = "2025-03-03T10:00:00+00:00"

LESSON_00 = """lesson = "00"

[[question]]
id = "00-r"
kind = "recall"
prompt = '''What is
2 + 2?'''
answer = "4"
explanation = "Add them."
section = "1. Sums"

[[question]]
id = "00-c"
kind = "choice"
prompt = "Pick b."
explanation = "It says b."
section = "2. Letters"
options = [{ text = "a", why = "Not b." }, { text = "b", correct = true, why = "Asked for." }]

[[question]]
id = "00-n"
kind = "numeric"
prompt = "How many heads?"
answer = 12
tolerance = 0
unit = "heads"
explanation = "768 / 64."
section = "3. Heads"
"""

LESSON_01 = bank_text("01-one")  # its one question, 01-r

FIGURES = (
    "kinds: 1 choice, 1 numeric, 2 recall; the right option is the longest in 0 of 1 choice questions (0%)"
)


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "00-sums.toml").write_text(LESSON_00)
    (directory / "01-one.toml").write_text(LESSON_01)
    return directory


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


def run(
    *args: str | Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "TZ": "UTC", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "course", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
        timeout=60,
    )


def store_with(db: Path, *decks: str, fuzz: bool = True) -> Store:
    store = Store.open(db, memory=Memory(enable_fuzzing=fuzz))
    for deck in decks:
        store.enroll(deck, T - timedelta(hours=1))
    return store


def log(store: Store) -> list[tuple[str, Rating, datetime]]:
    return [(r.item_id, r.rating, r.reviewed_at) for r in store.reviews()]


# ---------------------------------------------------------------------------------------------------- check


def test_check_shipped_bank() -> None:
    shipped = load_bank()
    lessons = len(shipped.lessons())
    warnings = lint(shipped)
    result = run("check")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        f"question bank OK: {len(shipped)} questions in {lessons} lesson{'s' if lessons != 1 else ''}, "
        f"and {len(shipped.predictions())} predictions\n"
        + f"{figures(shipped)}\n"
        + "".join(f"{warning}\n" for warning in warnings)
        + (f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}\n" if warnings else "no warnings\n")
    )


def test_check_other_bank(bank: Path) -> None:
    result = run("check", "--bank", bank)
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        f"question bank OK: 4 questions in 2 lessons\n{FIGURES}\nno warnings\n",
        "",
    )


def test_check_strict_fails_on_warnings(bank: Path) -> None:
    (bank / "01-one.toml").write_text(LESSON_01.replace('answer = "1"', 'answer = "One. Uno."'))
    output = f"question bank OK: 4 questions in 2 lessons\n{FIGURES}\n" + (
        "01-one.toml: question '01-r': answer has 2 sentences (keep it to one)\n1 warning\n"
    )
    plain = run("check", "--bank", bank)
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, output, "")
    strict = run("check", "--strict", "--bank", bank)
    assert (strict.returncode, strict.stdout, strict.stderr) == (1, output, "")


def test_check_lists_every_problem(bank: Path) -> None:
    (bank / "00-sums.toml").write_text(LESSON_00.replace('kind = "choice"', 'kind = "mcq"'))
    (bank / "01-one.toml").write_text(LESSON_01.replace('section = "1. One"\n', ""))
    result = run("check", "--bank", bank)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout == (
        "00-sums.toml: question '00-c': field 'kind': unknown kind 'mcq' (one of recall, choice, numeric, "
        "code)\n"
        "01-one.toml: question '01-r': field 'section': missing\n"
        "question bank has 2 problems\n"
    )
    review = run("review", "--bank", bank, "--db", bank / "none.sqlite3")
    assert (review.returncode, review.stdout) == (1, "")
    assert review.stderr == (
        "the question bank is invalid (python -m course check lists the problems):\n"
        "00-sums.toml: question '00-c': field 'kind': unknown kind 'mcq' (one of recall, choice, numeric, "
        "code)\n"
        "01-one.toml: question '01-r': field 'section': missing\n"
    )


# --------------------------------------------------------------------------------------------------- review

# The hidden --seed fixes the order in which options are shown. 00-c has two options, a and b (right):
SWAPPED = ("--seed", "4")  # its first showing lists b first ("1) b", "2) a"), its second a first
IN_BANK_ORDER = ("--seed", "0")  # its first two showings list a first, as the bank does

REVIEW_TRANSCRIPT = """\
Review of lesson 00: 0 due now, 3 new. Type q at any prompt to stop; each answer is saved as you go.

[1/3] lesson 00 Welcome, recall (00-r), new
What is 2 + 2?
Press Enter to show the answer (q to quit): <Enter>
Answer: 4
Add them.
See lesson 00 Welcome, section "1. Sums".
How well did you remember it? (Hard = remembered, with effort)
  1 Again 1d   2 Hard 2d   3 Good 6d   4 Easy 17d
Your rating [1-4, q to quit]: 3
Saved: Good. Next review in 6d.

[2/3] lesson 00 Welcome, choice (00-c), new
Pick b.
  1) b
  2) a
Your answer [1-2, ? if you don't know, q to quit]: 2
Not quite: the answer is 1) b
  1) (right answer) Asked for.
  2) Not b.
It says b.
See lesson 00 Welcome, section "2. Letters".
Saved: Again. Next review in 1d.

[3/3] lesson 00 Welcome, numeric (00-n), new
How many heads?
Your answer (a number; ? if you don't know; q to quit): twelve
Please type a number, ? or q.
Your answer (a number; ? if you don't know; q to quit): 12 heads
Right: the answer is 12 heads.
768 / 64.
See lesson 00 Welcome, section "3. Heads".
Counted as Good (4d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with effort) \
or 4 for Easy (17d): 2
Saved: Hard. Next review in 2d.

Session over: 3 answers saved. Next question due tomorrow.
""".replace("<Enter>", "")  # what the learner typed is echoed when stdin is not a terminal


def test_review_records_ratings_at_the_right_time(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    answers = "\n3\n2\ntwelve\n12 heads\n2\n"  # Memory's defaults: an Again is due tomorrow, not again now
    result = run("review", "--db", db, "--bank", bank, "--now", NOW, *SWAPPED, stdin=answers)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == REVIEW_TRANSCRIPT
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.GOOD, T), ("00-c", Rating.AGAIN, T), ("00-n", Rating.HARD, T)]
        assert all(r.duration_ms is not None and r.duration_ms >= 0 for r in store.reviews())
        assert store.cram_reviews() == []


def test_review_easy_override_and_dont_know(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    answers = "\n4\n2\n4\n?\n"
    result = run("review", "--db", db, "--bank", bank, "--now", NOW, *IN_BANK_ORDER, stdin=answers)
    assert (result.returncode, result.stderr) == (0, "")
    assert (
        "Counted as Good (6d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with "
        "effort) or 4 for Easy (13d): 4\nSaved: Easy. Next review in 13d.\n"
    ) in result.stdout
    assert result.stdout.endswith(
        "Your answer (a number; ? if you don't know; q to quit): ?\n"
        "Not quite: the answer is 12 heads.\n"
        "768 / 64.\n"
        'See lesson 00 Welcome, section "3. Heads".\n'
        "Saved: Again. Next review in 1d.\n\n"
        "Session over: 3 answers saved. Next question due tomorrow.\n"
    )
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.EASY, T), ("00-c", Rating.EASY, T), ("00-n", Rating.AGAIN, T)]


def test_review_quit_and_end_of_input_keep_answers(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    quit_early = run("review", "--db", db, "--bank", bank, "--now", NOW, stdin="\n3\nq\n")
    assert quit_early.returncode == 0
    assert quit_early.stdout.endswith("q\nStopped (you typed q): 1 answer saved.\n")
    later = (T + timedelta(minutes=1)).isoformat()
    ended = run("review", "--db", db, "--bank", bank, "--now", later, *IN_BANK_ORDER, stdin="1\n")
    assert (ended.returncode, ended.stderr) == (0, "")
    assert ended.stdout.startswith("Review of lesson 00: 0 due now, 2 new.")
    assert ended.stdout.endswith(
        "Your answer [1-2, ? if you don't know, q to quit]: 1\n"
        "Not quite: the answer is 2) b\n"
        "  1) Not b.\n"
        "  2) (right answer) Asked for.\n"
        "It says b.\n"
        'See lesson 00 Welcome, section "2. Letters".\n'
        "Saved: Again. Next review in 1d.\n"
        "\n"
        "[2/2] lesson 00 Welcome, numeric (00-n), new\n"
        "How many heads?\n"
        "Your answer (a number; ? if you don't know; q to quit): \n"
        "Stopped (end of input): 1 answer saved.\n"
    )
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.GOOD, T), ("00-c", Rating.AGAIN, T + timedelta(minutes=1))]


NEW_HELD = (
    "Today's limit of 1 new question is reached: you answered 1 new question (all in lesson 00) today, "
    "quizzes included. 2 new questions wait until tomorrow. To answer them now, review with --limit-new 3."
)


def test_review_limits_and_nothing_due(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    limited = run("review", "--db", db, "--bank", bank, "--now", NOW, "--limit-new", "1", stdin="\n3\n")
    assert limited.stdout.startswith("Review of lesson 00: 0 due now, 1 new.")
    ended = f"Session over: 1 answer saved. {NEW_HELD} Next question due in 6 days.\n"
    assert limited.stdout.endswith(ended)
    held = run("review", "--db", db, "--bank", bank, "--now", NOW, "--limit-new", "1")
    assert (held.returncode, held.stdout) == (0, f"{NEW_HELD} Next question due in 6 days.\n")
    nothing = run(
        "review",
        "--db",
        db,
        "--bank",
        bank,
        "--now",
        NOW,
        "--limit-new",
        "3",
        *IN_BANK_ORDER,
        stdin="2\n\n12\n\n",
    )
    assert nothing.stdout.endswith("Session over: 2 answers saved. Next question due in 4 days.\n")
    later = (T + timedelta(minutes=1)).isoformat()
    again = run("review", "--db", db, "--bank", bank, "--now", later, "--limit-new", "3")
    assert (again.returncode, again.stdout) == (0, "Nothing is due right now. Next question due in 4 days.\n")


@pytest.mark.parametrize(
    ("decks", "options", "expected"),
    [
        (
            ("00",),
            ["--limit-reviews", "0"],
            "Today's limit of 0 reviews is reached. 3 due questions wait until tomorrow. To answer them now, "
            "review with --limit-reviews 3.\n",
        ),
        (
            ("00", "01"),
            ["--limit-reviews", "0", "--limit-new", "0"],
            "Today's limits of 0 reviews and 0 new questions are reached. 3 due and 1 new questions wait "
            "until tomorrow. To answer them now, review with --limit-reviews 3 --limit-new 1.\n",
        ),
        (
            ("00", "01"),
            ["--limit-reviews", "2", "--limit-new", "0"],
            "Review of lessons 00, 01: 2 due now, 0 new. Type q at any prompt to stop; each answer is saved "
            "as you go.\n",
        ),
    ],
)
def test_review_says_what_todays_limits_hold_back(
    bank: Path, db: Path, decks: tuple[str, ...], options: list[str], expected: str
) -> None:
    with store_with(db, *decks, fuzz=False) as store:
        for item_id in ("00-r", "00-c", "00-n"):
            store.record(item_id, Rating.GOOD, T - timedelta(days=10))  # due 4 days later: overdue now
    result = run(
        "review", "--db", db, "--bank", bank, "--now", NOW, *options, *IN_BANK_ORDER, stdin="\n3\n2\n\n"
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(expected)
    if "2" in options:  # two of the three due reviews allowed: the third waits, and is said to
        assert result.stdout.endswith(
            "Session over: 2 answers saved. Today's limits of 2 reviews and 0 new questions are reached: you "
            "answered 2 reviews (all in lesson 00) today, quizzes included. 1 due and 1 new questions wait "
            "until tomorrow. To answer them now, review with --limit-reviews 3 --limit-new 1.\n"
        )


class Keys(io.StringIO):
    """Typed lines, each taking `minutes` of `clock` time; then Ctrl-C, or the end of input."""

    def __init__(self, text: str, clock: list[datetime] | None = None, *, ctrl_c: bool = True) -> None:
        super().__init__(text)
        self.clock = clock
        self.ctrl_c = ctrl_c

    def readline(self, size: int | None = -1) -> str:
        line = super().readline(-1 if size is None else size)
        if self.clock is not None:
            self.clock[0] += timedelta(minutes=5)
        if not line and self.ctrl_c:
            raise KeyboardInterrupt
        return line


def in_process(
    monkeypatch: pytest.MonkeyPatch, *args: str | Path, stdin: io.StringIO
) -> tuple[int, str, str]:
    monkeypatch.setenv("TZ", "UTC")
    out, err = io.StringIO(), io.StringIO()
    status = cli.main([str(arg) for arg in args], stdin=stdin, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_review_goes_on_with_what_came_due_meanwhile(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_steps(monkeypatch)  # same-day learning steps: what this is about
    with Store.open(db, memory=steps_memory()) as store:
        store.enroll("00", T - timedelta(hours=1))
        store.record("00-r", Rating.GOOD, T - timedelta(minutes=5))  # its 10-minute step: due at T + 5m
    clock = [T]
    monkeypatch.setattr(cli, "now", lambda: clock[0])
    # every line typed takes 5 minutes: each question 10; a Good on a new question is a 10-minute step, asked
    # again before the session ends; 00-r, not in the session, comes due meanwhile and is offered after it
    answers = "2\n\n" + "12\n\n" + "2\n\n" + "12\n\n" + "\n3\n"
    status, out, err = in_process(
        monkeypatch, "review", "--db", db, "--bank", bank, *IN_BANK_ORDER, stdin=Keys(answers, clock)
    )
    assert (status, err) == (0, "")
    assert out.count("It comes back before this session ends.") == 2
    assert out.count("Due now as well: ") == 1
    assert "\nDue now as well: 1 question that came due during this session.\n\n[5/5] " in out
    assert out.endswith("Session over: 5 answers saved. Next question due in 2 days.\n")
    with Store.open(db, create=False) as store:
        assert [item_id for item_id, _, _ in log(store)] == ["00-r", "00-c", "00-n", "00-c", "00-n", "00-r"]


@pytest.mark.parametrize(("typed", "reason"), [("q\n", "you typed q"), ("", "end of input")])
def test_stopping_where_a_right_answer_counts_as_good_keeps_it(
    bank: Path, db: Path, typed: str, reason: str
) -> None:
    store_with(db, "00").close()
    result = run("review", "--db", db, "--bank", bank, "--now", NOW, *IN_BANK_ORDER, stdin="\n3\n2\n" + typed)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith(
        "or 4 for Easy (13d): " + typed.strip() + "\n"
        "Saved: Good. Next review in 6d.\n"
        f"Stopped ({reason}): 2 answers saved.\n"
    )
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.GOOD, T), ("00-c", Rating.GOOD, T)]


def test_ctrl_c_where_a_right_answer_counts_as_good_keeps_it(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_with(db, "00").close()
    status, out, err = in_process(
        monkeypatch,
        "review",
        "--db",
        db,
        "--bank",
        bank,
        "--now",
        NOW,
        *IN_BANK_ORDER,
        stdin=Keys("\n3\n2\n"),
    )
    assert (status, err) == (130, "")
    assert out.endswith(
        "or 4 for Easy (13d): \nSaved: Good. Next review in 6d.\nStopped (Ctrl-C): 2 answers saved.\n"
    )
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.GOOD, T), ("00-c", Rating.GOOD, T)]
    status, out, err = in_process(
        monkeypatch,
        "cram",
        "00",
        "--db",
        db,
        "--bank",
        bank,
        "--now",
        NOW,
        *IN_BANK_ORDER,
        stdin=Keys("\n1\n2\n"),
    )
    assert (status, err) == (130, "")
    assert out.endswith(
        "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: \n"
        "Logged as practice: Good.\nStopped (Ctrl-C): 2 practice answers logged.\n"
    )
    with Store.open(db, create=False) as store:
        assert [(r.item_id, r.rating) for r in store.cram_reviews()] == [
            ("00-r", Rating.AGAIN),
            ("00-c", Rating.GOOD),
        ]


def test_ctrl_c_before_an_answer_is_known_saves_the_earlier_ones(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_with(db, "00").close()
    status, out, err = in_process(
        monkeypatch, "review", "--db", db, "--bank", bank, "--now", NOW, stdin=Keys("\n3\n")
    )
    assert (status, err) == (130, "")
    assert out.endswith(
        "Your answer [1-2, ? if you don't know, q to quit]: \nStopped (Ctrl-C): 1 answer saved.\n"
    )
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.GOOD, T)]


def test_review_before_any_lesson(bank: Path, db: Path) -> None:
    store_with(db).close()
    result = run("review", "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "No lesson started yet: answer a lesson's quiz, in its notebook (start with 00-welcome.ipynb) or in "
        "the terminal (python -m course quiz 00), and its questions will come up here.\n"
    )


# ----------------------------------------------------------------------------------------------------- cram


def test_cram_leaves_the_schedule_alone(bank: Path, db: Path) -> None:
    with store_with(db, "00") as store:
        store.record("00-r", Rating.GOOD, T - timedelta(minutes=30))
        before = (store.cards(), store.reviews(), store.enrolled())
    answers = "\n1\n" + "2\n2\n" + "12\n4\n" + "\n3\n" + "\n2\n"
    result = run("cram", "01", "0", "--db", db, "--bank", bank, "--now", NOW, *IN_BANK_ORDER, stdin=answers)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(
        "Practice of lessons 00, 01: 4 questions. Practice answers are logged apart and do not change your "
        "review schedule. Type q at any prompt to stop.\n\n[1/4] lesson 00 Welcome, recall (00-r), practice\n"
    )
    assert "  1 Again   2 Hard   3 Good   4 Easy\n" in result.stdout
    assert "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: 4\n" in result.stdout
    assert result.stdout.endswith("Practice over: 5 practice answers logged; your schedule is unchanged.\n")
    with Store.open(db, create=False) as store:
        assert (store.cards(), store.reviews(), store.enrolled()) == before
        assert [(r.item_id, r.rating, r.reviewed_at) for r in store.cram_reviews()] == [
            ("00-r", Rating.AGAIN, T),
            ("00-c", Rating.HARD, T),
            ("00-n", Rating.EASY, T),
            ("01-r", Rating.GOOD, T),
            ("00-r", Rating.HARD, T),
        ]


def test_cram_with_named_lessons_creates_a_missing_database(bank: Path, db: Path) -> None:
    result = run("cram", "01", "--db", db, "--bank", bank, "--now", NOW, stdin="\n3\n")
    assert (result.returncode, result.stderr) == (0, "")
    with Store.open(db, create=False) as store:
        assert [(r.item_id, r.rating) for r in store.cram_reviews()] == [("01-r", Rating.GOOD)]
        assert (store.reviews(), store.cards(), store.enrolled()) == ([], {}, {})


def test_cram_lesson_arguments(bank: Path, db: Path) -> None:
    store_with(db).close()
    empty = run("cram", "7", "--db", db, "--bank", bank, "--now", NOW)
    assert (empty.returncode, empty.stdout) == (2, "")
    assert empty.stderr == "lesson 07 has no questions yet (lessons with questions: 00, 01)\n"
    unknown = run("cram", "1", "review", "--db", db, "--bank", bank, "--now", NOW)
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == "unknown lesson 'review' (lessons with questions: 00, 01)\n"
    none = run("cram", "--db", db, "--bank", bank, "--now", NOW)
    assert (none.returncode, none.stdout) == (2, "")
    assert (
        none.stderr == "no lesson started yet: name the lessons to practise, e.g. python -m course cram 00\n"
    )


# ----------------------------------------------------------------------------------------------------- quiz

QUIZ_TRANSCRIPT = """\
Quiz of lesson 00 Welcome: 3 questions. Each answer is saved to your review schedule as you go. Type q at \
any prompt to stop.

[1/3] lesson 00 Welcome, recall (00-r)
What is 2 + 2?
Press Enter to show the answer (q to quit): <Enter>
Answer: 4
Add them.
See lesson 00 Welcome, section "1. Sums".
How well did you remember it? (Hard = remembered, with effort)
  1 Again 1d   2 Hard 2d   3 Good 6d   4 Easy 17d
Your rating [1-4, q to quit]: 3
Saved: Good. Next review in 6d.

[2/3] lesson 00 Welcome, choice (00-c)
Pick b.
  1) b
  2) a
Your answer [1-2, ? if you don't know, q to quit]: 2
Not quite: the answer is 1) b
  1) (right answer) Asked for.
  2) Not b.
It says b.
See lesson 00 Welcome, section "2. Letters".
Saved: Again. Next review in 1d.

[3/3] lesson 00 Welcome, numeric (00-n)
How many heads?
Your answer (a number; ? if you don't know; q to quit): 12
Right: the answer is 12 heads.
768 / 64.
See lesson 00 Welcome, section "3. Heads".
Counted as Good (4d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with effort) \
or 4 for Easy (17d): <Enter>
Saved: Good. Next review in 4d.

Quiz over: 2 of 3 right; 3 answers saved. Next review of this lesson: tomorrow, with python -m course review.
""".replace("<Enter>", "")


def test_quiz_starts_the_lesson_and_saves_each_answer_to_the_schedule(bank: Path, db: Path) -> None:
    result = run("quiz", "0", "--db", db, "--bank", bank, "--now", NOW, *SWAPPED, stdin="\n3\n2\n12\n\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == QUIZ_TRANSCRIPT
    with Store.open(db, create=False) as store:  # created by the first answer, as the notebook's quiz does
        assert store.enrolled() == {"00": T}
        assert log(store) == [("00-r", Rating.GOOD, T), ("00-c", Rating.AGAIN, T), ("00-n", Rating.GOOD, T)]
        assert store.cram_reviews() == []
    stats = run("stats", "--db", db, "--bank", bank, "--now", NOW)
    assert "Lessons started:  00 Welcome\nDue now:          0\n" in stats.stdout
    tomorrow = (T + timedelta(days=1)).isoformat()
    review = run("review", "--db", db, "--bank", bank, "--now", tomorrow, stdin="q\n")
    assert review.stdout.startswith("Review of lesson 00: 1 due now, 0 new.")


def test_quiz_saves_a_question_already_scheduled_as_practice(bank: Path, db: Path) -> None:
    with store_with(db, "00", fuzz=False) as store:
        store.record("00-r", Rating.GOOD, T - timedelta(days=1))  # due in 3 days: practice now
        store.record("00-c", Rating.AGAIN, T - timedelta(days=1))  # due today: a review now
    result = run(
        "quiz", "00", "--db", db, "--bank", bank, "--now", NOW, *IN_BANK_ORDER, stdin="\n4\n2\n\n?\n"
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(
        "Quiz of lesson 00 Welcome: 3 questions. Each answer is saved to your review schedule as you go. "
        "Type q at any prompt to stop.\n\n[1/3] lesson 00 Welcome, recall (00-r), practice\nThis question "
        "is already scheduled (next review in 3 days): your answer is saved as practice and leaves its "
        "schedule unchanged.\nWhat is 2 + 2?\n"
    )
    assert (
        "  1 Again   2 Hard   3 Good   4 Easy\nYour rating [1-4, q to quit]: 4\n"
        "Saved as practice: Easy. Its next review stays in 3 days.\n\n"
        "[2/3] lesson 00 Welcome, choice (00-c)\n"
    ) in result.stdout
    assert result.stdout.endswith(
        "Saved: Again. Next review in 1d.\n\nQuiz over: 2 of 3 right; 3 answers saved. 1 answer was "
        "practice: questions already scheduled keep their schedule. Next review of this lesson: tomorrow, "
        "with python -m course review.\n"
    )
    with Store.open(db, create=False) as store:
        assert [(r.item_id, r.rating) for r in store.cram_reviews()] == [("00-r", Rating.EASY)]
        assert [(r.item_id, r.rating) for r in store.reviews()] == [
            ("00-r", Rating.GOOD),
            ("00-c", Rating.AGAIN),
            ("00-c", Rating.GOOD),
            ("00-n", Rating.AGAIN),
        ]


def test_quiz_lesson_argument_and_stopping(bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = run("quiz", "7", "--db", db, "--bank", bank, "--now", NOW)
    assert (empty.returncode, empty.stdout) == (2, "")
    assert empty.stderr == "lesson 07 has no questions yet (lessons with questions: 00, 01)\n"
    missing = run("quiz", "--db", db, "--bank", bank, "--now", NOW)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.endswith("error: the following arguments are required: LESSON\n")
    quit_at_once = run("quiz", "01", "--db", db, "--bank", bank, "--now", NOW, stdin="q\n")
    assert (quit_at_once.returncode, quit_at_once.stderr) == (0, "")
    assert quit_at_once.stdout.endswith("(q to quit): q\nStopped (you typed q): 0 answers saved.\n")
    assert not db.exists()  # nothing answered: nothing created
    status, out, err = in_process(
        monkeypatch,
        "quiz",
        "00",
        "--db",
        db,
        "--bank",
        bank,
        "--now",
        NOW,
        *IN_BANK_ORDER,
        stdin=Keys("\n3\n"),
    )
    assert (status, err) == (130, "")
    assert out.endswith(
        "Your answer [1-2, ? if you don't know, q to quit]: \nStopped (Ctrl-C): 1 answer saved.\n"
    )
    with Store.open(db, create=False) as store:
        assert log(store) == [("00-r", Rating.GOOD, T)]
        assert store.enrolled() == {"00": T}


def test_quiz_is_in_the_help() -> None:
    result = run("--help")
    assert "    quiz           take a lesson's quiz: start the lesson, its answers saved\n" in result.stdout


# ---------------------------------------------------------------------------------------------------- stats


def stats_lines(db: Path, due: int, week: str, today: int, total: int, retention: str, new: int) -> str:
    return (
        f"Progress file:    {db}\n"
        "Lessons started:  00 Welcome\n"
        f"Due now:          {due}\n"
        "Later today:      0\n"
        f"Next 7 days:     {week}"
        f"Reviews today:    {today}\n"
        f"Reviews in total: {total}\n"
        f"True retention:   {retention}\n"
        f"New available:    {new}\n"
        "Code cards:       0 cards brought back by mistakes this week\n"
        "Predictions:      none yet\n"
        "Scheduling:       FSRS default parameters, desired retention 85%.\n"
    )


def test_stats_exact(bank: Path, db: Path) -> None:
    day = timedelta(days=1)
    with Store.open(db, memory=steps_memory()) as store:  # the log is written with fsrs's same-day steps
        store.enroll("00", T - timedelta(hours=1))
        store.record("00-r", Rating.GOOD, T)  # learning, due in 10m
        store.record("00-r", Rating.GOOD, T + timedelta(minutes=15))  # review, due Wed 5 Mar
        store.record("00-c", Rating.EASY, T)  # review, due Tue 11 Mar
        store.record("00-r", Rating.AGAIN, T + 2 * day + timedelta(minutes=15))  # lapse: counts against
        store.record("00-r", Rating.GOOD, T + 2 * day + timedelta(minutes=25))  # due Thu 6 Mar: overdue
        store.record("00-c", Rating.GOOD, T + 8 * day)  # Tue 11 Mar 10:00: counts for
        store.record("00-n", Rating.GOOD, T + 8 * day + timedelta(hours=1))
        store.record("00-n", Rating.GOOD, T + 8 * day + timedelta(hours=1, minutes=15))  # due Thu 13 Mar
        assert store.card("00-n").due == T + 10 * day + timedelta(hours=1, minutes=15)
    tuesday = run("stats", "--db", db, "--bank", bank, "--now", "2025-03-11T12:00:00+00:00")
    assert (tuesday.returncode, tuesday.stderr) == (0, "")
    week = "  Wed  Thu  Fri  Sat  Sun  Mon  Tue\n                     0    1    0    0    0    0    0\n"
    assert tuesday.stdout == stats_lines(
        db, 1, week, 3, 8, "50.0% (first review each day of learned questions)", 0
    )
    # 3:59 am is still Tuesday for the learner; 4 am starts Wednesday
    late = run("stats", "--db", db, "--bank", bank, "--now", "2025-03-12T03:59:00+00:00")
    assert late.stdout == tuesday.stdout
    wednesday = run("stats", "--db", db, "--bank", bank, "--now", "2025-03-12T04:00:00+00:00")
    week = "  Thu  Fri  Sat  Sun  Mon  Tue  Wed\n                     1    0    0    0    0    0    0\n"
    assert wednesday.stdout == stats_lines(
        db, 1, week, 0, 8, "50.0% (first review each day of learned questions)", 0
    )


def test_stats_fresh_store_and_course_db(bank: Path, db: Path) -> None:
    store_with(db).close()
    result = run("stats", "--bank", bank, "--now", NOW, env={"COURSE_DB": str(db)})
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        f"Progress file:    {db}\n"
        "Lessons started:  none yet\n"
        "Due now:          0\n"
        "Later today:      0\n"
        "Next 7 days:       Tue  Wed  Thu  Fri  Sat  Sun  Mon\n"
        "                     0    0    0    0    0    0    0\n"
        "Reviews today:    0\n"
        "Reviews in total: 0\n"
        "True retention:   n/a (no reviews of learned questions yet)\n"
        "New available:    0\n"
        "Code cards:       0 cards brought back by mistakes this week\n"
        "Predictions:      none yet\n"
        "Scheduling:       FSRS default parameters, desired retention 85%.\n"
    )


# --------------------------------------------------------------------------------------- unusable databases


@pytest.mark.parametrize("command", [["stats"], ["review"], ["cram"]])
def test_missing_database(bank: Path, db: Path, command: list[str]) -> None:
    result = run(*command, "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"no progress yet: there is no progress file at {db}. Answer a lesson's quiz, in its notebook (start "
        "with 00-welcome.ipynb) or in the terminal (python -m course quiz 00), to create it; if your "
        "progress lives elsewhere, pass --db PATH or set COURSE_DB\n"
    )
    assert not db.exists()


@pytest.mark.parametrize("command", [["stats"], ["review"]])
def test_corrupt_database_left_untouched(bank: Path, db: Path, command: list[str]) -> None:
    content = b"these are my notes, not a database\n" * 40
    db.write_bytes(content)
    result = run(*command, "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"{db} is not a readable progress database (not an SQLite database); it was left untouched. "
        "Move it aside to start fresh.\n"
    )
    assert db.read_bytes() == content
    assert sorted(p.name for p in db.parent.iterdir()) == ["bank", db.name]


def test_newer_database(bank: Path, db: Path) -> None:
    store_with(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA user_version = 99")
    connection.close()
    result = run("stats", "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"{db} was written by a newer version of this software (schema 99, ")
    assert result.stderr.endswith(
        "); upgrade the course to open it (git pull, then pip install -r requirements.txt)\n"
    )


def test_locked_database(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        result = run("review", "--db", db, "--bank", bank, "--now", NOW, stdin="\n3\n")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (result.returncode, result.stdout) == (2, "")  # refused before the first question
    assert result.stderr == (
        f"{db} is locked by another program (waited 5 s); close other kernels or terminals using it and try "
        f"again\n{NOTHING_ASKED}"
    )
    with Store.open(db, create=False) as store:
        assert store.reviews() == []


@pytest.mark.parametrize("how", ["--db", "COURSE_DB"])
def test_a_folder_given_as_the_progress_file(bank: Path, tmp_path: Path, how: str) -> None:
    folder = tmp_path / "progress"
    folder.mkdir()
    given = ["--db", str(folder)] if how == "--db" else []
    result = run("stats", *given, "--bank", bank, "--now", NOW, env={"COURSE_DB": str(folder)})
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr
        == f"{how} must name a file, e.g. {folder / 'progress.sqlite3'} ({folder} is a folder)\n"
    )
    assert list(folder.iterdir()) == []


def test_a_progress_file_in_a_file_is_an_error_not_a_traceback(bank: Path, tmp_path: Path) -> None:
    parent = tmp_path / "notes.txt"
    parent.write_text("a file, not a folder\n")
    result = run("cram", "00", "--db", parent / "progress.sqlite3", "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"{parent / 'progress.sqlite3'} cannot be opened ({parent} is not a folder); check that its folder "
        "exists and is writable\n"
    )


# --------------------------------------------------------------------------------------- no tracebacks


@pytest.mark.parametrize(
    "when", ["9999-12-31T23:00:00+00:00", "0001-01-01T00:00:00+00:00", "0001-01-01T00:00:00+05:00"]
)
def test_now_out_of_range_is_a_usage_error(bank: Path, db: Path, when: str) -> None:
    result = run("stats", "--db", db, "--bank", bank, "--now", when)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.endswith(
        f"python -m course stats: error: argument --now: out of range: '{when}' (use a time from 1970 to "
        "8999)\n"
    )


@pytest.mark.parametrize("when", ["1970-01-01T00:00:00+00:00", "8999-12-31T23:59:59+00:00"])
@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_now_at_the_ends_of_the_range(bank: Path, db: Path, when: str, zone: str) -> None:
    store_with(db, "00").close()
    answers = "\n3\n2\n\n12\n\n"
    review = run(
        "review", "--db", db, "--bank", bank, "--now", when, *IN_BANK_ORDER, stdin=answers, env={"TZ": zone}
    )
    assert (review.returncode, review.stderr) == (0, "")
    assert "Session over: 3 answers saved." in review.stdout
    stats = run("stats", "--db", db, "--bank", bank, "--now", when, env={"TZ": zone})
    assert (stats.returncode, stats.stderr) == (0, "")


def test_output_closed_early_ends_quietly(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    reader, writer = os.pipe()
    os.close(reader)  # like `| head` having exited: every write fails with a broken pipe
    try:
        result = subprocess.run(
            [sys.executable, "-m", "course", "stats", "--db", str(db), "--bank", str(bank), "--now", NOW],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert (result.returncode, result.stderr) == (141, "")


def run_with_closed(fd: int, *args: str | Path) -> subprocess.CompletedProcess[str]:
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run(
        [sys.executable, "-m", "course", *map(str, args)],
        **streams,  # type: ignore[call-overload]
        text=True,
        cwd=ROOT,
        env={**os.environ, "TZ": "UTC"},
        timeout=60,
        preexec_fn=lambda: os.close(fd),
    )


def test_closed_stdin_is_the_end_of_input(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    result = run_with_closed(0, "review", "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith(
        "Press Enter to show the answer (q to quit): \nStopped (end of input): 0 answers saved.\n"
    )


def test_closed_stdout_is_reported(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    result = run_with_closed(1, "stats", "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stderr) == (2, "python -m course: the standard output is closed\n")


# ------------------------------------------------------------------------- a learner at a terminal (issue 7)


def as_at_a_terminal() -> None:
    """In the child: the signals a terminal sends have their default effect, even where the test runner
    ignores them (an ignored signal stays ignored across exec, and the course respects that)."""
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


class Learner:
    """``python -m course`` driven through pipes as a learner at a terminal drives it: wait for a prompt,
    then type a line or send a signal."""

    def __init__(self, *args: str | Path, prefix: Sequence[str] = ()) -> None:
        self.process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "course", *map(str, args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, "TZ": "UTC", "COLUMNS": "80"},
            preexec_fn=as_at_a_terminal,
        )
        self.seen = b""

    def wait_for(self, prompt: str, timeout: float = 30) -> None:
        """Wait until `prompt` is shown (with any number of days for the Easy interval, which is fuzzed)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while not re.search(any_easy(prompt) + r"\Z", self.seen.decode(errors="replace")):
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                self.process.kill()
                raise AssertionError(f"no {prompt!r} in time; the output so far:\n{self.seen.decode()}")
            self.seen += chunk

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def finish(self) -> tuple[int, str, str]:
        """Close the input, wait for the end; the exit status, all the output and the errors."""
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, (self.seen + out).decode(), err.decode()


def any_easy(text: str) -> str:
    """A pattern matching `text`, where the Easy interval "(8d)" may be any number of days."""
    return re.escape(text).replace(re.escape("(8d)"), r"\(\d+d\)")


CONFIRM_PROMPTS = {
    "review": "or 4 for Easy (13d): ",
    "cram": "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: ",
}
SAVED_GOOD = {
    "review": (
        "Saved: Good. Next review in 6d.\n",
        "2 answers saved",
        [("00-r", Rating.GOOD), ("00-c", Rating.GOOD)],
    ),
    "cram": (
        "Logged as practice: Good.\n",
        "2 practice answers logged",
        [("00-r", Rating.GOOD), ("00-c", Rating.GOOD)],
    ),
}
STOPPING_SIGNALS = [
    (signal.SIGHUP, "the terminal was closed", 129),
    (signal.SIGTERM, "SIGTERM", 143),
    (signal.SIGINT, "Ctrl-C", 130),
]


def saved(db: Path, command: str) -> list[tuple[str, Rating]]:
    with Store.open(db, create=False) as store:
        answers = store.reviews() if command == "review" else store.cram_reviews()
        return [(answer.item_id, answer.rating) for answer in answers]


def start(command: str, bank: Path, db: Path) -> Learner:
    lessons = ["00"] if command == "cram" else []
    return Learner(command, *lessons, "--db", db, "--bank", bank, "--now", NOW, *IN_BANK_ORDER)


@pytest.mark.parametrize("command", ["review", "cram"])
@pytest.mark.parametrize(("signum", "reason", "status"), STOPPING_SIGNALS)
def test_a_signal_where_a_right_answer_counts_as_good_keeps_it(
    bank: Path, db: Path, command: str, signum: int, reason: str, status: int
) -> None:
    store_with(db, "00").close()
    learner = start(command, bank, db)
    learner.wait_for("Press Enter to show the answer (q to quit): ")
    learner.type("")
    learner.wait_for("Your rating [1-4, q to quit]: ")
    learner.type("3")
    learner.wait_for("Your answer [1-2, ? if you don't know, q to quit]: ")
    learner.type("2")  # right: b is shown second
    learner.wait_for(CONFIRM_PROMPTS[command])
    learner.process.send_signal(signum)  # closing the terminal sends SIGHUP
    status_seen, out, err = learner.finish()
    line, done, answers = SAVED_GOOD[command]
    assert (status_seen, err) == (status, "")
    assert re.search(
        any_easy(f"{CONFIRM_PROMPTS[command]}\n{line}Stopped ({reason}): {done}.\n") + r"\Z", out
    )
    assert saved(db, command) == answers


@pytest.mark.parametrize("command", ["review", "cram"])
@pytest.mark.parametrize(("signum", "reason", "status"), STOPPING_SIGNALS)
def test_a_signal_before_an_answer_is_known_saves_nothing_half_done(
    bank: Path, db: Path, command: str, signum: int, reason: str, status: int
) -> None:
    store_with(db, "00").close()
    learner = start(command, bank, db)
    learner.wait_for("Press Enter to show the answer (q to quit): ")
    learner.type("")
    learner.wait_for("Your rating [1-4, q to quit]: ")
    learner.process.send_signal(signum)
    status_seen, out, err = learner.finish()
    done = "0 answers saved" if command == "review" else "0 practice answers logged"
    assert (status_seen, err) == (status, "")
    assert out.endswith(f"Your rating [1-4, q to quit]: \nStopped ({reason}): {done}.\n")
    assert saved(db, command) == []


def test_signal_handlers_are_restored_after_a_command(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_with(db, "00").close()
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)}
    status, _, _ = in_process(
        monkeypatch, "review", "--db", db, "--bank", bank, "--now", NOW, stdin=io.StringIO("q\n")
    )
    assert status == 0
    assert {number: signal.getsignal(number) for number in before} == before


def test_a_lock_taken_during_a_session_says_the_answer_was_not_saved(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    learner = start("review", bank, db)
    learner.wait_for("Press Enter to show the answer (q to quit): ")
    learner.type("")
    learner.wait_for("Your rating [1-4, q to quit]: ")
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another program takes the write lock
        learner.type("3")
        status, out, err = learner.finish()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (status, out.endswith("Your rating [1-4, q to quit]: 3\n")) == (2, True)
    assert err == (
        f"{db} is locked by another program (waited 5 s); close other kernels or terminals using it and try "
        "again\nYour last answer was not saved (0 answers saved before it).\n"
    )
    assert saved(db, "review") == []


def as_an_ordinary_user() -> list[str]:
    """The command prefix under which file permissions apply: none for an ordinary user; as root (whom
    permissions do not stop), a user namespace in which this process is an ordinary user owning its files."""
    if os.geteuid() != 0:
        return []
    prefix = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    try:
        probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    except FileNotFoundError:
        probe = None
    if probe is None or probe.returncode != 0:
        pytest.skip("running as root without unshare(1) user namespaces: file permissions cannot be enforced")
    return prefix


NOTHING_ASKED = "No question was asked, as no answer could be saved to it.\n"


@pytest.mark.parametrize("what", ["file", "folder"])
@pytest.mark.parametrize("command", ["review", "cram"])
def test_a_read_only_progress_file_is_refused_before_the_first_question(
    bank: Path, tmp_path: Path, what: str, command: str
) -> None:
    prefix = as_an_ordinary_user()
    folder = tmp_path / "progress"
    folder.mkdir()
    db = folder / "progress.sqlite3"
    store_with(db, "00").close()
    content = db.read_bytes()
    (db if what == "file" else folder).chmod(0o444 if what == "file" else 0o555)
    try:
        lessons = ["00"] if command == "cram" else []
        learner = Learner(command, *lessons, "--db", db, "--bank", bank, "--now", NOW, prefix=prefix)
        learner.type("")
        learner.type("3")
        status, out, err = learner.finish()
        reader = Learner("stats", "--db", db, "--bank", bank, "--now", NOW, prefix=prefix).finish()
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)
    assert (status, out) == (2, "")
    assert err == f"{db} cannot be written (read-only file or folder); check its permissions\n{NOTHING_ASKED}"
    assert db.read_bytes() == content
    if what == "file":  # a reader needs no more than a readable file
        assert (reader[0], reader[2]) == (0, "")
        assert reader[1].startswith(f"Progress file:    {db}\nLessons started:  00 Welcome\n")


# A re-asked prompt: what was typed, the message, the prompt again.
REASKED = {
    "choice": (
        "Your answer [1-2, ? if you don't know, q to quit]: ",
        "Please type a number from 1 to 2, ? or q.",
    ),
    "numeric": ("Your answer (a number; ? if you don't know; q to quit): ", "Please type a number, ? or q."),
    "rating": ("Your rating [1-4, q to quit]: ", "Please type 1, 2, 3 or 4 (or q to quit)."),
    "confirm": (
        "Counted as Good (6d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with "
        "effort) or 4 for Easy (13d): ",
        "Please press Enter, or type 2, 4 or q.",
    ),
}
UNUSABLE = {  # what each prompt cannot use, digits that int() rejects first
    "choice": ["²", "①", "١", "１", "0", "3", "-1", "1.0", "+1", "1 2", "1e0", "\x00", "\ufffd", "½", "??"],
    "numeric": ["²", "①", "½", "twelve", "1/0", "12 h h", "0x0c", "\x00", "\ufffd", "1,2", "12heads!", "∞"],
    "rating": ["²", "①", "١", "１", "0", "5", "3.0", "+3", "three", "\x00", "\ufffd", "?", "1 2"],
    "confirm": ["²", "①", "３", "1", "5", "2.0", "\x00", "\ufffd", "?", "easy", " 4 4"],
}
# typed before the prompt under test is reached, and after it (to end the session)
REACH = {"choice": "\n3\n", "numeric": "\n3\n2\n\n", "rating": "\n", "confirm": "\n3\n2\n"}
AFTER = {"choice": "2\n\nq\n", "numeric": "12\n\nq\n", "rating": "3\nq\n", "confirm": "\nq\n"}
WHAT_IS_SAVED = {
    "choice": [("00-r", Rating.GOOD), ("00-c", Rating.GOOD)],
    "numeric": [("00-r", Rating.GOOD), ("00-c", Rating.GOOD), ("00-n", Rating.GOOD)],
    "rating": [("00-r", Rating.GOOD)],
    "confirm": [("00-r", Rating.GOOD), ("00-c", Rating.GOOD)],
}


@pytest.mark.parametrize(
    ("prompt", "typed"), [(prompt, typed) for prompt, inputs in UNUSABLE.items() for typed in inputs]
)
def test_every_prompt_asks_again_on_input_it_cannot_use(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch, prompt: str, typed: str
) -> None:
    store_with(db, "00").close()
    keys = Keys(REACH[prompt] + typed + "\n" + AFTER[prompt], ctrl_c=False)
    status, out, err = in_process(
        monkeypatch, "review", "--db", db, "--bank", bank, "--now", NOW, *IN_BANK_ORDER, stdin=keys
    )
    asked, message = REASKED[prompt]
    assert (status, err) == (0, "")
    assert re.search(any_easy(f"{asked}{typed.strip()}\n{message}\n{asked}"), out)
    assert saved(db, "review") == WHAT_IS_SAVED[prompt]


def test_undecodable_input_is_asked_again(bank: Path, db: Path) -> None:
    store_with(db, "00").close()
    result = subprocess.run(
        [sys.executable, "-m", "course", "review", "--db", str(db), "--bank", str(bank), "--now", NOW],
        input=b"\n\xff\xfe\n3\nq\n",
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "TZ": "UTC"},
        timeout=60,
    )
    assert (result.returncode, result.stderr) == (0, b"")
    assert (
        "Your rating [1-4, q to quit]: \ufffd\ufffd\nPlease type 1, 2, 3 or 4 (or q to quit).\n"
        "Your rating [1-4, q to quit]: 3\n"
    ) in result.stdout.decode()
    assert saved(db, "review") == [("00-r", Rating.GOOD)]


def test_review_lists_lessons_in_course_order(bank: Path, db: Path) -> None:
    with Store.open(db) as store:
        store.enroll("01", T - timedelta(hours=2))  # enrolled first
        store.enroll("00", T - timedelta(hours=1))
    result = run("review", "--db", db, "--bank", bank, "--now", NOW, stdin="q\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("Review of lessons 00, 01: 0 due now, 4 new.")
    practice = run("cram", "1", "0", "--db", db, "--bank", bank, "--now", NOW, stdin="q\n")
    assert practice.stdout.startswith("Practice of lessons 00, 01: 4 questions.")
    everything = run("cram", "--db", db, "--bank", bank, "--now", NOW, stdin="q\n")
    assert everything.stdout.startswith("Practice of lessons 00, 01: 4 questions.")


MARKDOWN_LESSON = """lesson = "00"

[[question]]
id = "00-m"
kind = "choice"
prompt = \'\'\'The weights are $e^{x_i} / \\sum_j e^{x_j}$. Which is **not**
a property of `softmax(x)`, for $\\lVert k \\rVert > 0$?\'\'\'
explanation = \'\'\'Each weight is $> 0$, and $QK^\\top/\\sqrt{d_k}$ keeps unit variance.\'\'\'
section = "1. Softmax"
options = [
  { text = "The weights sum to $1$", why = "They **do**: that is what the division is for." },
  { text = "A weight of exactly $0$ for a finite score", correct = true, why = "$e^x > 0$ for all `x`." },
]

[[question]]
id = "00-s"
kind = "recall"
prompt = "Why divide by $\\\\sqrt{d_k}$?"
answer = "To keep the scores at variance $1$ whatever $d_{model}$ is."
explanation = "See `scores / math.sqrt(d_k)`."
section = "2. Scale"
"""


def test_bank_text_is_shown_as_readable_text_wrapped_to_the_terminal(tmp_path: Path, db: Path) -> None:
    directory = tmp_path / "markdown"
    directory.mkdir()
    (directory / "00-markdown.toml").write_text(MARKDOWN_LESSON)
    store_with(db, "00").close()
    result = run(
        "review",
        "--db",
        db,
        "--bank",
        directory,
        "--now",
        NOW,
        *IN_BANK_ORDER,
        stdin="1\n\n3\n",
        env={"COLUMNS": "40"},
    )
    assert (result.returncode, result.stderr) == (0, "")
    shown = result.stdout.split("\n")
    assert shown[29] == "  1 Again 1d   2 Hard 2d   3 Good 4d   4 Easy 18d"  # fuzzed
    assert shown[2:29] == [
        "[1/2] lesson 00 Welcome, choice (00-m), new",
        "The weights are e^(x_i) / ∑_j e^(x_j).",
        "Which is NOT a property of softmax(x),",
        "for ‖k‖ > 0?",
        "  1) The weights sum to 1",
        "  2) A weight of exactly 0 for a finite",
        "     score",
        "Your answer [1-2, ? if you don't know, q to quit]: 1",
        "Not quite: the answer is 2)",
        "    A weight of exactly 0 for a finite",
        "    score",
        "  1) They DO: that is what the division",
        "     is for.",
        "  2) (right answer) e^x > 0 for all x.",
        "Each weight is > 0, and QKᵀ/√d_k keeps",
        "unit variance.",
        'See lesson 00 Welcome, section "1. Softmax".',
        "Saved: Again. Next review in 1d.",
        "",
        "[2/2] lesson 00 Welcome, recall (00-s), new",
        "Why divide by √d_k?",
        "Press Enter to show the answer (q to quit): ",
        "Answer: To keep the scores at variance 1",
        "        whatever d_model is.",
        "See scores / math.sqrt(d_k).",
        'See lesson 00 Welcome, section "2. Scale".',
        "How well did you remember it? (Hard = remembered, with effort)",
    ]


# -------------------------------------------------------------- nothing is created until something is saved


def test_cram_quit_at_once_creates_nothing_in_the_default_place(bank: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"  # the per-user data directory, not there yet
    env = {"XDG_DATA_HOME": str(data), "COURSE_DB": ""}
    result = run("cram", "01", "--bank", bank, "--now", NOW, stdin="q\n", env=env)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith("Stopped (you typed q): 0 practice answers logged.\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank"]  # no file, no folder
    result = run("cram", "01", "--bank", bank, "--now", NOW, stdin="\n2\n", env=env)
    assert (result.returncode, result.stderr) == (0, "")
    with Store.open(data / "attention-course" / "progress.sqlite3", create=False) as store:
        assert [review.item_id for review in store.cram_reviews()] == ["01-r"]  # created by the first answer


@pytest.mark.parametrize("how", ["--db", "COURSE_DB"])
@pytest.mark.parametrize("command", [["cram", "01"], ["quiz", "01"], ["review"], ["stats"]])
def test_a_progress_file_in_a_missing_folder_is_reported(
    bank: Path, tmp_path: Path, how: str, command: list[str]
) -> None:
    target = tmp_path / "mistyped" / "progress.sqlite3"
    given = ["--db", str(target)] if how == "--db" else []
    result = run(*command, *given, "--bank", bank, "--now", NOW, stdin="2\n", env={"COURSE_DB": str(target)})
    assert (result.returncode, result.stdout) == (2, "")  # before any question
    assert result.stderr == (
        f"{how} names {target}, but its folder {tmp_path / 'mistyped'} does not exist: create the folder, "
        f"or correct {how}\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank"]


def test_stats_say_due_now_and_later_today_as_the_review_header_does(bank: Path, db: Path) -> None:
    with Store.open(db, memory=steps_memory()) as store:  # fsrs's same-day steps: due times in minutes
        store.enroll("00", T - timedelta(hours=1))
        store.record("00-r", Rating.GOOD, T - timedelta(minutes=5))  # learning: due in 5 minutes
        store.record("00-c", Rating.AGAIN, T - timedelta(minutes=1))  # learning: due now
    result = run("stats", "--db", db, "--bank", bank, "--now", NOW)
    assert (result.returncode, result.stderr) == (0, "")
    assert "Due now:          1\nLater today:      1\n" in result.stdout
    review = run("review", "--db", db, "--bank", bank, "--now", NOW, "--limit-new", "0", stdin="q\n")
    assert review.stdout.startswith("Review of lesson 00: 1 due now, 0 new.")


def test_stats_and_review_agree_on_a_card_a_mistake_brought_back(bank: Path, db: Path) -> None:
    """A card a mistake brought back (a nudge), never answered, of a lesson whose quiz was not taken: both
    say that lesson is started, and count the card as new, not due."""
    with store_with(db, "00", fuzz=False) as store:
        store.record("00-r", Rating.GOOD, T - timedelta(days=15))
        store.record("00-c", Rating.GOOD, T - timedelta(days=15))
        store.nudge(Nudge("01-r", T - timedelta(days=1), T - timedelta(hours=6), "a mistake"))
    stats = run("stats", "--db", db, "--bank", bank, "--now", NOW)
    assert (stats.returncode, stats.stderr) == (0, "")
    assert "Lessons started:  00 Welcome, 01 Similarity and softmax\nDue now:          2\n" in stats.stdout
    assert (
        "New available:    2\nCode cards:       1 card brought back by mistakes this week\n" in stats.stdout
    )
    review = run("review", "--db", db, "--bank", bank, "--now", NOW, stdin="q\n")
    assert review.stdout.startswith("Review of lessons 00, 01: 2 due now, 2 new.")


def test_a_signal_while_an_answer_is_saved_stops_at_the_next_prompt(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers can only be installed in the main thread")
    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)  # a terminal's: not ignored, as under nohup
    try:
        _signal_while_saved(bank, db, monkeypatch)
    finally:
        signal.signal(signal.SIGHUP, before)


def _signal_while_saved(bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store_with(db, "00").close()
    record = Store.record

    def record_while_the_terminal_closes(self: Store, *args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGHUP)  # handled (held) before the answer is written
        return record(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "record", record_while_the_terminal_closes)
    status, out, err = in_process(
        monkeypatch,
        "review",
        "--db",
        db,
        "--bank",
        bank,
        "--now",
        NOW,
        *IN_BANK_ORDER,
        stdin=Keys("\n3\n", ctrl_c=False),
    )
    assert (status, err) == (129, "")
    assert out.endswith(
        "Your rating [1-4, q to quit]: 3\nSaved: Good. Next review in 6d.\n\n"
        "[2/3] lesson 00 Welcome, choice (00-c), new\nPick b.\n  1) a\n  2) b\n"
        "Stopped (the terminal was closed): 1 answer saved.\n"
    )
    monkeypatch.undo()
    assert saved(db, "review") == [("00-r", Rating.GOOD)]


@pytest.mark.parametrize("command", ["review", "cram", "quiz"])
def test_a_progress_file_sqlite_opens_read_only_is_refused_before_the_first_question(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The same refusal in-process, whoever runs the tests (root included): SQLite is made to open the file
    read-only, as it does when the operating system refuses to open it for writing."""
    store_with(db, "00").close()
    connect = sqlite3.connect

    def read_only(target: object, *args: object, **kwargs: object) -> sqlite3.Connection:
        if str(target) == str(db):
            target, kwargs = f"{db.as_uri()}?mode=ro", {**kwargs, "uri": True}
        return connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", read_only)
    lessons = ["00"] if command in ("cram", "quiz") else []
    status, out, err = in_process(
        monkeypatch, command, *lessons, "--db", db, "--bank", bank, "--now", NOW, stdin=io.StringIO("\n3\n")
    )
    assert (status, out) == (2, "")
    assert err == f"{db} cannot be written (read-only file or folder); check its permissions\n{NOTHING_ASKED}"
    stats = in_process(monkeypatch, "stats", "--db", db, "--bank", bank, "--now", NOW, stdin=io.StringIO())
    assert (stats[0], stats[2]) == (0, "")
    monkeypatch.undo()
    assert saved(db, "review") == saved(db, "cram") == []


@pytest.mark.parametrize(
    ("command", "new_file"),
    [("review", False), ("cram", False), ("cram", True)],
    ids=["review", "cram", "cram's first answer would create the file"],
)
def test_a_full_disk_is_refused_before_the_first_question(
    bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch, command: str, new_file: bool
) -> None:
    """Issue 20, item 4: a progress file that cannot be written because its disk is full (while a notebook
    holds it open, SQLite's files are there already and only the first answer would fail) is refused before
    any question is asked, as a read-only one is."""
    if not new_file:
        store_with(db, "00").close()
    before = sorted(path.name for path in db.parent.iterdir())
    disk_with(monkeypatch, ROOM_FOR_A_WRITE - 1)
    lessons = ["00"] if command == "cram" else []
    status, out, err = in_process(
        monkeypatch, command, *lessons, "--db", db, "--bank", bank, "--now", NOW, stdin=io.StringIO("\n3\n")
    )
    assert (status, out, err) == (2, "", f"{full(db)}\n{NOTHING_ASKED}")
    assert sorted(path.name for path in db.parent.iterdir()) == before
    monkeypatch.undo()
    if not new_file:
        assert saved(db, command) == []


def test_an_ignored_hangup_stays_ignored(bank: Path, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under nohup (SIGHUP ignored) a closed terminal does not stop a session."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers can only be installed in the main thread")
    store_with(db, "00").close()
    record = Store.record

    def record_while_the_terminal_closes(self: Store, *args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGHUP)
        return record(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "record", record_while_the_terminal_closes)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        status, out, _ = in_process(
            monkeypatch,
            "review",
            "--db",
            db,
            "--bank",
            bank,
            "--now",
            NOW,
            stdin=Keys("\n3\nq\n", ctrl_c=False),
        )
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert (status, out.endswith("Stopped (you typed q): 1 answer saved.\n")) == (0, True)


def _predictions(lesson: str, *numbers: int) -> str:
    return "".join(
        f'\n[[prediction]]\nid = "{lesson}-p{n}"\nkind = "numeric"\ncard = "{lesson}-r"\nprompt = "P"\n'
        f'answer = 4\ntolerance = 0\nexplanation = "E"\nsection = "1. Sums"\n'
        for n in numbers
    )


def test_stats_count_the_predictions_lesson_by_lesson(tmp_path: Path, db: Path) -> None:
    """Issue 37: each prompt counted once, at its first commit (a later one comes after the answer was
    shown); a prompt only skipped counted apart; made and right by lesson, in course order."""
    directory = tmp_path / "predicting"
    directory.mkdir()
    (directory / "00-sums.toml").write_text(LESSON_00 + _predictions("00", 1, 2, 3))
    (directory / "01-one.toml").write_text(LESSON_01 + _predictions("01", 1, 2))
    with store_with(db, "00") as store:
        for item_id, answer, right in (
            ("01-p1", "4", True),
            ("00-p1", "5", False),
            ("00-p1", "4", True),  # again, once the answer was shown: not counted
            ("00-p2", "4", True),
            ("01-p2", "", None),
        ):
            store.predict(PredictionEvent(item_id, T - timedelta(hours=1), answer, right))
    stats = run("stats", "--db", db, "--bank", directory, "--now", NOW)
    assert (stats.returncode, stats.stderr) == (0, "")
    assert (
        "\nPredictions:      3 made, 2 right, 1 skipped; lesson 00: 1 of 2; lesson 01: 1 of 1\n"
        in stats.stdout
    )
