"""The question bank: one TOML file per lesson in ``course/questions/``, loaded and validated.

File format (``NN-slug.toml``, ``NN`` being the lesson id)::

    lesson = "00"
    retired = ["00-old-id"]       # optional: ids of this lesson that are no longer questions (see below)

    [[question]]
    id = "00-what-enrolls"        # ^NN-[a-z0-9]+(-[a-z0-9]+)*$, NN = the file's lesson
    kind = "recall"               # recall | choice | numeric
    prompt = '''...'''            # Markdown with $...$ / $$...$$ math
    answer = '''...'''            # recall: text; numeric: a number; choice: none (see options)
    explanation = '''...'''
    section = "3. Quizzes, reviews and your schedule"
    # choice only: 2 to 6 options, exactly one correct, each with its own explanation
    options = [{ text = "...", correct = true, why = "..." }, { text = "...", why = "..." }]
    # numeric only: tolerance (absolute, >= 0, required) and unit (optional)

`load_bank` collects every problem before raising `BankError`, so one run lists them all. Each problem
names the file (relative to the bank directory), the question (its id, or ``#N``, its 1-based position, when
the id is missing or invalid) and the field, e.g.::

    00-welcome.toml: question '00-hard-means': field 'options': exactly one option must have correct = true
    (found 2)

Options are numbered from 1 too: ``options[2].why`` is the second option's ``why``.

**Question ids and ``retired``.** A question id's meaning never changes: a learner's review history is keyed
by it. A rewrite that keeps the meaning (clearer wording, a better explanation, another distractor) keeps the
id; a rewrite that changes what is asked or what the answer is gets a new id, and the old id goes into the
file's ``retired`` array, never to be used again. ``retired`` is optional; each entry is an id of the file's
own lesson, listed once, that no question of the bank has (problems are named ``retired[N]``, from 1, e.g.
``00-welcome.toml: field 'retired[2]': question id '00-x' is listed as retired and is still a question``).
`Bank.retired` returns them. A retired id's history stays in the learner's store (it is append-only) but is
never served again and never counted: reviews, cram, quizzes and statistics all work on the bank's questions
only and ignore ids that are not among them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from course import _toml
from course.lessons import QUIZ_LESSONS

if TYPE_CHECKING:
    from scheduler import Item

__all__ = ["KINDS", "Bank", "BankError", "Option", "Question", "load_bank"]

KINDS = ("recall", "choice", "numeric")
DEFAULT_DIRECTORY = Path(__file__).resolve().parent / "questions"

_ID = re.compile(r"[0-9]{2}-[a-z0-9]+(?:-[a-z0-9]+)*")
_FILE_NAME = re.compile(r"([0-9]{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.toml")
_FILE_KEYS = ("lesson", "retired", "question")
_QUESTION_KEYS = ("id", "kind", "prompt", "answer", "explanation", "section", "options", "tolerance", "unit")
_KIND_KEYS = {"recall": ("answer",), "choice": ("options",), "numeric": ("answer", "tolerance", "unit")}
_OPTION_KEYS = ("text", "correct", "why")
_MIN_OPTIONS, _MAX_OPTIONS = 2, 6


class BankError(Exception):
    """The question bank is invalid. ``problems`` lists every problem found, one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: list[str] = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Option:
    """One answer of a multiple-choice question, with why it is right or wrong."""

    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class Question:
    """One self-check question. For ``choice`` the ``answer`` is the correct option's text."""

    id: str
    lesson: str
    kind: str
    prompt: str
    answer: str | int | float
    explanation: str
    section: str
    options: tuple[Option, ...] = ()
    tolerance: float = 0.0
    unit: str = ""
    source: str = ""

    @property
    def correct_option(self) -> int:
        """0-based index of the correct option (choice questions only)."""
        if self.kind != "choice":
            raise TypeError(
                f"question {self.id!r} is a {self.kind} question; only choice questions have options"
            )
        return next(i for i, option in enumerate(self.options) if option.correct)

    def is_correct(self, response: int | float | str) -> bool:
        """Grade a response: choice -> the 0-based option index; numeric -> a number (or its text), right
        when within ``tolerance`` of the answer. Recall questions are graded by the learner: TypeError.
        """
        if self.kind == "choice":
            if isinstance(response, bool) or not isinstance(response, int):
                raise TypeError(f"a choice answer is a 0-based option index, got {type(response).__name__}")
            if not 0 <= response < len(self.options):
                raise ValueError(
                    f"option index {response} is out of range for question {self.id!r} "
                    f"(0 to {len(self.options) - 1})"
                )
            return self.options[response].correct
        if self.kind == "numeric":
            value = self.parse_number(response) if isinstance(response, str) else _to_number(response)
            expected = float(self.answer)
            slack = 1e-9 * max(1.0, abs(expected))  # absorb float noise such as 0.1 + 0.2
            return math.isfinite(value) and abs(value - expected) <= self.tolerance + slack
        raise TypeError(
            f"question {self.id!r} is a recall question: the learner grades it, is_correct does not"
        )

    def parse_number(self, text: str) -> float:
        """The number a learner typed: a number, optionally followed by this question's unit ("4", "4h" and
        "4 h" all give 4.0 when the unit is "h"). A number is a decimal, in scientific notation or not
        ("0.001", "1e-3", "2.5E3"), or a simple fraction of two ("3/4", "-1/2"). ValueError ``not a number:
        '4x'`` for anything else, a zero denominator included."""
        number = text.strip()
        if self.unit and number.endswith(self.unit):
            number = number[: -len(self.unit)].rstrip()
        value = _typed_number(number.replace("\N{MINUS SIGN}", "-"))
        if value is None:
            raise ValueError(f"not a number: {text!r}")
        return value


