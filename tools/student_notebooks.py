"""Generate student versions of the lesson notebooks.

Every ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` block in a code cell (markers included) is replaced by

    # YOUR CODE HERE
    raise NotImplementedError("write your solution here")

at the indentation of the BEGIN marker. The outputs and execution counts of the cells that held solutions
are cleared; every other cell (markdown cells included) is copied untouched, so the student still sees the
lesson's results. Nothing is written unless every notebook's markers are balanced and not nested.

Usage: python tools/student_notebooks.py [--out DIR] [NOTEBOOK ...]
(default: every notebooks/*.ipynb containing solution markers, written to student/ at the repository root)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat

REPO_ROOT = Path(__file__).resolve().parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
PLACEHOLDER = ("# YOUR CODE HERE", 'raise NotImplementedError("write your solution here")')


class MarkerError(ValueError):
    """A code cell whose solution markers are unbalanced or nested."""


def _marker(line: str) -> str | None:
    """BEGIN or END when the line is a solution marker (surrounding whitespace ignored), else None."""
    stripped = line.strip()
    return stripped if stripped in (BEGIN, END) else None


def has_markers(source: str) -> bool:
    return any(_marker(line) for line in source.splitlines())


def strip_solutions(source: str) -> tuple[str, int]:
    """Return the source with every solution block replaced by the placeholder, and the number of blocks.

    Raises MarkerError on an END without a BEGIN, a BEGIN inside a block, or a BEGIN never closed.
    """
    out: list[str] = []
    removed = 0
    open_line: int | None = None  # 1-based line number of the BEGIN marker of the block being skipped
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        marker = _marker(line)
        if marker == BEGIN:
            if open_line is not None:
                raise MarkerError(f"nested {BEGIN!r} on line {number} (block opened on line {open_line})")
            open_line = number
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(f"{indent}{text}\n" for text in PLACEHOLDER)
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


def student_notebook(path: Path) -> tuple[nbformat.NotebookNode, int]:
    """Read a notebook and return its student version and the number of solution blocks removed."""
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    total = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            source, removed = strip_solutions(cell.source)
        except MarkerError as e:
            raise MarkerError(f"{_display(path)}, cell {index}: {e}") from None
        if removed:
            cell.source = source
            cell.outputs = []
            cell.execution_count = None
            total += removed
    return nb, total


def default_notebooks() -> list[Path]:
    notebooks = []
    for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        if any(cell.cell_type == "code" and has_markers(cell.source) for cell in nb.cells):
            notebooks.append(path)
    return notebooks


def _display(path: Path) -> str:
    """The path relative to the working directory when it lies below it, else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write student copies of notebooks with the solution blocks replaced by placeholders."
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "student",
        help="output folder (default: student/ at the repo root)",
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        metavar="NOTEBOOK",
        help="notebooks to convert (default: every notebooks/*.ipynb with solution markers)",
    )
    args = parser.parse_args(argv)
    paths: list[Path] = args.notebooks or default_notebooks()

    targets: dict[str, Path] = {}
    for path in paths:
        if not path.is_file():
            print(f"error: {_display(path)}: no such notebook", file=sys.stderr)
            return 1
        if path.name in targets:
            other = _display(targets[path.name])
            print(
                f"error: {_display(path)} and {other} would both be written to {path.name}", file=sys.stderr
            )
            return 1
        targets[path.name] = path

    # Convert everything before writing anything, so a bad notebook leaves the output folder as it was.
    converted = []
    for path in paths:
        try:
            converted.append((path, *student_notebook(path)))
        except MarkerError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1

    args.out.mkdir(parents=True, exist_ok=True)
    for path, nb, removed in converted:
        target = args.out / path.name
        nbformat.write(nb, target, version=nbformat.NO_CONVERT)
        plural = "" if removed == 1 else "s"
        print(f"{_display(path)} -> {_display(target)}: {removed} solution{plural} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
