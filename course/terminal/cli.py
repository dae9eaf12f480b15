"""``python -m course``: review, quiz, cram, stats, check, workbook, export-slides, transfers, settings,
optimize, session-report and class-report, in a terminal.

This is the outermost layer: the only place of the terminal interface that reads the clock (`now`, or the
hidden ``--now`` option that freezes it for tests and demos). Exit status: 0 done, 1 the question bank is
invalid (or, with ``check --strict``, has lint warnings), 2 the progress database cannot be used (missing,
locked, corrupt, newer, or read-only where answers or settings are to be saved), the workbook cannot be
written or bad arguments, 3 ``optimize`` found too few reviews to fit to (nothing changed), 130 interrupted
(Ctrl-C), 129 the terminal was closed (SIGHUP), 143 asked to stop (SIGTERM), 141 the output was closed early
(e.g. piped into ``head``). It never shows a traceback for any of these.

Every command that saves checks that it can before it asks a question or does the work it saves
(`course.terminal.writing`): a read-only, locked or full progress file is reported first, with what was not
done.

Stopping never loses an answer already given: Ctrl-C, a closed terminal (SIGHUP) and SIGTERM stop ``review``,
``quiz`` and ``cram`` the way typing q does, at the prompt on screen (a signal that comes while an answer is
being saved waits for the next prompt), so that a right answer counted as Good is saved before stopping.
Ctrl-C while the learner's code runs stops only the code: nothing is saved, and they run it again.

The commands live in `course.terminal`; the progress text they print, in `course.progress`.
"""

from __future__ import annotations

import argparse
import errno
import io
import random
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from course.bank import BankError, load_bank
from course.progress import (
    calibration_report,
    db_path,
    local_tz,
    open_store,
    path_source,
    progress_report,
    server_url,
)
from course.terminal.arguments import limits, parser
from course.terminal.check import check, invalid_bank
from course.terminal.class_report import class_report_command
from course.terminal.console import (
    Console,
    Stops,
    no_stops,
    silence,
    terminal_width,
    tolerate_encoding_errors,
)
from course.terminal.cram import cram
from course.terminal.exits import (
    EXIT_BROKEN_PIPE,
    EXIT_HANGUP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STORE,
    EXIT_USAGE,
)
from course.terminal.quiz import quiz
from course.terminal.review import START, review
from course.terminal.scheduling import SCHEDULING, optimize, settings
from course.terminal.session import NotSaved
from course.terminal.session_report import session_report
from course.terminal.slides import export_slides
from course.terminal.transfer import TRANSFERS, transfer
from course.terminal.workbook import workbook
from course.terminal.writing import NOT_DONE, NotWritable, not_done
from scheduler import Storage, StoreError, StoreNotFoundError

__all__ = ["main", "now"]

_ASKING = ("review", "quiz", "cram")  # the commands that ask questions: stopped at a prompt (`Stops`)


