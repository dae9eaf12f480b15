"""The practice (cram) widget, driven through its Python API with a real store and a fixed clock."""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from fixed_clock import T0, Clock
from ipywidgets import Button

import course
from course.bank import Bank, load_bank
from course.widgets import PRACTICE_NOTE, CramWidget, cram
from scheduler import Rating, Store

BANK = """lesson = "01"

[[question]]
id = "01-pick"
kind = "choice"
prompt = '''Which one?'''
explanation = '''Because.'''
section = "2. Softmax"
options = [
  { text = "This one", why = '''No.''' },
  { text = "That one", correct = true, why = '''Yes.''' },
]

[[question]]
id = "01-number"
kind = "numeric"
prompt = '''What is $d_k$ for $d_{model} = 768$ and 12 heads?'''
answer = 64
tolerance = 0
explanation = '''$768 / 12 = 64$.'''
section = "4. Multi-head"

[[question]]
id = "01-recall"
kind = "recall"
prompt = '''Why divide by $\\sqrt{d_k}$?'''
answer = '''To keep the scores' variance near 1.'''
explanation = '''Otherwise the softmax saturates.'''
section = "3. Scaling"
"""

OTHER = """lesson = "02"

[[question]]
id = "02-other"
kind = "recall"
prompt = '''Another lesson.'''
answer = '''Right.'''
explanation = '''Nothing.'''
section = "1. Start"
"""

TEXT_01 = (
    "Practice for lesson 01: 3 questions. "
    "Run this cell in JupyterLab to start; practice answers do not change your review schedule."
)


@pytest.fixture
def bank(tmp_path: Path) -> Bank:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "01-sample.toml").write_text(BANK, encoding="utf-8")
    (directory / "02-other.toml").write_text(OTHER, encoding="utf-8")
    return load_bank(directory)


RIGHT, WRONG = "That one", "This one"  # the options of 01-pick
SEED = 1  # the first showing of 01-pick: A "That one", B "This one" (the bank's order reversed)


def make_cram(bank: Bank, db: Path | Store, clock: Clock, *lessons: str) -> CramWidget:
    return CramWidget(bank, lessons, store=db, clock=clock, tz=timezone.utc, rng=random.Random(SEED))


def option(widget: CramWidget, text: str) -> Button:
    """The button of the option `text`, wherever this showing put it (its tooltip: "Answer B: <text>")."""
    buttons = [
        button for button in widget.option_buttons if button.tooltip == f"{button.description}: {text}"
    ]
    assert len(buttons) == 1, [button.tooltip for button in widget.option_buttons]
    return buttons[0]


def crams(db: Path) -> list[tuple[str, Rating, datetime, int | None]]:
    with Store.open(db, create=False) as store:
        return [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.cram_reviews()]


def schedule(db: Path) -> tuple[Any, ...]:
    """Everything that makes up the schedule: the review log, the cards and the enrolled lessons."""
    with Store.open(db, create=False) as store:
        return store.reviews(), store.cards(), store.enrolled()


def answer(widget: CramWidget, clock: Clock, *, right: bool, rating: Rating = Rating.GOOD) -> str:
    """Answer the question shown, 5 s after it was shown; return its id."""
    question = widget.question
    assert question is not None
    clock.advance(seconds=5)
    if question.kind == "choice":
        option(widget, RIGHT if right else WRONG).click()
    elif question.kind == "numeric":
        assert widget.number_input is not None and widget.check_button is not None
        widget.number_input.value = "64" if right else "60"
        widget.check_button.click()
    else:
        assert widget.show_button is not None
        widget.show_button.click()
        widget.rating_buttons[rating if right else Rating.AGAIN].click()
        return question.id
    if right:
        assert widget.rating_choice is not None
        widget.rating_choice.value = rating
    clock.advance(seconds=30)  # reading the explanation does not count
    widget.next_button.click()
    return question.id


# -- display ---------------------------------------------------------------------------------------------
def test_displaying_records_nothing_and_creates_no_file(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock, "01")
    bundle = widget._repr_mimebundle_(include=None, exclude=None)
    assert bundle == {
        "text/plain": TEXT_01,
        "application/vnd.jupyter.widget-view+json": {
            "version_major": 2,
            "version_minor": 0,
            "model_id": widget.root.model_id,
        },
    }
    assert repr(widget) == TEXT_01
    assert widget.title.value == (
        "<h3>Practice of lesson 01</h3>"
        "<p><i>Practice: answers are logged apart and do not change your review schedule.</i></p>"
    )
    assert PRACTICE_NOTE == "Practice: answers are logged apart and do not change your review schedule."
    assert widget.progress.value == "<b>Question 1 / 3</b>. From lesson 01, Similarity and softmax."
    assert widget.question is not None and widget.question.id == "01-pick"
    assert not db.exists()
    assert sorted(p.name for p in db.parent.iterdir()) == ["bank"]


