"""The class review widget, driven through its Python API with a real class-session file and a fixed clock."""

from __future__ import annotations

import html
import random
from pathlib import Path

import pytest
from fixed_clock import T0, Clock

from course.bank import load_bank
from course.classroom import ClassReviewLog, class_reviews_path, section_link
from course.classroom._class_review import Tally
from course.progress import default_path
from course.widgets import ClassReviewWidget, class_review

BANK = load_bank()
CHOICE, NUMERIC = BANK["01-scale-dot-vs-cosine"], BANK["01-weighted-average-shape"]
RECALL = BANK["02-score-formula"]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "class-sessions.sqlite3"


def widget(path: Path, clock: Clock | None = None) -> ClassReviewWidget:
    questions, lessons = [CHOICE, NUMERIC, RECALL], ["01", "02"]
    return ClassReviewWidget(
        questions, lessons, 24, sessions=path, clock=clock or Clock(), rng=random.Random(0)
    )


def test_showing_it_writes_nothing_and_says_how_to_start(path):
    shown = widget(path)
    assert shown.text() == (
        "Class review: 3 questions from lessons 01, 02, room of 24. Run this cell in JupyterLab to start; "
        "Space reveals, the arrows move."
    )
    assert shown._repr_mimebundle_()["text/plain"] == shown.text() == repr(shown)
    assert shown.header.value == (f"<b>Class review · question 1 / 3</b> · lesson 01, {CHOICE.section}")
    assert shown.options.children == () and shown.answer.value == ""
    assert shown.saved.value == "<i>not counted yet: type the count, then Enter</i>"
    assert not path.exists()


def test_space_reveals_the_options_then_the_answer(path):
    shown = widget(path)
    shown.reveal()
    assert shown.stage == 1
    labels = [view.value.split("</b>")[0] for view in shown.options.children]
    assert labels == [f"<b>{letter}." for letter in "ABCD"[: len(CHOICE.options)]]
    assert shown.answer.value == "" and not any("✓" in view.value for view in shown.options.children)
    shown.reveal()
    presentation = shown.presentations[0]
    right = presentation.right_position
    assert shown.answer.value.startswith(f"<p><b>Answer: {presentation.right_label}.</b></p>")
    assert [view.value.endswith(" ✓") for view in shown.options.children] == [
        position == right for position in range(len(CHOICE.options))
    ]
    assert "course-class-right" in shown.options.children[right]._dom_classes
    assert shown.reveal_button.disabled
    assert shown.status.value == "Question 1 of 3: showing the answer."


def test_a_numeric_or_recall_question_reveals_its_answer_at_once(path):
    shown = widget(path)
    shown.next()
    shown.reveal()
    assert (shown.index, shown.stage) == (1, 2)
    assert shown.answer.value.startswith(f"<p><b>Answer: {NUMERIC.answer}")
    shown.next()
    shown.reveal()
    assert shown.answer.value.startswith("<p><b>Answer: ")
    assert shown.next_button.disabled  # the last question
    shown.next()
    assert shown.index == 2


def test_the_arrows_move_and_each_question_starts_hidden(path):
    shown = widget(path)
    assert shown.previous_button.disabled
    shown.previous()
    assert shown.index == 0
    shown.reveal()
    shown.next()
    assert (shown.index, shown.stage, shown.options.children) == (1, 0, ())
    shown.previous()
    assert (shown.index, shown.stage) == (0, 0)


def test_counts_are_saved_at_once_apart_from_any_schedule_and_a_recount_replaces(path):
    clock = Clock()
    shown = widget(path, clock)
    shown.count.value = "18"
    assert shown.saved.value == "saved: 18 of 24 right"
    assert shown.status.value == "Saved: 18 of 24 right."
    clock.advance(minutes=2)
    shown.next()
    assert shown.count.value == "" and shown.saved.value.startswith("<i>not counted yet")
    shown.count.value = "3"
    shown.previous()
    assert shown.count.value == "18"
    clock.advance(minutes=1)
    shown.count.value = "20"
    with ClassReviewLog.open(path, create=False) as log:
        (session,) = log.sessions()
    assert (session.room, session.lessons, session.started) == (24, ("01", "02"), T0)
    assert session.tallies == (
        Tally(CHOICE.id, 20, 24, clock.now),
        Tally(NUMERIC.id, 3, 24, T0.replace(minute=2)),
    )


