"""How long a lesson takes, estimated from its length rather than guessed.

The estimate adds up: the prose at 130 words a minute (mathematical prose is read slowly; not the
references); the code at 10 lines a minute (reading it, running it and reading what it prints); a minute to
think before each **Predict:** prompt; each exercise by its size, 10 minutes and 0.75 of a minute for each
line of its worked solution (a transfer exercise of 8 to 12 lines: 16 to 19 minutes), and 20 minutes more
for a derivation on paper (an exercise whose heading says "derivation", such as a backward pass worked out by
hand before it is coded: 30 to 40 minutes in all); a minute for each quiz
question, two for a code card (a short function written and checked: one to three minutes). It is rounded to
the nearest 5 minutes. Each lesson states it in its first cell ("**Time:** about N minutes"), and a test keeps
the two equal. These rates are estimates, not times measured with learners.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

__all__ = [
    "MINUTES_PER_DERIVATION",
    "WORDS_PER_MINUTE",
    "Estimate",
    "estimate",
    "exercise_minutes",
    "stated_minutes",
]

WORDS_PER_MINUTE = 130
CODE_LINES_PER_MINUTE = 10
MINUTES_PER_PREDICTION = 1.0
MINUTES_PER_EXERCISE = 10.0  # reading the task, writing, running its checker
MINUTES_PER_SOLUTION_LINE = 0.75
MINUTES_PER_DERIVATION = 20.0  # the maths on paper, before the code: added to the exercise's own minutes
MINUTES_PER_QUESTION = 1.0
MINUTES_PER_CODE_QUESTION = 2.0

_PREDICT = re.compile(r"\*\*Predict:\*\*")
_DERIVATION = re.compile(r"\*\*Exercise \d+ \([^)]*\bderivation\b[^)]*\)")
_STATED = re.compile(r"\*\*Time:\*\* about (\d+) minutes")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")


@dataclass(frozen=True)
class Estimate:
    """A lesson's parts and the minutes they add up to (``minutes``: rounded to the nearest 5).
    ``exercises``: the number of lines of each exercise's worked solution; ``derivations``: how many of the
    exercises are derivations on paper."""

    words: int
    code_lines: int
    predictions: int
    exercises: tuple[int, ...]
    questions: int
    code_questions: int = 0
    derivations: int = 0

    @property
    def exact(self) -> float:
        return (
            self.words / WORDS_PER_MINUTE
            + self.code_lines / CODE_LINES_PER_MINUTE
            + self.predictions * MINUTES_PER_PREDICTION
            + sum(exercise_minutes(lines) for lines in self.exercises)
            + self.derivations * MINUTES_PER_DERIVATION
            + self.questions * MINUTES_PER_QUESTION
            + self.code_questions * MINUTES_PER_CODE_QUESTION
        )

    @property
    def minutes(self) -> int:
        return max(5, 5 * round(self.exact / 5))


def exercise_minutes(solution_lines: int) -> float:
    """An exercise's minutes, from the number of lines of its worked solution."""
    return MINUTES_PER_EXERCISE + MINUTES_PER_SOLUTION_LINE * solution_lines


def _solution_lines(source: str) -> int:
    """The lines of code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (all of a cell's regions)."""
    inside, lines = False, 0
    for line in source.splitlines():
        marker = line.strip()
        if marker == "### BEGIN SOLUTION":
            inside = True
        elif marker == "### END SOLUTION":
            inside = False
        elif inside and marker and not marker.startswith("#"):
            lines += 1
    return lines


def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def estimate(path: Path, questions: int, code_questions: int = 0) -> Estimate:
    """The estimate for the notebook at `path`, whose quiz has `questions` questions answered in a word or a
    choice and `code_questions` code cards."""
    nb = nbformat.read(path, as_version=4)
    markdown = [
        cell.source
        for cell in nb.cells
        if cell.cell_type == "markdown" and not cell.source.startswith("## References")  # looked up, not read
    ]
    code = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return Estimate(
        words=sum(len(_WORD.findall(text)) for text in markdown),
        code_lines=sum(_code_lines(text) for text in code),
        predictions=sum(len(_PREDICT.findall(text)) for text in markdown),
        derivations=sum(len(_DERIVATION.findall(text)) for text in markdown),
        exercises=tuple(_solution_lines(text) for text in code if "### BEGIN SOLUTION" in text),
        questions=questions,
        code_questions=code_questions,
    )


def stated_minutes(path: Path) -> int | None:
    """The time the notebook states in "**Time:** about N minutes", or None if it states none."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (match := _STATED.search(cell.source)):
            return int(match.group(1))
    return None