def _typed_number(text: str) -> float | None:
    """`text` as a decimal or as a fraction of two finite decimals with a nonzero denominator; else None."""
    numerator, slash, denominator = text.partition("/")
    try:
        if not slash:
            return float(text)
        top, bottom = float(numerator), float(denominator)
    except ValueError:
        return None
    if bottom == 0 or not (math.isfinite(top) and math.isfinite(bottom)):
        return None
    return top / bottom


def _to_number(response: object) -> float:
    if isinstance(response, bool):
        raise TypeError("a numeric answer is a number, got bool")
    if isinstance(response, (int, float)):
        return float(response)
    raise TypeError(f"a numeric answer is a number, got {type(response).__name__}")


class Bank:
    """A validated question bank: questions grouped by lesson, in file order."""

    def __init__(
        self, questions: Sequence[Question], directory: Path | None = None, retired: Iterable[str] = ()
    ) -> None:
        self.directory = directory
        self._questions = tuple(questions)
        self._retired = frozenset(retired)
        self._by_id = {q.id: q for q in self._questions}
        order = {lesson_id: i for i, lesson_id in enumerate(QUIZ_LESSONS)}
        self._lessons = tuple(sorted({q.lesson for q in self._questions}, key=order.__getitem__))

    def lessons(self) -> tuple[str, ...]:
        """The ids of the lessons that have questions, in course order."""
        return self._lessons

    def questions(self, lesson: str) -> tuple[Question, ...]:
        """The questions of one lesson in file order (empty for a lesson without questions yet)."""
        if lesson not in QUIZ_LESSONS:
            raise KeyError(f"unknown lesson {lesson!r} (lessons with a quiz: {', '.join(QUIZ_LESSONS)})")
        return tuple(q for q in self._questions if q.lesson == lesson)

    def retired(self) -> frozenset[str]:
        """The retired question ids of every lesson (the ``retired`` arrays): never questions again."""
        return self._retired

    def get(self, question_id: str) -> Question | None:
        return self._by_id.get(question_id)

    def __getitem__(self, question_id: str) -> Question:
        return self._by_id[question_id]

    def all(self) -> tuple[Question, ...]:
        """Every question, lesson by lesson, in file order."""
        return self._questions

    def items(self) -> list[Item]:
        """The questions as scheduler items (deck = lesson), in the order of `all`."""
        from scheduler import Item

        return [Item(id=q.id, deck=q.lesson) for q in self._questions]

    def __len__(self) -> int:
        return len(self._questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self._questions)

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._by_id

    def __repr__(self) -> str:
        return f"Bank({len(self._questions)} questions in {len(self._lessons)} lessons)"


