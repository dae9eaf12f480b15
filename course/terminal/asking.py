"""Asking one question in the terminal: show it, read the answer, say the verdict and why, and read the rating
to record (`course.bank`'s rules).

A code question is written in the learner's editor, ``$VISUAL`` or else ``$EDITOR`` (a command line, split as
the shell would, given a file holding the starter code and the terminal; the code written there is shown
before it runs), or, when neither is set or the editor cannot be started, typed at a prompt line by line up to
a line holding only ``.`` (`END_OF_CODE`) or the end of input (Ctrl-D): blank lines inside it are kept. The
code is run by `course.checkers.run_code_limited`, in a child process with a time and a memory limit; its
verdict is said in one sentence, and a worked solution follows, to compare with a right answer or to learn
from a wrong one. Ctrl-C while the code runs stops it and saves nothing, as in the notebooks (`STOPPED`), and
so does a syntax error (`FIX_IT`): the learner changes the code and runs it again (in their editor, from the
code they wrote).
"""

from __future__ import annotations

import os
import random
import shlex
import subprocess
import tempfile
import textwrap
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from course.bank import (
    HARD_MEANS,
    NAMES,
    NUMBERS,
    RECALL_RATINGS,
    RIGHT_RATINGS,
    Kind,
    Presentation,
    Question,
    Verdict,
    auto_rating,
    code_block,
    final_rating,
    grade_choice,
    grade_number,
    present,
)
from course.progress import interval, lesson_label
from course.terminal.console import Console, Interrupted, Quit
from course.terminal.exits import EXIT_INTERRUPTED
from scheduler import Rating

if TYPE_CHECKING:  # course.checkers loads numpy: imported where code is run
    from course.checkers import CodeVerdict

__all__ = [
    "ASKERS",
    "CODE_INDENT",
    "EDITORS",
    "END_OF_CODE",
    "FIX_IT",
    "NO_CODE_YET",
    "RUN_SECONDS",
    "STOPPED",
    "TYPE_CODE",
    "Intervals",
    "ask",
]

Intervals = Callable[[], dict[Rating, timedelta]]  # when each rating would bring the question back
EDITORS = ("VISUAL", "EDITOR")
"""The environment variables naming the learner's editor, the first set taken."""
RUN_SECONDS = 10.0
"""How long the learner's code may run (`course.checkers.run_code_limited`, which also limits its memory)."""
CODE_INDENT = "    "
"""How code is indented when shown."""
END_OF_CODE = "."
"""The line that ends code typed at the prompt (so does the end of input, Ctrl-D)."""
TYPE_CODE = (
    f"Type your code, then a line holding only {END_OF_CODE} to run it (or press Ctrl-D); blank lines are "
    "kept. (? alone if you don't know, q alone to quit.)"
)
STOPPED = "Your code was stopped before it finished (Ctrl-C). Nothing was saved: change it and run it again."
"""Said when Ctrl-C stops the learner's code: as in the notebooks, nothing is saved and they try again."""
FIX_IT = "Nothing was saved: fix it and run it again."
"""Said after a verdict that judged nothing (a syntax error): a slip of the keys is not a lapse of memory."""
NO_CODE_YET = f"Type your code first, then a line holding only {END_OF_CODE} (? if you don't know)."


def ask(console: Console, question: Question, intervals: Intervals | None, rng: random.Random) -> Rating:
    """Show `question` (a choice question's options in an order drawn from `rng`), read the learner's
    answer, return the rating to record. `intervals`, when given, is read to show when each rating would
    bring the question back. Raises `Quit`."""
    console.show(question.prompt)
    return ASKERS[Kind(question.kind)](console, question, intervals, rng)


def _recall(console: Console, question: Question, intervals: Intervals | None, _rng: random.Random) -> Rating:
    console.ask("Press Enter to show the answer (q to quit): ")
    console.show(str(question.answer), "Answer: ")
    _explain(console, question)
    return _choose_rating(console, intervals, "How well did you remember it?")


def _choice(console: Console, question: Question, intervals: Intervals | None, rng: random.Random) -> Rating:
    return _graded(console, question, intervals, _ask_choice(console, present(question, rng, NUMBERS)))


def _numeric(
    console: Console, question: Question, intervals: Intervals | None, _rng: random.Random
) -> Rating:
    return _graded(console, question, intervals, _ask_number(console, question))


