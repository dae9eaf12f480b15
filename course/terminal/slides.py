"""``python -m course export-slides LESSON``: write a lesson's slides as a folder that opens offline."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from course.terminal.exits import EXIT_OK, EXIT_USAGE

__all__ = ["export_slides"]


def export_slides(lesson: str, directory: Path, out: TextIO, err: TextIO) -> int:
    """Write `lesson`'s slides (`course.publishing.export_slides`) to `directory`, saying where."""
    # Imported here: nbconvert is needed by this command only, not by every start of python -m course.
    from course.publishing import SlideExportError, instructor_notebook
    from course.publishing import export_slides as write

    try:
        notebook = instructor_notebook(lesson)
    except SlideExportError as problem:
        err.write(f"export-slides: {problem}\n")
        return EXIT_USAGE
    try:
        page = write(notebook, directory)
    except (SlideExportError, OSError) as problem:
        err.write(f"the slides were not written: {problem}\n")
        return EXIT_USAGE
    out.write(f"Wrote the slides to {page} (the folder opens offline in a browser)\n")
    return EXIT_OK
