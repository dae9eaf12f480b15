"""Shared test set-up.

Runs before any test module and before nbval starts a kernel, so these settings reach every notebook kernel:
- thread counts are pinned so float results are identical run to run;
- COURSE_DB points at a throw-away file so executing notebooks never touches a learner's real progress.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

_SCRATCH = Path(tempfile.mkdtemp(prefix="attention-course-tests-"))
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)
os.environ["COURSE_DB"] = str(_SCRATCH / "progress.sqlite3")


# The tests whose every case is a whole lesson run (a kernel, top to bottom): dealt out case by case, so that
# both cores share them, where every other file's tests stay together on one worker (see below).
SPREAD = (
    "tests/lessons/test_seed_sweep.py::test_the_lesson_holds_on_other_seeds[",
    "tests/publishing/test_workbook_runs.py::test_unsolved_workbook_runs_and_says_not_written_yet[",
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile`` (pyproject's addopts), pytest-xdist keeps each file's tests on one worker:
    a notebook's cells run in order in one kernel, and a module's fixtures are made once. This scheduler
    does the same, except that each case of the tests in ``SPREAD`` is a unit of its own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class _FilesAndLessonRuns(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(SPREAD) else super()._split_scope(nodeid)

    return _FilesAndLessonRuns(config, log)