def _graded(console: Console, question: Question, intervals: Intervals | None, verdict: Verdict) -> Rating:
    """After a graded answer: the explanation, then the verdict's rating (Hard or Easy instead of a right
    answer's Good, if the learner says so)."""
    _explain(console, question)
    if not verdict.right:
        return verdict.rating
    return _confirm_good(console, intervals)


def _code(console: Console, question: Question, intervals: Intervals | None, _rng: random.Random) -> Rating:
    """Show the starter code, read the learner's code, run it through the question's checker (in a child
    process with a time and a memory limit), say the verdict, then a worked solution. Code that could not be
    judged (Ctrl-C stopped it, or a syntax error) saves nothing: the learner changes it and runs it again. A
    closed terminal or SIGTERM while it runs stops the command (`Quit`), nothing saved for this question."""
    assert question.starter is not None and question.function is not None and question.checker is not None
    console.say("Starter code:")
    console.show(code_block(question.starter), CODE_INDENT)
    code = _read_code(console, question, question.starter)
    right = False
    while code is not None:
        verdict = _run(console, question, code)
        if verdict is not None:
            right = verdict.ok
            break
        code = _read_code(console, question, code)
    console.say("A worked solution, to compare with yours:" if right else "A worked solution:")
    console.show(str(question.answer), CODE_INDENT)
    _explain(console, question)
    if not right:
        return auto_rating(False)
    return _confirm_good(console, intervals)


def _run(console: Console, question: Question, code: str) -> CodeVerdict | None:
    """Run `code` and say its verdict; None, said why, when it was not judged: Ctrl-C stopped it
    (`STOPPED`), or it cannot be compiled (``CodeVerdict.retry``: `FIX_IT`)."""
    from course.checkers import run_code_limited  # here: it loads numpy, which only code questions need

    assert question.function is not None and question.checker is not None
    console.say(f"Running your code (for at most {RUN_SECONDS:g} seconds)...")
    try:
        with console.running():
            verdict = run_code_limited(
                code, question.function, question.checker, seconds=RUN_SECONDS, starter=question.starter
            )
    except KeyboardInterrupt as stop:  # or a plain one: Ctrl-C where no handler is installed
        if isinstance(stop, Interrupted) and stop.status != EXIT_INTERRUPTED:  # SIGHUP, SIGTERM
            raise Quit(stop.reason, status=stop.status) from None
        console.say(_wrapped(console, STOPPED))
        return None
    console.say(_wrapped(console, verdict.sentence))
    if verdict.retry:
        console.say(FIX_IT)
        return None
    return verdict


Asker = Callable[[Console, Question, Intervals | None, random.Random], Rating]
ASKERS: Mapping[Kind, Asker] = MappingProxyType(
    {Kind.RECALL: _recall, Kind.CHOICE: _choice, Kind.NUMERIC: _numeric, Kind.CODE: _code}
)
"""How the terminal asks each kind of question (`course.bank`): one function per kind."""


def _ask_choice(console: Console, presentation: Presentation) -> Verdict:
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


def _ask_number(console: Console, question: Question) -> Verdict:
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


def _confirm_good(console: Console, intervals: Intervals | None) -> Rating:
    """A right answer counts as Good unless the learner picks Hard or Easy (`final_rating`). Stopping here
    (q, end of input, Ctrl-C) keeps the Good: the `Quit` raised carries it, to be saved before stopping."""
    hard, _, easy = RIGHT_RATINGS
    good = auto_rating(True)
    if intervals is None:
        reply_text = "Counted as Good. Press Enter to keep it, or type 2 for Hard or 4 for Easy: "
    else:
        spans = intervals()
        reply_text = (
            f"Counted as Good ({interval(spans[good])}). Press Enter to keep it, or type "
            f"2 for Hard ({interval(spans[hard])}; {HARD_MEANS}) or 4 for Easy "
            f"({interval(spans[easy])}): "
        )
    allowed = {f"{rating:d}": rating for rating in RIGHT_RATINGS}
    while True:
        try:
            reply = console.ask(reply_text)
        except Quit as stop:
            raise stop.keeping(good) from None
        if reply == "":
            return good
        if reply in allowed:
            return final_rating(True, allowed[reply])
        console.say("Please press Enter, or type 2, 4 or q.")


def _explain(console: Console, question: Question) -> None:
    """The explanation, and where in the lessons to read more."""
    console.show(question.explanation)
    console.say(f'See lesson {lesson_label(question.lesson)}, section "{question.section}".')


