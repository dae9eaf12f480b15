"""``python -m course``: review, cram, stats, check and workbook, in a terminal.

This is the outermost layer: the only place of the terminal interface that reads the clock (`now`, or the
hidden ``--now`` option that freezes it for tests and demos). Exit status: 0 done, 1 the question bank is
invalid (or, with ``check --strict``, has lint warnings), 2 the progress database cannot be used (missing,
locked, corrupt, newer, or read-only where answers are to be saved), the workbook cannot be written or bad
arguments, 130 interrupted (Ctrl-C), 129 the terminal was closed (SIGHUP), 143 asked to stop (SIGTERM), 141
the output was closed early (e.g. piped into ``head``). It never shows a traceback for any of these.

Stopping never loses an answer already given: Ctrl-C, a closed terminal (SIGHUP) and SIGTERM stop ``review``
and ``cram`` the way typing q does, at the prompt on screen (a signal that comes while an answer is being
saved waits for the next prompt), so that a right answer counted as Good is saved before stopping.
"""

from __future__ import annotations

import argparse
import errno
import io
import os
import random
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from course.bank import Bank, BankError, Question, load_bank
from course.lessons import lesson_id, lesson_title
from course.lint import lint
from course.presenting import (
    NUMBERS,
    RECALL_RATINGS,
    RIGHT_RATINGS,
    Presentation,
    Verdict,
    auto_rating,
    final_rating,
    grade_choice,
    grade_number,
    present,
)
from course.progress import Outlook, db_path, local_tz, open_store, outlook, path_source
from course.ratings import HARD_MEANS, NAMES
from course.terminal_text import terminal_text

if TYPE_CHECKING:
    from scheduler import Item, Limits, Rating, Session, Store

__all__ = ["main", "now"]

EXIT_OK, EXIT_BANK, EXIT_STORE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 2, 130, 141
EXIT_HANGUP, EXIT_TERMINATED = 128 + 1, 128 + 15
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WELCOME = "00-welcome.ipynb"
# --now must leave room for a century of intervals and for any time zone, so no date arithmetic overflows.
_EARLIEST, _LATEST = datetime(1970, 1, 1, tzinfo=timezone.utc), datetime(9000, 1, 1, tzinfo=timezone.utc)
_TYPED_Q, _END_OF_INPUT, _CTRL_C = "you typed q", "end of input", "Ctrl-C"
_HANGUP, _TERMINATED = "the terminal was closed", "SIGTERM"
_SIGNALS = {  # the signals that stop review and cram at a prompt (`_Stops`): name -> (reason, exit status)
    "SIGINT": (_CTRL_C, EXIT_INTERRUPTED),
    "SIGHUP": (_HANGUP, EXIT_HANGUP),
    "SIGTERM": (_TERMINATED, EXIT_TERMINATED),
}
_MIN_WIDTH = 20


def now() -> datetime:
    """The current time, UTC-aware. Tests replace it (or pass ``--now``)."""
    return datetime.now(timezone.utc)


class _Quit(Exception):
    """The learner stopped: typed q, ended the input, pressed Ctrl-C, closed the terminal or the program was
    asked to stop (`reason` says which, `status` is the exit status). `keep` is a rating already known for the
    question on screen, to save before stopping."""

    def __init__(self, reason: str, keep: Rating | None = None, status: int = EXIT_OK) -> None:
        super().__init__(reason)
        self.reason = reason
        self.keep = keep
        self.status = status

    def keeping(self, rating: Rating) -> _Quit:
        """The same stop, carrying `rating` to save first."""
        return _Quit(self.reason, rating, self.status)


