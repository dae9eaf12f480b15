"""The rules and fields of the question bank's validation, table-driven: each field's rules are declared once,
and the check of one question table (`check_question`) and of a choice question's options.

A rule takes a value and gives the problem's message, or None when the value passes. A `Field` is a key
with its rules, applied in order up to the first that fails: `LESSON` and `QUESTIONS` are a file's,
`QUESTION_FIELDS` every question's, `OPTION_FIELDS` and `CORRECT` a choice option's, `PREDICTIONS` and
`CARD` a file's predictions. What depends on the kind of a question (its keys, and how they are read) is in
the registry, `course.bank.SPECS`. Every problem is reported as ``FILE: question 'ID': field 'F': message``
(see `course.bank` for the format).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from course.bank._kinds import KINDS, SPECS, Kind, KindFields, OptionFields
from course.lessons import QUIZ_LESSONS

Rule = Callable[[Any], str | None]
"""A check of one value: the problem's message, or None."""
Report = Callable[[str | None, str], None]
"""Reports a problem: `report(field, message)` (field None: the whole file or question)."""

ID_PATTERN = re.compile(r"[0-9]{2}-[a-z0-9]+(?:-[a-z0-9]+)*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # Unicode's Cc, tab and line feed aside
_MIN_OPTIONS, _MAX_OPTIONS = 2, 6
_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int
    (int, "integer"),
    (float, "float"),
    (str, "string"),
    (list, "array"),
    (dict, "table"),
    ((datetime, date, time), "date/time"),
)


def type_name(value: object) -> str:
    """The TOML name of `value`'s type, as problems name it: ``integer``, ``array``, ``table``..."""
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__)


_FENCE_CLOSE = re.compile(r"^```[ \t]*$", re.MULTILINE)  # a line that is only a fence closes a block
_INLINE_CODE = re.compile(r"`[^`\n]+`")


def without_code(text: str) -> str:
    """`text` without its code: fenced blocks (from a line that starts with ```, up to the next line that is
    only ```) and inline spans (`...` within a line); left to right, a block before a span at one position.

    One pass, linear in the length of `text`: the closing lines are found once, in order, and every scan
    for an inline span stops at the next backtick or line end.
    """
    closers = [(m.start(), m.end()) for m in _FENCE_CLOSE.finditer(text)]
    kept: list[str] = []
    position = closer = 0
    while (tick := text.find("`", position)) >= 0:
        kept.append(text[position:tick])
        if text.startswith("```", tick) and (tick == 0 or text[tick - 1] == "\n"):
            while closer < len(closers) and closers[closer][0] < tick + 3:
                closer += 1  # a closing line must start after the opening fence
            if closer < len(closers):
                position = closers[closer][1]
                closer += 1
                continue
        span = _INLINE_CODE.match(text, tick)
        if span is not None:
            position = span.end()
        else:
            kept.append("`")
            position = tick + 1
    kept.append(text[position:])
    return "".join(kept)


def unbalanced_math(text: str) -> bool:
    """An odd number of math delimiters ``$``, not counting ``\\$`` nor those in code (as in the renderer)."""
    return without_code(text).replace("\\$", "").count("$") % 2 == 1


# ---- the rules


def must_be(kind: type | tuple[type, ...], expected: str) -> Rule:
    """The rule that a value is a `kind` (a boolean only when `kind` is ``bool``)."""

    def rule(value: object) -> str | None:
        if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
            return None
        return f"must be {expected} (got {type_name(value)})"

    return rule


is_string = must_be(str, "a string")
is_lesson_string = must_be(str, 'a string such as "00"')
is_number = must_be((int, float), "a number")
is_boolean = must_be(bool, "true or false")
is_question_array = must_be(list, "an array of tables, written [[question]]")
is_prediction_array = must_be(list, "an array of tables, written [[prediction]]")
is_options_array = must_be(list, "an array of tables")
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def is_names_array(value: object) -> str | None:
    """The rule that a value is an array of distinct names: lowercase words joined by hyphens."""
    if not isinstance(value, list):
        return f'must be an array of names such as ["causal-top-left"] (got {type_name(value)})'
    for position, name in enumerate(value, start=1):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            return (
                f"item {position} must be a name of lowercase words joined by hyphens, such as "
                f'"causal-top-left" (got {name!r})'
            )
        if name in value[: position - 1]:
            return f"item {position} repeats {name!r}"
    return None


