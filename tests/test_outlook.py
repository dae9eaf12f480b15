"""The learner-facing progress text (`course.outlook`): what comes next, and the stats summary."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from store_helpers import steps_memory

from course import outlook as text
from scheduler import Item, Limits, Rating, Store

T = datetime(2025, 3, 3, 10, tzinfo=timezone.utc)  # a Monday
ITEMS = [Item("01-a", "01"), Item("00-a", "00"), Item("00-b", "00"), Item("02-a", "02")]
OPTIONS = text.LimitOptions("--limit-reviews N", "--limit-new N")
IN_3_DAYS = T + timedelta(days=3)
STORE_ITEMS = [Item("00-a", "00"), Item("00-b", "00"), Item("00-c", "00"), Item("01-a", "01")]


def test_outlook_reads_the_store(tmp_path: Path) -> None:
    with Store.open(tmp_path / "p.sqlite3", memory=steps_memory()) as store:  # same-day steps: minutes
        assert text.outlook(store, STORE_ITEMS, T, timezone.utc, Limits()) == text.Outlook(0, 0, 0, None)
        store.enroll("00", T)
        store.record("00-a", Rating.GOOD, T - timedelta(minutes=30))  # due 20 minutes ago
        store.record("00-b", Rating.GOOD, T - timedelta(minutes=5))  # due in 5 minutes
        view = text.outlook(store, STORE_ITEMS, T, timezone.utc, Limits())
        assert view == text.Outlook(due_now=2, held_due=0, held_new=0, next_due=T + timedelta(minutes=5))
        assert view.held_text() is None
        held = text.outlook(store, STORE_ITEMS, T, timezone.utc, Limits(new_per_day=0, reviews_per_day=0))
        assert held == text.Outlook(due_now=0, held_due=1, held_new=1, next_due=T + timedelta(minutes=5))
        assert held.held_text() == "1 due and 1 new questions wait"
        one = text.outlook(store, STORE_ITEMS, T, timezone.utc, Limits(new_per_day=0))
        assert (one.due_now, one.held_due, one.held_new) == (1, 0, 1)
        assert one.held_text() == "1 new question waits"


def test_words() -> None:
    assert (text.plural(1, "question"), text.plural(0, "answer")) == ("1 question", "0 answers")
    assert text.interval(timedelta(days=3)) == "3d"
    assert text.interval(-timedelta(hours=1)) == "<1m"  # a due time just past
    assert text.lesson_label("02") == "02 Scaled dot-product attention"
    assert text.due_again(1) == "Due now as well: 1 question that came due during this session."
    assert text.due_in(T)(IN_3_DAYS) == "Next question due in 3d."


@pytest.mark.parametrize(
    ("view", "plain", "with_options"),
    [
        (text.Outlook(0, 0, 0, None), None, None),
        (
            text.Outlook(0, 2, 0, None),
            "Today's limit is reached: 2 due questions wait until tomorrow.",
            "Today's limit is reached: 2 due questions wait until tomorrow "
            "(--limit-reviews N to allow more).",
        ),
        (
            text.Outlook(0, 1, 3, None),
            "Today's limit is reached: 1 due and 3 new questions wait until tomorrow.",
            "Today's limit is reached: 1 due and 3 new questions wait until tomorrow (--limit-reviews N and "
            "--limit-new N to allow more).",
        ),
    ],
)
def test_held_sentence(view: text.Outlook, plain: str | None, with_options: str | None) -> None:
    assert text.held_sentence(view) == plain
    assert text.held_sentence(view, OPTIONS) == with_options


@pytest.mark.parametrize(
    ("view", "answered", "expected"),
    [
        (text.Outlook(0, 0, 0, None), False, ["Nothing is due right now.", "No question is scheduled yet."]),
        (text.Outlook(0, 0, 0, None), True, ["No question is scheduled yet."]),
        (text.Outlook(0, 0, 0, IN_3_DAYS), False, ["Nothing is due right now.", "Next question due in 3d."]),
        (text.Outlook(0, 0, 0, IN_3_DAYS), True, ["Next question due in 3d."]),
        # held back: the limits first; due questions held back come before the next due time
        (text.Outlook(0, 0, 1, IN_3_DAYS), False, ["Today's limit is reached: 1 new question waits until "
         "tomorrow (--limit-new N to allow more).", "Next question due in 3d."]),
        (text.Outlook(0, 1, 0, IN_3_DAYS), True, ["Today's limit is reached: 1 due question waits until "
         "tomorrow (--limit-reviews N to allow more)."]),
        (text.Outlook(0, 0, 1, None), True, ["Today's limit is reached: 1 new question waits until tomorrow "
         "(--limit-new N to allow more)."]),
    ],
)  # fmt: skip
def test_next_steps_in_the_terminal(view: text.Outlook, answered: bool, expected: list[str]) -> None:
    assert text.next_steps(view, T, answered=answered, options=OPTIONS) == expected


def test_next_steps_in_other_words() -> None:
    """A front end says the next due time its own way, and may say nothing when nothing is scheduled."""

    def review_at(due: datetime) -> str:
        return f"Next review: in {text.interval(due - T)} ({due:%a %H:%M})."

    def steps(view: text.Outlook, answered: bool) -> list[str]:
        return text.next_steps(view, T, answered=answered, next_due=review_at, unscheduled=None)

    assert steps(text.Outlook(0, 0, 0, IN_3_DAYS), False) == [
        "Nothing is due right now.",
        "Next review: in 3d (Thu 10:00).",
    ]
    assert steps(text.Outlook(0, 0, 0, None), True) == []
    assert steps(text.Outlook(0, 0, 2, None), False) == [
        "Today's limit is reached: 2 new questions wait until tomorrow."
    ]


def test_progress_report(tmp_path: Path) -> None:
    with Store.open(tmp_path / "p.sqlite3") as store:
        store.enroll("01", T)
        store.enroll("00", T)
        store.record("00-a", Rating.GOOD, T - timedelta(days=1))
        report = text.progress_report(store, ITEMS, T, timezone.utc)
    assert report.split("\n") == [
        f"Progress file:    {tmp_path / 'p.sqlite3'}",
        "Lessons started:  00 Welcome, 01 Similarity and softmax",  # course order
        "Due now:          0",  # a first Good: 4 days, fuzzed to 5 (Friday)
        "Later today:      0",
        "Next 7 days:       Tue  Wed  Thu  Fri  Sat  Sun  Mon",
        "                     0    0    0    1    0    0    0",
        "Reviews today:    0",
        "Reviews in total: 1",
        "True retention:   n/a (no reviews of learned questions yet)",
        "New available:    2",
        "Scheduling:       FSRS default parameters, desired retention 85%.",
    ]


def test_progress_report_before_any_lesson(tmp_path: Path) -> None:
    with Store.open(tmp_path / "p.sqlite3") as store:
        report = text.progress_report(store, ITEMS, T, timezone.utc)
    assert report.split("\n")[1:4] == [
        "Lessons started:  none yet",
        "Due now:          0",
        "Later today:      0",
    ]
