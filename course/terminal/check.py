"""``python -m course check``: validate the question bank, run each code question's solution and starter
through its checker, then list the lint warnings."""

from __future__ import annotations

from typing import TextIO

from course.bank import Bank, BankError, Kind, figures, lint
from course.progress import plural
from course.terminal.exits import EXIT_BANK, EXIT_OK

__all__ = ["check", "code_problems", "invalid_bank", "notebook_problems"]


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


def code_problems(bank: Bank) -> list[str]:
    """The problems of the code questions that only running them finds, reported as the loader reports its
    own (``FILE: question 'ID': field 'F': message``): a checker that `course.checkers` does not have, a
    solution that its checker does not pass, a starter that it passes (the learner would have nothing to
    write), a named mistake that `course.checkers.MISTAKES` does not have. The code runs in this process
    (`course.checkers.run_code`)."""
    questions = [question for question in bank if question.kind == Kind.CODE]
    if not questions:
        return []
    import course.checkers  # here, not at the top: it loads numpy, and only code questions need it

    problems: list[str] = []
    for question in questions:
        assert question.checker and question.function and question.solution and question.starter
        where = f"{question.source}: question {question.id!r}: field"
        unknown = [name for name in question.mistakes if name not in course.checkers.MISTAKES]
        if unknown:
            problems.append(
                f"{where} 'mistakes': course.checkers.MISTAKES has no mistake named "
                f"{', '.join(map(repr, unknown))}"
            )
        if not callable(getattr(course.checkers, question.checker, None)):
            problems.append(f"{where} 'checker': course.checkers has no checker named {question.checker!r}")
            continue
        solution = course.checkers.run_code(question.solution, question.function, question.checker)
        if not solution.ok:
            problems.append(
                f"{where} 'solution': does not pass its checker {question.checker}: {solution.sentence}"
            )
        if course.checkers.run_code(question.starter, question.function, question.checker).ok:
            problems.append(
                f"{where} 'starter': passes its checker {question.checker} (a starter leaves the learner "
                "something to write)"
            )
    return problems


def notebook_problems(bank: Bank) -> list[str]:
    """The problems of the lessons' Predict prompts (`course.publishing._predictions`), when `bank` is the
    course's own and the instructor notebooks are here (a clone of the course; an installed package without
    them has none to check; another bank, ``--bank``, is not the notebooks')."""
    from course.bank import DEFAULT_DIRECTORY
    from course.publishing import INSTRUCTOR_DIR, prediction_problems

    own = bank.directory is not None and bank.directory.resolve() == DEFAULT_DIRECTORY.resolve()
    return prediction_problems(bank, INSTRUCTOR_DIR) if own and INSTRUCTOR_DIR.is_dir() else []


def _predictions(bank: Bank) -> str:
    n = len(bank.predictions())
    return f", and {plural(n, 'prediction')}" if n else ""


def check(bank: Bank, out: TextIO, *, strict: bool) -> int:
    """Say that `bank` is valid and its figures (`course.bank.figures`), then list its lint warnings; exit
    status 1 when there are some and `strict`. A code question whose checker is missing, whose solution fails
    its checker or whose starter passes it makes the bank invalid: its problems are listed instead (exit
    status 1), as `invalid_bank` lists the loader's."""
    problems = code_problems(bank) + notebook_problems(bank)
    if problems:
        return invalid_bank(BankError(problems), "check", out, out)
    out.write(
        f"question bank OK: {plural(len(bank), 'question')} in {plural(len(bank.lessons()), 'lesson')}"
        f"{_predictions(bank)}\n"
        f"{figures(bank)}\n"
    )
    warnings = lint(bank)
    for warning in warnings:
        out.write(f"{warning}\n")
    out.write(f"{plural(len(warnings), 'warning') if warnings else 'no warnings'}\n")
    return EXIT_BANK if warnings and strict else EXIT_OK