class _Interrupted(KeyboardInterrupt):
    """A stopping signal (Ctrl-C, SIGHUP, SIGTERM) that came while a prompt was waiting for input."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class _Stops:
    """While installed, Ctrl-C (SIGINT), a closed terminal (SIGHUP) and SIGTERM stop the command at a prompt:
    one that comes while a prompt waits interrupts the reading; one that comes at any other time (while an
    answer is graded or saved) is held until the next prompt, so that no answer is ever half saved."""

    def __init__(self) -> None:
        self.waiting = False
        self.pending: _Interrupted | None = None

    def handle(self, signum: int, frame: object) -> None:
        reason, status = _SIGNALS[signal.Signals(signum).name]
        stop = _Interrupted(reason, status)
        if self.waiting:
            raise stop
        if self.pending is None:
            self.pending = stop

    @contextmanager
    def installed(self) -> Iterator[_Stops]:
        """Install the handlers (only possible in the main thread), and restore the previous ones after. A
        signal that is ignored (``nohup`` ignores SIGHUP) stays ignored."""
        numbers = [getattr(signal, name) for name in _SIGNALS if hasattr(signal, name)]
        numbers = [number for number in numbers if signal.getsignal(number) is not signal.SIG_IGN]
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {number: signal.signal(number, self.handle) for number in numbers}
        try:
            yield self
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def raise_pending(self) -> None:
        if self.pending is not None:
            stop, self.pending = self.pending, None
            raise _Quit(stop.reason, status=stop.status)


class _Console:
    """Line-based terminal I/O. When stdin is not a terminal, each answer read is echoed, so a transcript of a
    piped session reads like the interactive one. Text from the question bank is shown with `show`, wrapped
    to `width` columns."""

    def __init__(self, stdin: TextIO, stdout: TextIO, width: int = 80, stops: _Stops | None = None) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.width = max(width, _MIN_WIDTH)
        self.stops = stops if stops is not None else _Stops()
        try:
            self.echo = not stdin.isatty()
        except (AttributeError, ValueError):
            self.echo = True

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def show(self, markdown: str, prefix: str = "") -> None:
        """Say `prefix`, then the question bank's `markdown` as terminal text (`terminal_text`); lines after
        the first are indented under the text. After a prefix too long for that, the text starts on the next
        line, indented by 4."""
        if self.width - len(prefix) < _MIN_WIDTH:
            self.say(prefix.rstrip())
            prefix = " " * 4
        hang = " " * len(prefix)
        lines = terminal_text(markdown, self.width - len(hang)).split("\n")
        self.say("\n".join([prefix + lines[0]] + [hang + line if line else "" for line in lines[1:]]))

    def ask(self, prompt: str) -> str:
        """One stripped line of input; raises `_Quit` on ``q``, at the end of input, on Ctrl-C, when the
        terminal is closed and on SIGTERM (`_Stops`). A line that cannot be decoded is returned as U+FFFD,
        an answer no prompt accepts, so that the prompt asks again."""
        self.stops.raise_pending()
        self.stops.waiting = True  # from before the prompt shows: a learner may stop as soon as it does
        try:
            self.stdout.write(prompt)
            self.stdout.flush()
            line = self.stdin.readline()
        except KeyboardInterrupt as stop:
            self.stdout.write("\n")
            if isinstance(stop, _Interrupted):
                raise _Quit(stop.reason, status=stop.status) from None
            raise _Quit(_CTRL_C, status=EXIT_INTERRUPTED) from None
        except UnicodeDecodeError:
            line = "\N{REPLACEMENT CHARACTER}\n"
        except OSError:  # the terminal is gone (EIO), or the input cannot be read
            line = ""
        finally:
            self.stops.waiting = False
        if not line:
            self.stdout.write("\n")
            raise _Quit(_END_OF_INPUT)
        answer = line.strip()
        if self.echo:
            self.stdout.write(answer + "\n")
        if answer.lower() in ("q", "quit"):
            raise _Quit(_TYPED_Q)
        return answer


class _NotSaved(Exception):
    """An answer could not be saved: `problem` says why, `done` what was saved before it."""

    def __init__(self, problem: Exception, done: str) -> None:
        super().__init__(str(problem))
        self.problem = problem
        self.done = done


def _iso_time(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"needs a UTC offset, e.g. {text}+00:00")
    out_of_range = f"out of range: {text!r} (use a time from {_EARLIEST.year} to {_LATEST.year - 1})"
    try:
        value = value.astimezone(timezone.utc)
    except OverflowError:  # hours from the first or the last moment datetime can hold
        raise argparse.ArgumentTypeError(out_of_range) from None
    if not _EARLIEST <= value < _LATEST:
        raise argparse.ArgumentTypeError(out_of_range)
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course",
        description="Spaced-repetition reviews of the attention course's self-check questions.",
        epilog="Progress file: --db PATH, else $COURSE_DB, else progress.sqlite3 in your per-user data "
        "directory. Exit status: 0 done, 1 invalid question bank (or lint warnings with check --strict), "
        "2 progress file unusable, workbook not written, or bad arguments.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sub: argparse.ArgumentParser, *, db: bool = True) -> None:
        if db:
            sub.add_argument(
                "--db", metavar="PATH", help="progress file (default: $COURSE_DB, else per-user file)"
            )
        sub.add_argument("--bank", metavar="DIR", help="question bank directory (default: the course's own)")
        sub.add_argument("--now", type=_iso_time, help=argparse.SUPPRESS)

    def seed(sub: argparse.ArgumentParser) -> None:
        # fixes the order in which each question's options are shown, for tests and demos
        sub.add_argument("--seed", type=int, help=argparse.SUPPRESS)

    def limits(sub: argparse.ArgumentParser) -> None:
        from scheduler import Limits

        default = Limits()
        sub.add_argument(
            "--limit-new",
            type=_count,
            metavar="N",
            help=f"new questions per day (default {default.new_per_day})",
        )
        sub.add_argument(
            "--limit-reviews",
            type=_count,
            metavar="N",
            help=f"reviews per day (default {default.reviews_per_day})",
        )

    review = commands.add_parser(
        "review",
        help="answer the questions that are due",
        description="Answer the questions that are due in your enrolled lessons. Type q at any prompt to "
        "stop: every answer is saved as soon as you give it.",
    )
    common(review)
    limits(review)
    seed(review)
    cram = commands.add_parser(
        "cram",
        help="practise lessons' questions without changing your schedule",
        description="Go through every question of the lessons named (default: your enrolled lessons). "
        "Practice answers are logged apart and never change your review schedule.",
    )
    cram.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson ids, e.g. 01 02")
    common(cram)
    seed(cram)
    stats = commands.add_parser(
        "stats", help="what is due now, later today and in the next 7 days, and how you are doing"
    )
    common(stats)
    check = commands.add_parser(
        "check",
        help="validate the question bank",
        description="Validate the question bank (exit status 1 when it is invalid), then list the warnings "
        "about questions that are valid but could be better (exit status 0, or 1 with --strict).",
    )
    common(check, db=False)
    check.add_argument("--strict", action="store_true", help="exit with status 1 when there are warnings")
    workbook = commands.add_parser(
        "workbook",
        help="write your own copy of the lessons to work in",
        description="Write the lessons, the welcome and the review notebook to DIR with outputs cleared "
        "and the exercises' solutions replaced by stubs. A notebook you have edited is never overwritten: "
        "when the course has a newer version of it, that version is written beside yours as "
        "NN-name.updated.ipynb.",
    )
    workbook.add_argument("dir", nargs="?", default="workbook", metavar="DIR", help="default: workbook")
    return parser


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
    args = _parser().parse_args(argv)
    if out is None:
        err.write("python -m course: the standard output is closed\n")
        return EXIT_USAGE
    if args.command == "workbook":
        return _workbook(Path(args.dir), out, err)
    source = stdin if stdin is not None else sys.stdin
    if stdin is None and stdout is None:
        _tolerate_encoding_errors(sys.stdin, sys.stdout)
    try:
        with _Stops().installed() if args.command in ("review", "cram") else _no_stops() as stops:
            status = _run(args, source if source is not None else io.StringIO(), out, err, rng, stops)
            return status if stops.pending is None else stops.pending.status  # one came after the last prompt
    except BrokenPipeError:
        if out is sys.stdout:
            _silence(out)
        return EXIT_BROKEN_PIPE
    except OSError as problem:  # the terminal was closed under us: what was answered is saved already
        if problem.errno != errno.EIO:
            raise
        return EXIT_HANGUP
    except KeyboardInterrupt:
        out.write("\nStopped: every answer given so far is saved.\n")
        return EXIT_INTERRUPTED


@contextmanager
def _no_stops() -> Iterator[_Stops]:
    """For commands that ask nothing: signals keep their usual effect."""
    yield _Stops()


def _width() -> int:
    """The terminal's width in columns ($COLUMNS, else the terminal's, else 80)."""
    return shutil.get_terminal_size().columns


def _run(
    args: argparse.Namespace,
    stdin: TextIO,
    out: TextIO,
    err: TextIO,
    rng: random.Random | None = None,
    stops: _Stops | None = None,
) -> int:
    from scheduler import StoreError, StoreNotFoundError

    clock: Callable[[], datetime] = (lambda: args.now) if args.now is not None else now
    try:
        bank = load_bank(args.bank)
    except BankError as problem:
        if args.command == "check":
            for line in problem.problems:
                out.write(line + "\n")
            count = len(problem.problems)
            out.write(f"question bank has {count} problem{'s' if count != 1 else ''}\n")
        else:
            err.write("the question bank is invalid (python -m course check lists the problems):\n")
            err.write(str(problem) + "\n")
        return EXIT_BANK
    if args.command == "check":
        n_lessons = len(bank.lessons())
        out.write(f"question bank OK: {_plural(len(bank), 'question')} in {_plural(n_lessons, 'lesson')}\n")
        warnings = lint(bank)
        for warning in warnings:
            out.write(f"{warning}\n")
        out.write(f"{_plural(len(warnings), 'warning') if warnings else 'no warnings'}\n")
        return EXIT_BANK if warnings and args.strict else EXIT_OK

    console = _Console(stdin, out, _width(), stops)
    store = None
    try:
        path = db_path(args.db)
        store = _open(path, args)
        if args.command == "stats":
            _stats(console, store, bank, clock(), local_tz())
            return EXIT_OK
        order_rng = rng if rng is not None else random.Random(args.seed)
        if args.command == "cram":
            return _cram(console, err, store, bank, args.lessons, clock, order_rng)
        return _review(console, store, bank, clock, local_tz(), _limits(args), order_rng)
    except StoreNotFoundError as problem:
        err.write(
            f"no progress yet: there is no progress file at {problem.path}. Answer a quiz in a lesson "
            f"notebook (start with {_WELCOME}) to create it; if your progress lives elsewhere, pass --db "
            "PATH or set COURSE_DB\n"
        )
        return EXIT_STORE
    except _NotSaved as failed:
        err.write(f"{failed.problem}\nYour last answer was not saved ({failed.done} before it).\n")
        return EXIT_STORE
    except StoreError as problem:
        err.write(f"{problem}\n")
        if args.command != "stats" and getattr(problem, "reason", None) == "read-only":
            err.write(_NOTHING_ASKED)
        return EXIT_STORE
    finally:
        if store is not None:
            store.close()


_NOTHING_ASKED = "No question was asked, as no answer could be saved to it.\n"


def _workbook(directory: Path, out: TextIO, err: TextIO) -> int:
    from course.workbook import WorkbookError, write_workbook

    try:
        write_workbook(directory, say=lambda line: out.write(line + "\n"))
    except (WorkbookError, OSError) as problem:
        err.write(f"the workbook was not written: {problem}\n")
        return EXIT_USAGE
    welcome = directory / "00-welcome.ipynb"
    # From the folder above the workbook (the course's, for the default), so the README is in reach too.
    inside = directory.resolve().is_relative_to(Path.cwd().resolve())
    command = f"jupyter lab --notebook-dir=. {welcome}" if inside else f"jupyter lab {welcome}"
    out.write(f"Your workbook is in {directory}. Open it with: {command}\n")
    return EXIT_OK


def _tolerate_encoding_errors(*streams: TextIO | None) -> None:
    """Read undecodable input and write unencodable text as replacement characters, not as a traceback."""
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="replace")


def _silence(stream: TextIO) -> None:
    """After a broken pipe, point `stream`'s file at the null device, so that the final flush is quiet."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)


