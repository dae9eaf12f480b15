"""The class report (`course.classroom`) on hand-written answers of three learners: exact counts, rates,
due load, pooled retention, sections to revisit, and the text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from course.bank import load_bank
from course.classroom import ClassReport, PredictionRow, class_report, class_report_lines, prediction_rows
from course.classroom._report import LessonRow, QuestionRow
from scheduler import Answer, PredictionEvent, Rating, State

UTC = timezone.utc
AT = datetime(2026, 3, 2, 12, tzinfo=UTC)  # a Monday noon
DAY = timedelta(days=1)
A, G = Rating.AGAIN, Rating.GOOD
NEW, REVIEW = State.NEW, State.REVIEW
DOT, MIX, KEY = "01-scale-dot-vs-cosine", "01-mixture-in-range", "02-key-role"


def answer(item: str, days_ago: float, rating: Rating, state: State = NEW) -> Answer:
    return Answer(item, AT - timedelta(days=days_ago), rating, state)


ANSWERS = {
    "ana": [
        answer(DOT, 5, A),
        answer(DOT, 4.99, G),  # the same day: only the first answer of the day counts
        answer(MIX, 5, G),
        answer(DOT, 1, G, REVIEW),
    ],
    "ben": [answer(DOT, 5, A), answer(MIX, 5, G), answer(MIX, 2, A, REVIEW), answer("01-retired-id", 2, A)],
    "cy": [answer(KEY, 3, G), answer(KEY, 1, G, REVIEW)],
    "dee": [],  # enrolled, never answered
}
DUE = {
    "ana": {DOT: AT - DAY, MIX: AT + 2 * DAY},  # overdue counts today
    "ben": {DOT: AT + 3 * timedelta(hours=1), MIX: AT + 10 * DAY, "01-retired-id": AT},
    "cy": {KEY: AT + 6 * DAY},
}


@pytest.fixture(scope="module")
def report() -> ClassReport:
    return class_report(ANSWERS, DUE, load_bank(), AT, UTC)


def test_each_question_counts_learners_answers_and_misses_most_missed_first(report: ClassReport) -> None:
    assert report.learners == 3
    assert report.questions == (
        QuestionRow(DOT, "01", "2. The dot product as a compatibility score", 2, 3, 2),
        QuestionRow(MIX, "01", "3. A weighted average of vectors", 2, 3, 1),
        QuestionRow(KEY, "02", "1. Queries, keys and values", 1, 2, 0),
    )
    assert [round(row.miss_rate, 3) for row in report.questions] == [0.667, 0.333, 0.0]


def test_lessons_pool_their_questions(report: ClassReport) -> None:
    assert report.lessons == (LessonRow("01", 2, 6, 3), LessonRow("02", 1, 2, 0))


def test_due_load_retention_and_what_to_revisit(report: ClassReport) -> None:
    assert report.due == (2, 0, 1, 0, 0, 0, 1)  # retired and beyond-a-week items left out
    assert report.retention == pytest.approx(2 / 3)  # ana's and cy's reviews remembered, ben's forgotten
    assert report.revisit == (("01", "2. The dot product as a compatibility score"),)


def test_the_report_as_text() -> None:
    report = class_report(ANSWERS, DUE, load_bank(), AT, UTC)
    assert class_report_lines(report, limit=2) == [
        "Class report: 3 learners; true retention 66.7%.",
        "Due in the next 7 days (today first, overdue included): 2 0 1 0 0 0 1.",
        "Lessons, most missed first:",
        "   50% missed  lesson 01, Similarity and softmax (6 answers by 2 learners)",
        "    0% missed  lesson 02, Scaled dot-product attention (2 answers by 1 learner)",
        "Questions, most missed first (2 of 3):",
        f"   67% missed  {DOT}  (3 answers by 2 learners)",
        f"   33% missed  {MIX}  (3 answers by 2 learners)",
        "Revisit (missed in 50% or more of the answers):",
        "  lesson 01, section 2. The dot product as a compatibility score: "
        "01-similarity-and-softmax.ipynb#2.-The-dot-product-as-a-compatibility-score",
    ]


def test_an_empty_class() -> None:
    report = class_report({"dee": []}, {}, load_bank(), AT, UTC)
    assert (report.learners, report.questions, report.retention, report.due) == (0, (), None, (0,) * 7)
    assert class_report_lines(report) == ["No learner has answered a question yet."]


def test_code_cards_show_their_pass_rate_and_say_their_mistakes_are_not_kept() -> None:
    code, softmax = "05-code-causal-mask", "01-code-stable-softmax"
    assert load_bank()[softmax].kind == load_bank()[code].kind == "code"
    answers = {
        "ana": [answer(code, 3, A), answer(code, 1, G, REVIEW), answer(softmax, 2, G), answer(DOT, 2, A)],
        "ben": [answer(code, 3, A), answer(softmax, 2, G)],
        "cy": [answer(code, 2, G)],
    }
    report = class_report(answers, {}, load_bank(), AT, UTC)
    assert report.code == (
        QuestionRow(code, "05", "9. Pitfall 3: is_causal with fewer queries than keys", 3, 4, 2),
        QuestionRow(softmax, "01", load_bank()[softmax].section, 2, 2, 0),
    )
    assert [row.pass_rate for row in report.code] == [0.5, 1.0]
    assert [row.question_id for row in report.questions] == [DOT, code, softmax]  # code cards among them
    lines = class_report_lines(report, limit=1)
    at = lines.index("Code cards, fewest passed first (1 of 2):")
    assert lines[at - 2 : at + 3] == [
        "Questions, most missed first (1 of 3):",
        f"  100% missed  {DOT}  (1 answer by 1 learner)",
        "Code cards, fewest passed first (1 of 2):",
        f"   50% passed  {code}  (4 answers by 3 learners)",
        "  (A review keeps whether the code passed, not which mistake it made: a live review shows those.)",
    ]
    without = class_report(ANSWERS, DUE, load_bank(), AT, UTC)
    assert without.code == ()  # no code card answered: no such section
    assert not any(line.startswith("Code cards") for line in class_report_lines(without))


def test_predictions_most_often_wrong_first_each_learners_first_commit(tmp_path: Path) -> None:
    """Issue 37: a learner's first commit of a prediction counts, a skip does not, nor a prediction the bank
    no longer has; most often wrong first, ties by id."""
    folder = tmp_path / "bank"
    folder.mkdir()
    table = (
        '\n[[prediction]]\nid = "{id}"\nkind = "numeric"\ncard = "02-r"\nprompt = "P"\nanswer = 4\n'
        'tolerance = 0\nexplanation = "E"\nsection = "S"\n'
    )
    (folder / "02-x.toml").write_text(
        'lesson = "02"\n\n[[question]]\nid = "02-r"\nkind = "recall"\nprompt = "P"\nanswer = "A"\n'
        'explanation = "E"\nsection = "S"\n' + table.format(id="02-p1") + table.format(id="02-p2")
    )
    bank = load_bank(folder)
    made = {
        "ana": [PredictionEvent("02-p1", AT, "5", False), PredictionEvent("02-p1", AT + DAY, "4", True)],
        "ben": [PredictionEvent("02-p1", AT, "4", True), PredictionEvent("02-p2", AT, "", None)],
        "cy": [PredictionEvent("02-p2", AT, "3", False), PredictionEvent("02-gone", AT, "1", False)],
    }
    report = class_report({}, {}, bank, AT, UTC, predictions=made)
    assert report.predictions == (PredictionRow("02-p2", "02", 1, 1), PredictionRow("02-p1", "02", 2, 1))
    assert prediction_rows({}, bank) == ()
    assert class_report_lines(
        class_report({"ana": [answer("02-r", 1, G)]}, {}, bank, AT, UTC, predictions=made)
    )[-4:-1] == [
        "Predictions, most often wrong first (2 of 2):",
        "  100% wrong   02-p2  (1 learner)",
        "   50% wrong   02-p1  (2 learners)",
    ]
