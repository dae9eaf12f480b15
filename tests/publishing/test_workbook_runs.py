"""Every workbook notebook runs from top to bottom: unsolved (the checkers say "not written yet") and with the
reference solutions pasted back in (every checker passes)."""

from __future__ import annotations

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


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_workbook_with_the_solutions_pasted_in_passes_every_checker(workbook: Path, path: Path) -> None:
    nb = nbformat.read(workbook / path.name, as_version=4)
    exercises = _paste_solutions(nb, nbformat.read(path, as_version=4))
    texts = _run(nb, workbook)
    for index in exercises:
        lines = texts[index].splitlines()
        assert lines and all(line.startswith("✓") for line in lines), f"cell {index} printed {texts[index]!r}"