def _open(path: Path, args: argparse.Namespace) -> Store:
    """Open the progress file; opening creates nothing. Only ``cram`` with named lessons may create a missing
    file (a workshop may start there), and only when its first answer is logged: quitting before that leaves
    nothing behind. Otherwise a missing file is reported. A missing folder is reported in every case (only
    the per-user default folder is created, with the file), so a mistyped ``--db`` or ``COURSE_DB`` is
    noticed before any question is asked."""
    create = args.command == "cram" and bool(args.lessons)
    return open_store(path, create=create, named_by=path_source(args.db))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _limits(args: argparse.Namespace) -> Limits:
    from scheduler import Limits

    given = {"new_per_day": args.limit_new, "reviews_per_day": args.limit_reviews}
    return Limits(**{key: value for key, value in given.items() if value is not None})


def _lessons(ids: Sequence[str]) -> str:
    return f"lesson{'' if len(ids) == 1 else 's'} {', '.join(ids)}"


def _lesson_label(lesson: str) -> str:
    return f"{lesson} {lesson_title(lesson)}"


# ---------------------------------------------------------------------------------------------------- review


def _review(
    console: _Console,
    store: Store,
    bank: Bank,
    clock: Callable[[], datetime],
    tz: tzinfo,
    limits: Limits,
    rng: random.Random,
) -> int:
    """Serve what is due; when the queue runs out, serve what came due meanwhile (learning steps), until
    nothing is due now or today's limits are reached."""
    from scheduler import Session

    items = bank.items()
    enrolled = [lesson for lesson in bank.lessons() if lesson in store.enrolled()]  # course order
    if not enrolled:
        console.say(
            f"No lesson started yet: answer a quiz in a lesson notebook (start with {_WELCOME}) and its "
            "questions will come up here."
        )
        return EXIT_OK
    start = clock()
    session = Session(store, items, start, tz, limits)
    if not session.remaining:
        view = outlook(store, items, start, tz, limits)
        console.say(
            _after(view, start) if _held(view) else f"Nothing is due right now. {_next_due(view, start)}"
        )
        return EXIT_OK
    store.check_writable()  # before the first question, not after its answer
    console.say(
        f"Review of {_lessons(enrolled)}: {session.due_count} due now, {session.new_count} new. "
        "Type q at any prompt to stop; each answer is saved as you go."
    )
    answered = 0
    try:
        while session.remaining:
            while (item := session.next()) is not None:
                card = store.card(item.id)
                console.say()
                console.say(
                    f"[{answered + 1}/{answered + session.remaining}] {_heading(bank[item.id])}, "
                    f"{'new' if card is None else card.state}"
                )
                stop = _review_one(console, session, item, bank[item.id], clock, rng, answered)
                answered += 1
                if stop is not None:
                    raise stop
            session = Session(store, items, clock(), tz, limits)
            if session.remaining:
                console.say()
                console.say(
                    f"Due now as well: {_plural(session.remaining, 'question')} that came due during this "
                    "session."
                )
    except _Quit as stop:
        return _stopped(console, stop, _plural(answered, "answer") + " saved")
    at = clock()
    view = outlook(store, items, at, tz, limits)
    console.say()
    console.say(f"Session over: {_plural(answered, 'answer')} saved. {_after(view, at)}")
    return EXIT_OK


