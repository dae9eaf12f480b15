"""Grading a code question (`course.bank.Kind.CODE`): the verdict, its sentences, and `run_code`.

A learner's code is run apart from the kernel by `course.checkers.run_code_limited` (`_apart`), in the
notebook and the terminal alike. `run_code` runs code in this process instead: for the course's own code (a
card's solution and starter, checked by ``python -m course check``) and the tests. Both execute the code in a
fresh namespace that already holds ``np`` (numpy) and ``math``, take the function it defines and give it to
the checker (a ``check_...`` function of `course.checkers`), whose printed sentence is captured, not printed.
The `CodeVerdict` says whether every case passed, in one sentence: the checker's own, or one that says why the
code could not be judged, never a traceback::

    ✗ Your code has a syntax error on line 3: invalid syntax.
    ✗ Your code defines no function named causal_mask.
    ✗ Your code raised NameError: name 'npp' is not defined (line 2).

An exception raised by the learner's function while the checker calls it is named by the checker's sentence
("your function raised ..."); the line of the learner's code it came from is added to it, ``(line 2)``.
`run_code` has no limits: the course's own code needs none.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any, cast

import numpy as np

from course.checkers._learner import CODE_FILE, first_line, line_in_code
from course.checkers._listening import muted

__all__ = [
    "CODE_FILE",
    "CodeVerdict",
    "Raised",
    "compile_code",
    "exception_words",
    "find_checker",
    "memory_sentence",
    "run_code",
    "time_sentence",
    "verdict_of",
]

_CHECKERS = "course.checkers"


@dataclass(frozen=True)
class CodeVerdict:
    """The grading of a learner's code: `ok` when every case of the checker passes; `sentence`, the checker's
    own ("✓ ...", "✗ ... case 2 of 3 (...): ...") or one saying why the code could not be judged."""

    ok: bool
    sentence: str
    retry: bool = False
    """True when the code was not judged for a slip of the keys (a syntax error): the learner may fix it
    and run it again before anything is saved."""


@dataclass
class Raised:
    """The last exception that came out of the learner's function: its words, and its line in their code."""

    words: str = ""
    line: int | None = None


def time_sentence(seconds: float) -> str:
    """The verdict's sentence when the code ran out of time."""
    return f"✗ Your code ran for more than {_seconds(seconds)}: it was stopped."


def memory_sentence(memory_bytes: int) -> str:
    """The verdict's sentence when the code ran out of memory."""
    return f"✗ Your code used more than {_size(memory_bytes)} of memory: it was stopped."


def _seconds(seconds: float) -> str:
    return "1 second" if seconds == 1 else f"{seconds:g} seconds"


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def exception_words(error: BaseException) -> str:
    """``NameError: name 'npp' is not defined``, as the checkers' engine words an exception."""
    try:
        message = first_line(str(error))
    except Exception:
        message = ""
    return type(error).__name__ + (f": {message}" if message else "")


def _with_line(text: str, line: int | None) -> str:
    return text if line is None else f"{text} (line {line})"


def _watched(fn: Callable[..., Any], raised: Raised) -> Callable[..., Any]:
    """`fn`, the learner's function, remembering the last exception it raises and its line (`raised`). A
    class (an nn.Module) is given as it is."""
    if not inspect.isfunction(fn):
        return fn

    @functools.wraps(fn)
    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            raised.words, raised.line = exception_words(error), line_in_code(error.__traceback__)
            raise

    return watched


def find_checker(checker: str) -> Callable[..., Any] | CodeVerdict:
    """The checker named `checker` in `course.checkers`, or the verdict that there is none."""
    # Found by its name in the package, which imports this module: by name, not by an import statement (it
    # is loaded already when this runs).
    check = getattr(importlib.import_module(_CHECKERS), checker, None)
    if callable(check):
        return cast(Callable[..., Any], check)
    return CodeVerdict(
        False, f"✗ There is no checker named {checker} (a bug in the course: please report it)."
    )


def compile_code(code: str) -> CodeType | CodeVerdict:
    """`code` compiled, or the verdict when it cannot be (a syntax error: `CodeVerdict.retry`)."""
    try:
        return compile(code, CODE_FILE, "exec")
    except SyntaxError as err:
        where = f" on line {err.lineno}" if err.lineno else ""
        said = f"✗ Your code has a syntax error{where}: {first_line(err.msg)}."
        return CodeVerdict(False, said, retry=True)
    except ValueError as err:  # a NUL character
        return CodeVerdict(False, f"✗ Your code could not be read: {first_line(str(err))}.", retry=True)


def verdict_of(result: Any, printed: str, raised: Raised) -> CodeVerdict:
    """The checker's result as a verdict: its sentence (or the last line it printed), the line of the
    learner's code an exception came from added after the exception's words."""
    sentence = getattr(result, "message", None)
    if not isinstance(sentence, str) or not sentence:
        lines = printed.strip().splitlines()
        sentence = lines[-1] if lines else ("✓ All cases pass." if bool(result) else "✗ Not right yet.")
    ok = bool(getattr(result, "ok", result))
    if raised.line is not None and raised.words:
        said = f"your function raised {raised.words}"
        at = sentence.find(said)
        if at >= 0:
            end = at + len(said)
            sentence = f"{sentence[:end]} (line {raised.line}){sentence[end:]}"
    return CodeVerdict(ok, sentence)


def run_code(code: str, function: str, checker: str) -> CodeVerdict:
    """Grade `code` in this process (the course's own code: a learner's goes to `run_code_limited`):
    execute it in a fresh namespace holding ``np`` and ``math``, take `function` from it, and call
    ``getattr(course.checkers, checker)`` on it, its printing captured."""
    check = find_checker(checker)
    if isinstance(check, CodeVerdict):
        return check
    compiled = compile_code(code)
    if isinstance(compiled, CodeVerdict):
        return compiled
    namespace: dict[str, Any] = {"__name__": "__learner__", "np": np, "math": math}
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            exec(compiled, namespace)
        except (Exception, SystemExit) as error:
            line = line_in_code(error.__traceback__)
            return CodeVerdict(False, f"✗ {_with_line(f'Your code raised {exception_words(error)}', line)}.")
    fn = namespace.get(function)
    if fn is None:
        return CodeVerdict(False, f"✗ Your code defines no function named {function}.")
    if not callable(fn):
        return CodeVerdict(
            False,
            f"✗ Your code defines {function} as a value of type {type(fn).__name__}, not as a function.",
        )
    raised = Raised()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            with muted():  # the card's answer, not an exercise's mistake
                result = check(_watched(fn, raised))
        except SystemExit as error:
            line = line_in_code(error.__traceback__)
            return CodeVerdict(False, f"✗ {_with_line(f'Your code raised {exception_words(error)}', line)}.")
        except Exception as error:  # the checker's own failure: still a sentence
            return CodeVerdict(
                False,
                f"✗ The checker {checker} failed on your code ({exception_words(error)}; a bug in the "
                "course: please report it).",
            )
    return verdict_of(result, captured.getvalue(), raised)
