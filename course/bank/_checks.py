"""The validation behind `course.bank.load_bank`: the bank directory, each file (its lesson, retired ids,
questions and predictions), and what holds across files (unique ids, retired ids that are no question,
predictions whose card is a question). The rules and fields, and the check of one question, are
`course.bank._fields`'s. Every problem is reported as ``FILE: question 'ID': field 'F': message`` (see
`course.bank` for the format).

`check_bank` builds no records: it returns the fields of the valid questions (`Checked`), and
`course.bank` builds its records from them (importing that module here would be an import cycle).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.bank._fields import (
    CARD,
    FILE_KEYS,
    ID,
    ID_PATTERN,
    LESSON,
    MAX_PREDICTION_OPTIONS,
    PREDICTION_KINDS,
    PREDICTIONS,
    QUESTIONS,
    Report,
    check_question,
    first_problem,
    in_lesson,
    problem,
    reporter,
    type_name,
    unbalanced_math,
    unknown_keys,
    without_code,
)
from course.bank._kinds import KINDS, Kind
from course.bank._toml import TOMLDecodeError, loads

__all__ = ["Checked", "check_bank", "unbalanced_math", "without_code"]

_FILE_NAME = re.compile(r"([0-9]{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.toml")


@dataclass(frozen=True)
class Checked:
    """What `check_bank` found: every problem (none: the bank is valid), the fields of every valid question
    (those of `course.bank.Question`, the options as `OptionFields`), the retired ids and the fields of every
    valid prediction (a question's, and its ``card``)."""

    problems: list[str]
    questions: list[dict[str, Any]]
    retired: list[str]
    predictions: list[dict[str, Any]] = dataclasses.field(default_factory=list)


# ---- the bank


@dataclass
class _Loading:
    """What a load has found so far, across files."""

    problems: list[str] = dataclasses.field(default_factory=list)
    lesson_files: dict[str, str] = dataclasses.field(default_factory=dict)  # lesson -> its file
    first_seen: dict[str, tuple[str, str]] = dataclasses.field(
        default_factory=dict
    )  # id -> file, "question #N"
    retired: dict[str, tuple[str, int]] = dataclasses.field(default_factory=dict)  # id -> file, position


def check_bank(root: Path) -> Checked:
    """Check every question file of the bank directory `root`, collecting every problem."""
    files = _question_files(root)
    if isinstance(files, str):
        return Checked([files], [], [])
    if not files:
        return Checked([f"{root}: no question files (NN-slug.toml) in the question bank directory"], [], [])
    loading = _Loading()
    questions: list[dict[str, Any]] = []
    predictions: list[dict[str, Any]] = []
    for path in files:
        found, predicted = _check_file(path, path.relative_to(root).as_posix(), loading)
        for number, question in found:
            _check_unique(question, number, loading)
            questions.append(question)
        for number, prediction in predicted:
            _check_unique(prediction, number, loading, noun="prediction")
            predictions.append(prediction)
    _check_retired_are_not_questions(loading)
    _check_cards(predictions, {question["id"] for question in questions}, loading)
    return Checked(loading.problems, questions, list(loading.retired), predictions)


def _question_files(root: Path) -> list[Path] | str:
    """The files of the bank directory whose name ends in .toml, in any case (a wrong case is reported);
    the problem instead when the directory cannot be read."""
    try:
        entries = list(root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return f"{root}: question bank directory not found"
    except OSError as err:
        return f"{root}: cannot read the question bank directory ({_reason(err)})"
    return sorted(p for p in entries if p.suffix.lower() == ".toml" and not p.name.startswith("."))


def _reason(err: OSError) -> str:
    return err.strerror or type(err).__name__


def _check_unique(question: dict[str, Any], number: int, loading: _Loading, noun: str = "question") -> None:
    """Report `question` (or prediction) when an earlier one has its id; else remember where it is."""
    question_id, file = question["id"], question["source"]
    if question_id in loading.first_seen:
        where, position = loading.first_seen[question_id]
        report = reporter(loading.problems, file, f"{noun} {question_id!r}")
        report("id", f"duplicate of {position} in {where}")
    else:
        loading.first_seen[question_id] = (file, f"{noun} #{number}")


def _check_cards(predictions: list[dict[str, Any]], questions: set[str], loading: _Loading) -> None:
    """Report every prediction whose card is not a question of the bank."""
    for prediction in predictions:
        if prediction["card"] and prediction["card"] not in questions:
            report = reporter(loading.problems, prediction["source"], f"prediction {prediction['id']!r}")
            report("card", f"no question of the bank has the id {prediction['card']!r}")


def _check_retired_are_not_questions(loading: _Loading) -> None:
    """Report every retired id that a question of the bank still has."""
    for question_id, (file, position) in loading.retired.items():
        if question_id in loading.first_seen:
            where, number = loading.first_seen[question_id]
            place = "" if where == file else f" ({number} in {where})"
            reporter(loading.problems, file)(
                f"retired[{position}]",
                f"question id {question_id!r} is listed as retired and is still a question{place}",
            )


# ---- a file


Numbered = list[tuple[int, dict[str, Any]]]


def _check_file(path: Path, file: str, loading: _Loading) -> tuple[Numbered, Numbered]:
    """Validate one file; report its problems; add its valid retired ids to ``loading.retired``; return its
    valid questions and its valid predictions, each with its 1-based position."""
    report = reporter(loading.problems, file)
    name = _check_file_name(path, report)
    data = _read_table(path, report)
    if data is None:
        return [], []
    unknown_keys(data, FILE_KEYS, report)
    lesson = _check_lesson(data, file, name, report, loading)
    if "retired" in data:
        _check_retired(data["retired"], file, lesson, report, loading.retired)
    predicted = _check_predictions(data, file, lesson, report, loading.problems)
    tables = QUESTIONS.read(data, report)
    if tables is None:
        return [], predicted
    checked = (
        (number, check_question(table, number, file, lesson, loading.problems))
        for number, table in enumerate(tables, start=1)
    )
    return [(number, question) for number, question in checked if question is not None], predicted


def _check_predictions(
    data: dict[str, Any], file: str, lesson: str | None, report: Report, problems: list[str]
) -> Numbered:
    """A file's valid ``[[prediction]]`` tables (optional) with their positions; each problem reported.

    A prediction is a choice question of 2 to `MAX_PREDICTION_OPTIONS` options or a numeric one, with a
    ``card``: the id of the review question that holds the idea it tests."""
    tables = PREDICTIONS.read(data, report)
    found: Numbered = []
    for number, table in enumerate(tables or (), start=1):
        if not isinstance(table, dict):
            problems.append(
                problem(file, f"prediction #{number}", None, f"must be a table (got {type_name(table)})")
            )
            continue
        raw_id = table.get("id")
        named = isinstance(raw_id, str) and ID_PATTERN.fullmatch(raw_id)
        label = f"prediction {raw_id!r}" if named else f"prediction #{number}"
        own: list[str] = []
        own_report = reporter(own, file, label)
        card = CARD.read(table, own_report)
        kind = table.get("kind")
        if isinstance(kind, str) and kind in KINDS and Kind(kind) not in PREDICTION_KINDS:
            own_report(
                "kind", f"a prediction is {' or '.join(map(repr, map(str, PREDICTION_KINDS)))} (got {kind!r})"
            )
        options = table.get("options")
        if kind == Kind.CHOICE and isinstance(options, list) and len(options) > MAX_PREDICTION_OPTIONS:
            own_report(
                "options", f"a prediction has 2 to {MAX_PREDICTION_OPTIONS} options (found {len(options)})"
            )
        rest = {key: value for key, value in table.items() if key != "card"}
        fields = check_question(rest, number, file, lesson, problems, noun="prediction")
        problems.extend(own)
        if fields is not None and not own:
            found.append((number, fields | {"card": card}))
    return found


def _check_file_name(path: Path, report: Report) -> re.Match[str] | None:
    """The file name matched against ``NN-slug.toml``, or None after reporting why it is not one."""
    match = _FILE_NAME.fullmatch(path.name)
    if path.suffix != ".toml":
        report(None, f"file name must end in .toml, not {path.suffix}")
    elif match is None:
        report(None, "file name must look like NN-slug.toml (NN = the lesson id, e.g. 00-welcome.toml)")
    return match


def _read_table(path: Path, report: Report) -> dict[str, Any] | None:
    """The file's TOML table, or None after reporting why it cannot be read."""
    try:
        content = path.read_bytes()
    except OSError as err:
        report(None, f"cannot read the file ({_reason(err)})")
        return None
    try:
        return loads(content.decode("utf-8").removeprefix("\N{BYTE ORDER MARK}"))
    except UnicodeDecodeError as err:
        report(None, f"not UTF-8 text: {err}")
    except TOMLDecodeError as err:
        report(None, f"not valid TOML: {err}")
    return None


def _check_lesson(
    data: dict[str, Any], file: str, name: re.Match[str] | None, report: Report, loading: _Loading
) -> str | None:
    """The file's lesson, or None when it is invalid (reported); it must match the file name, and have no
    other file."""
    lesson: str | None = LESSON.read(data, report)
    if lesson is None:
        return None
    if name is not None and name.group(1) != lesson:
        report("lesson", f"{lesson!r} does not match the file name, which starts with {name.group(1)!r}")
    if lesson in loading.lesson_files:
        report("lesson", f"lesson {lesson!r} already has a question file: {loading.lesson_files[lesson]}")
    else:
        loading.lesson_files[lesson] = file
    return lesson


def _check_retired(
    raw: Any, file: str, lesson: str | None, report: Report, retired: dict[str, tuple[str, int]]
) -> None:
    """Validate a file's ``retired`` array; add each valid id (first occurrence) to `retired`."""
    if not isinstance(raw, list):
        report("retired", f'must be an array of question ids, e.g. ["00-old-id"] (got {type_name(raw)})')
        return
    rules = ID if lesson is None else (*ID, in_lesson(lesson, quote=True))
    for position, value in enumerate(raw, start=1):
        where = f"retired[{position}]"
        message = first_problem(value, rules)
        if message is not None:
            report(where, message)
        elif value in retired:
            other_file, other = retired[value]
            report(
                where, f"duplicate of retired[{other}]" + ("" if other_file == file else f" in {other_file}")
            )
        else:
            retired[value] = (file, position)