def _choose_rating(console: Console, intervals: Intervals | None, heading: str) -> Rating:
    """Offer the four ratings (with their intervals when `intervals` is given) and read one."""
    if intervals is None:
        buttons = "   ".join(f"{rating:d} {NAMES[rating]}" for rating in RECALL_RATINGS)
    else:
        spans = intervals()
        buttons = "   ".join(
            f"{rating:d} {NAMES[rating]} {interval(spans[rating])}" for rating in RECALL_RATINGS
        )
    console.say(f"{heading} ({HARD_MEANS})")
    console.say(f"  {buttons}")
    allowed = {f"{rating:d}": rating for rating in RECALL_RATINGS}
    while True:
        reply = console.ask("Your rating [1-4, q to quit]: ")
        if reply in allowed:
            return allowed[reply]
        console.say("Please type 1, 2, 3 or 4 (or q to quit).")


def _wrapped(console: Console, sentence: str) -> str:
    """A verdict's sentence, wrapped to the terminal (its words and paths never broken)."""
    return textwrap.fill(sentence, console.width, break_long_words=False, break_on_hyphens=False)


def _read_code(console: Console, question: Question, start: str) -> str | None:
    """The learner's code: from their editor when one is set and starts (given `start`, the starter or the
    code they ran last), shown before it runs; else typed; None for "I don't know"."""
    for variable in EDITORS:
        if editor := os.environ.get(variable, "").strip():
            edited = _edit(console, question, variable, editor, start)
            if edited is _NO_EDITOR:
                break
            if not isinstance(edited, str):
                return None
            console.say("Your code:")
            _show_code(console, edited)
            return edited
    return _type_code(console)


def _show_code(console: Console, code: str) -> None:
    """`code` as it is, each line indented: not read as Markdown, not wrapped."""
    lines = code.rstrip().split("\n") if code.strip() else ["(empty)"]
    console.say("\n".join(CODE_INDENT + line.rstrip() if line.strip() else "" for line in lines))


_NO_EDITOR = object()


def _edit(
    console: Console, question: Question, variable: str, editor: str, start: str
) -> str | object | None:
    """The code written in `editor` (the value of $`variable`), starting from `start`; None for "I don't
    know"; `_NO_EDITOR` (said why) when it cannot be started. Ctrl-C in the editor is the editor's."""
    try:
        command = shlex.split(editor)
    except ValueError as problem:
        console.say(f"${variable} is not a command line ({problem}): type your code here instead.")
        return _NO_EDITOR
    name = Path(command[0]).name if command else editor
    while True:
        reply = console.ask(f"Press Enter to write your code in {name} (? if you don't know, q to quit): ")
        if reply == "?":
            return None
        if reply:
            console.say("Please press Enter, or type ? or q.")
            continue
        with tempfile.TemporaryDirectory(prefix="course-code-") as folder:
            path = Path(folder) / f"{question.function}.py"
            path.write_text(start, encoding="utf-8")
            try:
                with console.editing():
                    finished = subprocess.run([*command, str(path)], check=False)
            except OSError as problem:
                reason = problem.strerror or type(problem).__name__
                console.say(
                    f"Your editor ({editor}) could not be started ({reason}): type your code here instead."
                )
                return _NO_EDITOR
            if finished.returncode != 0:
                console.say(f"Your editor exited with status {finished.returncode}: your code was not read.")
                continue
            try:
                return path.read_text(encoding="utf-8", errors="replace")
            except OSError as problem:
                console.say(f"Your code could not be read back ({problem.strerror}).")


def _type_code(console: Console) -> str | None:
    """Code typed line by line, blank lines kept, up to a line holding only `END_OF_CODE` or the end of
    input; None when the first line is ``?`` ("I don't know"). The end of input before any code stops the
    command (`Quit`), as at any prompt; blank lines before the code are dropped."""
    console.say(_wrapped(console, TYPE_CODE))
    lines: list[str] = []
    while True:
        line = console.code_line("... ") if lines else console.ask_line("... ")  # no code yet: the end stops
        if line is None or line.strip() == END_OF_CODE:
            if lines:
                return "\n".join(lines).rstrip() + "\n"
            console.say(NO_CODE_YET)
            continue
        if not lines and line.strip() == "?":
            return None
        if lines or line.strip():
            lines.append(line)
