"""``python -m course class-report FILE...``: how a class is doing, from its learners' exported progress.

Each FILE is one learner's progress, written by ``python -m course export-progress`` (the learner is named
after the file, without its suffix). Each is replayed into a scratch store in a temporary folder (the schedule
is recomputed from the answers, as ``import-progress`` would) and `course.class_report` reports on them all.
The files are only read. Exit status: 0 done, 2 a file is missing or not a progress file (nothing reported).
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TextIO

from course.bank import Bank
from course.class_report import class_report, report_lines
from course.progress_file import ProgressFileError, read_progress
from course.terminal.exits import EXIT_OK, EXIT_USAGE
from scheduler import Answer, Store

__all__ = ["class_report_command"]


def class_report_command(
    args: argparse.Namespace, bank: Bank, out: TextIO, err: TextIO, at: datetime, tz: tzinfo
) -> int:
    """Print the report on the learners in ``args.files`` at ``at``."""
    names = [Path(file).stem for file in args.files]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        err.write(f"two files name the same learner: {', '.join(repeated)} (rename one)\n")
        return EXIT_USAGE
    answers: dict[str, list[Answer]] = {}
    due: dict[str, dict[str, datetime]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, file in zip(names, args.files, strict=True):
            try:
                progress = read_progress(Path(file))
            except ProgressFileError as problem:
                err.write(f"{problem}\nNothing was reported.\n")
                return EXIT_USAGE
            with Store.open(Path(scratch) / f"{len(answers)}.sqlite3", create=True) as store:
                store.merge(progress.reviews, progress.practice, progress.enrollments)
                answers[name], due[name] = store.answers(), store.due_times()
    report = class_report(answers, due, bank, at, tz)
    out.write("\n".join(report_lines(report, limit=args.top)) + "\n")
    return EXIT_OK
