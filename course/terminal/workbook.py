"""``python -m course workbook``: write the learner's own copy of the lessons, and say how to open it."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from course.terminal.exits import EXIT_OK, EXIT_USAGE

__all__ = ["workbook"]


def workbook(directory: Path, out: TextIO, err: TextIO) -> int:
    """Write the workbook to `directory` (`course.publishing.write_workbook`), saying what is written."""
    # Imported here: nbformat is needed by this command only, not by every start of python -m course.
    from course.publishing import WorkbookError, lab_command, write_workbook

    def say(line: str) -> None:
        out.write(line + "\n")

    try:
        write_workbook(directory, say=say)
    except (WorkbookError, OSError) as problem:
        err.write(f"the workbook was not written: {problem}\n")
        return EXIT_USAGE
    out.write(f"Your workbook is in {directory}. Open it with: {lab_command(directory)}\n")
    return EXIT_OK
