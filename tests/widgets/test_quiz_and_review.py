"""The quiz and review widgets, driven through their Python API with a real store and a fixed clock."""

from __future__ import annotations

import html
import json
import random
import sqlite3
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bank_samples import copy_bank
from fixed_clock import T0, Clock
from ipywidgets import Button, RadioButtons, Text
from store_helpers import disk_with, full, opened_read_only, pin_steps, read_only, steps_memory

from course.bank import Bank, Question, load_bank, plain_text, to_html
from course.bank._bank import Option
from course.lessons import QUIZ_LESSONS
from course.progress import StoreSource
from course.widgets import NO_PROGRESS, CramWidget, QuizWidget, ReviewWidget, quiz, review
from course.widgets._chrome import CHROME, STALE_TEXT
from course.widgets._panel import QuestionPanel
from scheduler import Limits, Rating, Store


@pytest.fixture
def bank(tmp_path: Path) -> Bank:
    return load_bank(copy_bank("widgets", tmp_path / "bank"))  # 01-sample.toml and 02-other.toml


NOT_SAVED = ""  # a right answer leaves the notice empty: the hint above the ratings says it is saved on Next


def submit(widget: QuestionPanel) -> None:
    """Press Enter in the number box: the frontend sends ``{"event": "submit"}`` (after the value)."""
    assert widget.number_input is not None
    widget.number_input._handle_custom_msg({"event": "submit"}, [])


RIGHT, WRONG = "No: it is shown as text", "Yes, `<b>` and all"  # two options of 01-pick
SEED = 0  # its first showing: A "Yes, `<b>` and all", B "Only on Tuesdays", C "No: it is shown as text"


def make_quiz(bank: Bank, db: Path | Store, clock: Clock) -> QuizWidget:
    return QuizWidget(
        "01", bank.questions("01"), store=db, clock=clock, tz=timezone.utc, rng=random.Random(SEED)
    )


def make_review(bank: Bank, db: Path | Store, clock: Clock) -> ReviewWidget:
    return ReviewWidget(bank, store=db, clock=clock, tz=timezone.utc, rng=random.Random(SEED))


def option(widget: QuestionPanel, text: str) -> Button:
    """The button of the option `text`, wherever this showing put it (its tooltip: "Answer C: <text>")."""
    buttons = [
        button
        for button in widget.option_buttons
        if button.tooltip == f"{button.description}: {plain_text(text)}"
    ]
    assert len(buttons) == 1, [button.tooltip for button in widget.option_buttons]
    return buttons[0]


def reviews(db: Path) -> list[tuple[str, Rating, datetime, int | None]]:
    with Store.open(db, create=False) as store:
        return [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.reviews()]


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with Store.open(db) as opened:
        yield opened