def _review_one(
    console: _Console,
    session: Session,
    item: Item,
    question: Question,
    clock: Callable[[], datetime],
    rng: random.Random,
    answered: int,
) -> _Quit | None:
    """Ask `question` and save the answer (`answered`: how many were saved before). Returns the learner's
    stop when they stopped where the answer was already known (a right answer counted as Good): it is saved,
    and the caller stops after counting it."""
    from scheduler import Rating, StoreError

    began = time.monotonic()

    def intervals() -> dict[Rating, timedelta]:  # read only when the ratings are offered
        return session.intervals(item, clock())

    rating, stop = _rating_or_kept(lambda: _ask(console, question, intervals, rng))
    at = clock()
    try:
        review = session.answer(item, rating, at, _elapsed_ms(began))
    except StoreError as problem:
        raise _NotSaved(problem, _plural(answered, "answer") + " saved") from problem
    if rating == Rating.AGAIN:
        console.say("Saved: Again. It comes back before this session ends.")
    else:
        console.say(f"Saved: {NAMES[rating]}. Next review in {_interval(review.due - at)}.")
    return stop


def _rating_or_kept(ask: Callable[[], Rating]) -> tuple[Rating, _Quit | None]:
    """The rating `ask` returns and None; or, when the learner stops where a rating is already known (a right
    answer counted as Good), that rating and the stop, to raise once the rating is saved."""
    try:
        return ask(), None
    except _Quit as stop:
        if stop.keep is None:
            raise
        return stop.keep, _Quit(stop.reason, status=stop.status)


