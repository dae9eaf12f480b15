"""The command line of ``python -m course``: its commands, options, and the values they take."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone

from scheduler import (
    EARLIEST_TIME,
    LATEST_TIME,
    MIN_FIT_REVIEWS,
    RETENTION_RANGE,
    Limits,
    Memory,
    retention_problem,
    time_range_text,
)

__all__ = ["count", "iso_time", "limits", "parser", "retention"]


def iso_time(text: str) -> datetime:
    """The hidden ``--now``: an ISO 8601 time with a UTC offset, from 1970 to 8999, as UTC."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"needs a UTC offset, e.g. {text}+00:00")
    # the times a store takes: room for a century of intervals and any time zone, so nothing overflows
    out_of_range = f"out of range: {text!r} (use a time {time_range_text()})"
    try:
        value = value.astimezone(timezone.utc)
    except OverflowError:  # hours from the first or the last moment datetime can hold
        raise argparse.ArgumentTypeError(out_of_range) from None
    if not EARLIEST_TIME <= value < LATEST_TIME:
        raise argparse.ArgumentTypeError(out_of_range)
    return value


def count(text: str) -> int:
    """A daily limit: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def retention(text: str) -> float:
    """``--retention``: a desired retention, a number from 0.70 to 0.97 inclusive (``RETENTION_RANGE``)."""
    low, high = RETENTION_RANGE
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a number: {text!r} (use a number from {low:.2f} to {high:.2f}, e.g. the default, "
            f"{Memory().desired_retention:.2f})"
        ) from None
    problem = retention_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def limits(args: argparse.Namespace) -> Limits:
    """Today's limits: ``--limit-new`` and ``--limit-reviews`` where given, else the scheduler's defaults."""
    given = {"new_per_day": args.limit_new, "reviews_per_day": args.limit_reviews}
    return Limits(**{key: value for key, value in given.items() if value is not None})


_COMMANDS = {  # name: (help, description)
    "review": (
        "answer the questions that are due",
        "Answer the questions that are due in your enrolled lessons. Type q at any prompt to stop: every "
        "answer is saved as soon as you give it. A code question is written in $VISUAL or $EDITOR when one "
        "is set, else typed at the prompt, ended by a line holding only . (or Ctrl-D); Ctrl-C while the code "
        "runs stops it and saves nothing, to change it and run it again.",
    ),
    "quiz": (
        "take a lesson's quiz: start the lesson, its answers saved to your schedule",
        "Answer every question of LESSON, as its notebook's quiz cell asks them, each answer saved to your "
        "review schedule as you give it: this starts the lesson (its questions then come up in review), and "
        "creates your progress file if there is none yet. A question already scheduled on a later day is "
        "saved as practice, its schedule unchanged. Code questions are answered as in review. Type q at any "
        "prompt to stop.",
    ),
    "cram": (
        "practise lessons' questions without changing your schedule",
        "Go through every question of the lessons named (default: your enrolled lessons). Practice answers "
        "are logged apart and never change your review schedule.",
    ),
    "stats": ("what is due now, later today and in the next 7 days, and how you are doing", None),
    "check": (
        "validate the question bank",
        "Validate the question bank (exit status 1 when it is invalid), then list the warnings about "
        "questions that are valid but could be better (exit status 0, or 1 with --strict).",
    ),
    "workbook": (
        "write your own copy of the lessons to work in",
        "Write the lessons, the welcome and the review notebook to DIR with outputs cleared and the "
        "exercises' solutions replaced by stubs. A notebook you have edited is never overwritten: when the "
        "course has a newer version of it, that version is written beside yours as NN-name.updated.ipynb.",
    ),
    "export-slides": (
        "write a lesson's slides as a web page that opens offline",
        "Write LESSON's slides (the instructor notebook, with its outputs) to DIR/NN-name.html, with the "
        "reveal.js and MathJax it loads copied beside it: the folder opens from disk in a browser, with no "
        "network, or served over HTTP.",
    ),
    "export-anki": (
        "write the questions to an Anki package (.apkg)",
        "Write the questions of the lessons named (default: every lesson) to FILE, an Anki package: one "
        'deck, "Attention course", tagged by lesson. Importing a newer export into Anki updates the notes of '
        "edited questions instead of adding copies.",
    ),
    "export-progress": (
        "write your progress to a file, to move or merge it",
        "Write your enrolled lessons, answers and practice answers to FILE (JSON lines). Your progress file "
        "is only read.",
    ),
    "import-progress": (
        "add the progress in a file written by export-progress to yours",
        "Merge FILE, written by export-progress, into your progress: answers already there are skipped, the "
        "others go in at their time, and your schedule is recomputed. The whole file is checked first: on "
        "any problem nothing is imported.",
    ),
    "settings": (
        "show or change your desired retention and FSRS parameters",
        "Show your scheduling settings: the desired retention (the chance of remembering a question when it "
        "comes due) and the FSRS parameters in use. With options, change them: a change applies from each "
        "question's next answer, and the due dates already set stay as they are.",
    ),
    "optimize": (
        "fit the FSRS parameters to your own reviews",
        f"Fit the FSRS parameters to your review history and use them from now on. It needs at least "
        f"{MIN_FIT_REVIEWS} reviews answered on a later day than the question's previous answer (exit status "
        "3, nothing changed, until there are). Your desired retention is kept; python -m course settings "
        "--default-parameters goes back to the defaults.",
    ),
    "session-report": (
        "what past class review sessions showed: the most missed questions, the sections to revisit",
        "Print, for each class review session (class_review in a notebook), its questions ranked by miss "
        "rate and the lesson sections to revisit. The class-session file is only read.",
    ),
    "class-report": (
        "how a class is doing: the most missed questions and lessons, the due load, retention",
        "Report on a class: from the progress files its learners wrote with export-progress (one per "
        "learner, named after them), or, with no FILE, from the class database that --db or COURSE_DB "
        "names (postgresql://..., connecting as an instructor): per question and lesson, the miss rate and "
        "how many learners answered; the class's due load for the next 7 days; true retention; the lesson "
        "sections to revisit. Nothing is written.",
    ),
}


def parser() -> argparse.ArgumentParser:
    """The parser of ``python -m course`` and its commands: review, quiz, cram, stats, check, workbook,
    export-slides, export-anki, export-progress, import-progress, settings, optimize, session-report and
    class-report."""
    main = argparse.ArgumentParser(
        prog="python -m course",
        description="Spaced-repetition reviews of the attention course's self-check questions.",
        epilog="Progress file: --db PATH, else $COURSE_DB, else progress.sqlite3 in your per-user data "
        "directory. Exit status: 0 done, 1 invalid question bank (or lint warnings with check --strict), "
        "2 progress file unusable, workbook or slides not written, or bad arguments, 3 optimize: too few "
        "reviews to fit to yet.",
    )
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub = {
        name: commands.add_parser(name, help=summary, description=description)
        for name, (summary, description) in _COMMANDS.items()
    }
    _common(sub["review"])
    _limit_options(sub["review"])
    _seed(sub["review"])
    sub["quiz"].add_argument("lesson", metavar="LESSON", help="a lesson id, e.g. 05")
    _common(sub["quiz"])
    _seed(sub["quiz"])
    sub["cram"].add_argument("lessons", nargs="*", metavar="LESSON", help="lesson ids, e.g. 01 02")
    _common(sub["cram"])
    _seed(sub["cram"])
    _common(sub["stats"])
    sub["stats"].add_argument(
        "--calibration",
        action="store_true",
        help="also how well the recall the schedule predicted matched what happened, by bins",
    )
    _common(sub["check"], db=False)
    sub["check"].add_argument(
        "--strict", action="store_true", help="exit with status 1 when there are warnings"
    )
    sub["workbook"].add_argument(
        "dir", nargs="?", default="workbook", metavar="DIR", help="default: workbook"
    )
    sub["export-slides"].add_argument("lesson", metavar="LESSON", help="a lesson id, e.g. 02")
    sub["export-slides"].add_argument(
        "--out", default="slides", metavar="DIR", help="the folder to write (default: slides)"
    )
    _transfers(sub)
    _scheduling(sub)
    sub["session-report"].add_argument(
        "--sessions",
        metavar="PATH",
        help="class-session file (default: $COURSE_SESSIONS, else class-sessions.sqlite3 beside the progress "
        "file)",
    )
    sub["session-report"].add_argument(
        "--last", type=count, metavar="N", help="only the last N sessions (default: all)"
    )
    _common(sub["session-report"], db=False)
    sub["class-report"].add_argument(
        "files", nargs="*", metavar="FILE", help="learners' files written by export-progress, e.g. ana.jsonl"
    )
    sub["class-report"].add_argument(
        "--top", type=count, default=10, metavar="N", help="the N most missed questions (default 10)"
    )
    _common(sub["class-report"])
    return main


def _transfers(sub: dict[str, argparse.ArgumentParser]) -> None:
    """export-anki FILE [--lessons ...], export-progress FILE and import-progress FILE."""
    sub["export-anki"].add_argument("file", metavar="FILE", help="the package to write, e.g. attention.apkg")
    sub["export-anki"].add_argument(
        "--lessons", nargs="+", default=[], metavar="LESSON", help="only these lessons, e.g. 01 02"
    )
    _common(sub["export-anki"], db=False)
    sub["export-progress"].add_argument("file", metavar="FILE", help="the file to write, e.g. progress.jsonl")
    _common(sub["export-progress"], bank=False)
    sub["import-progress"].add_argument("file", metavar="FILE", help="a file written by export-progress")
    _common(sub["import-progress"], bank=False)


def _scheduling(sub: dict[str, argparse.ArgumentParser]) -> None:
    """settings [--retention R | --default-retention] [--default-parameters], and optimize [--dry-run]."""
    low, high = RETENTION_RANGE
    which = sub["settings"].add_mutually_exclusive_group()
    which.add_argument(
        "--retention",
        type=retention,
        metavar="R",
        help=f"desired retention, from {low:.2f} to {high:.2f} (default {Memory().desired_retention:.2f}): "
        f"higher means more reviews; lower, less review time but more forgotten ({100 - round(100 * low)}%% "
        f"of questions at {low:.2f})",
    )
    which.add_argument(
        "--default-retention", action="store_true", help="go back to the default desired retention"
    )
    sub["settings"].add_argument(
        "--default-parameters",
        action="store_true",
        help="drop the parameters fitted by optimize: use FSRS's defaults",
    )
    _common(sub["settings"], bank=False)
    sub["optimize"].add_argument(
        "--dry-run", action="store_true", help="fit and show the result, but save nothing"
    )
    _common(sub["optimize"], bank=False)


def _common(sub: argparse.ArgumentParser, *, db: bool = True, bank: bool = True) -> None:
    """--db (unless `db` is false), --bank (unless `bank` is false) and the hidden --now."""
    if db:
        sub.add_argument(
            "--db", metavar="PATH", help="progress file (default: $COURSE_DB, else per-user file)"
        )
    if bank:
        sub.add_argument("--bank", metavar="DIR", help="question bank directory (default: the course's own)")
    sub.add_argument("--now", type=iso_time, help=argparse.SUPPRESS)


def _seed(sub: argparse.ArgumentParser) -> None:
    """The hidden --seed: fixes the order in which each question's options are shown, for tests and demos."""
    sub.add_argument("--seed", type=int, help=argparse.SUPPRESS)


def _limit_options(sub: argparse.ArgumentParser) -> None:
    """--limit-new and --limit-reviews."""
    default = Limits()
    sub.add_argument(
        "--limit-new",
        type=count,
        metavar="N",
        help=f"new questions per day (default {default.new_per_day})",
    )
    sub.add_argument(
        "--limit-reviews",
        type=count,
        metavar="N",
        help=f"reviews per day (default {default.reviews_per_day})",
    )