def load_bank(directory: str | Path | None = None) -> Bank:
    """Load and validate every ``NN-slug.toml`` file in `directory` (default: the course's own bank).

    Raises `BankError` listing every problem found.
    """
    root = DEFAULT_DIRECTORY if directory is None else Path(directory)
    files = _question_files(root)
    if not files:
        raise BankError([f"{root}: no question files (NN-slug.toml) in the question bank directory"])
    problems: list[str] = []
    questions: list[Question] = []
    lesson_files: dict[str, str] = {}
    first_seen: dict[str, tuple[str, int]] = {}
    retired: dict[str, tuple[str, int]] = {}  # id -> (file, 1-based position in its `retired` array)
    for path in files:
        for number, question in _load_file(path, root, problems, lesson_files, retired):
            if question.id in first_seen:
                where, position = first_seen[question.id]
                problems.append(
                    _problem(
                        question.source,
                        f"question {question.id!r}",
                        "id",
                        f"duplicate of question #{position} in {where}",
                    )
                )
            else:
                first_seen[question.id] = (question.source, number)
            questions.append(question)
    for question_id, (file, position) in retired.items():
        if question_id in first_seen:
            where, number = first_seen[question_id]
            place = "" if where == file else f" (question #{number} in {where})"
            problems.append(
                _problem(
                    file,
                    None,
                    f"retired[{position}]",
                    f"question id {question_id!r} is listed as retired and is still a question{place}",
                )
            )
    if problems:
        raise BankError(problems)
    return Bank(questions, root, retired)


