"""Slides: the slideshow metadata that lets every lesson be presented with JupyterLab's RISE extension.

RISE (the ``jupyterlab-rise`` extension) reads each cell's ``metadata.slideshow.slide_type``. The rules, one
per kind of cell, so that a lesson's slides follow its structure:

- the title cell, every numbered section (``## 1. ...``) and every other ``##`` heading (Exercises, Key
  takeaways, References, ...) starts a **slide**;
- a **Predict** prompt is a **fragment** (unless it is in a heading's cell, which stays a slide), and so is
  the code cell right after it (the one that reveals the answer): the room sees the question, answers, then
  the instructor reveals; the prompt's prediction widget (``predict("ID")``), between the two, shows with
  the prompt;
- any other Markdown cell starts a **subslide** (a slide below the section's), so that no slide runs long;
- the import-and-seed cell is **skipped** (it still runs; it only prints versions);
- any other code cell continues the slide of the text above it (``-``), unless the slide would then be taller
  than a 1280 x 720 projector: `fit_breaks` packs the cells by their heights on such a slide (measured in
  Chromium by ``tools/fit_slides.py``) and marks where a **subslide** must start instead (a code cell; a
  Predict prompt with its answer cell, the two together; or the answer cell of a prompt in a heading's cell,
  which then waits on a subslide of its own), in the cell's ``metadata.course`` (`BREAK`).

``rise.css`` beside the lessons (RISE loads it) caps every cell at a slide's height: long code and long
printouts scroll inside their cell, figures shrink to fit.

A heading can start a slide only where it starts a cell: `split_at_headings` splits a Markdown cell before
every ``##`` heading that is not its first line (the part above keeps the cell's id; each new cell gets one
of its own). `slide_types` computes the types, `mark_slides` writes them into a notebook (with the
notebook-level RISE settings `RISE_SETTINGS`), and ``python -m course.publishing slides
NOTEBOOK...`` splits notebooks in place.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_markdown_cell

__all__ = [
    "BREAK",
    "HEADING",
    "PREDICT",
    "RISE_SETTINGS",
    "SLIDE_HEIGHT",
    "fit_breaks",
    "main",
    "mark_slides",
    "slide_types",
    "split_at_headings",
]

HEADING = "## "  # a section heading (numbered, or Exercises, Key takeaways, Quiz, References, Where next)

PREDICT = "**Predict:**"
# Long cells scroll instead of being cut off; the slide number shows; one theme for every lesson.
RISE_SETTINGS: dict[str, Any] = {"scroll": True, "slideNumber": True, "theme": "white", "transition": "none"}
# How the import-and-seed cell starts (its output, versions, is not compared), or, in the learner's workbook,
# where that test marker is gone, the comment it opens with.
_IMPORTS = ("# NBVAL_IGNORE_OUTPUT", "# Imports and seeds")
# A cell that starts a subslide because the slide above it is full: ``cell.metadata["course"][BREAK]``.
BREAK = "new_subslide"
# The height, in CSS px, of a slide's content in RISE on a 1280 x 720 screen (measured in Chromium), and the
# height `fit_breaks` packs to: a margin for another machine's fonts.
SLIDE_HEIGHT = 684
PACKED_HEIGHT = 640


def slide_types(cells: Sequence[Any]) -> list[str]:
    """The slide type of each cell of a lesson, in order (see the module's rules)."""
    types: list[str] = []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        # the answer cell: right after the prompt, or after the prompt's prediction widget
        after_predict = index > 0 and (
            (_is_predict(cells[index - 1]) and not _is_widget(cell)) or _is_widget(cells[index - 1])
        )
        if index == 0 or (cell["cell_type"] == "markdown" and source.startswith(HEADING)):
            types.append("slide")
        elif cell["cell_type"] == "markdown":
            types.append("fragment" if _is_predict(cell) else "subslide")  # a heading stays a slide
        elif index == 1 and source.startswith(_IMPORTS):
            types.append("skip")
        elif _is_widget(cell) and index > 0 and _is_predict(cells[index - 1]):
            types.append("-")  # the prediction widget shows with its prompt
        else:
            types.append("fragment" if after_predict else "-")
        if types[-1] in ("-", "fragment") and _marked(cell):
            types[-1] = (
                "subslide"  # the slide above is full (an answer cell: its prompt is in the heading's cell)
            )
    return types


def _marked(cell: Any) -> bool:
    return bool(cell.get("metadata", {}).get("course", {}).get(BREAK))


def fit_breaks(cells: Sequence[Any], heights: Sequence[float], height: float = PACKED_HEIGHT) -> list[int]:
    """Where a subslide must start so that no slide is taller than `height`: the indices of the cells, given
    the cells of a lesson with no break marked yet and each cell's height on a slide.

    A Predict prompt and its answer cell are packed as one if they fit on a slide together; a slide that
    starts with something taller than `height` stays as it is (rise.css caps a cell; `tools/fit_slides.py`
    names any such cell).
    """
    types = slide_types(cells)
    breaks: list[int] = []
    filled = 0.0
    index = 0
    while index < len(types):
        # a prompt and its prediction widget stay together; with its answer too, unless the three are taller
        # than a slide: then the answer waits on the next subslide
        head = (
            2 if _is_predict(cells[index]) and index + 1 < len(cells) and _is_widget(cells[index + 1]) else 1
        )
        answer = index + head
        paired = _is_predict(cells[index]) and answer < len(types) and types[answer] == "fragment"
        fits = sum(heights[index : answer + 1]) <= height
        size = head + 1 if paired and types[index] == "fragment" and fits else head
        tall = sum(heights[index : index + size])
        if types[index] in ("slide", "subslide"):
            filled = tall
        elif types[index] == "skip":
            pass
        elif filled + tall > height and filled > 0:
            breaks.append(index)
            filled = tall
        else:
            filled += tall
        index += size
    return breaks


def _is_predict(cell: Any) -> bool:
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return bool(cell["cell_type"] == "markdown" and PREDICT in source)


def _is_widget(cell: Any) -> bool:
    """Whether `cell` is a Predict prompt's prediction widget, ``predict("ID")``."""
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return bool(cell["cell_type"] == "code" and source.strip().startswith('predict("'))


def split_at_headings(notebook: Any) -> int:
    """Split every Markdown cell of `notebook` (an nbformat node) before each ``##`` heading that is not its
    first line, so that every heading starts a cell; the number of cells added."""
    cells: list[Any] = []
    added = 0
    for cell in notebook.cells:
        cells.append(cell)
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.split("\n")
        starts, fenced = [0], False
        for number, line in enumerate(lines):
            fenced ^= line.lstrip().startswith(("```", "~~~"))  # a "## " line in a code block is code
            if number and not fenced and line.startswith(HEADING):
                starts.append(number)
        if len(starts) == 1:
            continue
        ends = [*starts[1:], len(lines)]
        parts = ["\n".join(lines[start:end]).strip("\n") for start, end in zip(starts, ends, strict=True)]
        cell.source = parts[0]
        for part in parts[1:]:
            new = new_markdown_cell(part)
            if notebook.nbformat_minor < 5:  # cell ids came with nbformat 4.5
                del new["id"]
            cells.append(new)
            added += 1
    notebook.cells = cells
    return added


def mark_slides(notebook: Any) -> bool:
    """Write the slide types and `RISE_SETTINGS` into `notebook` (an nbformat node); True if it changed."""
    changed = bool(notebook.metadata.get("rise") != RISE_SETTINGS)
    notebook.metadata["rise"] = dict(RISE_SETTINGS)
    for cell, kind in zip(notebook.cells, slide_types(notebook.cells), strict=True):
        if cell.metadata.get("slideshow") != {"slide_type": kind}:
            cell.metadata["slideshow"] = {"slide_type": kind}
            changed = True
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """Split and mark each notebook named in `argv` in place; say which changed."""
    paths = [Path(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    for path in paths:
        notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        if split_at_headings(notebook) + mark_slides(notebook):
            nbformat.write(notebook, path)
            print(f"marked {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
