"""docs/instructor.md's plans add up (issue 36): each lesson's 90-minute plan and each three-hour agenda sum
to their slot, state the lesson's own self-study time, and give its exercises and its quiz exactly the
minutes the study-time estimate gives them (`course/publishing/_study_time.py`), its quiz the size the bank
says.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course.bank import Kind, load_bank
from course.lessons import LESSONS
from course.publishing._study_time import (
    MINUTES_PER_CODE_QUESTION,
    MINUTES_PER_DERIVATION,
    MINUTES_PER_QUESTION,
    estimate,
    exercise_minutes,
    stated_minutes,
)

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
BANK = load_bank()
PLANNED = [lesson for lesson in LESSONS if lesson.isdigit()]
_HEADING = re.compile(r"^### (\d\d) · .* \(self-study (\d+) min\)$", re.M)
_QUIZ = re.compile(r"^Quiz \((\d+) questions(?:, (\d+) of them code cards|, all on the maths)?\)")
_EXERCISES = re.compile(r"^Exercises? (\d+(?:(?:, | and |-)\d+)*)\b")
_REVIEW = re.compile(r"^Class review: (\d+) questions of lessons? ((?:\d\d(?:, | and )?)+)")
_DERIVATION = re.compile(r"\*\*Exercise (\d+) \([^)]*\bderivation\b")


def _notebook(lesson: str) -> Path:
    return ROOT / "notebooks" / LESSONS[lesson][1]


def _exercise_minutes(lesson: str) -> dict[int, float]:
    """Each exercise's minutes (1-based), a derivation's 20 more included."""
    path = _notebook(lesson)
    lines = estimate(path, 0).exercises
    cells = nbformat.read(path, as_version=4).cells
    markdown = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    derived = {int(number) for number in _DERIVATION.findall(markdown)}
    return {
        number: exercise_minutes(count) + (MINUTES_PER_DERIVATION if number in derived else 0.0)
        for number, count in enumerate(lines, start=1)
    }


def _numbers(listed: str) -> list[int]:
    found: list[int] = []
    for part in re.split(r", | and ", listed):
        low, _, high = part.partition("-")
        found += list(range(int(low), int(high or low) + 1))
    return found


def _rounded(minutes: float) -> int:
    return int(minutes + 0.5)


def _quiz(lesson: str) -> tuple[int, int]:
    questions = BANK.questions(lesson)
    return len(questions), sum(question.kind == Kind.CODE for question in questions)


def check_row(lesson: str, minutes: int, part: str) -> None:
    """A row's minutes are the estimate's when it names a lesson's exercises, its quiz or a class review."""
    if quiz := _QUIZ.match(part):
        total, code = _quiz(lesson)
        assert (int(quiz.group(1)), int(quiz.group(2) or 0)) == (total, code), f"{lesson}: {part}"
        assert minutes == (total - code) * MINUTES_PER_QUESTION + code * MINUTES_PER_CODE_QUESTION, part
    elif exercises := _EXERCISES.match(part):
        each = _exercise_minutes(lesson)
        assert minutes == _rounded(sum(each[n] for n in _numbers(exercises.group(1)))), f"{lesson}: {part}"
    elif review := _REVIEW.match(part):
        lessons = re.findall(r"\d\d", review.group(2))
        assert int(review.group(1)) <= sum(_quiz(each)[0] for each in lessons), part
        assert minutes == int(review.group(1)) * MINUTES_PER_QUESTION, part


def _lesson_plans() -> dict[str, tuple[int, list[tuple[int, str]]]]:
    plans = {}
    for heading in _HEADING.finditer(GUIDE):
        start = GUIDE.index("| minutes | part |\n|---|---|\n", heading.end())
        rows = []
        for line in GUIDE[start:].splitlines()[2:]:
            if not line.startswith("| "):
                break
            minutes, part = line[2:-2].split(" | ", 1)
            rows.append((int(minutes), part))
        plans[heading.group(1)] = (int(heading.group(2)), rows)
    return plans


PLANS = _lesson_plans()


def test_every_lesson_has_a_plan() -> None:
    assert sorted(PLANS) == PLANNED


@pytest.mark.parametrize("lesson", PLANNED)
def test_a_lessons_plan_fills_its_90_minutes_at_the_estimates_rates(lesson: str) -> None:
    self_study, rows = PLANS[lesson]
    assert self_study == stated_minutes(_notebook(lesson)), "the heading's self-study time is the lesson's"
    assert sum(minutes for minutes, _ in rows) == 90, rows
    assert any(_QUIZ.match(part) for _, part in rows), "every plan runs the quiz"
    for minutes, part in rows:
        check_row(lesson, minutes, part)


def _agendas() -> list[list[tuple[str, int, str]]]:
    section = GUIDE[GUIDE.index("## A three-hour workshop") :]
    section = section[: section.index("\n## ")]
    agendas = []
    for table in section.split("| start | minutes | part |\n|---|---|---|\n")[1:]:
        rows = []
        for line in table.splitlines():
            if not line.startswith("| "):
                break
            start, minutes, part = line[2:-2].split(" | ", 2)
            rows.append((start, int(minutes), part))
        agendas.append(rows)
    return agendas


def test_each_three_hour_agenda_adds_up_with_its_logins_break_and_the_estimates() -> None:
    agendas = _agendas()
    assert len(agendas) == 2
    for rows in agendas:
        assert sum(minutes for _, minutes, _ in rows) == 180
        clock = 0
        for start, minutes, part in rows:
            assert start == f"{clock // 60}:{clock % 60:02d}", (start, part)
            clock += minutes
            lesson, _, rest = part.partition(" ")
            check_row(lesson, minutes, rest) if lesson.isdigit() else check_row("", minutes, part)
        parts = " ".join(part for _, _, part in rows)
        assert "Log in" in parts and "Break" in parts


def test_the_checks_catch_a_plan_that_does_not_add_up() -> None:
    with pytest.raises(AssertionError):
        check_row("01", 10, "Quiz (16 questions)")  # the guide's old row: 20 in the bank, 23 minutes
    with pytest.raises(AssertionError):
        check_row("01", 22, "Exercises 1 and 3: a top-k softmax; attention by direction")
    with pytest.raises(AssertionError):
        check_row("", 12, "Class review: 50 questions of lessons 00 and 01")
    assert _numbers("1-2") == [1, 2] and _numbers("1, 2 and 4") == [1, 2, 4]
    assert _rounded(_exercise_minutes("02")[3]) == 34  # a derivation: 20 minutes more