def test_displaying_with_an_open_store_records_nothing(bank: Bank, db: Path, clock: Clock) -> None:
    with Store.open(db) as store:
        make_cram(bank, store, clock)._repr_mimebundle_()
        assert store.cram_reviews() == []
        assert store.reviews() == []


def test_text_of_the_shipped_course(db: Path, clock: Clock) -> None:
    shipped = load_bank()
    n = len(shipped.questions("02")) + len(shipped.questions("03"))
    widget = cram("03", "02", "03", store=db, clock=clock)
    assert widget._repr_mimebundle_()["text/plain"] == (
        f"Practice for lessons 02, 03: {n} questions. "
        "Run this cell in JupyterLab to start; practice answers do not change your review schedule."
    )
    everything = cram(store=db, clock=clock)
    assert everything.lessons == shipped.lessons()
    assert len(everything.items) == len(shipped)
    assert course.cram is cram
    assert "cram" in course.__all__
    assert not db.exists()


def test_every_lesson_in_bank_order_when_none_is_named(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock)
    assert widget.text() == (
        "Practice for lessons 01, 02: 4 questions. "
        "Run this cell in JupyterLab to start; practice answers do not change your review schedule."
    )
    assert widget.title.value.startswith("<h3>Practice of lessons 01, 02</h3>")
    served = [answer(widget, clock, right=True) for _ in range(4)]
    assert served == ["01-pick", "01-number", "01-recall", "02-other"]
    assert widget.question is None


def test_lessons_in_course_order_and_short_ids(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock, "2", "01", "02")
    assert widget.lessons == ("01", "02")
    assert [item.id for item in widget.items] == ["01-pick", "01-number", "01-recall", "02-other"]


@pytest.mark.parametrize("lesson", ["review", "1x", "", "99", 99])
def test_unknown_lesson(bank: Bank, db: Path, clock: Clock, lesson: str) -> None:
    with pytest.raises(ValueError) as raised:
        make_cram(bank, db, clock, "01", lesson)
    assert str(raised.value) == f"unknown lesson {lesson!r} (lessons with questions: 01, 02)"
    assert not db.exists()


@pytest.mark.parametrize("lesson", ["03", "3", 3])
def test_lesson_without_questions(bank: Bank, db: Path, clock: Clock, lesson: str | int) -> None:
    with pytest.raises(ValueError) as raised:
        make_cram(bank, db, clock, "01", lesson)
    assert str(raised.value) == "lesson 03 has no questions yet (lessons with questions: 01, 02)"


def test_unknown_lesson_of_the_shipped_course(db: Path, clock: Clock) -> None:
    known = ", ".join(load_bank().lessons())
    with pytest.raises(ValueError) as raised:
        cram("02", "99", store=db, clock=clock)
    assert str(raised.value) == f"unknown lesson '99' (lessons with questions: {known})"


def test_lessons_are_strings_or_whole_numbers(bank: Bank, db: Path, clock: Clock) -> None:
    assert CramWidget(bank, [2, "1"], store=db, clock=clock, tz=timezone.utc).lessons == ("01", "02")
    with pytest.raises(TypeError) as raised:
        CramWidget(bank, [1.0], store=db, clock=clock, tz=timezone.utc)  # type: ignore[list-item]
    assert str(raised.value) == "a lesson is given as a string or a whole number, e.g. '02' or 2; got 1.0"


# -- answering -------------------------------------------------------------------------------------------
def test_options_are_shown_in_the_order_drawn_and_named_by_their_letter(
    bank: Bank, db: Path, clock: Clock
) -> None:
    widget = make_cram(bank, db, clock, "01")
    assert [button.tooltip for button in widget.option_buttons] == [
        "Answer A: That one",
        "Answer B: This one",
    ]
    widget.option_buttons[1].click()
    assert widget.feedback.value.startswith(
        "<b>✗ Not quite.</b> The answer is A.<ul>"
        "<li>✓ <b>A.</b> That one <i>(the right answer)</i>: Yes.</li>"
        "<li>✗ <b>B.</b> This one <i>(your answer)</i>: No.</li></ul>"
    )
    assert crams(db) == [("01-pick", Rating.AGAIN, T0, 0)]


