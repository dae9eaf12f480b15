"""The instructor's view of a class: per question and lesson, how often it was missed and by how many
learners; the class's due load for the next 7 days; true retention; the sections to revisit.

`class_report` works on plain records (each learner's answers, in log order, and due times, as any
`scheduler.Storage` gives them), so the same report serves a classroom server and a set of progress files.
A *miss* is an Again answer; a question's miss rate is its misses over its answers, counting each learner's
first answer of the question on each of their days once (so a question failed and retried the same day
counts once). True retention pools every learner's counted answers: those first answers given to a question in
review. Questions retired from the bank are left out.

Code cards are among the questions, rated as the other auto-rated kinds (passed: Good, Hard or Easy; not
passed: Again), and listed again apart with their pass rate (`ClassReport.code`). A review keeps whether the
code passed, not which mistake it made: the named mistakes a class makes show in a live review
(`course.classroom.code_tally_text`), not here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from course.bank import Bank, Kind
from course.classroom._class_review import REVISIT_AT, section_link
from course.lessons import lesson_title
from course.progress import plural
from scheduler import Answer, PredictionEvent, Rating, State, day_numbers, due_counts

__all__ = [
    "CODE_NOTE",
    "ClassReport",
    "LessonRow",
    "PredictionRow",
    "QuestionRow",
    "class_report",
    "class_report_lines",
    "prediction_rows",
]

DUE_DAYS = 7
CODE_NOTE = "A review keeps whether the code passed, not which mistake it made: a live review shows those."
"""What the report says of code cards' mistakes."""


@dataclass(frozen=True)
class QuestionRow:
    """One question: ``learners`` who answered it, their ``answers`` (first of each day) and ``misses``."""

    question_id: str
    lesson: str
    section: str
    learners: int
    answers: int
    misses: int

    @property
    def miss_rate(self) -> float:
        return self.misses / self.answers

    @property
    def pass_rate(self) -> float:
        """The share of answers not missed: for a code card, how often the code passed."""
        return 1.0 - self.miss_rate


@dataclass(frozen=True)
class LessonRow:
    """One lesson's questions together."""

    lesson: str
    learners: int
    answers: int
    misses: int

    @property
    def miss_rate(self) -> float:
        return self.misses / self.answers


@dataclass(frozen=True)
class PredictionRow:
    """One prediction of a lesson's Predict prompt: how many ``learners`` committed one (each learner's first
    commit: later ones come after the answer was shown; skips left out) and how many were ``wrong``."""

    prediction_id: str
    lesson: str
    learners: int
    wrong: int

    @property
    def wrong_rate(self) -> float:
        return self.wrong / self.learners


def prediction_rows(
    predictions: Mapping[str, Sequence[PredictionEvent]], bank: Bank
) -> tuple[PredictionRow, ...]:
    """The bank's predictions the learners committed (learner -> predictions in the order made), most often
    wrong first (ties by id); a prediction no longer in the bank is left out."""
    counts: dict[str, list[int]] = {}  # prediction -> [learners, wrong]
    known = {question.id: question for question in bank.predictions()}
    for rows in predictions.values():
        first: dict[str, bool] = {}
        for row in rows:
            if row.item_id in known and row.right is not None:
                first.setdefault(row.item_id, row.right)
        for item_id, right in first.items():
            tally = counts.setdefault(item_id, [0, 0])
            tally[0] += 1
            tally[1] += not right
    return tuple(
        sorted(
            (PredictionRow(pid, known[pid].lesson, n, wrong) for pid, (n, wrong) in counts.items()),
            key=lambda row: (-row.wrong_rate, row.prediction_id),
        )
    )


@dataclass(frozen=True)
class ClassReport:
    """What `class_report` found at ``at``: questions and lessons most missed first (ties by id), the due
    load per day from today (day 0 includes what is overdue), the class's true retention (every learner's
    counted answers together; None before any review), the (lesson, section) pairs to revisit, and the code
    cards among the questions, fewest passed first (whether the code passed; reviews keep no mistake), and the
    predictions of the lessons' Predict prompts, most often wrong first (`prediction_rows`)."""

    at: datetime
    learners: int  # learners with at least one answer to a question of the bank
    questions: tuple[QuestionRow, ...]
    lessons: tuple[LessonRow, ...]
    due: tuple[int, ...]
    retention: float | None
    revisit: tuple[tuple[str, str], ...]
    code: tuple[QuestionRow, ...] = ()
    predictions: tuple[PredictionRow, ...] = ()


