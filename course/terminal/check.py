"""``python -m course check``: validate the question bank, then list the lint warnings."""

from __future__ import annotations

from typing import TextIO

from course.bank import Bank, BankError, figures, lint
from course.progress import plural
from course.terminal.exits import EXIT_BANK, EXIT_OK

__all__ = ["check", "invalid_bank"]


def invalid_bank(problem: BankError, command: str, out: TextIO, err: TextIO) -> int:
    """Report a bank that does not load: ``check`` lists its problems on `out`, the other commands say so on
    `err`. Returns the exit status."""
    if command == "check":
        for line in problem.problems:
            out.write(line + "\n")
        out.write(f"question bank has {plural(len(problem.problems), 'problem')}\n")
    else:
        err.write("the question bank is invalid (python -m course check lists the problems):\n")
        err.write(str(problem) + "\n")
    return EXIT_BANK


def check(bank: Bank, out: TextIO, *, strict: bool) -> int:
    """Say that `bank` is valid and its figures (`course.bank.figures`), then list its lint warnings; exit
    status 1 when there are some and `strict`."""
    out.write(
        f"question bank OK: {plural(len(bank), 'question')} in {plural(len(bank.lessons()), 'lesson')}\n"
        f"{figures(bank)}\n"
    )
    warnings = lint(bank)
    for warning in warnings:
        out.write(f"{warning}\n")
    out.write(f"{plural(len(warnings), 'warning') if warnings else 'no warnings'}\n")
    return EXIT_BANK if warnings and strict else EXIT_OK
