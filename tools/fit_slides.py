"""Fit each lesson's slides to a 1280 x 720 projector: measure every cell's height on a RISE slide in
Chromium, then mark where a subslide must start so that no slide is taller than the screen.

Usage: python tools/fit_slides.py [NOTEBOOK ...]   (default: the lessons 00-09 under notebooks/)

Run it after editing a lesson (and after ``python -m course.publishing slides``); the slide test
(tests/browser/test_slides.py) fails when a lesson needs it. Needs Chromium and playwright, as the browser
tests do. For each notebook: the breaks are cleared, the notebook is measured as RISE shows it (in a
throw-away JupyterLab, with rise.css), `course.publishing._slides.fit_breaks` packs the cells, and the breaks
are written back (``cell.metadata["course"]["new_subslide"]``) with the slide types. A cell taller than a
slide by itself is named: shorten it or split it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

from course.publishing._slides import BREAK, PACKED_HEIGHT, SLIDE_HEIGHT, fit_breaks, mark_slides

ROOT = Path(__file__).resolve().parent.parent
# the browser tests' helpers (a throw-away JupyterLab, Chromium), after the course's own packages are imported
sys.path.append(str(ROOT / "tests"))

from browser.slides import open_slideshow, projector, step_through  # noqa: E402


def _clear(notebook: nbformat.NotebookNode) -> None:
    for cell in notebook.cells:
        course = cell.metadata.get("course", {})
        course.pop(BREAK, None)
        if not course:
            cell.metadata.pop("course", None)


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or sorted((ROOT / "notebooks").glob("0[0-9]-*.ipynb"))
    too_tall = 0
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "course"
        (root / "nb").mkdir(parents=True)
        shutil.copy(ROOT / "notebooks" / "rise.css", root / "nb" / "rise.css")
        with projector(root, Path(scratch)) as (lab, page):
            for path in paths:
                notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
                _clear(notebook)
                mark_slides(notebook)
                nbformat.write(notebook, root / "nb" / path.name)
                open_slideshow(page, lab.url(f"/rise/nb/{path.name}"))
                heights = [0.0] * len(notebook.cells)
                for state in step_through(page):
                    for index, height in state.cells:
                        heights[index] = max(heights[index], height)
                breaks = fit_breaks(notebook.cells, heights)
                for index in breaks:
                    notebook.cells[index].metadata.setdefault("course", {})[BREAK] = True
                mark_slides(notebook)
                nbformat.write(notebook, path)
                print(f"{path}: {len(breaks)} subslides added")
                for index, height in enumerate(heights):
                    if height > PACKED_HEIGHT:
                        print(f"  cell {index} is {height:.0f} px tall (a slide holds {SLIDE_HEIGHT})")
                        too_tall += height > SLIDE_HEIGHT
    return 1 if too_tall else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
