"""The seed a lesson runs with: 0, the run whose outputs the instructor edition stores, unless ``COURSE_SEED``
names another.

Every lesson's import cell says ``SEED = lesson_seed()`` and draws all its randomness from ``SEED``, so
``COURSE_SEED=3`` runs the whole lesson on other numbers: ``tools/seed_sweep.py`` does that for seeds 1-4,
and the tests run it, so that no assert and no claim holds for seed 0 only.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import nbformat

__all__ = ["SEED_VARIABLE", "failed_cell", "lesson_seed", "run_with_seed"]

SEED_VARIABLE = "COURSE_SEED"


def lesson_seed(default: int = 0) -> int:
    """The lesson's seed: ``COURSE_SEED`` as a whole number from 0 to 2**32 - 1, or `default` when unset."""
    text = os.environ.get(SEED_VARIABLE, "").strip()
    if not text:
        return default
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"{SEED_VARIABLE} must be a whole number such as 3, not {text!r}") from None
    if not 0 <= seed < 2**32:
        raise ValueError(f"{SEED_VARIABLE} must be from 0 to 4294967295 (numpy's seeds), not {seed}")
    return seed


_THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ARROW = re.compile(r"-+>\s*\d+\s+(.*)")


def run_with_seed(
    path: Path, seed: int, nb: nbformat.NotebookNode | None = None, timeout: int = 900
) -> nbformat.NotebookNode:
    """The notebook at `path` (or `nb`, read from it) executed top to bottom in a fresh kernel in its own
    folder, with ``COURSE_SEED=seed``, one thread (as the tests run) and a throw-away progress database. It
    stops at the first cell that raises, with nbclient's ``CellExecutionError``; the error stays in that
    cell's outputs."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4) if nb is None else nb
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, **dict.fromkeys(_THREADS, "1")}
        env.update({SEED_VARIABLE: str(seed), "COURSE_DB": str(Path(scratch) / "progress.sqlite3")})
        folder = str(Path(path).resolve().parent)
        resources = {"metadata": {"path": folder}}
        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources=resources).execute(env=env)
    return nb


def failed_cell(nb: nbformat.NotebookNode) -> str | None:
    """Where `nb`, as executed, raised: the cell's index, the line that raised and the error; None if no cell
    did."""
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                frames = _ANSI.sub("", "\n".join(output.traceback)).splitlines()
                arrows = [_ARROW.match(frame.strip()) for frame in frames]  # "---> 23 assert ..."
                line = next((arrow.group(1) for arrow in arrows if arrow), "")
                where = f" at {line!r}" if line else ""
                return f"cell {index}{where}: {output.ename}: {output.evalue}".rstrip(": ")
    return None
