"""``python -m course``: review, cram, stats and check, in a terminal.

This is the outermost layer: the only place of the terminal interface that reads the clock (`now`, or the
hidden ``--now`` option that freezes it for tests and demos). Exit status: 0 done, 1 the question bank is
invalid, 2 the progress database cannot be used (missing, locked, corrupt, newer) or bad arguments,
130 interrupted (Ctrl-C), 141 the output was closed early (e.g. piped into ``head``). It never shows a
traceback for any of these.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from course.bank import Bank, BankError, Question, load_bank
from course.lessons import lesson_id, lesson_title
from course.progress import Outlook, db_path, local_tz, open_store, outlook
from course.ratings import HARD_MEANS, NAMES

if TYPE_CHECKING:
    from scheduler import Item, Limits, Rating, Session, Store

__all__ = ["main", "now"]

EXIT_OK, EXIT_BANK, EXIT_STORE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 2, 130, 141
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WELCOME = "00-welcome.ipynb"
# --now must leave room for a century of intervals and for any time zone, so no date arithmetic overflows.
_EARLIEST, _LATEST = datetime(1970, 1, 1, tzinfo=timezone.utc), datetime(9000, 1, 1, tzinfo=timezone.utc)
_TYPED_Q, _END_OF_INPUT, _CTRL_C = "you typed q", "end of input", "Ctrl-C"


def now() -> datetime:
    """The current time, UTC-aware. Tests replace it (or pass ``--now``)."""
    return datetime.now(timezone.utc)


class _Quit(Exception):
    """The learner stopped: typed q, ended the input or pressed Ctrl-C (`reason` says which). `keep` is a
    rating already known for the question on screen, to save before stopping."""

    def __init__(self, reason: str, keep: Rating | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.keep = keep


class _Console:
    """Line-based terminal I/O. When stdin is not a terminal, each answer read is echoed, so a transcript of a
    piped session reads like the interactive one."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin = stdin
        self.stdout = stdout
        try:
            self.echo = not stdin.isatty()
        except (AttributeError, ValueError):
            self.echo = True

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def ask(self, prompt: str) -> str:
        """One stripped line of input; raises `_Quit` on ``q``, at the end of input and on Ctrl-C."""
        self.stdout.write(prompt)
        self.stdout.flush()
        try:
            line = self.stdin.readline()
        except KeyboardInterrupt:
            self.stdout.write("\n")
            raise _Quit(_CTRL_C) from None
        if not line:
            self.stdout.write("\n")
            raise _Quit(_END_OF_INPUT)
        answer = line.strip()
        if self.echo:
            self.stdout.write(answer + "\n")
        if answer.lower() in ("q", "quit"):
            raise _Quit(_TYPED_Q)
        return answer


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
        "directory. Exit status: 0 done, 1 invalid question bank, 2 progress file unusable or bad arguments.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sub: argparse.ArgumentParser, *, db: bool = True) -> None:
        if db:
            sub.add_argument(
                "--db", metavar="PATH", help="progress file (default: $COURSE_DB, else per-user file)"
            )
        sub.add_argument("--bank", metavar="DIR", help="question bank directory (default: the course's own)")
        sub.add_argument("--now", type=_iso_time, help=argparse.SUPPRESS)

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
    cram = commands.add_parser(
        "cram",
        help="practise lessons' questions without changing your schedule",
        description="Go through every question of the lessons named (default: your enrolled lessons). "
        "Practice answers are logged apart and never change your review schedule.",
    )
    cram.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson ids, e.g. 01 02")
    common(cram)
    stats = commands.add_parser(
        "stats", help="what is due today and in the next 7 days, and how you are doing"
    )
    common(stats)
    check = commands.add_parser("check", help="validate the question bank")
    common(check, db=False)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one command; return the exit status. Closed standard streams are allowed: no stdin reads as an
    empty input, no stderr drops the messages, no stdout is reported (exit status 2)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    err = err if err is not None else io.StringIO()
    args = _parser().parse_args(argv)
    if out is None:
        err.write("python -m course: the standard output is closed\n")
        return EXIT_USAGE
    source = stdin if stdin is not None else sys.stdin
    if stdin is None and stdout is None:
        _tolerate_encoding_errors(sys.stdin, sys.stdout)
    try:
        return _run(args, source if source is not None else io.StringIO(), out, err)
    except BrokenPipeError:
        if out is sys.stdout:
            _silence(out)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        out.write("\nStopped: every answer given so far is saved.\n")
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace, stdin: TextIO, out: TextIO, err: TextIO) -> int:
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
        return EXIT_OK

    console = _Console(stdin, out)
    store = None
    try:
        path = db_path(args.db)
        store = _open(path, args)
        if args.command == "stats":
            _stats(console, store, bank, clock(), local_tz())
            return EXIT_OK
        if args.command == "cram":
            return _cram(console, err, store, bank, args.lessons, clock)
        return _review(console, store, bank, clock, local_tz(), _limits(args))
    except StoreNotFoundError as problem:
        err.write(
            f"no progress yet: there is no progress file at {problem.path}. Answer a quiz in a lesson "
            f"notebook (start with {_WELCOME}) to create it; if your progress lives elsewhere, pass --db "
            "PATH or set COURSE_DB\n"
        )
        return EXIT_STORE
    except StoreError as problem:
        err.write(f"{problem}\n")
        return EXIT_STORE
    finally:
        if store is not None:
            store.close()


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
    """Open the progress file. Only ``cram`` with named lessons creates a missing one (a workshop may start
    there); otherwise a missing file is reported, so a mistyped ``--db`` never leaves an empty file behind."""
    return open_store(path, create=args.command == "cram" and bool(args.lessons))


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
) -> int:
    """Serve what is due; when the queue runs out, serve what came due meanwhile (learning steps), until
    nothing is due now or today's limits are reached."""
    from scheduler import Session

    items = bank.items()
    enrolled = [lesson for lesson in store.enrolled() if lesson in bank.lessons()]
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
    console.say(
        f"Review of {_lessons(enrolled)}: {session.due_count} due, {session.new_count} new. "
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
                stop = _review_one(console, session, item, bank[item.id], clock)
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
    console: _Console, session: Session, item: Item, question: Question, clock: Callable[[], datetime]
) -> _Quit | None:
    """Ask `question` and save the answer. Returns the learner's stop when they stopped where the answer was
    already known (a right answer counted as Good): it is saved, and the caller stops after counting it."""
    from scheduler import Rating

    began = time.monotonic()
    rating, stop = _rating_or_kept(lambda: _ask(console, question, lambda: session.intervals(item, clock())))
    at = clock()
    review = session.answer(item, rating, at, _elapsed_ms(began))
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
        return stop.keep, _Quit(stop.reason)