def test_finish_ranks_the_questions_and_links_the_sections_to_revisit(path):
    shown = widget(path)
    shown.finish()
    assert shown.summary.value == "<p>No question was counted, so there is nothing to rank.</p>"
    shown.count.value = "20"
    shown.next()
    shown.count.value = "6"
    shown.finish()
    summary = shown.summary.value
    assert summary.index("<td>75%</td><td>6 of 24</td>") < summary.index("<td>17%</td><td>20 of 24</td>")
    link = section_link("01", NUMERIC.section)
    assert f'<h3>Revisit</h3><ul><li><a href="{link}">lesson 01, {NUMERIC.section}</a></li></ul>' in summary


def test_a_file_that_cannot_be_used_is_reported_and_left_as_it_is(path):
    path.write_bytes(b"not a database" * 64)
    shown = widget(path)
    shown.count.value = "5"
    assert shown.saved.value.startswith("<b>Not saved:</b> ")
    assert "is not a class-session file" in shown.saved.value
    assert path.read_bytes() == b"not a database" * 64


def test_class_review_takes_lessons_and_a_room(path):
    shown = class_review("1", 2, room=30, sessions=path)
    assert shown.lessons == ("01", "02")
    assert [q.id for q in shown.questions] == [q.id for q in (*BANK.questions("01"), *BANK.questions("02"))]
    with pytest.raises(ValueError, match=r'^name at least one lesson: class_review\("01", room=24\)$'):
        class_review(room=3)
    with pytest.raises(ValueError, match=r"^room must be at least 1 person, got 0$"):
        class_review("01", room=0, sessions=path)


def test_a_code_card_shows_its_worked_solution_and_counts_the_hands_whose_code_passed(path: Path) -> None:
    """Issue 24, item 5: without a class database there is no learner's verdict to read, so the room's count
    is how many passed (a show of hands), as for any question; named mistakes are the live review's."""
    code = BANK["05-code-causal-mask"]
    shown = ClassReviewWidget([code], ["05"], 20, sessions=path, clock=Clock(), rng=random.Random(0))
    shown.reveal()  # no options: straight to the worked solution
    assert shown.stage == 2 and shown.options.children == ()
    assert shown.answer.value.startswith(
        "<p><b>Answer:</b></p><pre><code>def causal_mask(t, s):\n    i = np.arange(t)[:, None]"
    )
    shown.record(12)
    assert shown.saved.value == "saved: 12 of 20 right"
    with ClassReviewLog.open(path, create=False) as log:
        (session,) = log.sessions()
    assert [(t.question_id, t.right, t.room) for t in session.tallies] == [(code.id, 12, 20)]
    shown.finish()
    assert "<td>40%</td><td>12 of 20</td>" in shown.summary.value


def test_a_zero_is_a_count_and_what_is_not_one_is_refused_in_words(path):
    shown = widget(path)
    shown.count.value = "0"  # the most-missed question: nobody got it
    assert shown.saved.value == "saved: 0 of 24 right"
    for typed, said in (
        ("30", "30 is more than the room of 24: type how many got it right"),
        ("2.5", "'2.5' is not a count: type how many got it right, a whole number from 0 to 24"),
        ("-1", "'-1' is not a count: type how many got it right, a whole number from 0 to 24"),
        ("١٢", "'١٢' is not a count: type how many got it right, a whole number from 0 to 24"),
    ):
        shown.count.value = typed
        assert shown.saved.value == f"<b>Not saved:</b> {html.escape(said)}", typed
        assert shown.status.value == f"Not saved: {said}."
    assert shown.counts == {shown.questions[0].id: 0}  # the refused ones changed nothing
    with ClassReviewLog.open(path, create=False) as log:
        assert [t.right for t in log.sessions()[0].tallies] == [0]


@pytest.mark.parametrize(
    ("environment", "where"),
    [
        (
            {"COURSE_SESSIONS": "{tmp}/chosen.sqlite3", "COURSE_DB": "{tmp}/db/progress.sqlite3"},
            "chosen.sqlite3",
        ),
        ({"COURSE_DB": "{tmp}/db/progress.sqlite3"}, "db/class-sessions.sqlite3"),
    ],
)
def test_the_sessions_file_is_beside_the_progress_file_the_readme_names(
    tmp_path, monkeypatch, environment, where
):
    for name in ("COURSE_SESSIONS", "COURSE_DB"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    assert class_reviews_path() == tmp_path / where


def test_a_class_database_url_keeps_the_sessions_file_in_the_per_user_folder(monkeypatch):
    monkeypatch.delenv("COURSE_SESSIONS", raising=False)
    monkeypatch.setenv("COURSE_DB", "postgresql://ada@db.example.org/course")
    assert class_reviews_path() == default_path().parent / "class-sessions.sqlite3"
