"""``python -m course``: review, cram, stats and check, in a terminal.

This is the outermost layer: the only place of the terminal interface that reads the clock (`now`, or the
hidden ``--now`` option that freezes it for tests and demos). Exit status: 0 done, 1 the question bank is
invalid, 2 the progress database cannot be used (missing, locked, corrupt, newer) or bad arguments,
130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from course.bank import Bank, BankError, Question, load_bank
from course.lessons import LESSONS
from course.progress import db_path, local_tz, open_store

if TYPE_CHECKING:
    from scheduler import Limits, Rating, Store

__all__ = ["main", "now"]

EXIT_OK, EXIT_BANK, EXIT_STORE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 2, 130
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_RATING_NAMES = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
_HARD_MEANS = "Hard = remembered, with effort"
_WELCOME = "00-welcome.ipynb"


def now() -> datetime:
    """The current time, UTC-aware. Tests replace it (or pass ``--now``)."""
    return datetime.now(timezone.utc)


class _Quit(Exception):
    """The learner typed q, or stdin ended."""

    def __init__(self, eof: bool) -> None:
        super().__init__("end of input" if eof else "quit")
        self.eof = eof


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
        """One stripped line of input; raises `_Quit` on ``q`` or at the end of input."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.stdout.write("\n")
            raise _Quit(eof=True)
        answer = line.strip()
        if self.echo:
            self.stdout.write(answer + "\n")
        if answer.lower() in ("q", "quit"):
            raise _Quit(eof=False)
        return answer


def _iso_time(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"needs a UTC offset, e.g. {text}+00:00")
    return value.astimezone(timezone.utc)


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
    """Run one command; return the exit status."""
    from scheduler import StoreError, StoreNotFoundError

    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    args = _parser().parse_args(argv)
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

    console = _Console(stdin if stdin is not None else sys.stdin, out)
    path = db_path(args.db)
    store = None
    try:
        store = _open(path, args)
        if args.command == "stats":
            _stats(console, store, bank, clock(), local_tz())
            return EXIT_OK
        if args.command == "cram":
            return _cram(console, err, store, bank, args.lessons, clock)
        return _review(console, store, bank, clock, local_tz(), _limits(args))
    except StoreNotFoundError:
        err.write(
            f"no progress yet: there is no progress file at {path}. Answer a quiz in a lesson notebook "
            f"(start with {_WELCOME}) to create it; if your progress lives elsewhere, pass --db PATH or set "
            "COURSE_DB\n"
        )
        return EXIT_STORE
    except StoreError as problem:
        err.write(f"{problem}\n")
        return EXIT_STORE
    except KeyboardInterrupt:
        out.write("\nStopped: every answer given so far is saved.\n")
        return EXIT_INTERRUPTED
    finally:
        if store is not None:
            store.close()


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


def _lesson_label(lesson_id: str) -> str:
    return f"{lesson_id} {LESSONS[lesson_id][0]}"


# ---------------------------------------------------------------------------------------------------- review


def _review(
    console: _Console,
    store: Store,
    bank: Bank,
    clock: Callable[[], datetime],
    tz: tzinfo,
    limits: Limits,
) -> int:
    from scheduler import Rating, Session, due_queue

    items = bank.items()
    enrolled = [lesson for lesson in store.enrolled() if lesson in bank.lessons()]
    if not enrolled:
        console.say(
            f"No lesson started yet: answer a quiz in a lesson notebook (start with {_WELCOME}) and its "
            "questions will come up here."
        )
        return EXIT_OK
    start = clock()
    queue = due_queue(store, items, start, tz, limits)
    if not queue:
        console.say(f"Nothing is due right now. {_next_due(store, bank, start)}")
        return EXIT_OK
    new = sum(store.card(item.id) is None for item in queue)
    console.say(
        f"Review of {_lessons(enrolled)}: {len(queue) - new} due, {new} new. "
        "Type q at any prompt to stop; each answer is saved as you go."
    )
    session = Session(store, items, start, tz, limits)
    answered = 0
    try:
        while (item := session.next()) is not None:
            question = bank[item.id]
            card = store.card(item.id)
            status = "new" if card is None else card.state
            console.say()
            console.say(f"[{answered + 1}/{answered + session.remaining}] {_heading(question)}, {status}")
            began = time.monotonic()
            rating = _ask(console, question, lambda item=item: session.intervals(item, clock()))
            at = clock()
            review = session.answer(item, rating, at, _elapsed_ms(began))
            answered += 1
            if rating == Rating.AGAIN:
                console.say("Saved: Again. It comes back before this session ends.")
            else:
                console.say(f"Saved: {_RATING_NAMES[rating]}. Next review in {_interval(review.due - at)}.")
    except _Quit as stop:
        reason = "end of input" if stop.eof else "you typed q"
        console.say(f"Stopped ({reason}): {_plural(answered, 'answer')} saved.")
        return EXIT_OK
    console.say()
    console.say(f"Session over: {_plural(answered, 'answer')} saved. {_next_due(store, bank, clock())}")
    return EXIT_OK


def _next_due(store: Store, bank: Bank, at: datetime) -> str:
    upcoming = [card.due for item_id, card in store.cards().items() if item_id in bank and card.due > at]
    if not upcoming:
        return "No question is scheduled yet."
    return f"Next question due in {_interval(min(upcoming) - at)}."


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
        lessons = []
        for raw in requested:
            lesson_id = raw.zfill(2) if raw.isdigit() else raw
            if lesson_id not in bank.lessons():
                err.write(f"unknown lesson {raw!r} (lessons with questions: {', '.join(bank.lessons())})\n")
                return EXIT_USAGE
            if lesson_id not in lessons:
                lessons.append(lesson_id)
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
            rating = _ask(console, question, None)
            session.answer(item, rating, clock(), _elapsed_ms(began))
            answered += 1
            console.say(f"Logged as practice: {_RATING_NAMES[rating]}.")
    except _Quit as stop:
        reason = "end of input" if stop.eof else "you typed q"
        console.say(f"Stopped ({reason}): {_plural(answered, 'practice answer')} logged.")
        return EXIT_OK
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
            number_text = (
                reply[: -len(question.unit)].strip() if unit and reply.endswith(question.unit) else reply
            )
            try:
                right = question.is_correct(number_text)
                break
            except ValueError:
                console.say("Please type a number, ? or q.")
        tolerance = f" (within {question.tolerance:g})" if question.tolerance else ""
        verdict = "Right" if right else "Not quite"
        console.say(f"{verdict}: the answer is {question.answer}{unit}{tolerance}.")
    _explain(console, question)
    if not right:
        return Rating.AGAIN
    if intervals is None:
        reply_text = "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: "
    else:
        spans = intervals()
        reply_text = (
            f"Counted as Good ({_interval(spans[Rating.GOOD])}). Press Enter to keep it, or type "
            f"2 for Hard ({_interval(spans[Rating.HARD])}; {_HARD_MEANS}) or 4 for Easy "
            f"({_interval(spans[Rating.EASY])}): "
        )
    while True:
        reply = console.ask(reply_text)
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
        buttons = "   ".join(f"{value} {name}" for value, name in _RATING_NAMES.items())
    else:
        spans = intervals()
        buttons = "   ".join(
            f"{value} {name} {_interval(spans[Rating(value)])}" for value, name in _RATING_NAMES.items()
        )
    console.say(f"{heading} ({_HARD_MEANS})")
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