def _stopped(console: _Console, stop: _Quit, done: str) -> int:
    console.say(f"Stopped ({stop.reason}): {done}.")
    return EXIT_INTERRUPTED if stop.reason == _CTRL_C else EXIT_OK


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
) -> int:
    from scheduler import CramSession

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
            rating, stop = _rating_or_kept(lambda question=question: _ask(console, question, None))
            session.answer(item, rating, clock(), _elapsed_ms(began))
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


_KEEP_LINES = ("```", "    ", "\t", "- ", "* ", "+ ", "$$", "|", ">")


def _reflow(text: str) -> str:
    """Markdown source for a terminal: the line breaks inside a paragraph are joined (as Markdown renders
    them), except in paragraphs holding code, lists, display math, tables or quotes, kept as written."""
    paragraphs = []
    for paragraph in text.strip().split("\n\n"):
        lines = paragraph.splitlines()
        keep = any(
            line.startswith(_KEEP_LINES) or (line[:1].isdigit() and ". " in line[:4]) for line in lines
        )
        paragraphs.append(paragraph if keep else " ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _elapsed_ms(began: float) -> int:
    return round((time.monotonic() - began) * 1000)


def _interval(delta: timedelta) -> str:
    from scheduler import format_interval

    return format_interval(max(delta, timedelta(0)))


def _ask(
    console: _Console,
    question: Question,
    intervals: Callable[[], dict[Rating, timedelta]] | None,
) -> Rating:
    """Show `question`, read the learner's answer, return the rating to record. Raises `_Quit`."""
    from scheduler import Rating

    console.say(_reflow(question.prompt))
    if question.kind == "recall":
        console.ask("Press Enter to show the answer (q to quit): ")
        console.say(f"Answer: {_reflow(str(question.answer))}")
        _explain(console, question)
        return _choose_rating(console, intervals, "How well did you remember it?")

    if question.kind == "choice":
        for number, option in enumerate(question.options, start=1):
            console.say(f"  {number}) {_reflow(option.text)}")
        last = len(question.options)
        while True:
            reply = console.ask(f"Your answer [1-{last}, ? if you don't know, q to quit]: ")
            if reply == "?":
                choice = None
                break
            if reply.isdigit() and 1 <= int(reply) <= last:
                choice = int(reply) - 1
                break
            console.say(f"Please type a number from 1 to {last}, ? or q.")
        right = choice is not None and question.is_correct(choice)
        correct = question.correct_option
        if right:
            console.say("Right.")
        else:
            console.say(f"Not quite: the answer is {correct + 1}) {_reflow(question.options[correct].text)}")
        for number, option in enumerate(question.options, start=1):
            mark = " (right answer)" if option.correct else ""
            console.say(f"  {number}){mark} {_reflow(option.why)}")
    else:
        unit = f" {question.unit}" if question.unit else ""
        while True:
            reply = console.ask("Your answer (a number; ? if you don't know; q to quit): ")
            if reply == "?":
                right = False
                break
            try:
                right = question.is_correct(reply)
                break
            except ValueError:
                console.say("Please type a number, ? or q.")
        tolerance = f" (within {question.tolerance:g})" if question.tolerance else ""
        verdict = "Right" if right else "Not quite"
        console.say(f"{verdict}: the answer is {question.answer}{unit}{tolerance}.")
    _explain(console, question)
    if not right:
        return Rating.AGAIN
    return _confirm_good(console, intervals)


def _confirm_good(console: _Console, intervals: Callable[[], dict[Rating, timedelta]] | None) -> Rating:
    """A right answer counts as Good unless the learner picks Hard or Easy. Stopping here (q, end of input,
    Ctrl-C) keeps the Good: the `_Quit` raised carries it, to be saved before stopping."""
    from scheduler import Rating

    if intervals is None:
        reply_text = "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: "
    else:
        spans = intervals()
        reply_text = (
            f"Counted as Good ({_interval(spans[Rating.GOOD])}). Press Enter to keep it, or type "
            f"2 for Hard ({_interval(spans[Rating.HARD])}; {HARD_MEANS}) or 4 for Easy "
            f"({_interval(spans[Rating.EASY])}): "
        )
    while True:
        try:
            reply = console.ask(reply_text)
        except _Quit as stop:
            raise _Quit(stop.reason, keep=Rating.GOOD) from None
        if reply in ("", "3"):
            return Rating.GOOD
        if reply in ("2", "4"):
            return Rating(int(reply))
        console.say("Please press Enter, or type 2, 4 or q.")


def _explain(console: _Console, question: Question) -> None:
    console.say(_reflow(question.explanation))
    console.say(f'See lesson {_lesson_label(question.lesson)}, section "{question.section}".')


def _choose_rating(
    console: _Console, intervals: Callable[[], dict[Rating, timedelta]] | None, heading: str
) -> Rating:
    from scheduler import Rating

    if intervals is None:
        buttons = "   ".join(f"{value} {name}" for value, name in NAMES.items())
    else:
        spans = intervals()
        buttons = "   ".join(
            f"{value} {name} {_interval(spans[Rating(value)])}" for value, name in NAMES.items()
        )
    console.say(f"{heading} ({HARD_MEANS})")
    console.say(f"  {buttons}")
    while True:
        reply = console.ask("Your rating [1-4, q to quit]: ")
        if reply in ("1", "2", "3", "4"):
            return Rating(int(reply))
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
    console.say(f"Due today:        {result.due_today}")
    console.say("Next 7 days:     " + "".join(f"{day:>5}" for day in days))
    console.say("                 " + "".join(f"{count:>5}" for count in result.due_next_7_days))
    console.say(f"Reviews today:    {result.reviews_today}")
    console.say(f"Reviews in total: {result.reviews_total}")
    console.say(f"True retention:   {retention}")
    console.say(f"New available:    {result.new_available}")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