def _stopped(console: _Console, stop: _Quit, done: str) -> int:
    console.say(f"Stopped ({stop.reason}): {done}.")
    return stop.status


def _held(view: Outlook) -> str | None:
    """What today's limits hold back, and the options that raise them; None when nothing is held back."""
    held = view.held_text()
    if held is None:
        return None
    options = " and ".join(
        ["--limit-reviews N"] * bool(view.held_due) + ["--limit-new N"] * bool(view.held_new)
    )
    return f"Today's limit is reached: {held} until tomorrow ({options} to allow more)."


def _after(view: Outlook, at: datetime) -> str:
    """What comes once nothing more is due now: what today's limits hold back, and when the next question is
    due (unless due questions are held back: they come first)."""
    held = _held(view)
    if held is None:
        return _next_due(view, at)
    if view.held_due or view.next_due is None:
        return held
    return f"{held} {_next_due(view, at)}"


def _next_due(view: Outlook, at: datetime) -> str:
    if view.next_due is None:
        return "No question is scheduled yet."
    return f"Next question due in {_interval(view.next_due - at)}."


# ------------------------------------------------------------------------------------------------------ cram


def _cram(
    console: _Console,
    err: TextIO,
    store: Store,
    bank: Bank,
    requested: Sequence[str],
    clock: Callable[[], datetime],
    rng: random.Random,
) -> int:
    from scheduler import CramSession, StoreError

    if requested:
        try:
            lessons = [lesson_id(raw, bank.lessons()) for raw in requested]
        except ValueError as problem:
            err.write(f"{problem}\n")
            return EXIT_USAGE
    else:
        lessons = [lesson for lesson in bank.lessons() if lesson in store.enrolled()]
        if not lessons:
            err.write("no lesson started yet: name the lessons to practise, e.g. python -m course cram 00\n")
            return EXIT_USAGE
    lessons = [lesson for lesson in bank.lessons() if lesson in lessons]  # course order
    items = [item for item in bank.items() if item.deck in lessons]
    store.check_writable()  # before the first question, not after its answer
    console.say(
        f"Practice of {_lessons(lessons)}: {_plural(len(items), 'question')}. Practice answers are "
        "logged apart and do not change your review schedule. Type q at any prompt to stop."
    )
    session = CramSession(store, items)
    answered = 0
    try:
        while (item := session.next()) is not None:
            question = bank[item.id]
            console.say()
            console.say(f"[{answered + 1}/{answered + session.remaining}] {_heading(question)}, practice")
            began = time.monotonic()
            rating, stop = _rating_or_kept(lambda question=question: _ask(console, question, None, rng))
            try:
                session.answer(item, rating, clock(), _elapsed_ms(began))
            except StoreError as problem:
                raise _NotSaved(problem, _plural(answered, "practice answer") + " logged") from problem
            answered += 1
            console.say(f"Logged as practice: {NAMES[rating]}.")
            if stop is not None:
                raise stop
    except _Quit as stop:
        return _stopped(console, stop, _plural(answered, "practice answer") + " logged")
    console.say()
    console.say(f"Practice over: {_plural(answered, 'practice answer')} logged; your schedule is unchanged.")
    return EXIT_OK


