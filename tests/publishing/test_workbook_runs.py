"""Every workbook notebook runs from top to bottom unsolved (the checkers say "not written yet"), and with the
reference solutions pasted back in it is the instructor's code, cell for cell.

The second is not run again: a solved workbook whose code cells parse to the same Python as the instructor
notebook's (the workbook only drops comments, tool markers and the solution markers, and adds a comment line
to a check cell) runs what nbval runs, where every checker's "✓" output is compared with the stored one. The
unsolved run, in the workbook's own folder, keeps what only the workbook can show: that it runs there, and
that no later cell needs an exercise the learner has not written."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from solution_regions import split_regions

from course.publishing import write_workbook
from course.publishing._workbook import STUB, instructor_notebooks

NOTEBOOKS = instructor_notebooks()
NOT_WRITTEN = "not written yet. Replace the `raise NotImplementedError` line with your code"


def _paste_solutions(workbook: nbformat.NotebookNode, instructor: nbformat.NotebookNode) -> list[int]:
    """Put the instructor's solution regions in place of the stubs, as a learner would; return the indices of
    the exercise cells."""
    exercises = []
    for index, (cell, reference) in enumerate(zip(workbook.cells, instructor.cells, strict=True)):
        regions = split_regions(reference.source)[1] if cell.cell_type == "code" else []
        if not regions:
            continue
        exercises.append(index)
        lines: list[str] = []
        for line in cell.source.splitlines():
            if line.strip() == STUB[1]:
                lines.extend(regions.pop(0))
            elif not line.strip().startswith("# YOUR CODE HERE"):
                lines.append(line)
        assert regions == []
        cell.source = "\n".join(lines)
    return exercises


def _run(nb: nbformat.NotebookNode, folder: Path) -> list[str]:
    """Execute `nb` in `folder`; return each code cell's printed text (errors fail the test)."""
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    texts = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            texts.append("")
            continue
        errors = [output for output in cell.outputs if output.output_type == "error"]
        assert not errors, f"cell {index}: {errors[0].ename}: {errors[0].evalue}"
        texts.append(
            "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")
        )
    return texts


@pytest.fixture(scope="module")
def workbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workbook")
    write_workbook(folder, say=lambda _line: None)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_unsolved_workbook_runs_and_says_not_written_yet(workbook: Path, path: Path) -> None:
    instructor = nbformat.read(path, as_version=4)
    code = [(i, cell) for i, cell in enumerate(instructor.cells) if cell.cell_type == "code"]
    exercises = [i for i, cell in code if split_regions(cell.source)[1]]
    texts = _run(nbformat.read(workbook / path.name, as_version=4), workbook)
    for index in exercises:
        assert NOT_WRITTEN in texts[index], f"cell {index} printed {texts[index]!r}"
        assert "✗" not in texts[index] and "✓" not in texts[index]


def _python(source: str) -> tuple[str, list[str]]:
    """What a code cell runs: its Python (comments and layout aside, as an AST dump) and its IPython lines
    (``%matplotlib inline``, ``!pip ...``), which are not Python."""
    magics = [line.strip() for line in source.splitlines() if line.lstrip().startswith(("%", "!"))]
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    return ast.dump(ast.parse(code)), magics


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_workbook_with_the_solutions_pasted_in_is_the_instructors_code(workbook: Path, path: Path) -> None:
    nb = nbformat.read(workbook / path.name, as_version=4)
    instructor = nbformat.read(path, as_version=4)
    exercises = _paste_solutions(nb, instructor)
    assert exercises or path.stem in ("00-welcome", "review")
    assert [cell.cell_type for cell in nb.cells] == [cell.cell_type for cell in instructor.cells]
    different = [
        index
        for index, (cell, reference) in enumerate(zip(nb.cells, instructor.cells, strict=True))
        if cell.cell_type == "code" and _python(cell.source) != _python(reference.source)
    ]
    assert different == [], f"{path.name}: the solved workbook runs other code in cells {different}"


def test_a_solved_workbook_that_runs_other_code_is_found() -> None:
    assert _python("x = 1  # one\n%matplotlib inline") == _python("%matplotlib inline\n\nx = 1")
    assert _python("x = 1") != _python("x = 2")
    assert _python("%matplotlib inline\nx = 1") != _python("%matplotlib widget\nx = 1")