def is_not_blank(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def has_balanced_math(value: str) -> str | None:
    if unbalanced_math(value):
        return "unbalanced math: odd number of '$' (write \\$ for a literal dollar sign)"
    return None


def has_no_control_characters(value: str) -> str | None:
    """A text's control characters (Unicode's Cc: C0, DEL and C1) other than tab and line feed are refused:
    TOML refuses them raw but writes them as escapes (``\\u001f``, ``\\b``, ``\\r``...) and lets C1 through
    raw, and they corrupt what shows the text (a terminal, Anki's fields, which U+001F separates)."""
    found = _CONTROL.search(value)
    if found is None:
        return None
    before = value[: found.start()]
    line, column = before.count("\n") + 1, found.start() - (before.rfind("\n") + 1) + 1
    return (
        f"must not contain control characters (found U+{ord(found.group()):04X} at line {line}, column "
        f"{column} of the text)"
    )


def is_finite(value: float) -> str | None:
    return None if math.isfinite(value) else f"must be a finite number (got {value})"


def is_question_id(value: str) -> str | None:
    if ID_PATTERN.fullmatch(value):
        return None
    return f"{value!r} must be the lesson id and lowercase words joined by '-' (e.g. '00-hard-means')"


def is_kind(value: str) -> str | None:
    return None if value in KINDS else f"unknown kind {value!r} (one of {', '.join(KINDS)})"


def is_quiz_lesson(value: str) -> str | None:
    if value in QUIZ_LESSONS:
        return None
    return f"unknown lesson {value!r} (known: {', '.join(QUIZ_LESSONS)})"


def is_not_empty_array(value: list[Any]) -> str | None:
    return None if value else "must hold at least one question"


def in_lesson(lesson: str, *, quote: bool) -> Rule:
    """The rule that an id starts with ``lesson-``; `quote`: the message starts with the id."""

    def rule(value: str) -> str | None:
        if value.startswith(lesson + "-"):
            return None
        message = f"must start with '{lesson}-', the lesson of this file"
        return f"{value!r} {message}" if quote else message

    return rule


def first_problem(value: Any, rules: Iterable[Rule]) -> str | None:
    """The message of the first of `rules` that `value` fails, or None."""
    return next((message for rule in rules if (message := rule(value)) is not None), None)


# ---- the fields


@dataclass(frozen=True)
class Field:
    """A key of a table and the rules of its value; `missing`: the problem when it is absent (None: the
    key is optional)."""

    name: str
    rules: tuple[Rule, ...]
    missing: str | None = "missing"

    def read(self, table: Mapping[str, Any], report: Report, prefix: str = "") -> Any:
        """The value, or None after reporting its problem (named `prefix` + the key)."""
        if self.name not in table:
            if self.missing is not None:
                report(prefix + self.name, self.missing)
            return None
        value = table[self.name]
        message = first_problem(value, self.rules)
        if message is not None:
            report(prefix + self.name, message)
            return None
        return value

    def also(self, rule: Rule) -> Field:
        """This field with one more rule, checked last."""
        return dataclasses.replace(self, rules=(*self.rules, rule))


MARKDOWN = (is_string, is_not_blank, has_no_control_characters, has_balanced_math)
PLAIN = (is_string, is_not_blank, has_no_control_characters)
NUMBER = (is_number, is_finite)
ID = (is_string, is_question_id)

LESSON = Field("lesson", (is_lesson_string, is_quiz_lesson), 'missing (e.g. lesson = "00")')
QUESTIONS = Field(
    "question", (is_question_array, is_not_empty_array), "missing (add at least one [[question]] table)"
)
FILE_KEYS = ("lesson", "retired", "question", "prediction")
PREDICTIONS = Field("prediction", (is_prediction_array,), missing=None)
PREDICTION_KINDS = (Kind.CHOICE, Kind.NUMERIC)
MAX_PREDICTION_OPTIONS = 4


def is_card(value: str) -> str | None:
    """The rule for a prediction's card: a question id, or "" (a prompt about the course itself)."""
    return None if value == "" else is_question_id(value)


CARD = Field(
    "card",
    (is_string, is_card),
    'missing (the id of the review question that holds the idea it tests, or "" for none)',
)
QUESTION_FIELDS = (
    Field("id", ID),
    Field("kind", (is_string, is_kind), f"missing (one of {', '.join(KINDS)})"),
    Field("prompt", MARKDOWN),
    Field("explanation", MARKDOWN),
    Field("section", PLAIN),
)
KIND_KEYS = tuple(dict.fromkeys(key for spec in SPECS.values() for key in spec.keys))
"""The keys that only some kinds allow, in registry order: answer, options, tolerance, unit, checker,
function, starter, solution, mistakes."""
QUESTION_KEYS = tuple(dict.fromkeys(("id", "kind", "prompt", "answer", "explanation", "section", *KIND_KEYS)))
"""Every key of a question, as messages list them (the answer after the prompt, where a question reads it)."""
OPTIONS = Field(
    "options",
    (is_options_array,),
    f"missing ({_MIN_OPTIONS} to {_MAX_OPTIONS} options, exactly one with correct = true)",
)
OPTION_FIELDS = (Field("text", MARKDOWN), Field("why", MARKDOWN))
OPTION_KEYS = ("text", "correct", "why")
CORRECT = Field("correct", (is_boolean,), missing=None)


def unknown_keys(
    table: Mapping[str, Any], allowed: tuple[str, ...], report: Report, prefix: str = ""
) -> None:
    """Report every key of `table` not in `allowed`."""
    for key in table:
        if key not in allowed:
            report(prefix + key, f"unknown key (allowed: {', '.join(allowed)})")


def problem(file: str, question: str | None, field: str | None, message: str) -> str:
    """One problem as reported: ``FILE: question 'ID': field 'F': message``, without absent parts."""
    parts = [file]
    if question:
        parts.append(question)
    if field:
        parts.append(f"field {field!r}")
    parts.append(message)
    return ": ".join(parts)


def reporter(problems: list[str], file: str, question: str | None = None) -> Report:
    """The `Report` that appends to `problems`, naming `file` and `question`."""

    def report(field: str | None, message: str) -> None:
        problems.append(problem(file, question, field, message))

    return report


# ---- a question


class _Entry:
    """A ``[[question]]`` table being checked, the problems found in it (`course.bank.Entry`)."""

    def __init__(self, table: dict[str, Any], file: str, label: str) -> None:
        self.table = table
        self.found: list[str] = []
        self.report: Report = reporter(self.found, file, label)

    def __contains__(self, key: object) -> bool:
        return key in self.table

    def read(self, field: Field) -> Any:
        return field.read(self.table, self.report)

    def text(self, field: str, *, math: bool = True, allow_empty: bool = False) -> str | None:
        rules = (
            is_string,
            *(() if allow_empty else (is_not_blank,)),
            has_no_control_characters,
            *((has_balanced_math,) if math else ()),
        )
        value: str | None = self.read(Field(field, rules))
        return value

    def number(self, field: str, *, missing: str = "missing") -> int | float | None:
        value: int | float | None = self.read(Field(field, NUMBER, missing))
        return value

    def names(self, field: str) -> tuple[str, ...]:
        value: list[str] | None = self.read(Field(field, (is_names_array,), missing=None))
        return tuple(value or ())

    def options(self) -> tuple[OptionFields, ...]:
        return check_options(self.table, self.report)


def check_question(
    table: Any, number: int, file: str, lesson: str | None, problems: list[str], *, noun: str = "question"
) -> dict[str, Any] | None:
    """The fields of the question of the `number`-th ``[[question]]`` table of `file` (those of
    `course.bank.Question`), or None after reporting its problems to `problems`. `noun` names the table
    in the problems (a ``[[prediction]]`` is checked as a question, less its ``card``)."""
    if not isinstance(table, dict):
        problems.append(problem(file, f"{noun} #{number}", None, f"must be a table (got {type_name(table)})"))
        return None
    raw_id = table.get("id")
    named = isinstance(raw_id, str) and ID_PATTERN.fullmatch(raw_id)
    entry = _Entry(table, file, f"{noun} {raw_id!r}" if named else f"{noun} #{number}")
    unknown_keys(table, QUESTION_KEYS, entry.report)
    common = {field.name: entry.read(field) for field in _question_fields(lesson)}
    kind = None if common["kind"] is None else Kind(common["kind"])
    specific = KindFields(None) if kind is None else _read_kind(entry, kind)
    problems.extend(entry.found)
    if entry.found or lesson is None or specific.answer is None:
        return None  # a problem was reported: here, or for the file's `lesson`
    return common | {
        "kind": kind,
        "lesson": lesson,
        "answer": specific.answer,
        "options": specific.options,
        "tolerance": specific.tolerance,
        "unit": specific.unit,
        "checker": specific.checker,
        "function": specific.function,
        "starter": specific.starter,
        "solution": specific.solution,
        "mistakes": specific.mistakes,
        "source": file,
    }


def _question_fields(lesson: str | None) -> tuple[Field, ...]:
    """`QUESTION_FIELDS`, the id also required to start with the file's `lesson` when it is valid."""
    if lesson is None:
        return QUESTION_FIELDS
    question_id, *others = QUESTION_FIELDS
    return (question_id.also(in_lesson(lesson, quote=False)), *others)


def _read_kind(entry: _Entry, kind: Kind) -> KindFields:
    """Refuse the keys of other kinds, then read this kind's fields (`course.bank.SPECS`)."""
    spec = SPECS[kind]
    for key in KIND_KEYS:
        if key in entry and key not in spec.keys:
            hint = f" ({spec.hints[key]})" if key in spec.hints else ""
            entry.report(key, f"not allowed for kind {kind.value!r}{hint}")
    return spec.read(entry)


# ---- a choice question's options


def check_options(table: Mapping[str, Any], report: Report) -> tuple[OptionFields, ...]:
    """A choice question's options, or () after any problem with them (each reported)."""
    found: list[tuple[str | None, str]] = []

    def counted(field: str | None, message: str) -> None:
        found.append((field, message))
        report(field, message)

    raw = OPTIONS.read(table, counted)
    if raw is None:
        return ()
    if not _MIN_OPTIONS <= len(raw) <= _MAX_OPTIONS:
        counted("options", f"must have {_MIN_OPTIONS} to {_MAX_OPTIONS} options (found {len(raw)})")
    seen: dict[str, int] = {}  # normalised text -> number of the first option with it
    options = [
        option
        for number, value in enumerate(raw, start=1)
        if (option := _check_option(value, number, counted, seen)) is not None
    ]
    n_correct = sum(option.correct for option in options)
    if n_correct != 1 and all(isinstance(value, dict) for value in raw):
        counted("options", f"exactly one option must have correct = true (found {n_correct})")
    return () if found else tuple(options)


def _check_option(value: Any, number: int, report: Report, seen: dict[str, int]) -> OptionFields | None:
    """The `number`-th option (its fields checked, invalid ones left empty), or None when it is not a
    table; `seen`: the options so far by their text, white space collapsed."""
    where = f"options[{number}]"
    if not isinstance(value, dict):
        report(
            where, f"must be a table like {{ text = ..., correct = ..., why = ... }} (got {type_name(value)})"
        )
        return None
    unknown_keys(value, OPTION_KEYS, report, f"{where}.")
    text, why = (field.read(value, report, f"{where}.") for field in OPTION_FIELDS)
    correct = CORRECT.read(value, report, f"{where}.") is True
    if text is not None:
        key = " ".join(text.split())
        if key in seen:
            report(f"{where}.text", f"same text as options[{seen[key]}]")
        else:
            seen[key] = number
    return OptionFields(text or "", correct, why or "")