def test_rating_buttons_show_no_intervals(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock, "01")
    option(widget, RIGHT).click()
    assert widget.rating_choice is not None
    assert [label for label, _ in widget.rating_choice.options] == ["Hard", "Good", "Easy"]
    hint = widget.rating_area.children[0].value
    assert hint.startswith("<p>Logged as <b>Good</b> when you press Next.")
    assert "Practice answers do not change your review schedule." in hint
    widget.next_button.click()
    assert widget.number_input is not None
    widget.number_input.value = "64"
    widget.check_button.click()  # type: ignore[union-attr]
    widget.next_button.click()
    assert widget.show_button is not None
    widget.show_button.click()
    labels = {rating: button.description for rating, button in widget.rating_buttons.items()}
    assert labels == {Rating.AGAIN: "Again", Rating.HARD: "Hard", Rating.GOOD: "Good", Rating.EASY: "Easy"}
    assert widget.rating_buttons[Rating.HARD].tooltip == "Hard: you remembered it, with effort"
    hint = widget.rating_area.children[0].value
    assert "it comes back before this practice ends" in hint
    assert "<b>Hard</b>: you remembered it, with effort (it still counts as remembered)" in hint
    assert "Each button shows when the question comes back" not in hint


def test_answers_are_logged_apart_and_again_comes_back(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock, "01")
    served = [answer(widget, clock, right=False)]  # 01-pick: Again, logged at once
    assert crams(db) == [("01-pick", Rating.AGAIN, T0 + timedelta(seconds=5), 5000)]
    assert widget.progress.value == "<b>Question 2 / 4</b>. From lesson 01, Similarity and softmax."
    assert widget.notice.value == (
        "<p><i>Previous question: Logged as practice: Again. "
        "It comes back before the end of this practice.</i></p>"
    )
    served.append(answer(widget, clock, right=True, rating=Rating.HARD))
    assert widget.notice.value == "<p><i>Previous question: Logged as practice: Hard.</i></p>"
    served.append(answer(widget, clock, right=True, rating=Rating.EASY))
    assert widget.progress.value == (
        "<b>Question 4 / 4</b>. From lesson 01, Similarity and softmax. "
        "<i>Again: you missed it earlier in this practice.</i>"
    )
    option(widget, RIGHT).click()
    assert widget.next_button.description == "Finish"
    assert widget.notice.value == ""  # one notice, not two: the hint says how it is logged, naming Finish
    hint = widget.rating_area.children[0].value
    assert hint.startswith("<p>Logged as <b>Good</b> when you press Finish. <b>Hard</b>: it took effort")
    assert widget.status.value == "<p>✓ Right. Not logged yet: press Finish to log it as practice.</p>"
    assert widget.rating_choice is not None
    widget.rating_choice.value = Rating.EASY
    assert widget.rating_area.children[0].value.startswith("<p>Logged as <b>Easy</b> when you press Finish.")
    assert widget.status.value == "<p>Logged as Easy when you press Finish.</p>"
    widget.rating_choice.value = Rating.GOOD
    widget.next_button.click()
    assert widget.notice.value == "<p><i>Last question: Logged as practice: Good.</i></p>"
    served.append("01-pick")
    assert served == ["01-pick", "01-number", "01-recall", "01-pick"]
    # each answer 5 s after its question is shown; 30 s more reading the explanation before Next
    assert crams(db) == [
        ("01-pick", Rating.AGAIN, T0 + timedelta(seconds=5), 5000),
        ("01-number", Rating.HARD, T0 + timedelta(seconds=40), 5000),
        ("01-recall", Rating.EASY, T0 + timedelta(seconds=75), 5000),
        ("01-pick", Rating.GOOD, T0 + timedelta(seconds=75), 0),
    ]
    assert widget.question is None
    assert widget.progress.value == "<b>Practice done: 4 answers</b>"
    assert widget.prompt.value == (
        "<p><b>2 of 3 right the first time.</b> 4 answers were logged as practice; "
        "your review schedule is unchanged.</p>"
    )
    assert widget.answer_area.children == (widget.restart_button,)
    assert schedule(db) == ([], {}, {})  # created by the first answer; nothing enrolled, nothing scheduled


def test_wrong_answer_is_next_not_finish_on_the_last_question(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock, "02")
    assert widget.show_button is not None
    widget.show_button.click()
    widget.rating_buttons[Rating.AGAIN].click()
    assert widget.question is not None and widget.question.id == "02-other"
    assert widget.progress.value == (
        "<b>Question 2 / 2</b>. From lesson 02, Scaled dot-product attention. "
        "<i>Again: you missed it earlier in this practice.</i>"
    )
    assert answer(widget, clock, right=True) == "02-other"
    assert widget.prompt.value == (
        "<p><b>0 of 1 right the first time.</b> 2 answers were logged as practice; "
        "your review schedule is unchanged.</p>"
    )


