"""How long a lesson takes, estimated from its length rather than guessed.

The estimate adds up: the prose at 200 words a minute (not the references); the code at 10 lines a minute
(reading it, running it and reading what it prints); a minute to think before each **Predict:** prompt;
8 minutes for each exercise (a function to write); half a minute for each quiz question. It is rounded to
the nearest 5 minutes. Each lesson states it in its first cell ("**Time:** about N minutes"), and a test
keeps the two equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

__all__ = ["WORDS_PER_MINUTE", "Estimate", "estimate", "stated_minutes"]

WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 10
MINUTES_PER_PREDICTION = 1.0
MINUTES_PER_EXERCISE = 8.0
MINUTES_PER_QUESTION = 0.5

_PREDICT = re.compile(r"\*\*Predict:\*\*")
_STATED = re.compile(r"\*\*Time:\*\* about (\d+) minutes")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")


@dataclass(frozen=True)
class Estimate:
    """A lesson's parts and the minutes they add up to (``minutes``: rounded to the nearest 5)."""

    words: int
    code_lines: int
    predictions: int
    exercises: int
    questions: int

    @property
    def exact(self) -> float:
        return (
            self.words / WORDS_PER_MINUTE
            + self.code_lines / CODE_LINES_PER_MINUTE
            + self.predictions * MINUTES_PER_PREDICTION
            + self.exercises * MINUTES_PER_EXERCISE
            + self.questions * MINUTES_PER_QUESTION
        )

    @property
    def minutes(self) -> int:
        return max(5, 5 * round(self.exact / 5))


def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def estimate(path: Path, questions: int) -> Estimate:
    """The estimate for the notebook at `path`, whose quiz has `questions` questions."""
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
        exercises=sum("### BEGIN SOLUTION" in text for text in code),
        questions=questions,
    )


def stated_minutes(path: Path) -> int | None:
    """The time the notebook states in "**Time:** about N minutes", or None if it states none."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (match := _STATED.search(cell.source)):
            return int(match.group(1))
    return None
