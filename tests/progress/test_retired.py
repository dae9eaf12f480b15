"""Retired question ids in a learner's store: their history is kept, never served, never counted, no error.

Each test builds the same schedule twice, in a real SQLite store: once with the history of two ids that the
bank has retired (one due now, answered Again today; one due tomorrow) and once without it. Everything the
learner sees must be the same for both.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from store_helpers import steps_memory

from course.bank import Bank, load_bank
from course.progress import Outlook, outlook
from course.terminal import cli
from course.widgets import ReviewWidget
from scheduler import (
    AnsweredToday,
    CramSession,
    Limits,
    Rating,
    Session,
    Stats,
    Store,
    due_queue,
    forecast,
    stats,
)

T = datetime(2025, 3, 3, 10, 0, tzinfo=timezone.utc)  # a Monday
NOW = "2025-03-03T10:00:00+00:00"
UTC = timezone.utc
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)

LESSON_00 = """lesson = "00"
retired = ["00-old", "00-older"]
{questions}"""

QUESTION = """
[[question]]
id = "{qid}"
kind = "recall"
prompt = "Question {qid}?"
answer = "A"
explanation = "E"
section = "1. S"
"""

LIVE = ("00-due", "00-seen", "00-new")

# (item, rating, when): 00-due is overdue at T; 00-seen was answered today (in review: it counts for true
# retention) and is due in 16 days (Wed 19 Mar); 00-new was never answered.
LIVE_HISTORY = [
    ("00-due", Rating.GOOD, T - 4 * DAY),
    ("00-due", Rating.GOOD, T - 4 * DAY + 15 * MINUTE),  # review, due Sat 1 Mar
    ("00-seen", Rating.GOOD, T - 4 * DAY),
    ("00-seen", Rating.GOOD, T - 4 * DAY + 15 * MINUTE),
    ("00-seen", Rating.GOOD, T - 30 * MINUTE),  # today, in review, remembered
]
# Counted, 00-old would be due today, a review today and a lapse (retention 50%); 00-older due tomorrow.
RETIRED_HISTORY = [
    ("00-old", Rating.GOOD, T - 4 * DAY),
    ("00-old", Rating.GOOD, T - 4 * DAY + 15 * MINUTE),
    ("00-old", Rating.AGAIN, T - 60 * MINUTE),  # today, in review, forgotten: relearning, due 9:10
    ("00-older", Rating.GOOD, T - DAY),
    ("00-older", Rating.GOOD, T - DAY + 15 * MINUTE),  # review, due Tue 4 Mar
]


@pytest.fixture
def bank(tmp_path: Path) -> Bank:
    directory = tmp_path / "bank"
    directory.mkdir()
    questions = "".join(QUESTION.format(qid=qid) for qid in LIVE)
    (directory / "00-sums.toml").write_text(LESSON_00.format(questions=questions))
    loaded = load_bank(directory)
    assert loaded.retired() == frozenset({"00-old", "00-older"})
    return loaded


def make_store(path: Path, *, retired_history: bool) -> Path:
    """The history is written with fsrs's same-day steps (learning, relearning), which it is made of."""
    with Store.open(path, memory=steps_memory()) as store:
        store.enroll("00", T - 4 * DAY)
        history = LIVE_HISTORY + (RETIRED_HISTORY if retired_history else [])
        for item_id, rating, at in sorted(history, key=lambda entry: entry[2]):
            store.record(item_id, rating, at)
        if retired_history:
            assert store.card("00-old").due == T - 50 * MINUTE  # due now, were it still a question
            assert (
                store.card("00-older").due == T + DAY + 15 * MINUTE
            )  # due tomorrow, were it still a question
    return path


