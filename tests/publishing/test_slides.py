"""Every lesson has the slide metadata RISE reads: slides at its sections, Predict prompts as fragments."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course.lessons import LESSONS, QUIZ_LESSONS
from course.publishing._slides import (
    BREAK,
    HEADING,
    PREDICT,
    RISE_SETTINGS,
    fit_breaks,
    main,
    mark_slides,
    slide_types,
    split_at_headings,
)
from course.publishing._workbook import workbook_notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
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


def run_on(notebook: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in notebook.cells]


def test_a_heading_inside_a_cell_gets_a_cell_and_a_slide_of_its_own(tmp_path, capsys):
    notebook = sample()
    notebook.cells[7].source = f"A remark.\n\n## 2. Second section\n\nText.\n## 3. Third\n\n{PREDICT} and?"
    first_id = notebook.cells[7].id
    assert split_at_headings(notebook) == 2
    assert run_on(notebook)[7:10] == [
        ("markdown", "A remark."),
        ("markdown", "## 2. Second section\n\nText."),
        ("markdown", f"## 3. Third\n\n{PREDICT} and?"),
    ]
    assert notebook.cells[7].id == first_id and len({cell.id for cell in notebook.cells}) == len(
        notebook.cells
    )
    assert slide_types(notebook.cells)[7:11] == ["subslide", "slide", "slide", "slide"]
    assert split_at_headings(notebook) == 0
    nbformat.validate(notebook)

    path = tmp_path / "lesson.ipynb"  # the command splits, then marks
    mark_slides(notebook)
    notebook.cells[8].source += "\n\n## Key takeaways\n\n- one"
    nbformat.write(notebook, path)
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == f"marked {path}\n"
    marked = nbformat.read(path, as_version=4)
    assert [cell.source for cell in marked.cells[8:10]] == [
        "## 2. Second section\n\nText.",
        "## Key takeaways\n\n- one",
    ]
    assert marked.cells[9].metadata["slideshow"] == {"slide_type": "slide"}


def test_a_heading_in_a_code_block_stays_where_it_is_and_old_notebooks_get_no_ids():
    notebook = sample()
    text = "Shell comments:\n\n```bash\n## not a heading\n```\n\n## 3. A heading"
    notebook.cells[7].source = text
    assert split_at_headings(notebook) == 1
    assert [cell.source for cell in notebook.cells[7:9]] == [
        text.removesuffix("\n\n## 3. A heading"),
        "## 3. A heading",
    ]
    old = sample()
    old.nbformat_minor = 4
    for cell in old.cells:
        del cell["id"]
    old.cells[7].source = "A remark.\n## 3. A heading"
    assert split_at_headings(old) == 1 and "id" not in old.cells[8]
    nbformat.validate(old)


def test_the_workbooks_import_cell_is_skipped_without_its_test_marker():
    cells = sample().cells
    cells[1].source = "# Imports and seeds: the only cell that imports anything.\nimport numpy as np"
    assert slide_types(cells)[1] == "skip"


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda path: path.name)
def test_every_lesson_is_marked_for_slides(path):
    notebook = nbformat.read(path, as_version=4)
    stored = copy.deepcopy(notebook)
    assert not mark_slides(notebook), f"run: python -m course.publishing slides notebooks/{path.name}"
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
    # a fragment, or at the top of a subslide of its own when the slide above is full: its answer still waits
    assert all(types[i] == _waiting(stored.cells[i]) for i in predicts)
    # the prompt's prediction widget shows with its prompt; the cell after it is the answer
    widgets = [i + 1 for i in range(len(stored.cells) - 1) if _widget(stored.cells, i)]
    assert widgets and all(types[i] == "-" for i in widgets)
    answers = [i + 2 if i + 1 in widgets else i + 1 for i in predicts]
    answers = [i for i in answers if stored.cells[i].cell_type == "code"]
    # a prompt's answer waits for a key: a fragment, or the next subslide when the two do not fit on one
    assert answers and all(types[i] == _waiting(stored.cells[i]) for i in answers)
    broken = [index for index, cell in enumerate(stored.cells) if _broken(cell)]
    assert all(types[index] == "subslide" for index in broken)
    # ... as does the answer to a prompt in a heading's cell: a fragment, or the next subslide when it is tall
    headed = [
        i + 2 if _widget(stored.cells, i) else i + 1
        for i, cell in enumerate(stored.cells[:-2])
        if cell.cell_type == "markdown" and PREDICT in cell.source and cell.source.startswith("## ")
    ]
    assert all(types[i] == _waiting(stored.cells[i]) for i in headed)


def _widget(cells, index):
    """Whether the cell after the Predict prompt at `index` is its prediction widget, ``predict("ID")``."""
    following = cells[index + 1]
    return (
        cells[index].cell_type == "markdown"
        and PREDICT in cells[index].source
        and following.cell_type == "code"
        and following.source.startswith('predict("')
    )


def _broken(cell):
    return cell.metadata.get("course", {}).get(BREAK) is True


def _waiting(cell):
    """What a cell that waits for a key press is: a fragment, or a subslide where the slide above is full."""
    return "subslide" if _broken(cell) else "fragment"


def test_fit_breaks_packs_cells_to_the_height_and_keeps_a_prompt_with_its_answer():
    cells = [
        new_markdown_cell("## 1. A section"),
        new_code_cell("a = 1"),
        new_code_cell("b = 2"),
        new_markdown_cell("**Predict:** what is a + b?"),
        new_code_cell("a + b"),
        new_code_cell("plot()"),
        new_markdown_cell("More text."),
        new_code_cell("c = 3"),
        new_markdown_cell("## 2. Another, whose **Predict:** is in its heading's cell"),
        new_code_cell("c"),  # its answer: a fragment, packed alone
    ]
    heights = [300, 200, 100, 50, 200, 700, 100, 500, 100, 600]
    # 300+200+100 = 600 fits 640; the prompt and its answer (250) do not: both start a subslide; 250+700 does
    # not fit either (the 700 starts its own, and stays too tall); a subslide starts afresh; 100+500 fits;
    # a heading's answer (600) does not fit under its heading (100) and waits on a subslide of its own
    assert slide_types(cells)[3:5] == ["fragment", "fragment"] and slide_types(cells)[9] == "fragment"
    assert fit_breaks(cells, heights) == [3, 5, 9]
    assert fit_breaks(cells, heights, height=10_000) == []
    assert fit_breaks(cells[:2], [700, 10]) == [1]
    # a prompt and an answer taller than a slide together: the answer starts the next subslide
    assert fit_breaks(cells[:5], [100, 100, 100, 450, 300]) == [3, 4]


def test_a_marked_cell_starts_a_subslide_but_an_answer_cell_stays_a_fragment():
    cells = [
        new_markdown_cell("## 1. Section"),
        new_code_cell("x = 1"),
        new_markdown_cell("**Predict:** what is x?"),
        new_code_cell("x"),
        new_code_cell("y = 2"),
    ]
    for cell in (cells[1], cells[2], cells[4]):  # fit_breaks keeps a prompt and its answer on one slide
        cell.metadata["course"] = {BREAK: True}
    assert slide_types(cells) == ["slide", "subslide", "subslide", "fragment", "subslide"]
    cells[0].source = "## 1. Section\n\n**Predict:** what will x be?"  # the answer to a heading's prompt
    cells[1].metadata["course"] = {BREAK: True}
    assert slide_types(cells)[:2] == ["slide", "subslide"]
    del cells[1].metadata["course"]
    assert slide_types(cells)[:2] == ["slide", "fragment"]


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda path: path.name)
def test_every_heading_of_every_lesson_starts_a_slide(path):
    """A ``##`` heading in the middle of a cell would be shown as a fragment of the slide before it."""
    cells = nbformat.read(path, as_version=4).cells
    headings = [
        (index, line)
        for index, cell in enumerate(cells)
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith(HEADING)
    ]
    slides = [
        (index, cell.source.splitlines()[0])
        for index, cell in enumerate(cells)
        if cell.cell_type == "markdown"
        and cell.source.startswith(HEADING)
        and cell.metadata["slideshow"] == {"slide_type": "slide"}
    ]
    assert headings == slides
    numbers = [int(match[1]) for _, line in headings if (match := re.match(r"## (\d+)\. ", line))]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 3


def test_the_workbook_keeps_the_slides(tmp_path):
    path = NOTEBOOKS / LESSONS["05"][1]
    stored = nbformat.read(path, as_version=4)
    learner = workbook_notebook(path)
    assert [cell.metadata["slideshow"] for cell in learner.cells] == [
        cell.metadata["slideshow"] for cell in stored.cells
    ]
    assert learner.metadata["rise"] == RISE_SETTINGS
