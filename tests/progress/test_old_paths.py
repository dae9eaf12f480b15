"""A workbook written by an older version imports names from where they were: the review notebook's
``from course.outlook import progress_report`` still runs, and says where the name went."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from course.progress import progress_report

ROOT = Path(__file__).resolve().parents[2]


def test_the_old_outlook_path_gives_the_same_function_and_says_where_it_moved() -> None:
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from course.outlook import progress_report\n"
        "import course.progress\n"
        "print(progress_report is course.progress.progress_report)\n"
        "print([(w.category.__name__, str(w.message)) for w in caught])\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert ran.stdout.splitlines() == [
        "True",
        "[('FutureWarning', 'course.outlook has moved to course.progress: write `from course.progress import "
        "progress_report` (python -m course workbook refreshes your review notebook).')]",
    ]
    assert callable(progress_report)
