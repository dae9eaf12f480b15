"""Run the instructor notebooks on other seeds: every assert must hold there too, not for seed 0 only.

Usage: python tools/seed_sweep.py [--seeds 1-4] [--jobs 2] [NOTEBOOK ...]   (default: lessons 01-09)

Each lesson's import cell says ``SEED = lesson_seed()``, which reads ``COURSE_SEED``. This runs each notebook
top to bottom in a fresh kernel with ``COURSE_SEED`` set (``course.seeds.run_with_seed``: one thread per
kernel and a throw-away progress database, as the tests run) and lists every cell that raised. Stored outputs
are not compared (another seed prints other numbers), and nothing is written into the notebooks. The tests
run the same sweep (tests/lessons/test_seed_sweep.py); this is the quick way to try a lesson on many seeds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

from course.seeds import failed_cell, run_with_seed

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted(path for path in (ROOT / "notebooks").glob("0[1-9]-*.ipynb"))


def _one(path: Path, seed: int) -> tuple[str, int, str | None, float]:
    start = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    try:
        run_with_seed(path, seed, nb=nb)
        failure = None
    except CellExecutionError:
        failure = failed_cell(nb) or "a cell raised, but no error output was stored"
    return path.stem, seed, failure, time.perf_counter() - start


def _seeds(text: str) -> list[int]:
    """'1-4' or '1,3,7' as a list of seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: lessons 01-09")
    parser.add_argument("--seeds", type=_seeds, default=_seeds("1-4"), help="e.g. 1-4 or 0,5,9 (default 1-4)")
    cores = os.cpu_count() or 1
    parser.add_argument("--jobs", type=int, default=cores, help="kernels at once (default: the cores)")
    args = parser.parse_args(argv)
    paths = [path.resolve() for path in args.notebooks] or LESSONS
    runs = [(path, seed) for path in paths for seed in args.seeds]
    print(f"== {len(paths)} notebook(s) on seeds {', '.join(map(str, args.seeds))}, {args.jobs} at a time")
    start, failed = time.perf_counter(), 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for name, seed, failure, seconds in pool.map(_one, *zip(*runs, strict=True)):
            failed += failure is not None
            print(f"{name} seed {seed}: {failure or 'passed'} ({seconds:.0f} s)", flush=True)
    print(f"{len(runs) - failed} of {len(runs)} runs passed in {time.perf_counter() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