def now() -> datetime:
    """The current time, UTC-aware. Tests replace it (or pass ``--now``)."""
    return datetime.now(timezone.utc)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    rng: random.Random | None = None,
) -> int:
    """Run one command; return the exit status. Closed standard streams are allowed: no stdin reads as an
    empty input, no stderr drops the messages, no stdout is reported (exit status 2). `rng`: where the order
    of each question's options is drawn from (default: ``random.Random(--seed)``, unseeded without it)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    err = err if err is not None else io.StringIO()
    args = parser().parse_args(argv)
    if out is None:
        err.write("python -m course: the standard output is closed\n")
        return EXIT_USAGE
    if args.command == "workbook":
        return workbook(Path(args.dir), out, err)
    if args.command == "export-slides":
        return export_slides(args.lesson, Path(args.out), out, err)
    source = stdin if stdin is not None else sys.stdin
    if stdin is None and stdout is None:
        tolerate_encoding_errors(sys.stdin, sys.stdout)
    try:
        with Stops().installed() if args.command in _ASKING else no_stops() as stops:
            status = _run(args, source if source is not None else io.StringIO(), out, err, rng, stops)
            return status if stops.pending is None else stops.pending.status  # one came after the last prompt
    except BrokenPipeError:
        if out is sys.stdout:
            silence(out)
        return EXIT_BROKEN_PIPE
    except OSError as problem:  # the terminal was closed under us: what was answered is saved already
        if problem.errno != errno.EIO:
            raise
        return EXIT_HANGUP
    except KeyboardInterrupt:
        out.write("\nStopped: every answer given so far is saved.\n")
        return EXIT_INTERRUPTED


def _run(
    args: argparse.Namespace,
    stdin: TextIO,
    out: TextIO,
    err: TextIO,
    rng: random.Random | None = None,
    stops: Stops | None = None,
) -> int:
    """Load the bank, then run check, or open the progress file and run stats, cram, quiz or review; or run
    one of the transfers (export-anki, export-progress, import-progress), or settings or optimize."""
    if args.command in TRANSFERS:
        return transfer(args, out, err, args.now if args.now is not None else now())
    if args.command in SCHEDULING:
        return _scheduling(args, out, err, args.now if args.now is not None else now())
    try:
        bank = load_bank(args.bank)
    except BankError as problem:
        return invalid_bank(problem, args.command, out, err)
    if args.command == "check":
        return check(bank, out, strict=args.strict)
    if args.command == "session-report":
        return session_report(args, bank, out, err)
    if args.command == "class-report":
        at = args.now if args.now is not None else now()
        return class_report_command(args, bank, out, err, at, local_tz())
    clock: Callable[[], datetime] = (lambda: args.now) if args.now is not None else now
    console = Console(stdin, out, terminal_width(), stops)

    def run(store: Storage) -> int:
        if args.command == "stats":
            console.say(progress_report(store, bank.items(), clock(), local_tz(), bank.predictions()))
            if args.calibration:
                console.say(calibration_report(store, bank.items()))
            return EXIT_OK
        order_rng = rng if rng is not None else random.Random(args.seed)
        if args.command == "cram":
            return cram(console, err, store, bank, args.lessons, clock, order_rng)
        if args.command == "quiz":
            return quiz(console, err, store, bank, args.lesson, clock, local_tz(), order_rng)
        return review(console, store, bank, clock, local_tz(), limits(args), order_rng)

    return _using_store(args, err, run)


def _scheduling(args: argparse.Namespace, out: TextIO, err: TextIO, at: datetime) -> int:
    """settings or optimize, at `at`, on the existing progress file."""
    if args.command == "settings":
        return _using_store(args, err, lambda store: settings(args, store, out, at, local_tz()))
    return _using_store(args, err, lambda store: optimize(args, store, out, err, at))


def _using_store(args: argparse.Namespace, err: TextIO, run: Callable[[Storage], int]) -> int:
    """`run` on the opened progress file, closed afterwards; its problems reported, exit status 2."""
    store = None
    try:
        store = _open(args)
        return run(store)
    except StoreNotFoundError as problem:
        if server_url(args.db) is not None:  # the class database is not there, or not installed
            err.write(f"{problem}\n")
            return EXIT_STORE
        err.write(
            f"no progress yet: there is no progress file at {problem.path}. {_capitalized(START)}, to create "
            "it; if your progress lives elsewhere, pass --db PATH or set COURSE_DB\n"
        )
        return EXIT_STORE
    except NotSaved as failed:
        err.write(f"{failed.problem}\nYour last answer was not saved ({failed.done} before it).\n")
        return EXIT_STORE
    except NotWritable as refused:  # found before anything was asked or done
        err.write(f"{refused.problem}\n{NOT_DONE[args.command]}\n")
        return EXIT_STORE
    except StoreError as problem:
        err.write(f"{problem}\n{not_done(args, problem)}")
        return EXIT_STORE
    finally:
        if store is not None:
            store.close()


def _capitalized(text: str) -> str:
    """`text` with its first letter a capital, the rest as it is."""
    return text[:1].upper() + text[1:]


def _open(args: argparse.Namespace) -> Storage:
    """Open the progress file; opening creates nothing. Only ``quiz``, and ``cram`` with named lessons, may
    create a missing file (a learner may start there), and only when the first answer is saved: quitting
    before that leaves nothing behind. Otherwise a missing file is reported. A missing folder is reported in
    every case (only the per-user default folder is created, with the file), so a mistyped ``--db`` or
    ``COURSE_DB`` is noticed before any question is asked."""
    create = args.command == "quiz" or (args.command == "cram" and bool(args.lessons))
    if server_url(args.db) is not None:  # a class database: the learner's own rows there
        return open_store(args.db, create=create)
    return open_store(db_path(args.db), create=create, named_by=path_source(args.db))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
