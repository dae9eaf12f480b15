"""A stand-in: ``course.outlook`` moved to `course.progress`. It keeps a workbook written by an older version
of the course working (its review notebook imports ``progress_report`` from here) and says where the name
went; ``python -m course workbook`` refreshes that notebook's cell."""

from __future__ import annotations

import warnings

from course.progress import progress_report

__all__ = ["progress_report"]

warnings.warn(
    "course.outlook has moved to course.progress: write `from course.progress import progress_report` "
    "(python -m course workbook refreshes your review notebook).",
    FutureWarning,
    stacklevel=2,
)
