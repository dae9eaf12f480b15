"""``python -m course class-report [FILE...]``: how a class is doing, from its learners' exported progress
or from the class database.

Each FILE is one learner's progress, written by ``python -m course export-progress`` (the learner is named
after the file, without its suffix). Each is replayed into a scratch store in a temporary folder (the schedule
is recomputed from the answers, as ``import-progress`` would) and `course.classroom` reports on them all.
With no FILE, ``--db`` or ``COURSE_DB`` must name a class database (``postgresql://...``): it is read in one
snapshot, as the role the URL logs in as (an instructor reads the class; a learner would see only themselves).
Nothing is written. Exit status: 0 done, 2 a file or the database cannot be used, or neither is named.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TextIO

from course.bank import Bank
from course.classroom import class_report, class_report_lines, instructor_url
from course.progress import SERVICE_SCHEMES, ProgressFileError, read_progress
from course.terminal.exits import EXIT_OK, EXIT_STORE, EXIT_USAGE
from scheduler import Answer, PredictionEvent, Store, StoreError

__all__ = ["SERVER_SCHEMES", "class_report_command"]

SERVER_SCHEMES = ("postgresql://", "postgres://")


def class_report_command(
    args: argparse.Namespace, bank: Bank, out: TextIO, err: TextIO, at: datetime, tz: tzinfo
) -> int:
    """Print the report on the learners in ``args.files``, or in the class database, at ``at``."""
    if not args.files:
        return _from_server(args, bank, out, err, at, tz)
    names = [Path(file).stem for file in args.files]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        err.write(f"two files name the same learner: {', '.join(repeated)} (rename one)\n")
        return EXIT_USAGE
    answers: dict[str, list[Answer]] = {}
    due: dict[str, dict[str, datetime]] = {}
    predictions: dict[str, list[PredictionEvent]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, file in zip(names, args.files, strict=True):
            try:
                progress = read_progress(Path(file), at)
            except ProgressFileError as problem:
                err.write(f"{problem}\nNothing was reported.\n")
                return EXIT_USAGE
            with Store.open(Path(scratch) / f"{len(answers)}.sqlite3", create=True) as store:
                store.merge(progress.reviews, progress.practice, progress.enrollments)
                answers[name], due[name] = store.answers(), store.due_times()
            predictions[name] = progress.predictions
    report = class_report(answers, due, bank, at, tz, predictions=predictions)
    out.write("\n".join(class_report_lines(report, limit=args.top)) + "\n")
    return EXIT_OK


def _from_server(
    args: argparse.Namespace, bank: Bank, out: TextIO, err: TextIO, at: datetime, tz: tzinfo
) -> int:
    url = args.db or os.environ.get("COURSE_DB", "")
    if url.startswith(SERVICE_SCHEMES):
        try:
            instructor_url(url)
        except StoreError as problem:
            err.write(f"{problem}\n")
            return EXIT_USAGE
    if not url.startswith(SERVER_SCHEMES):
        err.write(
            "class-report needs the learners' progress files (python -m course export-progress FILE, one per "
            "learner) or a class database: --db or COURSE_DB set to postgresql://...\n"
        )
        return EXIT_USAGE
    from scheduler.postgres import class_records  # psycopg: only for a class database

    try:
        records = class_records(instructor_url(url))
    except StoreError as problem:
        err.write(f"{problem}\n")
        return EXIT_STORE
    report = class_report(records.answers, records.due_times, bank, at, tz, predictions=records.predictions)
    out.write("\n".join(class_report_lines(report, limit=args.top)) + "\n")
    return EXIT_OK
