"""The learner's workbook: a copy of every notebook to work in, with outputs cleared and solutions stubbed.

``python -m course workbook [DIR]`` (default ``workbook/``) writes the welcome, every lesson and the review
notebook. Each copy differs from its instructor notebook in ``notebooks/`` in four ways only: no cell has an
output; every solution region of an exercise (``### BEGIN SOLUTION`` ... ``### END SOLUTION``, markers
included) is replaced, at the marker's indentation, by::

    # YOUR CODE HERE (a worked solution: notebooks/01-similarity-and-softmax.ipynb)
    raise NotImplementedError("not written yet")

which the checkers report as "not written yet"; and what only the course's tools read is gone: nbval's
markers (a ``# NBVAL_IGNORE_OUTPUT`` line and the like, and its ``nbval-...`` tags) and formatter pragmas
(``# fmt: skip``). The source of a Predict prompt's check cell (the one that calls ``reveal``) is
collapsed, under a first line that says so (`course.publishing._predictions`): its asserts answer the
prompt. No later cell uses a learner's solution, so an unsolved workbook still runs from top to bottom.
Links between notebooks are relative, so in the workbook they open the workbook's notebooks.

A learner's work is never overwritten. ``DIR/.workbook.json`` records a hash of each file as written. On the
next run a file is replaced only while it is exactly as written (the learner has not saved it since); an
edited file is kept, and when the course's version of it has changed, the new version is written beside it
as ``NN-name.updated.ipynb``. An edited ``.updated`` copy is kept too, and the run says how to get the
update.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import nbformat

from course.publishing._predictions import CHECK_HIDDEN, CHECK_LINE, is_check_cell

__all__ = [
    "MANIFEST",
    "MarkerError",
    "WorkbookError",
    "Written",
    "instructor_notebooks",
    "lab_command",
    "strip_solutions",
    "strip_tool_markers",
    "workbook_notebook",
    "write_workbook",
]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = (
    "# YOUR CODE HERE (a worked solution: notebooks/{notebook})",
    'raise NotImplementedError("not written yet")',
)
# What only the course's tools read: a whole line that is an nbval marker, a trailing formatter pragma, and
# nbval's cell tags (other tags, such as raises-exception, also tell JupyterLab how to run the cell).
_NBVAL_LINE = re.compile(r"^\s*# *(NBVAL_[A-Z_]+|PYTEST_VALIDATE_IGNORE_OUTPUT)\s*$")
_PRAGMA = re.compile(r"\s*# fmt: (skip|off|on)\s*$")
_NBVAL_TAG = "nbval-"
MANIFEST = ".workbook.json"
UPDATED = ".updated"
DEFAULT_DIR = Path("workbook")
WELCOME = "00-welcome.ipynb"
SLIDE_STYLE = "rise.css"
INSTRUCTOR_DIR = Path(__file__).resolve().parents[2] / "notebooks"


class WorkbookError(Exception):
    """The workbook cannot be written: the message says why and what to do."""


class MarkerError(WorkbookError):
    """A code cell whose solution markers are unbalanced or nested."""


@dataclass(frozen=True)
class Written:
    """What happened to one notebook: ``action`` is one of "written", "up to date", "updated", "kept" (the
    learner's edited copy, with nothing new to give) and "beside" (kept, the new version written to
    ``path``) or "refused" (kept, and the ``.updated`` copy too, since the learner edited it)."""

    name: str
    action: str
    path: Path


def _marker(line: str) -> str | None:
    stripped = line.strip()
    return stripped if stripped in (BEGIN, END) else None


def strip_solutions(source: str, notebook: str) -> tuple[str, int]:
    """The cell source with every solution region replaced by the stub, and the number of regions.

    `notebook` is the instructor notebook's file name, named in the stub. Raises `MarkerError` on an END
    without a BEGIN, a BEGIN inside a region, or a BEGIN never closed.
    """
    out: list[str] = []
    removed = 0
    open_line: int | None = None  # 1-based line of the BEGIN marker of the region being skipped
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        marker = _marker(line)
        if marker == BEGIN:
            if open_line is not None:
                raise MarkerError(f"nested {BEGIN!r} on line {number} (region opened on line {open_line})")
            open_line = number
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(f"{indent}{text.format(notebook=notebook)}\n" for text in STUB)
        elif marker == END:
            if open_line is None:
                raise MarkerError(f"{END!r} on line {number} without a {BEGIN!r}")
            open_line = None
            removed += 1
        elif open_line is None:
            out.append(line)
    if open_line is not None:
        raise MarkerError(f"{BEGIN!r} on line {open_line} is never closed by {END!r}")
    text = "".join(out)
    if removed and not source.endswith("\n"):
        text = text.removesuffix("\n")  # keep the cell's (usual) lack of a final newline
    return text, removed


def strip_tool_markers(source: str) -> str:
    """A code cell's source without the lines and pragmas that only the course's tools read (nbval's
    ``# NBVAL_IGNORE_OUTPUT`` and the like, ``# fmt: skip``), and without the blank lines a removed marker
    leaves at the top of the cell."""
    kept: list[str] = []
    for line in source.splitlines(keepends=True):
        body = line.rstrip("\n")
        pragma = _PRAGMA.search(body)
        if _NBVAL_LINE.match(body) or (pragma and not body[: pragma.start()].strip()):
            continue  # a whole line for the tools only
        kept.append(body[: pragma.start()] + line[len(body) :] if pragma else line)
    if kept == source.splitlines(keepends=True):  # nothing removed: the source as it was
        return source
    text = "".join(kept).lstrip("\n")
    return text if source.endswith("\n") else text.rstrip("\n")


def workbook_notebook(path: Path) -> nbformat.NotebookNode:
    """The workbook version of the instructor notebook at `path`: outputs cleared, solutions stubbed, the
    tools' markers gone (see the module's docstring)."""
    nb: nbformat.NotebookNode = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    for index, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags")
        if tags is not None:
            kept_tags = [tag for tag in tags if not tag.startswith(_NBVAL_TAG)]
            if kept_tags:
                cell.metadata["tags"] = kept_tags
            else:
                del cell.metadata["tags"]
        if cell.cell_type != "code":
            continue
        if is_check_cell(cell.source):  # a prediction's check: its asserts state the answer
            cell.metadata.update(copy.deepcopy(CHECK_HIDDEN))
            cell.source = f"{CHECK_LINE}\n{cell.source}"
        try:
            cell.source, _ = strip_solutions(cell.source, path.name)
        except MarkerError as err:
            raise MarkerError(f"{path.name}, cell {index}: {err}") from None
        cell.source = strip_tool_markers(cell.source)
        cell.outputs = []
        cell.execution_count = None
    return nb


def instructor_notebooks(directory: Path = INSTRUCTOR_DIR) -> list[Path]:
    """The instructor notebooks: every ``*.ipynb`` in `directory`, in name order."""
    found = sorted(directory.glob("*.ipynb"))
    if not found:
        raise WorkbookError(
            f"no notebooks found in {directory}: the workbook is made from a clone of the course "
            "repository (install it with `pip install -e .` from the clone)"
        )
    return found


def lab_command(directory: Path = DEFAULT_DIR, cwd: Path | None = None) -> str:
    """The command, run from `cwd` (default: the current folder), that opens JupyterLab on the welcome
    notebook of the workbook in `directory`.

    For a workbook inside `cwd` (the course's folder, for the default), JupyterLab serves `cwd` and its file
    browser opens there, so that the README and ``notebooks/`` are in reach too (opened as ``jupyter lab
    FILE``, it would show the file's own folder): ``LabApp.default_url`` is the page JupyterLab opens in the
    browser, and its ``file-browser-path`` says where the file browser opens.
    """
    welcome = directory / WELCOME
    here = (Path.cwd() if cwd is None else cwd).resolve()
    if not directory.resolve().is_relative_to(here):
        return f"jupyter lab {welcome}"
    path = quote(welcome.resolve().relative_to(here).as_posix())
    return f'jupyter lab --notebook-dir=. --LabApp.default_url="/lab/tree/{path}?file-browser-path=/"'


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_manifest(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise WorkbookError(
            f"{path} cannot be read ({err}); it records which notebooks you have not edited. Move it aside "
            "to continue: every existing notebook is then kept as yours"
        ) from None
    written = data.get("written") if isinstance(data, dict) else None
    if not isinstance(written, dict) or not all(isinstance(v, str) for v in written.values()):
        raise WorkbookError(
            f"{path} is not a workbook record; move it aside to continue: every existing notebook is then "
            "kept as yours"
        )
    return dict(written)


def _place(name: str, new: bytes, target: Path, record: dict[str, str]) -> Written:
    """Write `new` to `target` unless that would overwrite the learner's work; update `record`."""
    if not target.exists():
        target.write_bytes(new)
        record[name] = _digest(new)
        return Written(name, "written", target)
    current = _digest(target.read_bytes())
    if current == _digest(new):
        record[name] = current
        return Written(name, "up to date", target)
    if record.get(name) == current:  # exactly as written last time: the learner has not saved it since
        target.write_bytes(new)
        record[name] = _digest(new)
        return Written(name, "updated", target)
    return Written(name, "kept", target)


def write_workbook(
    directory: Path = DEFAULT_DIR,
    notebooks: Iterable[Path] | None = None,
    *,
    say: Callable[[str], None] = print,
) -> list[Written]:
    """Write the workbook to `directory` (created if needed) from `notebooks` (default: the instructor
    notebooks); report each file with `say`. Everything is converted before anything is written."""
    sources = list(notebooks) if notebooks is not None else instructor_notebooks()
    converted = [(path.name, nbformat.writes(workbook_notebook(path)).encode("utf-8")) for path in sources]
    # the slides' style sheet (RISE loads it for each notebook in its folder): the same slides in the workbook
    style = sources[0].parent / SLIDE_STYLE if sources else None
    if style is not None and style.is_file():
        converted.append((SLIDE_STYLE, style.read_bytes()))
    if directory.exists() and not directory.is_dir():
        raise WorkbookError(f"{directory} exists and is not a folder")
    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / MANIFEST
    record = _read_manifest(manifest)
    results = []
    for name, new in converted:
        result = _place(name, new, directory / name, record)
        # An edited copy made from an older version (or from an unknown one): the new version goes beside it.
        if result.action == "kept" and record.get(name) != _digest(new):
            beside = Path(name).stem + UPDATED + Path(name).suffix
            placed = _place(beside, new, directory / beside, record)
            result = Written(name, "refused" if placed.action == "kept" else "beside", placed.path)
        results.append(result)
        say(_describe(result, directory / name))
    manifest.write_text(json.dumps({"written": record}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return results


def _describe(result: Written, target: Path) -> str:
    if result.action == "written":
        return f"{target}: written"
    if result.action == "up to date":
        return f"{target}: up to date"
    if result.action == "updated":
        return f"{target}: updated to the course's new version (you had not changed it)"
    if result.action == "kept":
        return f"{target}: kept as you left it"
    if result.action == "beside":
        return f"{target}: kept as you left it; the course's new version is beside it, in {result.path.name}"
    return (
        f"{target}: kept as you left it, and so is {result.path.name}, which you edited too; move "
        f"{result.path.name} aside and run this again to receive the course's new version"
    )
