"""The Predict prompts of a lesson and the cells that answer them, as `python -m course check` checks them.

Under each markdown cell holding a ``**Predict:**`` prompt, the next code cell is the prediction widget,
exactly ``predict("ID")`` (``ID`` a ``[[prediction]]`` of the lesson's question file); then come the cells
that compute the result, which state nothing of it (no ``assert``, no comment holding a numeric answer);
then the *check cell*, which holds the asserts and calls ``reveal("ID", ...)``. The workbook hides the check
cell's source (`CHECK_HIDDEN`) until the learner opens it, and starts it with `CHECK_LINE` (a collapsed
cell shows its first line), so nothing visible before the commit answers the prompt; the instructor edition
shows it as it is.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.bank import Bank, Kind, Question
from course.lessons import LESSONS

__all__ = [
    "CHECK_HIDDEN",
    "CHECK_LINE",
    "NOT_YET_PREDICTED",
    "PROMPT",
    "PredictionCells",
    "answer_cells",
    "is_check_cell",
    "notebook_predictions",
    "prediction_problems",
]

PROMPT = "**Predict:**"
CHECK_HIDDEN = {"jupyter": {"source_hidden": True}}  # JupyterLab's collapsed input: one click shows it
CHECK_LINE = "# The check: run it once you have committed your prediction (its asserts hold the answer)."
"""The first line of a check cell in the workbook: JupyterLab shows a collapsed cell's first line."""
NOT_YET_PREDICTED: frozenset[str] = frozenset()
"""Lessons whose prompts have no prediction widget yet (issue 37 converts them lesson by lesson)."""
_PREDICT = re.compile(r'predict\("([^"\\]+)"\)')
_REVEAL = re.compile(r'\breveal\(\s*"([^"\\]+)"')
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def is_check_cell(source: str) -> bool:
    """Whether a code cell is a prediction's check cell (it calls ``reveal("...")``)."""
    return _REVEAL.search(source) is not None


@dataclass(frozen=True)
class PredictionCells:
    """Where one prompt and its prediction are: cell indices of the prompt, the ``predict`` cell and the
    check cell (None when missing), and the prediction id (None when the prompt has no widget)."""

    prompt: int
    widget: int | None
    check: int | None
    prediction_id: str | None


def notebook_predictions(cells: Sequence[nbformat.NotebookNode]) -> list[PredictionCells]:
    """Every Predict prompt of a notebook, in order, with its widget and check cells."""
    found = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown" or PROMPT not in cell.source:
            continue
        widget = next((i for i in range(index + 1, len(cells)) if cells[i].cell_type == "code"), None)
        match = None if widget is None else _PREDICT.fullmatch(cells[widget].source.strip())
        if match is None:
            found.append(PredictionCells(index, None, None, None))
            continue
        prediction_id = match.group(1)
        assert widget is not None
        check = next(
            (i for i in range(widget + 1, len(cells)) if _reveals(cells[i], prediction_id)),
            None,
        )
        found.append(PredictionCells(index, widget, check, prediction_id))
    return found


def _reveals(cell: nbformat.NotebookNode, prediction_id: str) -> bool:
    return cell.cell_type == "code" and any(
        m.group(1) == prediction_id for m in _REVEAL.finditer(cell.source)
    )


def prediction_problems(bank: Bank, directory: Path) -> list[str]:
    """The problems of the Predict prompts of every lesson notebook in `directory` (one line each, naming the
    notebook and the cell): a prompt without its widget, an id the lesson has no prediction for or used
    twice, a widget without its check cell, a cell between them that states the answer, and a prediction of
    the bank that no prompt uses."""
    problems: list[str] = []
    for lesson_id, (_title, notebook) in LESSONS.items():
        path = directory / notebook
        if not lesson_id.isdigit() or lesson_id in NOT_YET_PREDICTED or not path.exists():
            continue
        cells = nbformat.read(path, as_version=4).cells
        own = {question.id: question for question in bank.predictions(lesson_id)}
        used: dict[str, int] = {}
        for place in notebook_predictions(cells):
            where = f"{notebook}: cell {place.prompt}"
            if place.prediction_id is None:
                problems.append(
                    f'{where}: a Predict prompt without its widget: the next code cell is predict("ID")'
                )
                continue
            if cells[place.prompt].source.count(PROMPT) > 1:
                problems.append(f"{where}: two Predict prompts in one cell (one prompt, one widget)")
            prediction_id = place.prediction_id
            if prediction_id not in own:
                problems.append(
                    f"{where}: lesson {lesson_id} has no prediction {prediction_id!r} in its question file"
                )
                continue
            if prediction_id in used:
                problems.append(
                    f"{where}: prediction {prediction_id!r} is used twice (first at cell "
                    f"{used[prediction_id]})"
                )
                continue
            used[prediction_id] = place.prompt
            if place.check is None:
                problems.append(
                    f'{where}: prediction {prediction_id!r} has no check cell: reveal("{prediction_id}", ...)'
                )
                continue
            assert place.widget is not None
            for index in range(place.widget + 1, place.check):
                said = (
                    gives_away(cells[index].source, own[prediction_id])
                    if cells[index].cell_type == "code"
                    else None
                )
                if said:
                    problems.append(
                        f"{notebook}: cell {index}: {said} before the check cell of {prediction_id!r}"
                    )
        for prediction_id in own:
            if prediction_id not in used:
                problems.append(
                    f"{notebook}: prediction {prediction_id!r} of the question file is under no prompt"
                )
    return problems


def gives_away(source: str, question: Question) -> str | None:
    """What in a code cell a learner reads before committing `question` states its answer: an ``assert``,
    or (numeric) a comment holding the answer's number; None when nothing does."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # a cell of IPython magics: nbval runs it, there is no assert to find
    if any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
        return "an assert"
    if question.kind != Kind.NUMERIC:
        return None
    answer = float(question.answer)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for token in tokens:
        if token.type == tokenize.COMMENT and any(
            abs(float(number) - answer) <= max(question.tolerance, 1e-9 * abs(answer))
            for number in _NUMBER.findall(token.string.replace(",", ""))
        ):
            return f"a comment with the answer ({token.string.strip()})"
    return None


def answer_cells(question: Question, directory: Path) -> list[str]:
    """The sources of the cells that answer prediction `question` in its lesson's notebook in `directory`:
    those after its widget, its check cell last (what a live review runs on Reveal). ValueError when the
    notebook has no widget for it."""
    _title, notebook = LESSONS[question.lesson]
    cells = nbformat.read(directory / notebook, as_version=4).cells
    for place in notebook_predictions(cells):
        if place.prediction_id == question.id and place.widget is not None and place.check is not None:
            return [cells[index].source for index in range(place.widget + 1, place.check + 1)]
    raise ValueError(f"{notebook} has no widget and check cell for prediction {question.id!r}")