def class_report(
    answers: Mapping[str, Sequence[Answer]],
    due_times: Mapping[str, Mapping[str, datetime]],
    bank: Bank,
    at: datetime,
    tz: tzinfo,
    rollover_hour: int = 4,
    predictions: Mapping[str, Sequence[PredictionEvent]] | None = None,
) -> ClassReport:
    """The report for the learners in ``answers`` (learner -> answers in log order) and ``due_times``
    (learner -> item -> due time), over the questions of ``bank``; ``predictions``: learner -> the
    predictions they committed, in the order made."""
    items = bank.items()
    counts: dict[str, list[int]] = {}  # question -> [answers, misses]
    who: dict[str, set[str]] = {}
    lesson_who: dict[str, set[str]] = {}
    counted = passed = 0
    active = 0
    for learner, rows in answers.items():
        mine = [row for row in rows if row.item_id in bank]
        active += bool(mine)
        seen: set[tuple[str, int]] = set()
        for row, day in zip(mine, day_numbers([r.reviewed_at for r in mine], tz, rollover_hour), strict=True):
            if (row.item_id, day) in seen:
                continue
            seen.add((row.item_id, day))
            tally = counts.setdefault(row.item_id, [0, 0])
            tally[0] += 1
            tally[1] += row.rating == Rating.AGAIN
            who.setdefault(row.item_id, set()).add(learner)
            lesson_who.setdefault(bank[row.item_id].lesson, set()).add(learner)
            if row.state_before is State.REVIEW:  # true retention, as `scheduler.stats` counts it
                counted += 1
                passed += row.rating != Rating.AGAIN
    questions = sorted(
        (
            QuestionRow(qid, bank[qid].lesson, bank[qid].section, len(who[qid]), n, missed)
            for qid, (n, missed) in counts.items()
        ),
        key=lambda row: (-row.miss_rate, row.question_id),
    )
    lessons: dict[str, list[int]] = {}
    for question in questions:
        total = lessons.setdefault(question.lesson, [0, 0])
        total[0] += question.answers
        total[1] += question.misses
    lesson_rows = sorted(
        (LessonRow(lesson, len(lesson_who[lesson]), n, missed) for lesson, (n, missed) in lessons.items()),
        key=lambda row: (-row.miss_rate, row.lesson),
    )
    due = [0] * DUE_DAYS
    for times in due_times.values():
        for day, n in enumerate(due_counts(times, items, at, tz, DUE_DAYS, rollover_hour)):
            due[day] += n
    revisit: dict[tuple[str, str], None] = {}
    for question in questions:
        if question.miss_rate >= REVISIT_AT:
            revisit.setdefault((question.lesson, question.section), None)
    return ClassReport(
        at,
        active,
        tuple(questions),
        tuple(lesson_rows),
        tuple(due),
        passed / counted if counted else None,
        tuple(revisit),
        tuple(row for row in questions if bank[row.question_id].kind == Kind.CODE),
        prediction_rows(predictions or {}, bank),
    )


def class_report_lines(report: ClassReport, limit: int = 10) -> list[str]:
    """The report as text: the ``limit`` most missed questions, the lessons, the due load, retention, the
    ``limit`` code cards least passed, and the sections to revisit with their links."""
    if not report.learners:
        return ["No learner has answered a question yet."]
    retention = "not yet (no reviews)" if report.retention is None else f"{report.retention:.1%}"
    lines = [
        f"Class report: {plural(report.learners, 'learner')}; true retention {retention}.",
        "Due in the next 7 days (today first, overdue included): " + " ".join(map(str, report.due)) + ".",
        "Lessons, most missed first:",
    ]
    for part in report.lessons:
        lines.append(
            f"  {part.miss_rate:4.0%} missed  lesson {part.lesson}, {lesson_title(part.lesson)} "
            f"({plural(part.answers, 'answer')} by {plural(part.learners, 'learner')})"
        )
    shown = report.questions[:limit]
    lines.append(f"Questions, most missed first ({len(shown)} of {len(report.questions)}):")
    for row in shown:
        lines.append(
            f"  {row.miss_rate:4.0%} missed  {row.question_id}  ({plural(row.answers, 'answer')} by "
            f"{plural(row.learners, 'learner')})"
        )
    if report.code:
        code = report.code[:limit]
        lines.append(f"Code cards, fewest passed first ({len(code)} of {len(report.code)}):")
        for row in code:
            lines.append(
                f"  {row.pass_rate:4.0%} passed  {row.question_id}  ({plural(row.answers, 'answer')} by "
                f"{plural(row.learners, 'learner')})"
            )
        lines.append(f"  ({CODE_NOTE})")
    if report.predictions:
        shown_predictions = report.predictions[:limit]
        lines.append(
            f"Predictions, most often wrong first ({len(shown_predictions)} of {len(report.predictions)}):"
        )
        for prediction in shown_predictions:
            lines.append(
                f"  {prediction.wrong_rate:4.0%} wrong   {prediction.prediction_id}  "
                f"({plural(prediction.learners, 'learner')})"
            )
    if not report.revisit:
        lines.append(
            f"Nothing to revisit: no question was missed in {REVISIT_AT:.0%} or more of its answers."
        )
        return lines
    lines.append(f"Revisit (missed in {REVISIT_AT:.0%} or more of the answers):")
    for lesson, section in report.revisit:
        lines.append(f"  lesson {lesson}, section {section}: {section_link(lesson, section)}")
    return lines
