"""Find-the-bug checkers: say how many of the original bugs remain, never which.

A find-the-bug exercise gives the learner a function with a known set of bugs and asks for it fixed. Naming a
bug would do the exercise for the learner, so :func:`run_bug_hunt` counts instead. ``buggy(bugs, *args)``
computes what the given function returns with only some of its bugs left in: ``bugs`` maps each bug's name
to 0 (fixed) or to one of its forms, 1 to ``forms[name]`` (a bug may be "fixed" wrongly in a way that is
still the same bug: a causal mask aligned top-left instead of bottom-right, say). Every combination is a
possible stage of the learner's work.

The cases run in order, through the engine's :func:`course.checkers._engine.check_case`: the first problem
gets the engine's sentence (an exception, an input changed in place, a wrong shape, the first wrong value),
followed by the number of bugs left, read from the combinations that give what the learner's function gives
on *every* case. A result that matches no combination gets the engine's sentence alone when it matches one of
``extra`` (mistakes the learner may bring in while fixing: those may be named, they are not the original
bugs), and otherwise the words :data:`NEW_MISTAKE`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import (
    ATOL,
    RTOL,
    Case,
    CheckResult,
    Problem,
    as_array,
    call_learner,
    check_case,
    run_cases,
)

__all__ = ["NEW_MISTAKE", "BugCase", "bugs_left_words", "combinations", "run_bug_hunt"]

NEW_MISTAKE = (
    "it matches no combination of the original bugs: one of your changes brought in a new mistake (start "
    "again from the given function if you cannot find it)"
)


@dataclass(frozen=True)
class BugCase:
    """One call of the learner's fixed function. ``extra`` pairs a learner-made mistake's result on this
    case with the words that name it (learner-made, so naming it gives no original bug away)."""

    name: str
    args: tuple[Any, ...]
    extra: tuple[tuple[NDArray[Any], str], ...] = field(default=())


def combinations(forms: Mapping[str, int]) -> list[dict[str, int]]:
    """Every stage of the fixing: each bug fixed (0) or in one of its ``forms[name]`` forms (1 and up)."""
    names = list(forms)
    return [
        dict(zip(names, choice, strict=True))
        for choice in itertools.product(*(range(forms[name] + 1) for name in names))
    ]


def bugs_left_words(left: int, total: int) -> str:
    """'2 of the 3 bugs remain', '1 of the 3 bugs remains', 'all 3 bugs remain'."""
    if left == total:
        return f"all {total} bugs remain" if total > 1 else "the bug remains"
    return f"{left} of the {total} bugs remain" + ("s" if left == 1 else "")


def _same(a: NDArray[Any] | None, b: NDArray[Any]) -> bool:
    if a is None or a.shape != b.shape:
        return False
    return bool(np.allclose(a.astype(np.float64), b, rtol=RTOL, atol=ATOL, equal_nan=True))


def _result(fn: Callable[..., Any], case: BugCase) -> NDArray[Any] | None:
    """What the learner's function returns on ``case``, as an array, or None when it fails."""
    try:
        return as_array(call_learner(fn, case.args), "the output")
    except Problem:
        return None


def run_bug_hunt(
    title: str,
    fn: Callable[..., Any],
    cases: Sequence[BugCase],
    buggy: Callable[..., Any],
    forms: Mapping[str, int],
) -> CheckResult:
    """Check ``fn``, the learner's fix of a function whose bugs are ``forms`` (name -> number of forms), on
    ``cases``; ``buggy(bugs, *args)`` is that function with the bugs ``bugs`` left in (all 0: the right
    answer). Prints and returns one sentence, as :func:`course.checkers._engine.run_cases` does."""
    stages = combinations(forms)
    fixed = {name: 0 for name in forms}
    variants = [
        [np.asarray(buggy(stage, *case.args), dtype=np.float64) for stage in stages] for case in cases
    ]

    def bugs_left() -> int | None:
        """The fewest bugs of a stage that gives what ``fn`` gives on every case; None if there is none."""
        results = [_result(fn, case) for case in cases]
        left = [
            sum(1 for form in stage.values() if form)
            for index, stage in enumerate(stages)
            if all(_same(result, variants[c][index]) for c, result in enumerate(results))
        ]
        return min(left) if left else None

    def check(fn: Callable[..., Any], case: BugCase) -> None:
        expected = np.asarray(buggy(fixed, *case.args), dtype=np.float64)
        try:
            check_case(fn, Case(case.name, case.args, expected, mistakes=case.extra))
        except Problem as problem:
            sentence = str(problem)
            if _result(fn, case) is None:  # it raised, changed an input or returned no array: said as is
                raise
            left = bugs_left()
            if left is not None:
                raise Problem(f"{sentence}; {bugs_left_words(left, len(forms))}") from None
            if any(sentence.endswith(words) for _, words in case.extra):
                raise
            raise Problem(f"{sentence}; {NEW_MISTAKE}") from None

    return run_cases(title, fn, cases, check)
