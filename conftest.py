"""Shared test set-up.

Runs before any test module and before nbval starts a kernel, so these settings reach every notebook kernel:
- thread counts are pinned so float results are identical run to run;
- COURSE_DB points at a throw-away file so executing notebooks never touches a learner's real progress.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

# pytest keeps its assert-rewritten test modules as bytecode in __pycache__ (ignored by git), unless Python is
# told not to write bytecode: with PYTHONDONTWRITEBYTECODE set, as on the course's CI machines, every run and
# every xdist worker rewrites all 180 test modules again (about 10 s of a 15 s collection).
sys.dont_write_bytecode = False

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


# The longest units of work, with their seconds on this 2-core machine (one worker's share of the cores,
# under the other worker's load): dealt out first, longest first, so that no core is left alone with a long
# one at the end. xdist's own order (most tests first) sent the whole-lesson runs, one test each, last.
# Any other unit counts as a tenth of a second a test. The figures need only keep their order roughly.
LONGEST = {
    "tests/browser/test_first_day.py": 246,
    "tests/browser/test_slides.py": 150,
    "tests/browser/test_figure_zoom.py": 174,
    f"{SPREAD[0]}07]": 120,  # the seed sweep's four runs
    f"{SPREAD[0]}09]": 120,
    "notebooks/07-transformer-block.ipynb": 30,
    "tests/browser/test_code_limits.py": 75,
    "tests/classroom/test_hub.py": 78,
    "tests/terminal/test_cli.py": 66,
    "notebooks/09-a-tiny-gpt.ipynb": 57,
    f"{SPREAD[1]}09-a-tiny-gpt]": 41,  # the unsolved workbook's run
    f"{SPREAD[1]}07-transformer-block]": 25,
}


def _cost(scope: str, tests: int) -> float:
    return LONGEST.get(scope, tests / 10)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile`` (pyproject's addopts), pytest-xdist keeps each file's tests on one worker:
    a notebook's cells run in order in one kernel, and a module's fixtures are made once. This scheduler
    does the same, except that each case of the tests in ``SPREAD`` is a unit of its own, and that the
    units go out longest first (``LONGEST``)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class _FilesAndLessonRuns(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(SPREAD) else super()._split_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # xdist sends the unit at the front of its queue: bring the longest there first
            longest = max(self.workqueue, key=lambda scope: _cost(scope, len(self.workqueue[scope])))
            self.workqueue.move_to_end(longest, last=False)
            super()._assign_work_unit(node)

    return _FilesAndLessonRuns(config, log)


# Not in the quick loop, each for a reason it gives; the full suite runs them. Test files, or one test's id.
NOT_QUICK = (
    "tests/test_repository.py",  # ruff and mypy over the repository: run `ruff check .` and `mypy` yourself
    "tests/terminal/test_cli.py",  # `python -m course` as a subprocess, one per test
    "tests/terminal/test_code_terminal.py",  # the same, with signals and time limits
    "tests/terminal/test_review_time.py",  # a review in a subprocess, timed out on purpose
    "tests/terminal/test_settings.py",  # fits FSRS's weights
    "tests/scheduler/test_store_settings.py::test_a_fit_is_deterministic_and_usable",  # fits them twice
    "tests/scheduler/test_learner_days.py::test_a_fit_sees_only_the_learners_days",  # fits them
    "tests/lessons/test_code_runner.py",  # code stopped by its time limit, in subprocesses
    "tests/widgets/test_code_box.py::test_every_code_card_of_the_course",  # runs every code card
    # the widgets and the terminal shown thousands of times, to count where the right option lands
    *(
        f"tests/bank/test_presenting.py::test_{name}_is_fair"
        for name in ("quiz_widget", "review_widget", "cram_widget", "terminal")
    ),
    "tests/lessons/test_block.py::test_training_",  # trains the lesson 07 model
    "tests/lessons/test_gpt.py::test_the_checkpoint_loads_and_beats_the_baselines",  # generates text
    "tests/lessons/test_seq2seq.py::test_the_reversal_model_reaches",  # trains the lesson 06 model
    "tests/lessons/test_seed_sweep.py::test_a_run_on_another_seed",  # runs a notebook in a kernel
    "tests/widgets/test_offline.py",  # a class server stopped and started again under the widgets
    "tests/widgets/test_live.py::test_the_server_goes_away",  # the same
    "tests/scheduler/test_service_hub_tokens.py::test_the_command_says_so",  # the service in a subprocess
    "tests/publishing/test_slide_export.py",  # nbconvert writes a lesson's slides
    "tests/bank/test_render_linear.py::test_text_full_of_unclosed_markers",  # long inputs: linear time
    # every malformed URL through every command and every widget (the file's other tests stay)
    "tests/classroom/test_postgres_secrets.py::test_the_terminal_refuses_a_malformed_url",
    "tests/classroom/test_postgres_secrets.py::test_the_widgets_refuse_a_malformed_url",
    # each diagram and helper figure drawn at every size, to measure its text
    "tests/lessons/test_diagrams.py::test_heads_flow_fits_and_is_readable",
    "tests/lessons/test_diagrams.py::test_qkv_flow_fits_and_is_readable",
    "tests/lessons/test_figure_text.py::test_every_helper_figure_fits",
    "tests/lessons/test_explorers.py::test_mask_explorer_controls_redraw",  # redraws for every control
    "tests/scheduler/test_day_index.py::test_day_is_monotonic_across_transitions",  # every zone's transitions
    "tests/lessons/test_gpt.py::test_the_flop_formula_is_what_torch_counts",  # torch's flop counter
    "tests/publishing/test_predictions.py::test_every_prompt_of_the_course",  # every lesson's prompts
    "tests/lessons/test_shape.py",  # every notebook's shape (notebook_hygiene.py checks the most of it fast)
    "tests/publishing/test_workbook_runs.py",  # every lesson's workbook against its instructor edition
    "tests/test_import_structure.py",  # the packages' import graph, module by module
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `quick` (``python -m pytest -m quick``, CONTRIBUTING's loop before each commit) every test of the
    package code that runs in this process: not a notebook's cell, not `slow`, `browser` or `postgres` (nor
    asking for ``postgres_server``, which the class tests build on), not in ``NOT_QUICK``."""
    for item in items:
        if (
            isinstance(item, pytest.Function)
            and not any(item.get_closest_marker(name) for name in ("slow", "browser", "postgres"))
            and "postgres_server" not in item.fixturenames
            and not item.nodeid.startswith(NOT_QUICK)
        ):
            item.add_marker(pytest.mark.quick)