def test_the_schedule_is_left_exactly_as_it_was(bank: Bank, db: Path, clock: Clock) -> None:
    with Store.open(db) as store:
        store.enroll("01", T0 - timedelta(days=3))
        store.record("01-pick", Rating.GOOD, T0 - timedelta(days=3), 4000)
        store.record("01-number", Rating.AGAIN, T0 - timedelta(days=2), None)
    before = schedule(db)
    widget = make_cram(bank, db, clock)
    served: list[str] = []
    while widget.question is not None and len(served) < 10:
        forget = widget.question.id == "01-pick" and "01-pick" not in served
        served.append(answer(widget, clock, right=not forget))
    assert served == ["01-pick", "01-number", "01-recall", "02-other", "01-pick"]
    assert schedule(db) == before
    assert [(item_id, rating) for item_id, rating, _, _ in crams(db)] == [
        ("01-pick", Rating.AGAIN),
        ("01-number", Rating.GOOD),
        ("01-recall", Rating.GOOD),
        ("02-other", Rating.GOOD),
        ("01-pick", Rating.GOOD),
    ]
    assert widget.source.held is None  # the file opened by the first answer is closed at the end


def test_practise_again_starts_over(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_cram(bank, db, clock, "02")
    answer(widget, clock, right=True)
    assert widget.question is None
    widget.restart_button.click()
    assert widget.question is not None and widget.question.id == "02-other"
    assert widget.progress.value == "<b>Question 1 / 1</b>. From lesson 02, Scaled dot-product attention."
    assert widget.results == []
    assert widget.notice.value == ""
    answer(widget, clock, right=True, rating=Rating.EASY)
    assert [(item_id, rating) for item_id, rating, _, _ in crams(db)] == [
        ("02-other", Rating.GOOD),
        ("02-other", Rating.EASY),
    ]


# -- errors ----------------------------------------------------------------------------------------------
def test_corrupt_database_is_said_before_the_first_question_and_left_untouched(
    bank: Bank, db: Path, clock: Clock
) -> None:
    garbage = b"this is not a database\n" * 200
    db.write_bytes(garbage)
    widget = make_cram(bank, db, clock, "01")
    assert widget.question is None and widget.option_buttons == []  # nothing is asked that cannot be logged
    assert widget.prompt.value == (
        f"<p><b>✗ Your answers cannot be saved:</b> {db} is not a readable progress database (not an SQLite "
        "database); it was left untouched. Move it aside to start fresh. Fix this first, then run this cell "
        "again.</p>"
    )
    assert widget.answer_area.children == (widget.restart_button,)
    widget.restart_button.click()  # tries again: still not
    assert widget.question is None and widget.prompt.value.startswith("<p><b>✗ Your answers cannot be saved:")
    assert widget.session is None
    assert db.read_bytes() == garbage
    assert sorted(p.name for p in db.parent.iterdir()) == ["bank", "progress.sqlite3"]
    db.unlink()  # moved aside: the practice starts
    widget.restart_button.click()
    assert widget.question is not None and widget.question.id == "01-pick"


def test_locked_database_shows_a_message_and_the_answer_can_be_retried(
    bank: Bank, db: Path, clock: Clock
) -> None:
    with Store.open(db, busy_timeout_ms=50) as store:
        widget = make_cram(bank, store, clock, "01")
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
        widget.next_button.click()  # logs the Again now, then moves on
        assert widget.question is not None and widget.question.id == "01-number"
        assert widget.progress.value == "<b>Question 2 / 4</b>. From lesson 01, Similarity and softmax."
        assert [(r.item_id, r.rating) for r in store.cram_reviews()] == [("01-pick", Rating.AGAIN)]
        assert store.reviews() == []


def test_shown_and_not_answered_creates_nothing_in_the_default_place(
    bank: Bank, tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COURSE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    widget = CramWidget(bank, ("01",), clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    widget._repr_mimebundle_()
    widget.start()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank"]
    answer(widget, clock, right=True)
    assert [row[0] for row in crams(tmp_path / "data" / "attention-course" / "progress.sqlite3")] == [
        "01-pick"
    ]


def test_a_missing_folder_is_named_before_the_first_question(
    bank: Bank, tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "mistyped" / "progress.sqlite3"
    monkeypatch.setenv("COURSE_DB", str(target))
    widget = CramWidget(bank, ("01",), clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    assert widget.question is None
    assert widget.prompt.value == (
        f"<p><b>✗ Your answers cannot be saved:</b> COURSE_DB names {target}, but its folder "
        f"{tmp_path / 'mistyped'} does not exist: create the folder, or correct COURSE_DB. Fix this first, "
        "then run this cell again.</p>"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank"]