# --------------------------------------------------------------------------------------------------- asking


def _heading(question: Question) -> str:
    return f"lesson {_lesson_label(question.lesson)}, {question.kind} ({question.id})"


def _elapsed_ms(began: float) -> int:
    return round((time.monotonic() - began) * 1000)


def _interval(delta: timedelta) -> str:
    from scheduler import format_interval

    return format_interval(max(delta, timedelta(0)))


def _ask(
    console: _Console,
    question: Question,
    intervals: Callable[[], dict[Rating, timedelta]] | None,
    rng: random.Random,
) -> Rating:
    """Show `question` (a choice question's options in an order drawn from `rng`), read the learner's
    answer, return the rating to record (`course.presenting`'s rules). Raises `_Quit`."""
    console.show(question.prompt)
    if question.kind == "recall":
        console.ask("Press Enter to show the answer (q to quit): ")
        console.show(str(question.answer), "Answer: ")
        _explain(console, question)
        return _choose_rating(console, intervals, "How well did you remember it?")
    if question.kind == "choice":
        verdict = _ask_choice(console, present(question, rng, NUMBERS))
    else:
        verdict = _ask_number(console, question)
    _explain(console, question)
    if not verdict.right:
        return verdict.rating
    return _confirm_good(console, intervals)


def _ask_choice(console: _Console, presentation: Presentation) -> Verdict:
    """List the options as presented, numbered from 1, read the number of one (or ?), say the verdict and
    why each option is right or wrong, naming each by the number shown."""
    shown = presentation.shown()
    labels = [entry.label for entry in shown]
    for entry in shown:
        console.show(entry.option.text, f"  {entry.label}) ")
    while True:
        reply = console.ask(f"Your answer [1-{labels[-1]}, ? if you don't know, q to quit]: ")
        if reply == "?" or reply in labels:
            break
        console.say(f"Please type a number from 1 to {labels[-1]}, ? or q.")
    verdict = grade_choice(presentation, None if reply == "?" else labels.index(reply))
    if verdict.right:
        console.say(f"{verdict.word}.")
    else:
        right = presentation.option(presentation.right_position)
        console.show(right.text, f"{verdict.word}: the answer is {verdict.answer}) ")
    for entry in verdict.options:
        mark = " (right answer)" if entry.right else ""
        console.show(entry.option.why, f"  {entry.label}){mark} ")
    return verdict


