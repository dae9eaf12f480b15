"""``python -m course export-anki``, ``export-progress`` and ``import-progress``: take the questions, or
your progress, elsewhere (`course.publishing`, `course.progress`).

Each returns the exit status: 0 done, 1 the question bank is invalid (``export-anki``), 2 bad arguments, a
file that cannot be read or written, or a progress file that cannot be used. Nothing is written on an error:
an import checks the whole file first, then merges it in one transaction.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from course.bank import BankError, load_bank
from course.lessons import lesson_id
from course.progress import (
    Progress,
    ProgressFileError,
    db_path,
    lines,
    open_store,
    path_source,
    plural,
    read_progress,
    server_url,
)
from course.terminal.check import invalid_bank
from course.terminal.exits import EXIT_OK, EXIT_STORE, EXIT_USAGE
from course.terminal.writing import NOT_DONE, NotWritable, check_writable, not_done
from scheduler import LogEntry, Storage, StoreError, StoreNotFoundError

__all__ = ["TRANSFERS", "transfer"]

TRANSFERS = ("export-anki", "export-progress", "import-progress")


def transfer(args: argparse.Namespace, out: TextIO, err: TextIO, at: datetime) -> int:
    """Run the transfer command `args.command` at time `at`; return the exit status."""
    if args.command == "export-anki":
        return export_anki(args, out, err, at)
    try:
        if args.command == "export-progress":
            return _export_progress(Path(args.file), args.db, out, at)
        return _import_progress(Path(args.file), args.db, out, at)
    except ProgressFileError as problem:
        err.write(f"{problem}\n")
        return EXIT_USAGE
    except NotWritable as refused:
        err.write(f"{refused.problem}\n{NOT_DONE[args.command]}\n")
        return EXIT_STORE
    except StoreNotFoundError as problem:
        err.write(f"no progress yet: there is no progress file at {problem.path}; nothing to export\n")
        return EXIT_STORE
    except StoreError as problem:
        err.write(f"{problem}\n{not_done(args, problem)}")
        return EXIT_STORE


def export_anki(args: argparse.Namespace, out: TextIO, err: TextIO, at: datetime) -> int:
    """Write the bank's questions of the lessons asked for (default: all) to an Anki package."""
    from course.publishing import write_package  # here: genanki and the widgets' rendering load for this only

    try:
        bank = load_bank(args.bank)
    except BankError as problem:
        return invalid_bank(problem, args.command, out, err)
    try:
        asked = {lesson_id(raw, bank.lessons()) for raw in args.lessons}
    except ValueError as problem:
        err.write(f"{problem}\n")
        return EXIT_USAGE
    lessons = [lesson for lesson in bank.lessons() if not asked or lesson in asked]
    path = Path(args.file)
    try:
        notes = write_package(bank, lessons, path, at)
    except OSError as problem:
        err.write(f"{path} cannot be written ({problem.strerror or problem}); nothing was written\n")
        return EXIT_USAGE
    out.write(
        f"Wrote {plural(notes, 'note')} ({_span(lessons, bank.lessons())}) to {path}. "
        "Import it in Anki: File > Import.\n"
    )
    return EXIT_OK


def _span(lessons: Sequence[str], every: Sequence[str]) -> str:
    """``lesson 03``, ``lessons 00-08`` (a run of the bank's lessons), or ``lessons 01, 04``."""
    if len(lessons) == 1:
        return f"lesson {lessons[0]}"
    first = every.index(lessons[0])
    if list(every[first : first + len(lessons)]) == list(lessons):
        return f"lessons {lessons[0]}-{lessons[-1]}"
    return f"lessons {', '.join(lessons)}"


def _export_progress(path: Path, db: str | None, out: TextIO, at: datetime) -> int:
    """Write the learner's progress to `path` (replacing it whole); the store is only read."""
    with _opened(db, create=False) as store, store.snapshot():
        progress = Progress(
            store.enrolled(),
            [LogEntry(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.reviews()],
            [LogEntry(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.cram_reviews()],
            store.nudges(),
            store.predictions(),
        )
    _write_text(path, "".join(line + "\n" for line in lines(progress, at)))
    counts = _counts(len(progress.reviews), len(progress.practice), len(progress.enrollments))
    extra = _nudged(len(progress.nudges), len(progress.predictions))
    out.write(f"Wrote {counts}{extra} to {path}.\n")
    return EXIT_OK


def _import_progress(path: Path, db: str | None, out: TextIO, at: datetime) -> int:
    """Check the whole file (nothing in it after `at`), then, once the learner's store is known to take
    writes, merge it in (a missing store is created by the merge, never before nor on a refusal)."""
    progress = read_progress(path, at)
    if not len(progress):
        out.write(f"Nothing to import: {path} holds no answers and no lessons.\n")
        return EXIT_OK
    with _opened(db, create=True) as store:
        check_writable(store)
        merged = store.merge(
            progress.reviews, progress.practice, progress.enrollments, progress.nudges, progress.predictions
        )
    extra = _nudged(merged.nudges, merged.predictions)
    out.write(
        f"Imported {_counts(merged.answers, merged.practice, merged.decks)}{extra} "
        f"from {path}; "
        f"skipped {merged.skipped} already present.\n"
    )
    return EXIT_OK


def _counts(answers: int, practice: int, lessons: int) -> str:
    return (
        f"{plural(answers, 'answer')}, {plural(practice, 'practice answer')} and {plural(lessons, 'lesson')}"
    )


def _nudged(count: int, predictions: int = 0) -> str:
    """The cards brought back and the predictions, as the counts' sentence adds them (nothing for none)."""
    parts = [f"{plural(count, 'card')} brought back by mistakes"] if count else []
    parts += [plural(predictions, "prediction")] if predictions else []
    return f" (and {' and '.join(parts)})" if parts else ""


def _opened(db: str | None, *, create: bool) -> Storage:
    if server_url(db) is not None:  # the learner's rows in a class database
        return open_store(db, create=create)
    return open_store(db_path(db), create=create, named_by=path_source(db))


def _write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step (a temporary file beside it, then renamed); on failure a
    `ProgressFileError` and `path` as it was."""
    try:
        handle, staged = tempfile.mkstemp(dir=path.resolve().parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
                file.write(text)
            os.replace(staged, path)
        except BaseException:
            os.unlink(staged)
            raise
    except OSError as problem:
        raise ProgressFileError(f"{path} cannot be written ({problem.strerror or problem})") from None