@pytest.fixture(params=[True, False], ids=["with retired history", "without"])
def with_retired(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def db(tmp_path: Path, with_retired: bool) -> Path:
    return make_store(tmp_path / "progress.sqlite3", retired_history=with_retired)


@pytest.fixture
def kept(with_retired: bool) -> list[tuple[str, Rating, datetime]]:
    """The retired ids' history as the store was made with it: it must stay there, unchanged."""
    return sorted(RETIRED_HISTORY, key=lambda entry: entry[2]) if with_retired else []


def retired_log(db: Path) -> list[tuple[str, Rating, datetime]]:
    with Store.open(db, create=False) as store:
        return [(r.item_id, r.rating, r.reviewed_at) for r in store.reviews() if r.item_id not in LIVE]


def test_the_schedule_serves_and_counts_only_the_banks_questions(
    bank: Bank, db: Path, kept: list[tuple[str, Rating, datetime]]
) -> None:
    items = bank.items()
    with Store.open(db, create=False) as store:
        assert [item.id for item in due_queue(store, items, T, UTC)] == ["00-due", "00-new"]
        session = Session(store, items, T, UTC)
        assert (session.due_count, session.new_count, session.remaining) == (1, 1, 2)
        assert stats(store, items, T, UTC) == Stats(
            due_now=1,
            due_later_today=0,
            due_next_7_days=(0, 0, 0, 0, 0, 0, 0),
            reviews_today=1,
            reviews_total=5,
            true_retention=1.0,
            new_available=1,
        )
        assert forecast(store, items, T, UTC, days=4) == [1, 0, 0, 0]
        assert outlook(store, items, T, UTC, Limits()) == Outlook(
            due_now=2,
            held_due=0,
            held_new=0,
            next_due=datetime(2025, 3, 19, 4, 0, tzinfo=UTC),  # 00-seen, due that day: from its rollover
            answered=AnsweredToday(reviews={"00": 1}),  # 00-seen: 00-old's answer today is not counted
        )
        cram = CramSession(store, items)
        assert (cram.remaining, cram.next()) == (3, items[0])
    assert retired_log(db) == kept


def test_answering_the_session_leaves_the_retired_history(
    bank: Bank, db: Path, kept: list[tuple[str, Rating, datetime]]
) -> None:
    with Store.open(db, create=False) as store:  # Memory's defaults: a Good is due in days
        session = Session(store, bank.items(), T, UTC)
        served = []
        while (item := session.next()) is not None:
            served.append(item.id)
            session.answer(item, Rating.GOOD, T + len(served) * MINUTE)
        assert served == ["00-due", "00-new"]
        later = T + 20 * MINUTE  # 00-old's relearning step is due by now, were it still a question
        assert [item.id for item in due_queue(store, bank.items(), later, UTC)] == []
    assert retired_log(db) == kept


def run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


@pytest.mark.usefixtures("utc")
def test_terminal_review_cram_and_stats(
    bank: Bank, db: Path, kept: list[tuple[str, Rating, datetime]]
) -> None:
    common = ["--db", str(db), "--bank", str(bank.directory), "--now", NOW]
    status, out, err = run(["stats", *common])
    assert (status, err) == (0, "")
    assert out == (
        f"Progress file:    {db}\n"
        "Lessons started:  00 Welcome\n"
        "Due now:          1\n"
        "Later today:      0\n"
        "Next 7 days:       Tue  Wed  Thu  Fri  Sat  Sun  Mon\n"
        "                     0    0    0    0    0    0    0\n"
        "Reviews today:    1\n"
        "Reviews in total: 5\n"
        "True retention:   100.0% (first review each day of learned questions)\n"
        "New available:    1\n"
        "Code cards:       0 cards brought back by mistakes this week\n"
        "Predictions:      none yet\n"
        "Scheduling:       FSRS default parameters, desired retention 85%.\n"
    )
    status, out, err = run(["review", *common], stdin="\n3\n\n3\n")
    assert (status, err) == (0, "")
    assert [line for line in out.splitlines() if line.startswith("[")] == [
        "[1/2] lesson 00 Welcome, recall (00-due), review",
        "[2/2] lesson 00 Welcome, recall (00-new), new",
    ]
    assert "00-old" not in out
    status, out, err = run(["cram", "00", *common], stdin="\n3\n" * 3)
    assert (status, err) == (0, "")
    assert [line.split("(")[1].split(")")[0] for line in out.splitlines() if line.startswith("[")] == list(
        LIVE
    )
    assert retired_log(db) == kept


def test_review_widget(bank: Bank, db: Path, kept: list[tuple[str, Rating, datetime]]) -> None:
    widget = ReviewWidget(bank, store=db, clock=lambda: T, tz=UTC)
    assert (widget.due_count, widget.new_count) == (1, 1)
    assert widget.session is not None and widget.session.next() is not None
    assert widget.session.next().id == "00-due"
    widget._close()
    assert retired_log(db) == kept
