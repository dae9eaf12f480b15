"""Every lesson holds on seeds 1-4, not only on the seed 0 whose outputs it stores: each lesson's single seed
cell reads ``COURSE_SEED`` (``course.lesson_seed``), no other cell seeds with a number of its own, and lessons
01-09 run top to bottom on each seed with every assert holding (outputs are not compared: they differ). The
seeds of a lesson run side by side, a kernel per core."""

from __future__ import annotations

import ast
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from course import lesson_seed
from course.seeds import failed_cell, run_with_seed

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("0[0-9]-*.ipynb"))
SWEPT = [path for path in LESSONS if not path.name.startswith("00")]
SEEDS = (1, 2, 3, 4)
SEEDING = {"default_rng", "manual_seed", "seed", "RandomState", "SeedSequence"}
SEED_LINES = (
    "SEED = lesson_seed()  # 0, the stored run, unless COURSE_SEED names another",
    "rng = np.random.default_rng(SEED)",
    "torch.manual_seed(SEED)",
)


@pytest.mark.parametrize(
    ("value", "seed"), [(None, 0), ("", 0), ("3", 3), (" 7 ", 7), ("4294967295", 4294967295)]
)
def test_the_seed_is_the_environments_or_0(
    monkeypatch: pytest.MonkeyPatch, value: str | None, seed: int
) -> None:
    if value is None:
        monkeypatch.delenv("COURSE_SEED", raising=False)
    else:
        monkeypatch.setenv("COURSE_SEED", value)
    assert lesson_seed() == seed


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("three", "COURSE_SEED must be a whole number such as 3, not 'three'"),
        ("1.5", "COURSE_SEED must be a whole number such as 3, not '1.5'"),
        ("-1", "COURSE_SEED must be from 0 to 4294967295 (numpy's seeds), not -1"),
        ("4294967296", "COURSE_SEED must be from 0 to 4294967295 (numpy's seeds), not 4294967296"),
    ],
)
def test_a_seed_that_is_not_one_is_named(monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    monkeypatch.setenv("COURSE_SEED", value)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        lesson_seed()


def _code(source: str) -> str:
    """A cell's source as Python: IPython's magics and shell lines blanked."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.stem[:2])
def test_the_seed_cell_reads_the_seed(path: Path) -> None:
    seed_cell = nbformat.read(path, as_version=4).cells[1].source.splitlines()
    assert [line for line in SEED_LINES if line not in seed_cell] == []


def literal_seeds(nb: nbformat.NotebookNode) -> list[str]:
    """Every call in `nb` that seeds a generator with a number of its own (``default_rng(1)``,
    ``Generator().manual_seed(123)``) rather than one derived from SEED, as 'cell N: call'."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(_code(cell.source))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in SEEDING and isinstance(node.args[0], ast.Constant):
                found.append(f"cell {index}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.stem[:2])
def test_no_cell_seeds_with_a_number_of_its_own(path: Path) -> None:
    assert literal_seeds(nbformat.read(path, as_version=4)) == []


def test_a_number_of_its_own_is_found() -> None:
    cells = [
        nbformat.v4.new_code_cell("%matplotlib inline\nrng = np.random.default_rng(1)"),
        nbformat.v4.new_code_cell("g = torch.Generator().manual_seed(123)\nh = g.manual_seed(SEED + 1)"),
        nbformat.v4.new_markdown_cell("default_rng(1) in prose"),
    ]
    found = literal_seeds(nbformat.v4.new_notebook(cells=cells))
    assert found == ["cell 0: np.random.default_rng(1)", "cell 1: torch.Generator().manual_seed(123)"]


def _run(path: Path, seed: int) -> str | None:
    """What went wrong when the lesson at `path` ran on `seed`, or None."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print(f'SEED={SEED}')"))  # which seed the lesson ran with
    try:
        run_with_seed(path, seed, nb=nb)
    except CellExecutionError:
        return f"seed {seed}: {failed_cell(nb)}"
    printed = "".join(output.get("text", "") for output in nb.cells[-1].outputs)
    return None if printed == f"SEED={seed}\n" else f"seed {seed}: the lesson ran with {printed.strip()}"


@pytest.mark.slow
@pytest.mark.parametrize("path", SWEPT, ids=lambda path: path.stem[:2])
def test_the_lesson_holds_on_other_seeds(path: Path) -> None:
    # the seeds run side by side, one kernel per core that this pytest-xdist worker has to itself (each
    # kernel on one thread, as nbval's): under `-n auto` on 2 cores, one kernel in each of the 2 workers
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    with ThreadPoolExecutor(min(len(SEEDS), max(1, (os.cpu_count() or 1) // workers))) as pool:
        failures = [failure for failure in pool.map(_run, [path] * len(SEEDS), SEEDS) if failure]
    assert failures == [], f"{path.stem} fails on {len(failures)} of seeds {SEEDS}"


def test_a_run_on_another_seed_names_the_cell_and_line_that_failed(tmp_path: Path) -> None:
    cells = [
        nbformat.v4.new_code_cell("from course import lesson_seed\n\nSEED = lesson_seed()"),
        nbformat.v4.new_code_cell("x = SEED + 1\nassert x != 3, f'x = {x}'"),
        nbformat.v4.new_code_cell("print('not reached')"),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "n.ipynb")
    assert failed_cell(run_with_seed(tmp_path / "n.ipynb", 1)) is None
    nb = nbformat.read(tmp_path / "n.ipynb", as_version=4)
    with pytest.raises(CellExecutionError):
        run_with_seed(tmp_path / "n.ipynb", 2, nb=nb)
    assert failed_cell(nb) == "cell 1 at \"assert x != 3, f'x = {x}'\": AssertionError: x = 3"
    assert nb.cells[2].outputs == []
