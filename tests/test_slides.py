"""Every lesson has the slide metadata RISE reads: slides at its sections, Predict prompts as fragments."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course.lessons import LESSONS, QUIZ_LESSONS
from course.slides import PREDICT, RISE_SETTINGS, main, mark_slides, slide_types
from course.workbook import workbook_notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSON_FILES = [
    NOTEBOOKS / LESSONS[lesson][1] for lesson in QUIZ_LESSONS if (NOTEBOOKS / LESSONS[lesson][1]).exists()
]


def sample() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell("# 01 · A lesson\n\nObjectives."),
            new_code_cell("# NBVAL_IGNORE_OUTPUT\nimport numpy as np"),
            new_markdown_cell("## 1. First section\n\nText."),
            new_code_cell("x = 1"),
            new_markdown_cell(f"More text. {PREDICT} what is x + 1?"),
            new_code_cell("x + 1"),
            new_code_cell("x + 2"),
            new_markdown_cell("A remark."),
            new_markdown_cell(f"## 2. Second section\n\n{PREDICT} and now?"),
            new_code_cell("x * 3"),
            new_markdown_cell("## Key takeaways"),
        ]
    )


def test_the_rules_on_a_small_lesson():
    assert slide_types(sample().cells) == [
        "slide",  # the title
        "skip",  # imports and versions
        "slide",  # a section
        "-",  # code continues the slide
        "fragment",  # a Predict prompt ...
        "fragment",  # ... and the cell that reveals the answer
        "-",
        "subslide",  # other text starts a subslide
        "slide",  # a heading stays a slide, even with a Predict in it ...
        "fragment",  # ... and the answer still waits for a key press
        "slide",
    ]


def test_marking_writes_the_types_and_the_settings_once():
    notebook = sample()
    assert mark_slides(notebook) is True
    assert [cell.metadata["slideshow"]["slide_type"] for cell in notebook.cells] == slide_types(
        notebook.cells
    )
    assert (
        notebook.metadata["rise"]
        == RISE_SETTINGS
        == {
            "scroll": True,
            "slideNumber": True,
            "theme": "white",
            "transition": "none",
        }
    )
    assert mark_slides(notebook) is False


def test_the_command_marks_a_file_in_place(tmp_path, capsys):
    path = tmp_path / "lesson.ipynb"
    nbformat.write(sample(), path)
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == f"marked {path}\n"
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda path: path.name)
def test_every_lesson_is_marked_for_slides(path):
    notebook = nbformat.read(path, as_version=4)
    stored = copy.deepcopy(notebook)
    assert not mark_slides(notebook), f"run: python -m course.slides notebooks/{path.name}"
    types = [cell.metadata["slideshow"]["slide_type"] for cell in stored.cells]
    sections = [
        cell for cell in stored.cells if cell.cell_type == "markdown" and cell.source.startswith("## 1. ")
    ]
    assert types[0] == "slide" and sections, "the title and section 1 open slides"
    assert all(cell.metadata["slideshow"]["slide_type"] == "slide" for cell in sections)
    predicts = [
        index
        for index, cell in enumerate(stored.cells)
        if cell.cell_type == "markdown" and PREDICT in cell.source and not cell.source.startswith("## ")
    ]
    assert all(types[index] == "fragment" for index in predicts)


def test_the_workbook_keeps_the_slides(tmp_path):
    path = NOTEBOOKS / LESSONS["05"][1]
    stored = nbformat.read(path, as_version=4)
    learner = workbook_notebook(path)
    assert [cell.metadata["slideshow"] for cell in learner.cells] == [
        cell.metadata["slideshow"] for cell in stored.cells
    ]
    assert learner.metadata["rise"] == RISE_SETTINGS