def _ask_number(console: _Console, question: Question) -> Verdict:
    """Read a number (or ?) until one is typed, and say the verdict."""
    while True:
        reply = console.ask("Your answer (a number; ? if you don't know; q to quit): ")
        try:
            verdict = grade_number(question, None if reply == "?" else reply)
            break
        except ValueError:
            console.say("Please type a number, ? or q.")
    console.say(f"{verdict.word}: the answer is {verdict.answer}.")
    return verdict


def _confirm_good(console: _Console, intervals: Callable[[], dict[Rating, timedelta]] | None) -> Rating:
    """A right answer counts as Good unless the learner picks Hard or Easy (`final_rating`). Stopping here
    (q, end of input, Ctrl-C) keeps the Good: the `_Quit` raised carries it, to be saved before stopping."""
    hard, _, easy = RIGHT_RATINGS
    good = auto_rating(True)
    if intervals is None:
        reply_text = "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: "
    else:
        spans = intervals()
        reply_text = (
            f"Counted as Good ({_interval(spans[good])}). Press Enter to keep it, or type "
            f"2 for Hard ({_interval(spans[hard])}; {HARD_MEANS}) or 4 for Easy "
            f"({_interval(spans[easy])}): "
        )
    allowed = {f"{rating:d}": rating for rating in RIGHT_RATINGS}
    while True:
        try:
            reply = console.ask(reply_text)
        except _Quit as stop:
            raise stop.keeping(good) from None
        if reply == "":
            return good
        if reply in allowed:
            return final_rating(True, allowed[reply])
        console.say("Please press Enter, or type 2, 4 or q.")


def _explain(console: _Console, question: Question) -> None:
    console.show(question.explanation)
    console.say(f'See lesson {_lesson_label(question.lesson)}, section "{question.section}".')


def _choose_rating(
    console: _Console, intervals: Callable[[], dict[Rating, timedelta]] | None, heading: str
) -> Rating:
    if intervals is None:
        buttons = "   ".join(f"{rating:d} {NAMES[rating]}" for rating in RECALL_RATINGS)
    else:
        spans = intervals()
        buttons = "   ".join(
            f"{rating:d} {NAMES[rating]} {_interval(spans[rating])}" for rating in RECALL_RATINGS
        )
    console.say(f"{heading} ({HARD_MEANS})")
    console.say(f"  {buttons}")
    allowed = {f"{rating:d}": rating for rating in RECALL_RATINGS}
    while True:
        reply = console.ask("Your rating [1-4, q to quit]: ")
        if reply in allowed:
            return allowed[reply]
        console.say("Please type 1, 2, 3 or 4 (or q to quit).")


# ----------------------------------------------------------------------------------------------------- stats


def _stats(console: _Console, store: Store, bank: Bank, at: datetime, tz: tzinfo) -> None:
    from scheduler import day_start, stats

    result = stats(store, bank.items(), at, tz)
    enrolled = [lesson for lesson in bank.lessons() if lesson in store.enrolled()]
    first = day_start(at, tz).astimezone(tz).date()
    days = [_WEEKDAYS[(first + timedelta(days=k)).weekday()] for k in range(1, 8)]
    retention = (
        "n/a (no reviews of learned questions yet)"
        if result.true_retention is None
        else f"{result.true_retention:.1%} (first review each day of learned questions)"
    )
    console.say(f"Progress file:    {store.path}")
    console.say(
        f"Lessons started:  {', '.join(_lesson_label(x) for x in enrolled) if enrolled else 'none yet'}"
    )
    console.say(f"Due now:          {result.due_now}")
    console.say(f"Later today:      {result.due_later_today}")
    console.say("Next 7 days:     " + "".join(f"{day:>5}" for day in days))
    console.say("                 " + "".join(f"{count:>5}" for count in result.due_next_7_days))
    console.say(f"Reviews today:    {result.reviews_today}")
    console.say(f"Reviews in total: {result.reviews_total}")
    console.say(f"True retention:   {retention}")
    console.say(f"New available:    {result.new_available}")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
