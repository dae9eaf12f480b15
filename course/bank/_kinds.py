"""The kinds of question, in one registry: `Kind` names them, `SPECS` says what is kind-specific in the data.

Adding a kind means one `Kind` member and its `KindSpec` in `SPECS`, here (and, later, one function per front
end that shows it: the widgets and the terminal). Nothing else on the data side branches on the kind: the
loader (`course.bank.load_bank`) checks the keys and reads the fields of a question through its spec.

A `Kind` is a ``str`` enum: ``Kind.CHOICE == "choice"``, and ``str``/f-strings give the bare name
(``f"{Kind.CHOICE}"`` is ``choice`` on every Python version), so code comparing ``question.kind`` with a name
keeps working.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple, Protocol

from course.bank._code import (
    checker_name_problem,
    code_block,
    code_problem,
    function_name_problem,
    normalised_code,
)

__all__ = ["KINDS", "SPECS", "Entry", "Kind", "KindFields", "KindSpec", "OptionFields"]


class Kind(str, Enum):
    """The kind of a question: how it is answered and graded."""

    RECALL = "recall"
    """Answered in the learner's head, then rated by the learner."""
    CHOICE = "choice"
    """Multiple choice: one right option among 2 to 6."""
    NUMERIC = "numeric"
    """A number, right within a tolerance, optionally with a unit."""
    CODE = "code"
    """A short function the learner writes, graded by running it through a checker of `course.checkers`."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return format(self.value, format_spec)


class Entry(Protocol):
    """A ``[[question]]`` table being validated, as a kind's reader sees it: each read reports its own
    problem (naming the file, the question and the field) and gives None instead of the value."""

    def __contains__(self, key: object) -> bool:
        """Whether the table has `key`."""
        ...

    def report(self, field: str, message: str) -> None:
        """Report a problem with `field`."""
        ...

    def text(self, field: str, *, math: bool = True, allow_empty: bool = False) -> str | None:
        """A required string: not blank unless `allow_empty`, with balanced ``$`` when `math`."""
        ...

    def number(self, field: str, *, missing: str = "missing") -> int | float | None:
        """A required finite number; `missing` is the problem reported when it is absent."""
        ...

    def names(self, field: str) -> tuple[str, ...]:
        """An optional array of distinct names (lowercase words joined by hyphens); () when absent."""
        ...

    def options(self) -> tuple[OptionFields, ...]:
        """The ``options`` array: 2 to 6 valid options, exactly one right (empty after any problem)."""
        ...


class OptionFields(NamedTuple):
    """A valid option's fields, in the order of `course.bank.Option`'s."""

    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class KindFields:
    """What a kind's reader takes from an entry: the answer (None after a problem) and its other fields.
    A code question's are its `checker`, `function`, `starter` and `solution` (None for the other kinds), and
    the named `mistakes` it practises (empty for the other kinds)."""

    answer: str | int | float | None
    options: tuple[OptionFields, ...] = ()
    tolerance: float = 0.0
    unit: str = ""
    checker: str | None = None
    function: str | None = None
    starter: str | None = None
    solution: str | None = None
    mistakes: tuple[str, ...] = ()


@dataclass(frozen=True)
class KindSpec:
    """What is specific to one kind in the question bank.

    `keys`: the keys of a ``[[question]]`` table that only some kinds have and this one allows (a question
    of another kind that has one is refused); `read` reads them, reporting a required one that is missing
    and every invalid one; `hints`: a word of help, by key, added when this kind refuses that key.
    """

    kind: Kind
    keys: tuple[str, ...]
    read: Callable[[Entry], KindFields]
    hints: Mapping[str, str] = field(default_factory=dict)


def _read_recall(entry: Entry) -> KindFields:
    """A recall question's answer: the text the learner compares their own answer with."""
    return KindFields(entry.text("answer"))


def _read_choice(entry: Entry) -> KindFields:
    """A choice question's options; its answer is the right option's text."""
    options = entry.options()
    return KindFields(next((o.text for o in options if o.correct), None), options=options)


def _read_numeric(entry: Entry) -> KindFields:
    """A numeric question's answer, tolerance (required, >= 0) and unit (optional)."""
    answer = entry.number("answer")
    tolerance = entry.number("tolerance", missing="missing (required for numeric; 0 means exact)")
    if tolerance is not None and tolerance < 0:
        entry.report("tolerance", f"must be >= 0 (got {tolerance})")
    unit = (entry.text("unit", math=False, allow_empty=True) or "") if "unit" in entry else ""
    return KindFields(answer, tolerance=0.0 if tolerance is None else float(tolerance), unit=unit)


_CODE_MISSING = {
    "checker": "missing (required for code: the name of its checker in course.checkers, e.g. "
    "'check_card_causal_mask')",
    "function": "missing (required for code: the name of the function the learner writes, e.g. "
    "'causal_mask')",
    "starter": "missing (required for code: the code the learner starts from, defining the function)",
    "solution": "missing (required for code: a worked solution, which passes the checker)",
}


def _read_name(entry: Entry, field: str, problem: Callable[[str], str | None]) -> str | None:
    """A required name (`field` of a code question), reported when `problem` says it is not one."""
    if field not in entry:
        entry.report(field, _CODE_MISSING[field])
        return None
    name = entry.text(field, math=False)
    message = None if name is None else problem(name)
    if message is not None:
        entry.report(field, message)
        return None
    return name


def _read_code_text(entry: Entry, field: str, function: str | None) -> str | None:
    """A required piece of Python (a code question's starter or solution), normalised (`normalised_code`),
    that parses and defines `function` (when that is valid)."""
    if field not in entry:
        entry.report(field, _CODE_MISSING[field])
        return None
    text = entry.text(field, math=False)
    if text is None:
        return None
    code = normalised_code(text)
    message = code_problem(code, function)
    if message is not None:
        entry.report(field, message)
        return None
    return code


def _read_code(entry: Entry) -> KindFields:
    """A code question's checker and function names, starter and solution, and the named mistakes of the
    exercises that bring it back (optional: names of `course.checkers.MISTAKES`, which ``course check``
    confirms); its answer is the solution as a fenced code block (`code_block`), as the answer is shown
    where no checker runs (plain text, Anki)."""
    checker = _read_name(entry, "checker", checker_name_problem)
    function = _read_name(entry, "function", function_name_problem)
    starter = _read_code_text(entry, "starter", function)
    solution = _read_code_text(entry, "solution", function)
    return KindFields(
        None if solution is None else code_block(solution),
        checker=checker,
        function=function,
        starter=starter,
        solution=solution,
        mistakes=entry.names("mistakes"),
    )


SPECS: Mapping[Kind, KindSpec] = {
    Kind.RECALL: KindSpec(Kind.RECALL, ("answer",), _read_recall),
    Kind.CHOICE: KindSpec(
        Kind.CHOICE, ("options",), _read_choice, {"answer": "mark the right option with correct = true"}
    ),
    Kind.NUMERIC: KindSpec(Kind.NUMERIC, ("answer", "tolerance", "unit"), _read_numeric),
    Kind.CODE: KindSpec(
        Kind.CODE,
        ("checker", "function", "starter", "solution", "mistakes"),
        _read_code,
        {"answer": "the answer of a code question is its solution"},
    ),
}
"""Every kind's spec, in the order kinds are listed (in `KINDS` and in messages)."""

KINDS: tuple[str, ...] = tuple(kind.value for kind in SPECS)
"""The names of the kinds, in registry order: ``("recall", "choice", "numeric", "code")``."""