def _question_files(root: Path) -> list[Path]:
    """The files of the bank directory whose name ends in .toml, in any case (a wrong case is reported)."""
    try:
        entries = list(root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        raise BankError([f"{root}: question bank directory not found"]) from None
    except OSError as err:
        raise BankError([f"{root}: cannot read the question bank directory ({_reason(err)})"]) from None
    return sorted(p for p in entries if p.suffix.lower() == ".toml" and not p.name.startswith("."))


def _reason(err: OSError) -> str:
    return err.strerror or type(err).__name__


def _problem(file: str, question: str | None, field: str | None, message: str) -> str:
    parts = [file]
    if question:
        parts.append(question)
    if field:
        parts.append(f"field {field!r}")
    parts.append(message)
    return ": ".join(parts)


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    if isinstance(value, (datetime, date, time)):
        return "date/time"
    return type(value).__name__


_FENCE_CLOSE = re.compile(r"^```[ \t]*$", re.MULTILINE)  # a line that is only a fence closes a block
_INLINE_CODE = re.compile(r"`[^`\n]+`")


def _without_code(text: str) -> str:
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


def _unbalanced_math(text: str) -> bool:
    """An odd number of math delimiters ``$``, not counting ``\\$`` nor those in code (as in the renderer)."""
    return _without_code(text).replace("\\$", "").count("$") % 2 == 1


def _load_file(
    path: Path,
    root: Path,
    problems: list[str],
    lesson_files: dict[str, str],
    retired: dict[str, tuple[str, int]],
) -> list[tuple[int, Question]]:
    """Validate one file; append its problems; add its valid retired ids to `retired`; return its valid
    questions with their 1-based positions."""
    file = path.relative_to(root).as_posix()
    name_match = _FILE_NAME.fullmatch(path.name)
    if path.suffix != ".toml":
        problems.append(_problem(file, None, None, f"file name must end in .toml, not {path.suffix}"))
    elif name_match is None:
        problems.append(
            _problem(
                file,
                None,
                None,
                "file name must look like NN-slug.toml (NN = the lesson id, e.g. 00-welcome.toml)",
            )
        )
    try:
        content = path.read_bytes()
    except OSError as err:
        problems.append(_problem(file, None, None, f"cannot read the file ({_reason(err)})"))
        return []
    try:
        data = _toml.loads(content.decode("utf-8").removeprefix("\N{BYTE ORDER MARK}"))
    except UnicodeDecodeError as err:
        problems.append(_problem(file, None, None, f"not UTF-8 text: {err}"))
        return []
    except _toml.TOMLDecodeError as err:
        problems.append(_problem(file, None, None, f"not valid TOML: {err}"))
        return []

    def add(field: str | None, message: str) -> None:
        problems.append(_problem(file, None, field, message))

    for key in data:
        if key not in _FILE_KEYS:
            add(key, f"unknown key (allowed: {', '.join(_FILE_KEYS)})")

    lesson: str | None = None
    if "lesson" not in data:
        add("lesson", 'missing (e.g. lesson = "00")')
    elif not isinstance(data["lesson"], str):
        add("lesson", f'must be a string such as "00" (got {_type_name(data["lesson"])})')
    elif data["lesson"] not in QUIZ_LESSONS:
        add("lesson", f"unknown lesson {data['lesson']!r} (known: {', '.join(QUIZ_LESSONS)})")
    else:
        lesson = data["lesson"]
        if name_match is not None and name_match.group(1) != lesson:
            add(
                "lesson",
                f"{lesson!r} does not match the file name, which starts with {name_match.group(1)!r}",
            )
        if lesson in lesson_files:
            add("lesson", f"lesson {lesson!r} already has a question file: {lesson_files[lesson]}")
        else:
            lesson_files[lesson] = file

    if "retired" in data:
        _check_retired(data["retired"], file, lesson, add, retired)

    raw = data.get("question")
    if raw is None:
        add("question", "missing (add at least one [[question]] table)")
        return []
    if not isinstance(raw, list):
        add("question", f"must be an array of tables, written [[question]] (got {_type_name(raw)})")
        return []
    if not raw:
        add("question", "must hold at least one question")
        return []

    valid: list[tuple[int, Question]] = []
    for number, entry in enumerate(raw, start=1):
        question = _check_question(entry, number, file, lesson, problems)
        if question is not None:
            valid.append((number, question))
    return valid


def _check_retired(
    raw: Any, file: str, lesson: str | None, add: Any, retired: dict[str, tuple[str, int]]
) -> None:
    """Validate a file's ``retired`` array; add each valid id (first occurrence) to `retired`."""
    if not isinstance(raw, list):
        add("retired", f'must be an array of question ids, e.g. ["00-old-id"] (got {_type_name(raw)})')
        return
    for position, value in enumerate(raw, start=1):
        where = f"retired[{position}]"
        if not isinstance(value, str):
            add(where, f"must be a string (got {_type_name(value)})")
        elif not _ID.fullmatch(value):
            add(
                where,
                f"{value!r} must be the lesson id and lowercase words joined by '-' (e.g. '00-hard-means')",
            )
        elif lesson is not None and not value.startswith(lesson + "-"):
            add(where, f"{value!r} must start with '{lesson}-', the lesson of this file")
        elif value in retired:
            other_file, other = retired[value]
            add(where, f"duplicate of retired[{other}]" + ("" if other_file == file else f" in {other_file}"))
        else:
            retired[value] = (file, position)


def _check_question(
    entry: Any, number: int, file: str, lesson: str | None, problems: list[str]
) -> Question | None:
    if not isinstance(entry, dict):
        problems.append(
            _problem(file, f"question #{number}", None, f"must be a table (got {_type_name(entry)})")
        )
        return None
    raw_id = entry.get("id")
    label = (
        f"question {raw_id!r}" if isinstance(raw_id, str) and _ID.fullmatch(raw_id) else f"question #{number}"
    )
    found: list[str] = []

    def add(field: str, message: str) -> None:
        found.append(_problem(file, label, field, message))

    def text(field: str, *, math: bool = True, allow_empty: bool = False) -> str | None:
        if field not in entry:
            add(field, "missing")
            return None
        value = entry[field]
        if not isinstance(value, str):
            add(field, f"must be a string (got {_type_name(value)})")
            return None
        if not allow_empty and not value.strip():
            add(field, "must not be empty")
            return None
        if math and _unbalanced_math(value):
            add(field, "unbalanced math: odd number of '$' (write \\$ for a literal dollar sign)")
            return None
        return value

    for key in entry:
        if key not in _QUESTION_KEYS:
            add(key, f"unknown key (allowed: {', '.join(_QUESTION_KEYS)})")

    question_id: str | None = None
    if "id" not in entry:
        add("id", "missing")
    elif not isinstance(raw_id, str):
        add("id", f"must be a string (got {_type_name(raw_id)})")
    elif not _ID.fullmatch(raw_id):
        add(
            "id", f"{raw_id!r} must be the lesson id and lowercase words joined by '-' (e.g. '00-hard-means')"
        )
    elif lesson is not None and not raw_id.startswith(lesson + "-"):
        add("id", f"must start with '{lesson}-', the lesson of this file")
    else:
        question_id = raw_id

    kind: str | None = None
    if "kind" not in entry:
        add("kind", f"missing (one of {', '.join(KINDS)})")
    elif not isinstance(entry["kind"], str):
        add("kind", f"must be a string (got {_type_name(entry['kind'])})")
    elif entry["kind"] not in KINDS:
        add("kind", f"unknown kind {entry['kind']!r} (one of {', '.join(KINDS)})")
    else:
        kind = entry["kind"]

    prompt = text("prompt")
    explanation = text("explanation")
    section = text("section", math=False)

    answer: str | int | float | None = None
    options: tuple[Option, ...] = ()
    tolerance = 0.0
    unit = ""
    if kind is not None:
        for key in ("answer", "options", "tolerance", "unit"):
            if key in entry and key not in _KIND_KEYS[kind]:
                hint = " (mark the right option with correct = true)" if key == "answer" else ""
                add(key, f"not allowed for kind {kind!r}{hint}")
    if kind == "recall":
        answer = text("answer")
    elif kind == "numeric":
        answer = _number(entry, "answer", add)
        value = _number(entry, "tolerance", add, missing="missing (required for numeric; 0 means exact)")
        if value is not None:
            if value < 0:
                add("tolerance", f"must be >= 0 (got {value})")
            tolerance = float(value)
        if "unit" in entry:
            unit = text("unit", math=False, allow_empty=True) or ""
    elif kind == "choice":
        options = _check_options(entry, add)
        answer = next((o.text for o in options if o.correct), None)

    problems.extend(found)
    if found or lesson is None or question_id is None or kind is None or answer is None:
        return None  # a problem was reported: here, or for the file's `lesson`
    assert prompt is not None and explanation is not None and section is not None
    return Question(
        id=question_id,
        lesson=lesson,
        kind=kind,
        prompt=prompt,
        answer=answer,
        explanation=explanation,
        section=section,
        options=options,
        tolerance=tolerance,
        unit=unit,
        source=file,
    )


def _number(entry: dict[str, Any], field: str, add: Any, *, missing: str = "missing") -> int | float | None:
    if field not in entry:
        add(field, missing)
        return None
    value = entry[field]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        add(field, f"must be a number (got {_type_name(value)})")
        return None
    if not math.isfinite(value):
        add(field, f"must be a finite number (got {value})")
        return None
    return value


def _check_options(entry: dict[str, Any], add: Any) -> tuple[Option, ...]:
    if "options" not in entry:
        add("options", f"missing ({_MIN_OPTIONS} to {_MAX_OPTIONS} options, exactly one with correct = true)")
        return ()
    raw = entry["options"]
    if not isinstance(raw, list):
        add("options", f"must be an array of tables (got {_type_name(raw)})")
        return ()
    if not _MIN_OPTIONS <= len(raw) <= _MAX_OPTIONS:
        add("options", f"must have {_MIN_OPTIONS} to {_MAX_OPTIONS} options (found {len(raw)})")
    options: list[Option] = []
    ok = True
    seen: dict[str, int] = {}
    for number, option in enumerate(raw, start=1):
        where = f"options[{number}]"
        if not isinstance(option, dict):
            add(
                where,
                f"must be a table like {{ text = ..., correct = ..., why = ... }} (got {_type_name(option)})",
            )
            ok = False
            continue
        for key in option:
            if key not in _OPTION_KEYS:
                add(f"{where}.{key}", f"unknown key (allowed: {', '.join(_OPTION_KEYS)})")
                ok = False
        values: dict[str, str] = {}
        for key in ("text", "why"):
            value = option.get(key)
            if key not in option:
                add(f"{where}.{key}", "missing")
            elif not isinstance(value, str):
                add(f"{where}.{key}", f"must be a string (got {_type_name(value)})")
            elif not value.strip():
                add(f"{where}.{key}", "must not be empty")
            elif _unbalanced_math(value):
                add(
                    f"{where}.{key}",
                    "unbalanced math: odd number of '$' (write \\$ for a literal dollar sign)",
                )
            else:
                values[key] = value
                continue
            ok = False
        correct = option.get("correct", False)
        if not isinstance(correct, bool):
            add(f"{where}.correct", f"must be true or false (got {_type_name(correct)})")
            ok = False
            correct = False
        if "text" in values:
            key = " ".join(values["text"].split())
            if key in seen:
                add(f"{where}.text", f"same text as options[{seen[key]}]")
                ok = False
            else:
                seen[key] = number
        options.append(Option(values.get("text", ""), correct, values.get("why", "")))
    n_correct = sum(o.correct for o in options)
    if n_correct != 1 and all(isinstance(o, dict) for o in raw):
        add("options", f"exactly one option must have correct = true (found {n_correct})")
        ok = False
    return tuple(options) if ok and _MIN_OPTIONS <= len(raw) <= _MAX_OPTIONS else ()
