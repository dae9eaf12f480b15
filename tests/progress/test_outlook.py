"""The learner-facing progress text (`course.progress`): what comes next, and the stats summary."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from store_helpers import steps_memory

from course.progress import _outlook as text
from scheduler import AnsweredToday, Item, Limits, Rating, Session, Store

T = datetime(2025, 3, 3, 10, tzinfo=timezone.utc)  # a Monday
ITEMS = [Item("01-a", "01"), Item("00-a", "00"), Item("00-b", "00"), Item("02-a", "02")]
OPTIONS = text.LimitOptions(
    "--limit-reviews {n}", "--limit-new {n}", "To answer {them} now, review with {settings}."
)
IN_3_DAYS = T + timedelta(days=3)
STORE_ITEMS = [Item("00-a", "00"), Item("00-b", "00"), Item("00-c", "00"), Item("01-a", "01")]


def test_outlook_reads_the_store(tmp_path: Path) -> None:
    with Store.open(tmp_path / "p.sqlite3", memory=steps_memory()) as store:  # same-day steps: minutes
        assert text.outlook(store, STORE_ITEMS, T, timezone.utc, Limits()) == text.Outlook(0, 0, 0, None)
        store.enroll("00", T)
        store.record("00-a", Rating.GOOD, T - timedelta(minutes=30))  # due 20 minutes ago
        store.record("00-b", Rating.GOOD, T - timedelta(minutes=5))  # due in 5 minutes
        view = text.outlook(store, STORE_ITEMS, T, timezone.utc, Limits())
        today = AnsweredToday(new={"00": 2})  # both first answers, given today
        assert view == text.Outlook(
            due_now=2, held_due=0, held_new=0, next_due=T + timedelta(minutes=5), answered=today
        )
        assert view.held_text() is None
        none = Limits(new_per_day=0, reviews_per_day=0)
        held = text.outlook(store, STORE_ITEMS, T, timezone.utc, none)
        assert held == text.Outlook(
            due_now=0, held_due=1, held_new=1, next_due=T + timedelta(minutes=5), limits=none, answered=today
        )
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


BY_LESSON = AnsweredToday(new={"02": 17, "00": 12, "01": 16}, reviews={"01": 150, "02": 50})


@pytest.mark.parametrize(
    ("view", "in_the_terminal", "in_a_notebook"),
    [
        (text.Outlook(0, 0, 0, None), None, None),
        (
            text.Outlook(0, 3, 0, None, Limits(reviews_per_day=200), BY_LESSON),
            "Today's limit of 200 reviews is reached: you answered 200 reviews (150 in lesson 01, 50 in 02) "
            "today, quizzes included. 3 due questions wait until tomorrow. To answer them now, review with "
            "--limit-reviews 203.",
            "Today's limit of 200 reviews is reached: you answered 200 reviews (150 in lesson 01, 50 in 02) "
            "today, quizzes included. 3 due questions wait until tomorrow. To answer them now: from "
            "scheduler import Limits, then review(limits=Limits(reviews_per_day=203)).",
        ),
        (  # --limit-new 40 is below what the day has counted already: 45, then 23 more
            text.Outlook(0, 3, 23, None, Limits(new_per_day=40), BY_LESSON),
            "Today's limits of 200 reviews and 40 new questions are reached: you answered 200 reviews "
            "(150 in lesson 01, 50 in 02) and 45 new questions (12 in lesson 00, 16 in 01, 17 in 02) today, "
            "quizzes included. 3 due and 23 new questions wait until tomorrow. To answer them now, review "
            "with --limit-reviews 203 --limit-new 68.",
            "Today's limits of 200 reviews and 40 new questions are reached: you answered 200 reviews "
            "(150 in lesson 01, 50 in 02) and 45 new questions (12 in lesson 00, 16 in 01, 17 in 02) today, "
            "quizzes included. 3 due and 23 new questions wait until tomorrow. To answer them now: from "
            "scheduler import Limits, then review(limits=Limits(reviews_per_day=203, new_per_day=68)).",
        ),
        (  # a limit of 0: nothing counted against it
            text.Outlook(0, 0, 1, None, Limits(new_per_day=0), AnsweredToday(reviews={"00": 4})),
            "Today's limit of 0 new questions is reached. 1 new question waits until tomorrow. To answer it "
            "now, review with --limit-new 1.",
            "Today's limit of 0 new questions is reached. 1 new question waits until tomorrow. To answer it "
            "now: from scheduler import Limits, then review(limits=Limits(new_per_day=1)).",
        ),
        (
            text.Outlook(0, 0, 2, None, Limits(), AnsweredToday(new={"03": 20})),
            "Today's limit of 20 new questions is reached: you answered 20 new questions (all in lesson 03) "
            "today, quizzes included. 2 new questions wait until tomorrow. To answer them now, review with "
            "--limit-new 22.",
            "Today's limit of 20 new questions is reached: you answered 20 new questions (all in lesson 03) "
            "today, quizzes included. 2 new questions wait until tomorrow. To answer them now: from "
            "scheduler import Limits, then review(limits=Limits(new_per_day=22)).",
        ),
    ],
)
def test_held_sentence(view: text.Outlook, in_the_terminal: str | None, in_a_notebook: str | None) -> None:
    assert text.held_sentence(view, OPTIONS) == in_the_terminal
    assert text.held_sentence(view) == in_a_notebook  # the review notebook's words: the default


def lessons(counts: dict[str, int]) -> list[Item]:
    """`counts[lesson]` items of each lesson, in course order: ``00-q0``, ``00-q1``, ..."""
    return [Item(f"{lesson}-q{k}", lesson) for lesson, n in counts.items() for k in range(n)]


def test_three_quizzes_answered_on_the_first_day_use_up_the_new_questions(tmp_path: Path) -> None:
    """Issue 20, item 5: the first answers given in three lessons' quizzes count against the day's 20 new
    questions; the text says how many counted, where, and the limit that serves the 23 left (a limit of 40,
    below the 45 counted, serves none)."""
    items = lessons({"00": 20, "01": 20, "02": 28})
    quizzes = {"00": 12, "01": 16, "02": 17}  # the first answers, in each lesson's quiz, this morning
    with Store.open(tmp_path / "p.sqlite3") as store:
        for lesson, n in quizzes.items():
            store.enroll(lesson, T - timedelta(hours=4))
            for k in range(n):
                store.record(f"{lesson}-q{k}", Rating.GOOD, T - timedelta(hours=4) + timedelta(minutes=k))
        for limit in (20, 40):
            view = text.outlook(store, items, T, timezone.utc, Limits(new_per_day=limit))
            assert (view.due_now, view.held_new, view.answered) == (0, 23, AnsweredToday(new=quizzes))
            assert text.next_steps(view, T, answered=False, options=OPTIONS) == [
                f"Today's limit of {limit} new questions is reached: you answered 45 new questions (12 in "
                "lesson 00, 16 in 01, 17 in 02) today, quizzes included. 23 new questions wait until "
                "tomorrow. To answer them now, review with --limit-new 68.",
                "Next question due in 3d.",  # Good on a new question: 4 days, the earliest fuzzed to 3
            ]
        session = Session(store, items, T, timezone.utc, Limits(new_per_day=68))
        assert (session.new_count, session.answered_today) == (23, AnsweredToday(new=quizzes))  # as said
        assert text.outlook(store, items, T, timezone.utc, Limits(new_per_day=68)).held_new == 0


@pytest.mark.parametrize(
    ("view", "answered", "expected"),
    [
        (text.Outlook(0, 0, 0, None), False, ["Nothing is due right now.", "No question is scheduled yet."]),
        (text.Outlook(0, 0, 0, None), True, ["No question is scheduled yet."]),
        (text.Outlook(0, 0, 0, IN_3_DAYS), False, ["Nothing is due right now.", "Next question due in 3d."]),
        (text.Outlook(0, 0, 0, IN_3_DAYS), True, ["Next question due in 3d."]),
        # held back: the limits first; due questions held back come before the next due time
        (text.Outlook(0, 0, 1, IN_3_DAYS), False, ["Today's limit of 20 new questions is reached. 1 new "
         "question waits until tomorrow. To answer it now, review with --limit-new 21.",
         "Next question due in 3d."]),
        (text.Outlook(0, 1, 0, IN_3_DAYS), True, ["Today's limit of 200 reviews is reached. 1 due question "
         "waits until tomorrow. To answer it now, review with --limit-reviews 201."]),
        (text.Outlook(0, 0, 1, None), True, ["Today's limit of 20 new questions is reached. 1 new question "
         "waits until tomorrow. To answer it now, review with --limit-new 21."]),
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
        "Today's limit of 20 new questions is reached. 2 new questions wait until tomorrow. To answer them "
        "now: from scheduler import Limits, then review(limits=Limits(new_per_day=22))."
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
        "Due now:          0",  # a first Good: 4 days, fuzzed to 5: due on Friday
        "Later today:      0",
        "Next 7 days:       Tue  Wed  Thu  Fri  Sat  Sun  Mon",
        "                     0    0    0    1    0    0    0",
        "Reviews today:    0",
        "Reviews in total: 1",
        "True retention:   n/a (no reviews of learned questions yet)",
        "New available:    2",
        "Code cards:       0 cards brought back by mistakes this week",
        "Predictions:      none yet",
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
