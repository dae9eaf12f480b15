"""The welcome shows the full path of the progress file, whichever setting names it (issue 7, item 9).

In a workshop ``COURSE_DB`` names the file: the learner must see where it is, not only that it is set. The
welcome's two cells in "Where your progress lives" are run here as the notebook runs them, with
``COURSE_DB`` set in each way a workshop might set it. The stored output must not show the machine's path: the
second cell is marked ``NBVAL_IGNORE_OUTPUT`` and the stored run's file lies in the temporary folder, shown
relative to it.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

import nbformat
import pytest

from course.progress import db_path

WELCOME = Path(__file__).resolve().parents[2] / "notebooks" / "00-welcome.ipynb"


def progress_cells() -> list[str]:
    """The sources of the cell that finds the progress file (``db_path()``) and of the one after it."""
    cells = [cell for cell in nbformat.read(WELCOME, as_version=4).cells if cell.cell_type == "code"]
    (index,) = [i for i, cell in enumerate(cells) if "db_path()" in cell.source]
    return [cells[index].source, cells[index + 1].source]


def run_cells(sources: list[str]) -> str:
    namespace = {"os": os, "Path": Path, "tempfile": tempfile, "db_path": db_path}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for source in sources:
            exec(compile(source, str(WELCOME), "exec"), namespace)
    return out.getvalue()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home" / "ada"
    folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))
    return folder


def test_a_workshop_path_is_shown_in_full(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workshop = home.parent.parent / "srv" / "workshop" / "ada.sqlite3"
    monkeypatch.setenv("COURSE_DB", str(workshop))
    assert run_cells(progress_cells()) == (
        "Your progress file is named by COURSE_DB; the next cell shows its full path.\n"
        f"Your progress file: {workshop}\n"
    )


def test_a_relative_course_db_is_shown_as_the_full_path_it_means(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel_folder = home.parent.parent / "course" / "workbook"
    kernel_folder.mkdir(parents=True)
    monkeypatch.chdir(kernel_folder)
    monkeypatch.setenv("COURSE_DB", "ada.sqlite3")
    output = run_cells(progress_cells()).splitlines()
    assert output[1] == f"Your progress file: {kernel_folder.resolve() / 'ada.sqlite3'}"


def test_a_file_in_the_home_folder_is_shown_from_the_home_folder(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DB", str(home / "course" / "progress.sqlite3"))
    output = run_cells(progress_cells()).splitlines()
    assert output[1] == f"Your progress file: {Path('~', 'course', 'progress.sqlite3')}"


def test_the_default_file_is_named_as_the_default(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COURSE_DB", raising=False)
    output = run_cells(progress_cells()).splitlines()
    named_by = "the default (COURSE_DB is not set)"
    assert output[0] == f"Your progress file is named by {named_by}; the next cell shows its full path."
    assert output[1].startswith("Your progress file: ")
    assert output[1].endswith(os.path.join("attention-course", "progress.sqlite3"))


def test_a_file_in_the_temporary_folder_is_shown_without_the_machines_path(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = Path(tempfile.gettempdir())
    monkeypatch.setenv("COURSE_DB", str(temporary / "tmp.Ab12" / "progress.sqlite3"))
    assert run_cells(progress_cells()).splitlines()[1:] == [
        f"Your progress file: {Path('tmp.Ab12', 'progress.sqlite3')} in the temporary folder",
        "Files there may be deleted when the machine restarts: point COURSE_DB at a lasting place.",
    ]


def test_only_the_path_cell_is_left_out_of_nbval() -> None:
    named, path = progress_cells()
    assert "NBVAL_IGNORE_OUTPUT" not in named
    assert path.startswith("# NBVAL_IGNORE_OUTPUT\n")
