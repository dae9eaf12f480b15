"""``python -m course session-report``: what past class review sessions showed at their end.

For each session (all of them, oldest first, or the last ``--last N``): the questions ranked by miss rate
and the lesson sections to revisit, as `course.classroom.class_review_lines` says. The class-session file is
only read. Exit status: 0 done, 2 the file is missing or cannot be used (it is left as it is).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from course.bank import Bank
from course.classroom import ClassReviewLog, ClassReviewLogError, class_review_lines, class_reviews_path
from course.terminal.exits import EXIT_OK, EXIT_STORE

__all__ = ["session_report"]


def session_report(args: argparse.Namespace, bank: Bank, out: TextIO, err: TextIO) -> int:
    """Print the report of the sessions in ``--sessions`` (default `class_reviews_path()`)."""
    path = class_reviews_path(args.sessions)
    try:
        with ClassReviewLog.open(path, create=False) as log:
            sessions = log.sessions(last=args.last)
    except ClassReviewLogError as problem:
        err.write(f"{problem}\n")
        return EXIT_STORE
    if not sessions:
        out.write(f"No class review session in {path}.\n")
        return EXIT_OK
    out.write("\n\n".join("\n".join(class_review_lines(session, bank)) for session in sessions) + "\n")
    return EXIT_OK