# -- display ---------------------------------------------------------------------------------------------
def test_displaying_a_quiz_records_nothing_and_creates_no_file(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    bundle = widget._repr_mimebundle_(include=None, exclude=None)
    assert bundle == {
        "text/plain": "Quiz for lesson 01: 3 questions. "
        "Run this cell in JupyterLab to start the quiz; each answer is saved to your review schedule.",
        "application/vnd.jupyter.widget-view+json": {
            "version_major": 2,
            "version_minor": 0,
            "model_id": widget.root.model_id,
        },
    }
    assert repr(widget) == bundle["text/plain"]
    assert widget.progress.value == "<b>Question 1 / 3</b>"
    assert not db.exists()


def test_quiz_and_review_text_of_the_shipped_course(db: Path, clock: Clock) -> None:
    n = len(load_bank().questions("00"))
    widget = quiz("00", store=db, clock=clock)
    assert widget._repr_mimebundle_()["text/plain"] == (
        f"Quiz for lesson 00: {n} questions. "
        "Run this cell in JupyterLab to start the quiz; each answer is saved to your review schedule."
    )
    session = review(store=db, clock=clock)
    assert session._repr_mimebundle_()["text/plain"] == (
        "Review of the questions due from your enrolled lessons. "
        "Run this cell in JupyterLab to start the review; each answer updates your review schedule."
    )
    assert not db.exists()


def test_clock_must_be_aware(bank: Bank, db: Path) -> None:
    with pytest.raises(ValueError, match=r"^clock\(\) must return a timezone-aware datetime, got datetime"):
        make_quiz(bank, db, lambda: datetime(2025, 1, 1))  # type: ignore[arg-type]


# -- choice ----------------------------------------------------------------------------------------------
def test_wrong_choice_saves_again_at_check_time_with_its_duration(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    assert [(button.description, button.tooltip) for button in widget.option_buttons] == [
        ("Answer A", "Answer A: Yes, <b> and all"),
        ("Answer B", "Answer B: Only on Tuesdays"),
        ("Answer C", "Answer C: No: it is shown as text"),
    ]
    clock.advance(seconds=7.25)
    widget.option_buttons[0].click()
    assert reviews(db) == [("01-pick", Rating.AGAIN, T0 + timedelta(seconds=7.25), 7250)]
    with Store.open(db, create=False) as store:
        assert store.enrolled() == {"01": T0 + timedelta(seconds=7.25)}
    assert widget.feedback.value == (
        "<b>✗ Not quite.</b> The answer is C.<ul>"
        "<li>✗ <b>A.</b> Yes, <code>&lt;b&gt;</code> and all <i>(your answer)</i>: Markup would run.</li>"
        "<li>· <b>B.</b> Only on Tuesdays: Days do not matter.</li>"
        "<li>✓ <b>C.</b> No: it is shown as text <i>(the right answer)</i>: It is escaped.</li></ul>"
        "<p>Text is <strong>escaped</strong>.</p>"
        "<p><i>See: lesson 01 (Similarity and softmax), section “2. Softmax”.</i></p>"
    )
    assert widget.notice.value == "<p>Saved: Again. It comes back in 1d.</p>"
    assert all(button.disabled for button in widget.option_buttons)
    clock.advance(seconds=30)
    widget.next_button.click()  # saves nothing more
    assert len(reviews(db)) == 1
    assert widget.question is not None and widget.question.id == "01-number"
    assert widget.progress.value == "<b>Question 2 / 3</b>"


def test_right_choice_is_saved_as_good_on_next(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    clock.advance(seconds=3)
    option(widget, RIGHT).click()
    assert not db.exists()  # nothing is saved until the rating is final
    assert widget.notice.value == ""  # one notice, not two: the hint above the ratings says how it is saved
    assert widget.rating_area.children[0].value == (
        "<p>Saved as <b>Good</b> when you press Next. <b>Hard</b>: it took effort (it still counts as "
        "remembered); <b>Good</b>: remembered; <b>Easy</b>: it came at once.</p>"
    )
    assert widget.status.value == "<p>✓ Right. Not saved yet: press Next to save it.</p>"  # said aloud
    assert widget.feedback.value.startswith("<b>✓ Right.</b><ul>")
    assert widget.rating_choice is not None
    assert widget.rating_choice.value == Rating.GOOD
    assert [label for label, _ in widget.rating_choice.options] == ["Hard (2d)", "Good (6d)", "Easy (16d)"]
    assert widget.next_button.description == "Next"
    clock.advance(seconds=20)  # reading the explanation does not count
    widget.next_button.click()
    assert reviews(db) == [("01-pick", Rating.GOOD, T0 + timedelta(seconds=3), 3000)]
    assert widget.notice.value == "<p><i>Previous question: Saved: Good. It comes back in 6d.</i></p>"


@pytest.mark.parametrize("rating", [Rating.HARD, Rating.EASY])
def test_right_choice_can_be_saved_as_hard_or_easy(
    bank: Bank, db: Path, clock: Clock, rating: Rating
) -> None:
    widget = make_quiz(bank, db, clock)
    option(widget, RIGHT).click()
    assert widget.rating_choice is not None
    widget.rating_choice.value = rating
    # what the widget says it will save is what it saves
    name = rating.name.capitalize()
    hint = widget.rating_area.children[0].value
    assert hint.startswith(f"<p>Saved as <b>{name}</b> when you press Next. <b>Hard</b>: it took effort")
    assert widget.status.value == f"<p>Saved as {name} when you press Next.</p>"
    widget.next_button.click()
    widget.next_button.click()  # a second click on the next question's hidden button does nothing
    assert reviews(db) == [("01-pick", rating, T0, 0)]
    assert widget.notice.value.startswith(f"<p><i>Previous question: Saved: {name}. It comes back in ")


# -- numeric ---------------------------------------------------------------------------------------------
def test_numeric_answers(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    option(widget, RIGHT).click()
    widget.next_button.click()
    assert widget.number_input is not None and widget.check_button is not None
    widget.check_button.click()
    assert widget.notice.value == "<p>✗ Nothing typed: type a number, e.g. 64 or 0.125.</p>"
    widget.number_input.value = "sixty <four>"
    widget.check_button.click()
    assert widget.notice.value == "<p>✗ &#x27;sixty &lt;four&gt;&#x27;: type a number, e.g. 64 or 0.125.</p>"
    assert len(reviews(db)) == 1
    clock.advance(seconds=12)
    widget.number_input.value = " 60 "
    widget.check_button.click()
    assert widget.feedback.value.startswith("<p><b>✗ Not quite.</b> You answered 60; the answer is 64.</p>")
    assert reviews(db)[1] == ("01-number", Rating.AGAIN, T0 + timedelta(seconds=12), 12000)


def test_right_numeric_answer(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    widget.index = 1
    widget._show_current()
    assert widget.number_input is not None and widget.check_button is not None
    widget.number_input.value = "64"
    widget.check_button.click()
    assert widget.feedback.value.startswith("<p><b>✓ Right:</b> 64.</p>")
    assert widget.notice.value == NOT_SAVED
    widget.next_button.click()
    assert reviews(db) == [("01-number", Rating.GOOD, T0, 0)]


@pytest.mark.parametrize(("typed", "right"), [("4h", True), (" 4 h ", True), ("4", True), ("5h", False)])
def test_numeric_answer_with_its_unit_and_enter(db: Path, clock: Clock, typed: str, right: bool) -> None:
    hours = Question(
        id="01-hours",
        lesson="01",
        kind="numeric",
        prompt="How many hours?",
        answer=4,
        explanation="Four.",
        section="1. Time",
        tolerance=0,
        unit="h",
    )
    widget = QuizWidget("01", [hours], store=db, clock=clock, tz=timezone.utc)
    assert widget.number_input is not None
    widget.number_input.value = typed
    assert widget.answered_at is None  # typing (or leaving the box) checks nothing
    submit(widget)  # Enter: checked without pressing Check
    expected = "<p><b>✓ Right:</b> 4 h.</p>" if right else f"<p><b>✗ Not quite.</b> You answered {typed}; "
    assert widget.feedback.value.startswith(expected)
    assert widget.answered_at == T0


def test_numeric_answer_with_another_unit_is_not_a_number(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    widget.index = 1
    widget._show_current()
    assert widget.number_input is not None
    widget.number_input.value = "64h"  # this question has no unit
    submit(widget)
    assert widget.notice.value == "<p>✗ &#x27;64h&#x27;: type a number, e.g. 64 or 0.125.</p>"
    assert widget.answered_at is None


# -- recall ----------------------------------------------------------------------------------------------
def test_recall_shows_the_answer_then_four_labelled_ratings(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    widget.index = 2
    widget._show_current()
    assert widget.show_button is not None
    assert widget.show_button.description == "Show answer"
    assert widget.rating_buttons == {}
    clock.advance(seconds=4)
    widget.show_button.click()
    assert not db.exists()
    assert widget.feedback.value.startswith(
        "<p><b>Answer:</b></p><p>To keep the scores' variance near 1.</p>"
    )
    labels = {rating: button.description for rating, button in widget.rating_buttons.items()}
    assert labels == {
        Rating.AGAIN: "Again (1d)",
        Rating.HARD: "Hard (2d)",  # 2 days: under 3, not fuzzed
        Rating.GOOD: "Good (5d)",  # 4 days, fuzzed: what saving Good will give
        Rating.EASY: "Easy (17d)",  # 16 days, fuzzed
    }
    assert widget.rating_buttons[Rating.HARD].tooltip == (
        "Hard: you remembered it, with effort; it comes back in 2d"
    )
    hint = widget.rating_area.children[0].value
    assert "<b>Hard</b>: you remembered it, with effort (it still counts as remembered)" in hint
    clock.advance(seconds=10)
    widget.rating_buttons[Rating.HARD].click()
    assert reviews(db) == [("01-recall", Rating.HARD, T0 + timedelta(seconds=4), 4000)]
    assert widget.question is None  # the last question: the summary is shown
    assert widget.progress.value == "<b>Done: 3 / 3</b>"
    assert widget.notice.value == "<p><i>Last question: Saved: Hard. It comes back in 2d.</i></p>"


def test_a_right_answer_to_the_last_question_is_saved_by_finish_and_said_so(
    bank: Bank, db: Path, clock: Clock
) -> None:
    widget = QuizWidget("01", bank.questions("01")[:1], store=db, clock=clock, tz=timezone.utc)
    option(widget, RIGHT).click()
    assert widget.next_button.description == "Finish"
    assert widget.notice.value == NOT_SAVED.replace("press Next", "press Finish")
    widget.next_button.click()
    assert reviews(db) == [("01-pick", Rating.GOOD, T0, 0)]
    assert widget.notice.value == "<p><i>Last question: Saved: Good. It comes back in 6d.</i></p>"


# -- summary, practice -----------------------------------------------------------------------------------
def answer_all(widget: QuizWidget, *, right: bool = True) -> None:
    option(widget, RIGHT if right else WRONG).click()
    widget.next_button.click()
    assert widget.number_input is not None and widget.check_button is not None
    widget.number_input.value = "64" if right else "1"
    widget.check_button.click()
    widget.next_button.click()
    assert widget.show_button is not None
    widget.show_button.click()
    widget.rating_buttons[Rating.GOOD if right else Rating.AGAIN].click()


def test_summary_after_the_last_question(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    option(widget, WRONG).click()
    widget.next_button.click()
    assert widget.number_input is not None and widget.check_button is not None
    widget.number_input.value = "64"
    widget.check_button.click()
    widget.next_button.click()
    assert widget.show_button is not None
    widget.show_button.click()
    widget.rating_buttons[Rating.GOOD].click()
    assert widget.prompt.value == (
        "<p><b>2 of 3 right.</b></p>"
        "<p>Next review of this lesson: tomorrow (2025-03-11), in the review notebook.</p>"
    )
    assert [rating for _, rating in widget.results] == [Rating.AGAIN, Rating.GOOD, Rating.GOOD]


def test_already_scheduled_question_is_saved_as_practice(bank: Bank, db: Path, clock: Clock) -> None:
    answer_all(make_quiz(bank, db, clock))
    assert len(reviews(db)) == 3
    clock.advance(minutes=2)  # all three are due in days (01-pick: 4, fuzzed to 6)
    again = make_quiz(bank, db, clock)
    option(again, RIGHT).click()
    assert again.notice.value == (
        "<p>Practice: this question is already scheduled, next review in 6 days (2025-03-16); "
        f"your answer is saved as practice and leaves its schedule unchanged.</p>{NOT_SAVED}"
    )
    assert again.rating_choice is not None
    assert [label for label, _ in again.rating_choice.options] == ["Hard", "Good", "Easy"]
    again.next_button.click()
    assert again.notice.value == (
        "<p><i>Previous question: Saved as practice (Good): this question is already scheduled, "
        "next review in 6 days (2025-03-16); practice leaves its schedule unchanged.</i></p>"
    )
    assert len(reviews(db)) == 3
    with Store.open(db, create=False) as store:
        crams = store.cram_reviews()
    assert [(r.item_id, r.rating, r.reviewed_at) for r in crams] == [("01-pick", Rating.GOOD, clock.now)]


def test_times_in_notices_are_escaped(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_steps(monkeypatch)  # fsrs's same-day steps: due in minutes, so "<1m" can be shown
    answer_all(make_quiz(bank, db, clock))
    clock.advance(minutes=9, seconds=30)  # all three are due in 30 s: "<1m"
    again = make_quiz(bank, db, clock)
    option(again, RIGHT).click()
    assert again.notice.value.startswith(
        "<p>Practice: this question is already scheduled, next review in &lt;1m (2025-03-10 09:10); "
    )
    again.next_button.click()
    assert again.notice.value.startswith(
        "<p><i>Previous question: Saved as practice (Good): this question is already scheduled, next review "
        "in &lt;1m (2025-03-10 09:10); "
    )
    answer_all_rest(again)
    assert "<p>Next review of this lesson: in &lt;1m (2025-03-10 09:10), in the review notebook.</p>" in (
        again.prompt.value
    )
    session = make_review(bank, db, clock)
    assert session.prompt.value == (
        "<p>Nothing is due right now.</p><p>Next review: in &lt;1m (2025-03-10 09:10).</p>"
    )


def answer_all_rest(widget: QuizWidget) -> None:
    """Answer the numeric and recall questions of the sample quiz, right."""
    assert widget.number_input is not None
    widget.number_input.value = "64"
    submit(widget)
    widget.next_button.click()
    assert widget.show_button is not None
    widget.show_button.click()
    widget.rating_buttons[Rating.GOOD].click()


def test_due_question_answered_in_a_quiz_is_a_real_review(bank: Bank, db: Path, clock: Clock) -> None:
    answer_all(make_quiz(bank, db, clock))
    clock.advance(days=14)  # the three Goods: due in 4 to 6 days (fuzzed)
    again = make_quiz(bank, db, clock)
    option(again, RIGHT).click()
    again.next_button.click()
    assert len(reviews(db)) == 4
    assert again.notice.value == "<p><i>Previous question: Saved: Good. It comes back in 1.7mo.</i></p>"


# -- review ----------------------------------------------------------------------------------------------
def test_review_without_a_database_says_so_and_creates_nothing(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_review(bank, db, clock)
    assert widget.prompt.value == f"<p>{NO_PROGRESS}</p>"
    assert NO_PROGRESS == "No progress yet: answer a lesson's quiz first."
    assert widget.answer_area.children == (widget.refresh_button,)
    assert not db.exists()


def test_review_with_nothing_due(bank: Bank, db: Path, clock: Clock) -> None:
    answer_all(make_quiz(bank, db, clock))
    clock.advance(minutes=1)
    widget = make_review(bank, db, clock)
    assert widget.prompt.value == (
        "<p>Nothing is due right now.</p><p>Next review: in 4 days (2025-03-14).</p>"
    )


def test_again_comes_back_before_the_end_of_the_review(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_steps(monkeypatch)  # fsrs's same-day steps: an Again is due again within minutes
    answer_all(make_quiz(bank, db, clock))
    clock.advance(days=1)
    widget = make_review(bank, db, clock)
    assert widget.progress.value == (
        "<b>3 left</b> (this session: 3 due now, 0 new; 0 answered). From lesson 01, Similarity and softmax."
    )
    served = []
    while widget.question is not None:
        question = widget.question
        served.append(question.id)
        clock.advance(seconds=5)
        forget = question.id == "01-pick" and served.count("01-pick") == 1
        if question.kind == "choice":
            option(widget, WRONG if forget else RIGHT).click()
            widget.next_button.click()
        elif question.kind == "numeric":
            assert widget.number_input is not None and widget.check_button is not None
            widget.number_input.value = "64"
            widget.check_button.click()
            widget.next_button.click()
        else:
            assert widget.show_button is not None
            widget.show_button.click()
            widget.rating_buttons[Rating.GOOD].click()
        assert len(served) < 10
    # 01-pick: Again (a 1-minute step), then Good (its 10-minute step, asked again too), then Good
    assert served == ["01-pick", "01-number", "01-recall", "01-pick", "01-pick"]
    assert [r[1] for r in reviews(db)[3:]] == [
        Rating.AGAIN,
        Rating.GOOD,
        Rating.GOOD,
        Rating.GOOD,
        Rating.GOOD,
    ]
    assert widget.progress.value == "<b>Session done: 5 answers</b>"
    assert widget.prompt.value.startswith("<p><b>4 of 5 remembered.</b></p><p>Next review: tomorrow (")
    assert widget.notice.value.startswith("<p><i>Last question: Saved: Good. It comes back in ")


def answer_review(widget: ReviewWidget, clock: Clock, minutes: float) -> list[str]:
    """Answer every question served, each right (Good) and taking `minutes`; return their ids."""
    served = []
    while widget.question is not None and len(served) < 20:
        question = widget.question
        served.append(question.id)
        clock.advance(minutes=minutes)
        if question.kind == "choice":
            option(widget, RIGHT).click()
            widget.next_button.click()
        elif question.kind == "numeric":
            assert widget.number_input is not None
            widget.number_input.value = "64"
            submit(widget)
            widget.next_button.click()
        else:
            assert widget.show_button is not None
            widget.show_button.click()
            widget.rating_buttons[Rating.GOOD].click()
    return served


def test_the_end_of_a_review_offers_what_came_due_meanwhile(bank: Bank, db: Path) -> None:
    clock = Clock()
    with Store.open(db, memory=steps_memory()) as store:  # fsrs's same-day steps: what this is about
        store.enroll("01", T0)
        store.record("01-recall", Rating.GOOD, T0 - timedelta(minutes=5))  # its 10-minute step: due at T0+5m
        widget = make_review(bank, store, clock)
        # a new question's Good is a 10-minute step, asked again before the session ends; 01-recall, not in
        # the session, falls due while it runs
        assert answer_review(widget, clock, minutes=11) == ["01-pick", "01-number", "01-pick", "01-number"]
        assert widget.prompt.value == (
            "<p><b>4 of 4 remembered.</b></p><p>Due now as well: 1 question that came due during this "
            "session. Press <b>Check again</b> to answer it.</p>"
        )
        assert widget.answer_area.children == (widget.refresh_button,)
        widget.refresh_button.click()
        assert widget.progress.value.startswith("<b>1 left</b> (this session: 1 due now, 0 new; 0 answered).")
        assert answer_review(widget, clock, minutes=1) == ["01-recall"]
        assert widget.prompt.value == (
            "<p><b>1 of 1 remembered.</b></p><p>Next review: in 2 days (2025-03-12).</p>"
        )


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        (
            Limits(reviews_per_day=0),  # the new question of lesson 02 is served, the due ones are not
            "<p><b>1 of 1 remembered.</b></p><p>Today's limit of 0 reviews is reached. 3 due questions wait "
            "until tomorrow. To answer them now: from scheduler import Limits, then "
            "review(limits=Limits(reviews_per_day=3)).</p>",
        ),
        (
            Limits(reviews_per_day=0, new_per_day=0),
            "<p>Today's limits of 0 reviews and 0 new questions are reached. 3 due and 1 new questions wait "
            "until tomorrow. To answer them now: from scheduler import Limits, then "
            "review(limits=Limits(reviews_per_day=3, new_per_day=1)).</p>",
        ),
        (
            Limits(new_per_day=0),
            "<p><b>3 of 3 remembered.</b></p><p>Today's limit of 0 new questions is reached. 1 new question "
            "waits until tomorrow. To answer it now: from scheduler import Limits, then "
            "review(limits=Limits(new_per_day=1)).</p><p>Next review: in 63 days (2025-05-12).</p>",
        ),
    ],
)
def test_the_end_of_a_review_says_what_todays_limits_hold_back(
    bank: Bank, db: Path, store: Store, limits: Limits, expected: str
) -> None:
    store.enroll("01", T0 - timedelta(days=1))
    store.enroll("02", T0 - timedelta(days=1))
    for item_id in ("01-pick", "01-number", "01-recall"):
        store.record(item_id, Rating.GOOD, T0 - timedelta(days=20))  # due in 3 to 5 days (fuzzed): overdue
    clock = Clock()
    widget = ReviewWidget(bank, store=store, clock=clock, limits=limits, tz=timezone.utc)
    answer_review(widget, clock, minutes=0)
    assert widget.prompt.value == expected


def test_review_answers_are_saved_from_another_thread(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # JupyterLab 4 runs widget callbacks on a kernel thread other than the one that ran the cell.
    pin_steps(monkeypatch)  # fsrs's same-day steps: the three are due the next day, 01-pick first
    answer_all(make_quiz(bank, db, clock))
    clock.advance(days=1)
    widget = make_review(bank, db, clock)  # opens the store on this thread
    assert widget.question is not None and widget.question.id == "01-pick"

    def click() -> None:
        option(widget, RIGHT).click()
        widget.next_button.click()

    worker = threading.Thread(target=click)
    worker.start()
    worker.join()
    assert widget.notice.value.startswith("<p><i>Previous question: Saved: Good. It comes back in ")
    assert [(r[0], r[1]) for r in reviews(db)[3:]] == [("01-pick", Rating.GOOD)]


def test_an_unexpected_error_while_saving_is_shown_not_swallowed(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    widget = make_quiz(bank, db, clock)

    def broken(*args: object) -> str:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(widget, "_save", broken)
    option(widget, RIGHT).click()
    widget.next_button.click()
    assert widget.notice.value == (
        "<p><b>✗ Could not save this answer</b> (RuntimeError: disk on fire). Nothing was saved. "
        "This is a bug in the course: please report it with this message.</p>"
    )
    assert not db.exists()


def test_review_check_again_picks_up_new_answers(bank: Bank, db: Path, clock: Clock, store: Store) -> None:
    widget = make_review(bank, store, clock)
    assert widget.prompt.value == f"<p>{NO_PROGRESS}</p>"
    store.enroll("01", T0)
    widget.refresh_button.click()
    assert widget.progress.value == (
        "<b>3 left</b> (this session: 0 due now, 3 new; 0 answered). From lesson 01, Similarity and softmax."
    )


# -- how long the database is held ------------------------------------------------------------------------
def test_the_database_is_held_only_while_a_session_runs(bank: Bank, db: Path, clock: Clock) -> None:
    quiz_widget = make_quiz(bank, db, clock)
    option(quiz_widget, RIGHT).click()
    assert quiz_widget.source.held is None  # a quiz's session is one step: its intervals were read and closed
    quiz_widget.next_button.click()
    assert quiz_widget.source.held is None and len(reviews(db)) == 1
    answer_all_rest(quiz_widget)
    assert quiz_widget.source.held is None
    clock.advance(days=14)  # the three Goods: due in 4 to 6 days (fuzzed)
    widget = make_review(bank, db, clock)
    held = widget.source.held
    assert held is not None and widget.question is not None  # held from the start of the session...
    answer_review(widget, clock, minutes=1)
    assert widget.source.held is None  # ...to its summary, then closed
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        held.enrolled()
    widget.refresh_button.click()  # a new session holds it again
    assert widget.source.held is None and widget.prompt.value.startswith("<p>Nothing is due right now.</p>")


def test_a_given_store_is_held_but_never_closed(bank: Bank, store: Store, clock: Clock) -> None:
    store.enroll("01", T0)
    widget = make_review(bank, store, clock)
    assert widget.source.held is store
    answer_review(widget, clock, minutes=1)
    assert widget.source.held is None
    assert list(store.enrolled()) == ["01"]  # still open
    source = StoreSource(store)
    with pytest.raises(RuntimeError), source.lease(create=False) as leased:
        assert leased is store
        raise RuntimeError
    assert source.held is None and list(store.enrolled()) == ["01"]


def test_a_lease_closes_the_file_it_opened_even_when_the_block_fails(db: Path, store: Store) -> None:
    source = StoreSource(db)
    with pytest.raises(RuntimeError), source.lease(create=False) as leased:
        assert source.hold(create=False) is leased  # holding again gives the one held
        raise RuntimeError
    assert source.held is None
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        leased.enrolled()


# -- errors ----------------------------------------------------------------------------------------------
def test_corrupt_database_shows_a_message_and_is_left_untouched(bank: Bank, db: Path, clock: Clock) -> None:
    garbage = b"this is not a database\n" * 200
    db.write_bytes(garbage)
    widget = make_quiz(bank, db, clock)
    option(widget, WRONG).click()
    assert widget.notice.value.startswith("<p><b>✗ Progress database problem:</b> ")
    assert "is not a readable progress database" in widget.notice.value
    assert widget.notice.value.endswith("Nothing was saved; press the button again once it is fixed.</p>")
    widget.next_button.click()  # retries, fails again, stays on the question
    assert widget.question is not None and widget.question.id == "01-pick"
    assert db.read_bytes() == garbage

    session = make_review(bank, db, clock)
    assert session.prompt.value.startswith("<p><b>✗ Progress database problem:</b> ")
    assert "it was left untouched" in session.prompt.value
    assert db.read_bytes() == garbage
    assert sorted(p.name for p in db.parent.iterdir()) == ["bank", "progress.sqlite3"]


def test_locked_database_shows_a_message_and_the_answer_can_be_retried(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_steps(monkeypatch)  # fsrs's same-day steps: the three are due the next day, 01-pick first
    answer_all(make_quiz(bank, db, clock))
    clock.advance(days=1)
    with Store.open(db, busy_timeout_ms=50) as store:
        widget = make_review(bank, store, clock)
        question = widget.question
        assert question is not None and question.id == "01-pick"
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        option(widget, WRONG).click()
        assert widget.notice.value == (
            f"<p><b>✗ Progress database problem:</b> {db} is locked by another program (waited 0.05 s); "
            "close other kernels or terminals using it and try again. "
            "Nothing was saved; press the button again once it is fixed.</p>"
        )
        other.execute("ROLLBACK")
        other.close()
        widget.next_button.click()  # saves the Again now, then moves on
        assert widget.question is not None and widget.question.id == "01-number"
        assert reviews(db)[-1] == ("01-pick", Rating.AGAIN, clock.now, 0)


# -- rendering -------------------------------------------------------------------------------------------
def test_prompt_is_escaped_and_math_kept(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    assert widget.prompt.value == (
        "<p>Is &lt;script&gt;alert(1)&lt;/script&gt; safe when $a &lt; b$ and a &lt; b?</p>"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a < b & c > d", "<p>a &lt; b &amp; c &gt; d</p>"),
        ('<img src=x onerror="alert(1)">', '<p>&lt;img src=x onerror="alert(1)"&gt;</p>'),
        (r"$\sqrt{d_k}$ and $$\frac{a_1}{b_2}$$", r"<p>$\sqrt{d_k}$ and $$\frac{a_1}{b_2}$$</p>"),
        ("$a*b*c$ and *x* and **y**", "<p>$a*b*c$ and <em>x</em> and <strong>y</strong></p>"),
        ("`x<y` and `**not bold**`", "<p><code>x&lt;y</code> and <code>**not bold**</code></p>"),
        ("d_k_and 2*3*4", "<p>d_k_and 2*3*4</p>"),
        (r"costs \$5", r"<p>costs \$5</p>"),
        ("one\ntwo\n\nthree", "<p>one two</p>\n<p>three</p>"),
        ("- a\n- *b*\n  more", "<ul><li>a</li><li><em>b</em> more</li></ul>"),
        ("1. a\n2. b", "<ol><li>a</li><li>b</li></ol>"),
        ("```python\nif a < b:\n\n    pass\n```", "<pre><code>if a &lt; b:\n\n    pass</code></pre>"),
        ("a \x00 b", "<p>a  b</p>"),
    ],
)
def test_markdown_subset(text: str, expected: str) -> None:
    assert to_html(text) == expected


# -- lesson ids ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lesson", ["2", 2, "02", " 02 "])
def test_quiz_lesson_ids_are_read_loosely(db: Path, clock: Clock, lesson: str | int) -> None:
    widget = quiz(lesson, store=db, clock=clock)
    assert widget.lesson == "02"
    assert widget.text().startswith("Quiz for lesson 02: ")


def test_quiz_of_an_unknown_lesson_or_one_without_questions(db: Path, clock: Clock) -> None:
    known = load_bank().lessons()
    with pytest.raises(ValueError) as unknown:
        quiz("99", store=db, clock=clock)
    assert str(unknown.value) == f"unknown lesson '99' (lessons with questions: {', '.join(known)})"
    empty = [lesson for lesson in QUIZ_LESSONS if lesson not in known]
    if empty:
        with pytest.raises(ValueError) as none_yet:
            quiz(int(empty[0]), store=db, clock=clock)
        assert str(none_yet.value) == (
            f"lesson {empty[0]} has no questions yet (lessons with questions: {', '.join(known)})"
        )
    assert not db.exists()


# -- the progress file cannot be used ----------------------------------------------------------------------
def test_a_folder_as_the_progress_file_is_shown_in_the_widgets(
    bank: Bank, tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "progress"
    folder.mkdir()
    monkeypatch.setenv("COURSE_DB", str(folder))
    message = f"COURSE_DB must name a file, e.g. {folder / 'progress.sqlite3'} ({folder} is a folder)."
    widget = QuizWidget("01", bank.questions("01"), clock=clock, tz=timezone.utc)  # showing it is fine
    option(widget, RIGHT).click()
    assert widget.notice.value.startswith(f"<p><b>✗ Progress database problem:</b> {message}</p>")
    widget.next_button.click()
    assert widget.notice.value == (
        f"<p><b>✗ Progress database problem:</b> {message} "
        "Nothing was saved; press the button again once it is fixed.</p>"
    )
    assert widget.question is not None and widget.question.id == "01-pick"
    session = ReviewWidget(bank, clock=clock, tz=timezone.utc)
    assert session.prompt.value == f"<p><b>✗ Progress database problem:</b> {message}</p>"
    given = ReviewWidget(bank, store=folder, clock=clock, tz=timezone.utc)
    assert given.prompt.value == (
        f"<p><b>✗ Progress database problem:</b> store must name a file, e.g. "
        f"{folder / 'progress.sqlite3'} ({folder} is a folder).</p>"
    )
    assert list(folder.iterdir()) == []


def test_a_folder_that_cannot_be_searched_is_a_message_not_a_stuck_quiz(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_stat = Path.stat

    def stat(self: Path, **kwargs: bool) -> object:
        if self == db:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)  # as for a file in a folder without the x permission
    widget = make_quiz(bank, db, clock)
    option(widget, RIGHT).click()
    assert widget.notice.value.startswith(
        f"<p><b>✗ Progress database problem:</b> {db} cannot be opened (permission denied); "
    )
    assert widget.notice.value.endswith(f"{NOT_SAVED}")
    assert widget.rating_choice is not None  # the learner can still choose, and retry
    widget.next_button.click()
    assert widget.notice.value.endswith("Nothing was saved; press the button again once it is fixed.</p>")
    assert widget.question is not None and widget.question.id == "01-pick"


def test_an_os_error_while_reading_intervals_is_shown(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    widget = make_quiz(bank, db, clock)

    def denied(*args: object) -> None:
        raise PermissionError(13, "Permission denied", "/home/me/locked")

    monkeypatch.setattr(widget, "_intervals", denied)
    option(widget, RIGHT).click()
    assert widget.notice.value == (
        "<p><b>✗ Progress database problem:</b> /home/me/locked cannot be used (Permission denied); check "
        f"the permissions of its folder.</p>{NOT_SAVED}"
    )
    assert widget.status.value == (
        "<p>✓ Right. ✗ Progress database problem: /home/me/locked cannot be used (Permission denied); check "
        "the permissions of its folder. Not saved yet: press Next to save it.</p>"
    )
    assert widget.rating_choice is not None
    assert [label for label, _ in widget.rating_choice.options] == ["Hard", "Good", "Easy"]


# -- nothing is created until something is saved; a missing folder is named -------------------------------
def test_a_progress_file_in_a_missing_folder_is_shown_in_the_widgets(
    bank: Bank, tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "mistyped" / "progress.sqlite3"
    monkeypatch.setenv("COURSE_DB", str(target))
    folder = tmp_path / "mistyped"
    message = (
        f"COURSE_DB names {target}, but its folder {folder} does not exist: create the folder, "
        "or correct COURSE_DB."
    )
    widget = QuizWidget("01", bank.questions("01"), clock=clock, tz=timezone.utc)  # showing it is fine
    option(widget, RIGHT).click()
    assert widget.notice.value.startswith(f"<p><b>✗ Progress database problem:</b> {message}</p>")
    widget.next_button.click()
    assert widget.notice.value == (
        f"<p><b>✗ Progress database problem:</b> {message} "
        "Nothing was saved; press the button again once it is fixed.</p>"
    )
    session = ReviewWidget(bank, clock=clock, tz=timezone.utc)
    assert session.prompt.value == f"<p><b>✗ Progress database problem:</b> {message}</p>"
    given = ReviewWidget(bank, store=target, clock=clock, tz=timezone.utc)
    assert given.prompt.value == (
        f"<p><b>✗ Progress database problem:</b> store names {target}, but its folder "
        f"{tmp_path / 'mistyped'} does not exist: create the folder, or correct store.</p>"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank"]


def test_a_quiz_shown_and_not_answered_creates_nothing_in_the_default_place(
    bank: Bank, tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COURSE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    widget = QuizWidget("01", bank.questions("01"), clock=clock, tz=timezone.utc)
    widget._repr_mimebundle_()
    option(widget, RIGHT).click()  # answered, not yet saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank"]
    widget.next_button.click()  # saved: the folder and the file are made now
    assert (tmp_path / "data" / "attention-course" / "progress.sqlite3").is_file()


# -- issue 7: plain words, the number box, the live region, the browser chrome ----------------------------
def test_a_right_choice_is_marked_plainly_in_the_list(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    option(widget, RIGHT).click()
    assert widget.feedback.value.startswith(
        "<b>✓ Right.</b><ul>"
        "<li>· <b>A.</b> Yes, <code>&lt;b&gt;</code> and all: Markup would run.</li>"
        "<li>· <b>B.</b> Only on Tuesdays: Days do not matter.</li>"
        "<li>✓ <b>C.</b> No: it is shown as text <i>(your answer, right)</i>: It is escaped.</li></ul>"
    )


def test_leaving_the_number_box_grades_nothing(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    widget.index = 1
    widget._show_current()
    assert widget.number_input is not None and widget.check_button is not None
    widget.number_input.value = "6"  # typed, then Tab to reach Check: the value arrives, nothing is graded
    assert (widget.answered_at, widget.feedback.value, widget.notice.value) == (None, "", "")
    assert not db.exists()
    widget.number_input.value = "64"
    widget.check_button.click()
    assert widget.feedback.value.startswith("<p><b>✓ Right:</b> 64.</p>")
    widget.number_input._handle_custom_msg({"event": "other"}, [])  # only "submit" is Enter


def test_what_happens_is_said_in_the_live_region(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    assert widget.status.value == ""
    assert "course-status" in widget.status._dom_classes
    option(widget, WRONG).click()
    assert widget.status.value == "<p>✗ Not quite. The answer is C. Saved: Again. It comes back in 1d.</p>"
    widget.next_button.click()
    assert widget.number_input is not None and widget.check_button is not None
    widget.check_button.click()
    assert widget.status.value == "<p>✗ Nothing typed: type a number, e.g. 64 or 0.125.</p>"
    widget.number_input.value = "64"
    submit(widget)
    assert widget.status.value == "<p>✓ Right: 64. Not saved yet: press Next to save it.</p>"
    widget.next_button.click()
    assert widget.status.value == "<p>Saved: Good. It comes back in 4d.</p>"
    assert widget.show_button is not None
    widget.show_button.click()
    assert widget.status.value == (
        "<p>Answer shown below. How well did you remember it? Choose Again, Hard, Good or Easy.</p>"
    )
    assert "course-summary" not in widget.prompt._dom_classes
    widget.rating_buttons[Rating.GOOD].click()
    assert widget.status.value == (
        "<p>2 of 3 right. Next review of this lesson: tomorrow (2025-03-11), in the review notebook.</p>"
    )
    assert "course-summary" in widget.prompt._dom_classes  # the browser moves the focus there


def test_a_database_problem_is_said_in_the_live_region(bank: Bank, db: Path, clock: Clock) -> None:
    db.write_bytes(b"this is not a database\n" * 200)
    widget = make_quiz(bank, db, clock)
    option(widget, WRONG).click()
    assert widget.status.value.startswith("<p>✗ Progress database problem: ")
    assert widget.status.value.endswith("Nothing was saved; press the button again once it is fixed.</p>")
    widget.status.value = "seen"
    widget.next_button.click()  # the same words again: said again (the region is cleared first)
    assert widget.status.value.startswith("<p>✗ Progress database problem: ")


def test_a_summary_shown_before_any_answer_takes_no_focus(bank: Bank, db: Path, clock: Clock) -> None:
    session = make_review(bank, db, clock)  # no progress yet: the summary is all there is
    assert session.prompt.value == f"<p>{NO_PROGRESS}</p>"
    assert "course-summary" not in session.prompt._dom_classes and session.status.value == ""
    session.refresh_button.click()  # the learner asked: now it is said, and focused in the browser
    assert "course-summary" in session.prompt._dom_classes
    assert session.status.value == f"<p>{html.escape(NO_PROGRESS)}</p>"


def test_option_names_are_plain_text_and_ratings_are_radio_buttons(db: Path, clock: Clock) -> None:
    tex = Question(
        id="01-tex",
        lesson="01",
        kind="choice",
        prompt="Which?",
        answer=None,
        explanation="This.",
        section="1. Time",
        options=(
            Option(text=r"Through $\mathrm{softmax}(QK^\top/\sqrt{d_k})$", correct=True, why="Yes."),
            Option(text="`K.T`, **bold**", correct=False, why="No."),
        ),
    )
    widget = QuizWidget("01", [tex], store=db, clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    assert sorted(button.tooltip.split(": ", 1)[1] for button in widget.option_buttons) == [
        "K.T, bold",
        "Through softmax(QK^T/sqrt(d_k))",
    ]
    assert all("course-option" in button._dom_classes for button in widget.option_buttons)
    option(widget, tex.options[0].text).click()
    assert isinstance(widget.rating_choice, RadioButtons)  # a checked state, announced as such


def test_the_widget_carries_its_browser_chrome(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    assert widget.root.children[0] is widget.chrome and widget.chrome.value == CHROME
    assert widget.chrome.layout.display == "none"
    assert "course-widget" in widget.root._dom_classes
    assert "--jp-widgets-font-size: var(--jp-content-font-size1, 14px)" in CHROME  # the notebook's size
    assert "outline: 2px solid var(--jp-brand-color1, #1976d2)" in CHROME  # 4.6:1 on white
    assert "root.setAttribute(&#x27;data-lm-suppress-shortcuts&#x27;, &#x27;true&#x27;)" in CHROME
    assert html.escape(json.dumps(STALE_TEXT)) in CHROME


# -- issue 20: what a learner does is recorded as they did it -----------------------------------------------
def typed_row(widget: QuestionPanel) -> Text:
    """The number question's typed answer: its row's hidden box is the one the browser sends the text by."""
    (row,) = widget.answer_area.children
    (hidden,) = [child for child in row.children if "course-typed" in child._dom_classes]
    assert hidden.layout.display == "none" and "course-answer-row" in row._dom_classes
    return hidden


def test_the_number_graded_is_the_text_typed_not_the_value_the_box_had_then(
    bank: Bank, db: Path, clock: Clock
) -> None:
    widget = make_quiz(bank, db, clock)
    widget.index = 1
    widget._show_current()
    assert widget.number_input is not None
    widget.number_input.value = "6"  # typed fast: the box's value lags behind what was typed
    typed_row(widget).value = "1:64"  # Enter: the browser sends the text in the box, with a new count
    assert widget.feedback.value.startswith("<p><b>✓ Right:</b> 64.</p>")
    typed_row(widget).value = "2:6"  # Enter again: the question is answered already
    assert widget.feedback.value.startswith("<p><b>✓ Right:</b> 64.</p>")
    widget.next_button.click()
    assert reviews(db)[-1][:2] == ("01-number", Rating.GOOD)


def test_a_typed_text_with_a_colon_or_nothing_is_graded_as_it_was(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_quiz(bank, db, clock)
    widget.index = 1
    widget._show_current()
    typed_row(widget).value = "1:"
    assert widget.notice.value == "<p>✗ Nothing typed: type a number, e.g. 64 or 0.125.</p>"
    typed_row(widget).value = "2:6:4"
    assert widget.notice.value == "<p>✗ &#x27;6:4&#x27;: type a number, e.g. 64 or 0.125.</p>"
    typed_row(widget).value = "no count"  # not the browser's: ignored
    assert widget.answered_at is None and not db.exists()


def test_next_moves_the_focus_to_the_question_never_to_an_answer_control(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    focused: list[str] = []
    monkeypatch.setattr(Button, "focus", lambda self: focused.append(self.description), raising=False)
    monkeypatch.setattr(Text, "focus", lambda self: focused.append("text box"), raising=False)
    widget = make_quiz(bank, db, clock)
    marks = [name for name in widget.prompt._dom_classes if name.startswith("course-focus-")]
    assert marks == []  # when the cell first runs, the focus stays in the notebook
    for _ in range(2):  # a choice question, then a numeric one
        if widget.option_buttons:
            option(widget, WRONG).click()
        else:
            assert widget.number_input is not None and widget.check_button is not None
            widget.number_input.value = "1"
            widget.check_button.click()
        assert focused[-1] == "Next"  # after the verdict: Next, to move on
        widget.next_button.click()
        now = [name for name in widget.prompt._dom_classes if name.startswith("course-focus-")]
        assert len(now) == 1 and now != marks  # a new mark: the browser focuses the new question once
        marks = now
    assert focused == ["Next", "Next"]  # never an option, the number box or Show answer
    assert widget.show_button is not None  # the third question: recall, its button not focused


@pytest.mark.parametrize("problem", ["read-only", "full"])
def test_a_progress_file_that_cannot_take_an_answer_is_said_before_the_first_question(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, problem: str
) -> None:
    """Every widget that saves checks first, as the terminal does: the review and practice ask nothing, the
    quiz says it under its first question (showing it still writes nothing)."""
    with Store.open(db) as store:
        store.enroll("01", T0)
    before = db.read_bytes()
    if problem == "read-only":
        opened_read_only(monkeypatch, db)
        said = read_only(db)
    else:
        disk_with(monkeypatch, 4096)
        said = full(db)
    unwritable = (
        f"<p><b>✗ Your answers cannot be saved:</b> {said}. Fix this first, then run this cell again.</p>"
    )
    session = make_review(bank, db, clock)
    assert session.question is None and session.prompt.value == unwritable
    practice = CramWidget(bank, ("01",), store=db, clock=clock, tz=timezone.utc)
    assert practice.question is None and practice.prompt.value == unwritable
    widget = make_quiz(bank, db, clock)
    assert widget.question is not None and widget.notice.value == unwritable
    monkeypatch.undo()
    assert db.read_bytes() == before
