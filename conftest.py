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

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

_SCRATCH = Path(tempfile.mkdtemp(prefix="attention-course-tests-"))
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)
os.environ["COURSE_DB"] = str(_SCRATCH / "progress.sqlite3")
