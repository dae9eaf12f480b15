"""The question bank loader: every validation rule with its exact message, the records, the shipped bank."""

from __future__ import annotations

import io
import json
import random
import re
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import pytest
from bank_samples import RECALL

from course.bank import Bank, BankError, Question, _toml, load_bank
from course.bank._bank import Option
from course.bank._fields import without_code as _without_code
from course.bank._lint import sentence_count
from course.lessons import LESSONS, QUIZ_LESSONS, lesson_id, lesson_title
from course.terminal.cli import main

CHOICE_OPTIONS = """options = [
  { text = "yes", correct = true, why = "W1" },
  { text = "no", correct = false, why = "W2" },
]"""

KNOWN = "00, 01, 02, 03, 04, 05, 06, 07, 08, 09"
MATH = "unbalanced math: odd number of '$' (write \\$ for a literal dollar sign)"
NOT_TABLE = "must be a table like { text = ..., correct = ..., why = ... }"
QUESTION_KEYS = (
    "id, kind, prompt, answer, explanation, section, options, tolerance, unit, checker, function, starter, "
    "solution, mistakes"
)


def question(*lines: str, qid: str = "00-a", kind: str = "recall") -> str:
    """A [[question]] table: the id and kind given, then `lines`, each replacing the default of its key."""
    fields = {
        "prompt": 'prompt = "P"',
        "explanation": 'explanation = "E"',
        "section": 'section = "S"',
    }
    fields.update(
        {"recall": {"answer": 'answer = "A"'}, "choice": {"options": CHOICE_OPTIONS}, "numeric": {}}[kind]
    )
    if kind == "numeric":
        fields.update({"answer": "answer = 64", "tolerance": "tolerance = 0"})
    head = [] if qid is None else [f'id = "{qid}"']
    extra: list[str] = []
    for line in lines:
        key = line.split("=", 1)[0].strip()
        if line.startswith("-"):
            fields.pop(line[1:], None)
        elif key in fields:
            fields[key] = line
        else:
            extra.append(line)
    body = "\n".join([*head, f'kind = "{kind}"', *fields.values(), *extra])
    return f"\n[[question]]\n{body}\n"


FIVE_OPTIONS = (
    "options = ["
    + ", ".join(
        f'{{ text = "o{n}", why = "W{n}"{", correct = true" if n == 1 else ""} }}' for n in range(1, 6)
    )
    + "]"
)


def prediction(*lines: str, qid: str = "00-p", kind: str = "choice", card: str | None = "00-a") -> str:
    """A [[prediction]] table: a question's table (`question`) with the `card` it tests (None: none)."""
    table = question(*lines, qid=qid, kind=kind).replace("[[question]]", "[[prediction]]", 1)
    return table if card is None else table.rstrip("\n") + f'\ncard = "{card}"\n'


def lesson_file(*questions: str, lesson: str = "00") -> str:
    return f'lesson = "{lesson}"\n' + "".join(questions or (question(),))


def problems(tmp_path: Path, files: dict[str, str | bytes]) -> list[str]:
    for name, text in files.items():
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    with pytest.raises(BankError) as caught:
        load_bank(tmp_path)
    assert str(caught.value) == "\n".join(caught.value.problems)
    return caught.value.problems


BAD_TOML = 'lesson = "00"\n[[question]]\nid = \n'
try:
    _toml.loads(BAD_TOML)
except _toml.TOMLDecodeError as err:
    BAD_TOML_MESSAGE = str(err)

F = "00-x.toml"
Q = f"{F}: question '00-a'"

CASES: list[tuple[str, dict[str, str | bytes], list[str]]] = [
    # ---- files
    (
        "file name",
        {"welcome.toml": lesson_file()},
        ["welcome.toml: file name must look like NN-slug.toml (NN = the lesson id, e.g. 00-welcome.toml)"],
    ),
    (
        "file name uppercase",
        {"00-Welcome.toml": lesson_file()},
        ["00-Welcome.toml: file name must look like NN-slug.toml (NN = the lesson id, e.g. 00-welcome.toml)"],
    ),
    (
        "upper-case extension",
        {"00-a.TOML": lesson_file(), "01-b.toml": lesson_file(question(qid="01-b"), lesson="01")},
        ["00-a.TOML: file name must end in .toml, not .TOML"],
    ),
    ("invalid TOML", {F: BAD_TOML}, [f"{F}: not valid TOML: {BAD_TOML_MESSAGE}"]),
    (
        "not UTF-8",
        {F: b'lesson = "\xff"\n'},
        [f"{F}: not UTF-8 text: 'utf-8' codec can't decode byte 0xff in position 10: invalid start byte"],
    ),
    (
        "unknown file key",
        {F: 'lessons = "00"\n' + lesson_file()},
        [f"{F}: field 'lessons': unknown key (allowed: lesson, retired, question, prediction)"],
    ),
    # ---- lesson
    ("lesson missing", {F: RECALL}, [f"{F}: field 'lesson': missing (e.g. lesson = \"00\")"]),
    (
        "lesson not a string",
        {F: "lesson = 0\n" + RECALL},
        [f"{F}: field 'lesson': must be a string such as \"00\" (got integer)"],
    ),
    (
        "lesson unknown",
        {"07-foo.toml": lesson_file(lesson="07x")},
        [f"07-foo.toml: field 'lesson': unknown lesson '07x' (known: {KNOWN})"],
    ),
    (
        "review has no quiz",
        {F: lesson_file(lesson="review")},
        [f"{F}: field 'lesson': unknown lesson 'review' (known: {KNOWN})"],
    ),
    (
        "lesson vs file name",
        {"01-x.toml": lesson_file()},
        ["01-x.toml: field 'lesson': '00' does not match the file name, which starts with '01'"],
    ),
    (
        "two files, one lesson",
        {"00-a.toml": lesson_file(), "00-b.toml": lesson_file(question(qid="00-b"))},
        ["00-b.toml: field 'lesson': lesson '00' already has a question file: 00-a.toml"],
    ),
    # ---- retired ids
    (
        "retired not an array",
        {F: 'lesson = "00"\nretired = "00-old"\n' + RECALL},
        [f"{F}: field 'retired': must be an array of question ids, e.g. [\"00-old-id\"] (got string)"],
    ),
    (
        "retired id not a string",
        {F: 'lesson = "00"\nretired = ["00-old", 7]\n' + RECALL},
        [f"{F}: field 'retired[2]': must be a string (got integer)"],
    ),
    (
        "retired id form",
        {F: 'lesson = "00"\nretired = ["00_Old"]\n' + RECALL},
        [
            f"{F}: field 'retired[1]': '00_Old' must be the lesson id and lowercase words joined by '-' "
            "(e.g. '00-hard-means')"
        ],
    ),
    (
        "retired id of another lesson",
        {F: 'lesson = "00"\nretired = ["01-old"]\n' + RECALL},
        [f"{F}: field 'retired[1]': '01-old' must start with '00-', the lesson of this file"],
    ),
    (
        "retired id twice",
        {F: 'lesson = "00"\nretired = ["00-old", "00-b", "00-old"]\n' + RECALL},
        [f"{F}: field 'retired[3]': duplicate of retired[1]"],
    ),
    (
        "retired id twice across files",
        {
            "00-a.toml": 'lesson = "00"\nretired = ["00-old"]\n' + RECALL,
            "00-b.toml": 'lesson = "00"\nretired = ["00-old"]\n' + question(qid="00-b"),
        },
        [
            "00-b.toml: field 'lesson': lesson '00' already has a question file: 00-a.toml",
            "00-b.toml: field 'retired[1]': duplicate of retired[1] in 00-a.toml",
        ],
    ),
    (
        "retired id still a question",
        {F: 'lesson = "00"\nretired = ["00-old", "00-a"]\n' + RECALL},
        [f"{F}: field 'retired[2]': question id '00-a' is listed as retired and is still a question"],
    ),
    (
        "retired id still a question in another file",
        {
            "00-a.toml": 'lesson = "00"\nretired = ["00-b"]\n' + RECALL,
            "00-b.toml": lesson_file(question(qid="00-b")),
        },
        [
            "00-b.toml: field 'lesson': lesson '00' already has a question file: 00-a.toml",
            "00-a.toml: field 'retired[1]': question id '00-b' is listed as retired and is still a question "
            "(question #1 in 00-b.toml)",
        ],
    ),
    (
        "retired with an unknown lesson: the form is still checked",
        {F: 'lesson = "0"\nretired = ["00-old", "x"]\n' + RECALL},
        [
            f"{F}: field 'lesson': unknown lesson '0' (known: {KNOWN})",
            f"{F}: field 'retired[2]': 'x' must be the lesson id and lowercase words joined by '-' "
            "(e.g. '00-hard-means')",
        ],
    ),
    # ---- the question array
    (
        "no questions",
        {F: 'lesson = "00"\n'},
        [f"{F}: field 'question': missing (add at least one [[question]] table)"],
    ),
    (
        "empty question array",
        {F: 'lesson = "00"\nquestion = []\n'},
        [f"{F}: field 'question': must hold at least one question"],
    ),
    (
        "question not an array",
        {F: 'lesson = "00"\nquestion = "q"\n'},
        [f"{F}: field 'question': must be an array of tables, written [[question]] (got string)"],
    ),
    (
        "question not a table",
        {F: 'lesson = "00"\nquestion = [1]\n'},
        [f"{F}: question #1: must be a table (got integer)"],
    ),
    # ---- id
    (
        "id missing",
        {F: lesson_file(question(), question(qid=None))},
        [f"{F}: question #2: field 'id': missing"],
    ),
    (
        "id not a string",
        {F: lesson_file(question(qid=None), question("id = 7", qid=None))},
        [
            f"{F}: question #1: field 'id': missing",
            f"{F}: question #2: field 'id': must be a string (got integer)",
        ],
    ),
    (
        "id pattern",
        {F: lesson_file(question(qid="00_Bad"))},
        [
            f"{F}: question #1: field 'id': '00_Bad' must be the lesson id and lowercase words joined by '-' "
            "(e.g. '00-hard-means')"
        ],
    ),
    (
        "id trailing hyphen",
        {F: lesson_file(question(qid="00-a-"))},
        [
            f"{F}: question #1: field 'id': '00-a-' must be the lesson id and lowercase words joined by '-' "
            "(e.g. '00-hard-means')"
        ],
    ),
    (
        "id lesson prefix",
        {F: lesson_file(question(qid="01-a"))},
        [f"{F}: question '01-a': field 'id': must start with '00-', the lesson of this file"],
    ),
    (
        "duplicate id",
        {F: lesson_file(question(), question('prompt = "Other"'))},
        [f"{Q}: field 'id': duplicate of question #1 in {F}"],
    ),
    (
        "duplicate id across files",
        {"00-a.toml": lesson_file(), "00-b.toml": lesson_file()},
        [
            "00-b.toml: field 'lesson': lesson '00' already has a question file: 00-a.toml",
            "00-b.toml: question '00-a': field 'id': duplicate of question #1 in 00-a.toml",
        ],
    ),
    # ---- kind and common fields
    (
        "kind missing",
        {F: lesson_file(question().replace('kind = "recall"\n', ""))},
        [f"{Q}: field 'kind': missing (one of recall, choice, numeric, code)"],
    ),
    (
        "kind not a string",
        {F: lesson_file(question().replace('kind = "recall"', "kind = 1"))},
        [f"{Q}: field 'kind': must be a string (got integer)"],
    ),
    (
        "kind unknown",
        {F: lesson_file(question().replace('kind = "recall"', 'kind = "mcq"'))},
        [f"{Q}: field 'kind': unknown kind 'mcq' (one of recall, choice, numeric, code)"],
    ),
    (
        "unknown question key",
        {F: lesson_file(question('promt = "P"'))},
        [f"{Q}: field 'promt': unknown key (allowed: {QUESTION_KEYS})"],
    ),
    ("prompt missing", {F: lesson_file(question("-prompt"))}, [f"{Q}: field 'prompt': missing"]),
    (
        "prompt not a string",
        {F: lesson_file(question("prompt = 3.5"))},
        [f"{Q}: field 'prompt': must be a string (got float)"],
    ),
    (
        "prompt blank",
        {F: lesson_file(question("prompt = '''  \n  '''"))},
        [f"{Q}: field 'prompt': must not be empty"],
    ),
    (
        "prompt math",
        {F: lesson_file(question("prompt = 'Is $d_k$ or $\\sqrt{d_k} the scale?'"))},
        [f"{Q}: field 'prompt': {MATH}"],
    ),
    (
        "math outside a code span",
        {F: lesson_file(question("prompt = 'In `$x$` the $ sign'"))},
        [f"{Q}: field 'prompt': {MATH}"],
    ),
    (
        "explanation missing",
        {F: lesson_file(question("-explanation"))},
        [f"{Q}: field 'explanation': missing"],
    ),
    (
        "explanation math",
        {F: lesson_file(question("explanation = '$$x$'"))},
        [f"{Q}: field 'explanation': {MATH}"],
    ),
    ("section missing", {F: lesson_file(question("-section"))}, [f"{Q}: field 'section': missing"]),
    (
        "section empty",
        {F: lesson_file(question('section = ""'))},
        [f"{Q}: field 'section': must not be empty"],
    ),
    (
        "section type",
        {F: lesson_file(question("section = [1]"))},
        [f"{Q}: field 'section': must be a string (got array)"],
    ),
    # ---- recall
    ("recall answer missing", {F: lesson_file(question("-answer"))}, [f"{Q}: field 'answer': missing"]),
    (
        "recall answer not text",
        {F: lesson_file(question("answer = 64"))},
        [f"{Q}: field 'answer': must be a string (got integer)"],
    ),
    (
        "recall answer math",
        {F: lesson_file(question("answer = '$x'"))},
        [f"{Q}: field 'answer': {MATH}"],
    ),
    (
        "recall with options",
        {F: lesson_file(question(CHOICE_OPTIONS))},
        [f"{Q}: field 'options': not allowed for kind 'recall'"],
    ),
    (
        "recall with tolerance",
        {F: lesson_file(question("tolerance = 0"))},
        [f"{Q}: field 'tolerance': not allowed for kind 'recall'"],
    ),
    # ---- choice
    (
        "choice with answer",
        {F: lesson_file(question('answer = "yes"', kind="choice"))},
        [f"{Q}: field 'answer': not allowed for kind 'choice' (mark the right option with correct = true)"],
    ),
    (
        "choice options missing",
        {F: lesson_file(question("-options", kind="choice"))},
        [f"{Q}: field 'options': missing (2 to 6 options, exactly one with correct = true)"],
    ),
    (
        "choice options not an array",
        {F: lesson_file(question('options = "yes"', kind="choice"))},
        [f"{Q}: field 'options': must be an array of tables (got string)"],
    ),
    (
        "one option",
        {F: lesson_file(question('options = [{ text = "y", correct = true, why = "w" }]', kind="choice"))},
        [f"{Q}: field 'options': must have 2 to 6 options (found 1)"],
    ),
    (
        "seven options",
        {
            F: lesson_file(
                question(
                    "options = ["
                    + ", ".join(
                        f'{{ text = "o{i}", correct = {str(i == 0).lower()}, why = "w" }}' for i in range(7)
                    )
                    + "]",
                    kind="choice",
                )
            )
        },
        [f"{Q}: field 'options': must have 2 to 6 options (found 7)"],
    ),
    (
        "no correct option",
        {
            F: lesson_file(
                question('options = [{ text = "y", why = "w" }, { text = "n", why = "w" }]', kind="choice")
            )
        },
        [f"{Q}: field 'options': exactly one option must have correct = true (found 0)"],
    ),
    (
        "two correct options",
        {
            F: lesson_file(
                question(CHOICE_OPTIONS.replace("correct = false", "correct = true"), kind="choice")
            )
        },
        [f"{Q}: field 'options': exactly one option must have correct = true (found 2)"],
    ),
    (
        "option not a table",
        {
            F: lesson_file(
                question('options = [{ text = "y", correct = true, why = "w" }, "n"]', kind="choice")
            )
        },
        [f"{Q}: field 'options[2]': {NOT_TABLE} (got string)"],
    ),
    (
        "option text missing",
        {F: lesson_file(question(CHOICE_OPTIONS.replace('text = "no", ', ""), kind="choice"))},
        [f"{Q}: field 'options[2].text': missing"],
    ),
    (
        "option why missing",
        {F: lesson_file(question(CHOICE_OPTIONS.replace(', why = "W2"', ""), kind="choice"))},
        [f"{Q}: field 'options[2].why': missing"],
    ),
    (
        "option why empty",
        {F: lesson_file(question(CHOICE_OPTIONS.replace('"W1"', '" "'), kind="choice"))},
        [f"{Q}: field 'options[1].why': must not be empty"],
    ),
    (
        "option text type",
        {F: lesson_file(question(CHOICE_OPTIONS.replace('"no"', "2"), kind="choice"))},
        [f"{Q}: field 'options[2].text': must be a string (got integer)"],
    ),
    (
        "option math",
        {F: lesson_file(question(CHOICE_OPTIONS.replace('"W2"', '"costs $5"'), kind="choice"))},
        [f"{Q}: field 'options[2].why': {MATH}"],
    ),
    (
        "option correct type",
        {
            F: lesson_file(
                question(CHOICE_OPTIONS.replace("correct = false", 'correct = "no"'), kind="choice")
            )
        },
        [f"{Q}: field 'options[2].correct': must be true or false (got string)"],
    ),
    (
        "option unknown key",
        {F: lesson_file(question(CHOICE_OPTIONS.replace('why = "W2"', 'wy = "W2"'), kind="choice"))},
        [
            f"{Q}: field 'options[2].wy': unknown key (allowed: text, correct, why)",
            f"{Q}: field 'options[2].why': missing",
        ],
    ),
    (
        "duplicate option text",
        {F: lesson_file(question(CHOICE_OPTIONS.replace('"no"', '" yes "'), kind="choice"))},
        [f"{Q}: field 'options[2].text': same text as options[1]"],
    ),
    # ---- numeric
    (
        "numeric answer missing",
        {F: lesson_file(question("-answer", kind="numeric"))},
        [f"{Q}: field 'answer': missing"],
    ),
    (
        "numeric answer text",
        {F: lesson_file(question('answer = "64"', kind="numeric"))},
        [f"{Q}: field 'answer': must be a number (got string)"],
    ),
    (
        "numeric answer boolean",
        {F: lesson_file(question("answer = true", kind="numeric"))},
        [f"{Q}: field 'answer': must be a number (got boolean)"],
    ),
    (
        "numeric answer nan",
        {F: lesson_file(question("answer = nan", kind="numeric"))},
        [f"{Q}: field 'answer': must be a finite number (got nan)"],
    ),
    (
        "tolerance missing",
        {F: lesson_file(question("-tolerance", kind="numeric"))},
        [f"{Q}: field 'tolerance': missing (required for numeric; 0 means exact)"],
    ),
    (
        "tolerance negative",
        {F: lesson_file(question("tolerance = -0.5", kind="numeric"))},
        [f"{Q}: field 'tolerance': must be >= 0 (got -0.5)"],
    ),
    (
        "tolerance text",
        {F: lesson_file(question('tolerance = "0"', kind="numeric"))},
        [f"{Q}: field 'tolerance': must be a number (got string)"],
    ),
    (
        "unit type",
        {F: lesson_file(question("unit = 1", kind="numeric"))},
        [f"{Q}: field 'unit': must be a string (got integer)"],
    ),
    (
        "numeric with options",
        {F: lesson_file(question(CHOICE_OPTIONS, kind="numeric"))},
        [f"{Q}: field 'options': not allowed for kind 'numeric'"],
    ),
    # ---- predictions (issue 37): a choice (2 to 4 options) or numeric question with the card it tests
    (
        "prediction without a card",
        {F: lesson_file(question(), prediction(qid="00-p", card=None))},
        [
            f"{F}: prediction '00-p': field 'card': "
            'missing (the id of the review question that holds the idea it tests, or "" for none)'
        ],
    ),
    (
        "prediction card not in the bank",
        {F: lesson_file(question(), prediction(qid="00-p", card="00-nope"))},
        [f"{F}: prediction '00-p': field 'card': no question of the bank has the id '00-nope'"],
    ),
    (
        "prediction of a recall kind",
        {F: lesson_file(question(), prediction('answer = "A"', "-options", qid="00-p", kind="recall"))},
        [f"{F}: prediction '00-p': field 'kind': a prediction is 'choice' or 'numeric' (got 'recall')"],
    ),
    (
        "prediction with five options",
        {F: lesson_file(question(), prediction(FIVE_OPTIONS, qid="00-p"))},
        [f"{F}: prediction '00-p': field 'options': a prediction has 2 to 4 options (found 5)"],
    ),
    (
        "prediction id of a question",
        {F: lesson_file(question(), prediction(qid="00-a"))},
        [f"{F}: prediction '00-a': field 'id': duplicate of question #1 in {F}"],
    ),
    (
        "prediction checked as a question",
        {F: lesson_file(question(), prediction("-prompt", "tolerance = -1", qid="00-p", kind="numeric"))},
        [
            f"{F}: prediction '00-p': field 'prompt': missing",
            f"{F}: prediction '00-p': field 'tolerance': must be >= 0 (got -1)",
        ],
    ),
    (
        "predictions not an array of tables",
        {F: 'prediction = "x"\n' + lesson_file()},
        [f"{F}: field 'prediction': must be an array of tables, written [[prediction]] (got string)"],
    ),
    # ---- several problems at once, in file order, the id used where it is valid
    (
        "all problems collected",
        {
            "00-a.toml": lesson_file(question("-prompt", 'section = ""'), question(qid=None, kind="numeric")),
            "01-b.toml": lesson_file(question(qid="01-b", kind="choice"), lesson="02"),
        },
        [
            "00-a.toml: question '00-a': field 'prompt': missing",
            "00-a.toml: question '00-a': field 'section': must not be empty",
            "00-a.toml: question #2: field 'id': missing",
            "01-b.toml: field 'lesson': '02' does not match the file name, which starts with '01'",
            "01-b.toml: question '01-b': field 'id': must start with '02-', the lesson of this file",
        ],
    ),
]


def test_predictions_are_loaded_apart_from_the_questions(tmp_path: Path) -> None:
    (tmp_path / F).write_text(
        lesson_file(question(), prediction(qid="00-p"), prediction(qid="00-n", kind="numeric", card="00-a"))
    )
    bank = load_bank(tmp_path)
    assert [q.id for q in bank] == ["00-a"]
    assert [(p.id, p.kind, p.card, p.answer) for p in bank.predictions()] == [
        ("00-p", "choice", "00-a", "yes"),
        ("00-n", "numeric", "00-a", 64),
    ]
    assert bank.predictions("01") == () and bank.prediction("00-n").card == "00-a"
    (tmp_path / F).write_text(lesson_file(question(), prediction(qid="00-p", card="")))
    assert load_bank(tmp_path).prediction("00-p").card == ""  # how the course works: no card
    assert "00-p" not in bank and bank.get("00-p") is None
    with pytest.raises(KeyError, match="the question bank has no prediction '00-q'"):
        bank.prediction("00-q")


@pytest.mark.parametrize(("files", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_bank(tmp_path: Path, files: dict[str, str | bytes], expected: list[str]) -> None:
    assert problems(tmp_path, files) == expected


CONTROL = "must not contain control characters (found U+{code} at line {line}, column {column} of the text)"
# (kind, the field as TOML writes its control character: an escape, or raw for C1; the field, code, place)
CONTROL_CASES = [
    ("recall", r'prompt = "What is\u001f2 + 2?"', "prompt", "001F", 1, 8),  # Anki's field separator
    ("recall", "prompt = '''Two lines,\nthe second with a \x85 (NEL)'''", "prompt", "0085", 2, 19),  # C1
    ("recall", r'answer = "4\r"', "answer", "000D", 1, 2),
    ("recall", r'explanation = "\u001b[2J cleared"', "explanation", "001B", 1, 1),  # a terminal escape
    ("recall", r'section = "1. Sums\b"', "section", "0008", 1, 8),
    ("numeric", r'unit = "h\f"', "unit", "000C", 1, 2),
]
CONTROL_OPTIONS = r"""options = [
  { text = "yes", correct = true, why = "W\u009f1" },
  { text = "no\u007f", correct = false, why = "W2" },
]"""


@pytest.mark.parametrize(("kind", "line", "field", "code", "at_line", "column"), CONTROL_CASES)
def test_control_characters_are_refused_in_every_text_field(
    tmp_path: Path, kind: str, line: str, field: str, code: str, at_line: int, column: int
) -> None:
    """Issue 20, item 18: TOML refuses a raw control character but writes one as an escape (and lets C1
    through raw); a text field holding one is refused with its file, question and field (U+001F in a prompt
    passed the check and gave an Anki note one field too many)."""
    assert problems(tmp_path, {F: lesson_file(question(line, kind=kind))}) == [
        f"{Q}: field {field!r}: {CONTROL.format(code=code, line=at_line, column=column)}"
    ]


def test_control_characters_are_refused_in_every_option(tmp_path: Path) -> None:
    assert problems(tmp_path, {F: lesson_file(question(CONTROL_OPTIONS, kind="choice"))}) == [
        f"{Q}: field 'options[1].why': {CONTROL.format(code='009F', line=1, column=2)}",
        f"{Q}: field 'options[2].text': {CONTROL.format(code='007F', line=1, column=3)}",  # DEL
    ]


def test_tabs_and_line_feeds_are_text_and_a_raw_control_character_is_not_toml(tmp_path: Path) -> None:
    (tmp_path / F).write_bytes(lesson_file(question(r'prompt = "a\tb\nc"', "answer = '''x\r\ny'''")).encode())
    assert (load_bank(tmp_path)["00-a"].prompt, load_bank(tmp_path)["00-a"].answer) == ("a\tb\nc", "x\ny")
    raw = lesson_file(question('prompt = "a\x1fb"', qid="01-a"), lesson="01")
    assert problems(tmp_path, {"01-raw.toml": raw}) == [
        "01-raw.toml: not valid TOML: Illegal character '\\x1f' (at line 6, column 12)"
    ]  # the parser's own message


def test_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(BankError) as caught:
        load_bank(missing)
    assert caught.value.problems == [f"{missing}: question bank directory not found"]


def test_not_a_directory(tmp_path: Path) -> None:
    plain = tmp_path / "bank.txt"
    plain.write_text("not a folder\n")
    with pytest.raises(BankError) as caught:
        load_bank(plain)
    assert caught.value.problems == [f"{plain}: question bank directory not found"]


def test_unreadable_question_file(tmp_path: Path) -> None:
    (tmp_path / "00-a.toml").mkdir()  # reading it fails, as for a file one may not read
    (tmp_path / "01-b.toml").write_text(lesson_file(question(qid="01-b"), lesson="01"))
    with pytest.raises(BankError) as caught:
        load_bank(tmp_path)
    assert caught.value.problems == ["00-a.toml: cannot read the file (Is a directory)"]


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    text = lesson_file().replace("\n", "\r\n")  # as Windows Notepad saves it
    (tmp_path / "00-a.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert [q.id for q in load_bank(tmp_path)] == ["00-a"]


def test_dollars_in_code_are_not_math(tmp_path: Path) -> None:
    text = "Run `echo $HOME`, then:\n\n```\nprice=$5\n```\n\nIs $x$ set?"
    (tmp_path / "00-a.toml").write_text(lesson_file(question(f"prompt = {json.dumps(text)}")))
    assert load_bank(tmp_path)["00-a"].prompt.startswith("Run `echo $HOME`")


def test_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("not a question file\n")
    with pytest.raises(BankError) as caught:
        load_bank(tmp_path)
    assert caught.value.problems == [
        f"{tmp_path}: no question files (NN-slug.toml) in the question bank directory"
    ]


GOOD = (
    'lesson = "00"\n'
    + question("prompt = '''Costs \\$5 and $x$'''")
    + question(kind="choice", qid="00-b")
    + question("answer = 0.5", "tolerance = 0.05", 'unit = "h"', kind="numeric", qid="00-c")
)


def test_good_bank_records(tmp_path: Path) -> None:
    (tmp_path / "00-good.toml").write_text(GOOD)
    (tmp_path / "01-next.toml").write_text(lesson_file(question(qid="01-a"), lesson="01"))
    bank = load_bank(tmp_path)
    assert isinstance(bank, Bank)
    assert repr(bank) == "Bank(4 questions in 2 lessons)"
    assert bank.lessons() == ("00", "01")
    assert [q.id for q in bank.questions("00")] == ["00-a", "00-b", "00-c"]
    assert bank.questions("05") == ()
    with pytest.raises(KeyError):
        bank.questions("5")
    assert [q.id for q in bank.all()] == ["00-a", "00-b", "00-c", "01-a"]
    assert len(bank) == 4 and "01-a" in bank and "01-z" not in bank
    assert bank.get("01-z") is None
    assert bank.get("00-a") == Question(
        id="00-a",
        lesson="00",
        kind="recall",
        prompt="Costs \\$5 and $x$",
        answer="A",
        explanation="E",
        section="S",
        source="00-good.toml",
    )
    assert bank["00-b"].answer == "yes"
    assert bank["00-b"].options == (Option("yes", True, "W1"), Option("no", False, "W2"))
    assert bank["00-b"].correct_option == 0
    numeric = bank["00-c"]
    assert (numeric.answer, numeric.tolerance, numeric.unit, numeric.options) == (0.5, 0.05, "h", ())


def test_retired_ids(tmp_path: Path) -> None:
    (tmp_path / "00-good.toml").write_text('lesson = "00"\nretired = ["00-old", "00-older"]\n' + RECALL)
    (tmp_path / "01-next.toml").write_text('lesson = "01"\nretired = []\n' + question(qid="01-a"))
    (tmp_path / "02-more.toml").write_text(lesson_file(question(qid="02-a"), lesson="02"))
    bank = load_bank(tmp_path)
    assert bank.retired() == frozenset({"00-old", "00-older"})
    assert [q.id for q in bank] == ["00-a", "01-a", "02-a"]
    assert "00-old" not in bank and bank.get("00-old") is None


def test_no_retired_ids(tmp_path: Path) -> None:
    (tmp_path / "00-good.toml").write_text(GOOD)
    assert load_bank(tmp_path).retired() == frozenset()


def test_items(tmp_path: Path) -> None:
    scheduler = pytest.importorskip("scheduler")
    (tmp_path / "00-good.toml").write_text(GOOD)
    assert load_bank(tmp_path).items() == [
        scheduler.Item("00-a", "00"),
        scheduler.Item("00-b", "00"),
        scheduler.Item("00-c", "00"),
    ]


def _question(kind: str, **changes: object) -> Question:
    base: dict[str, object] = dict(
        id="00-q", lesson="00", kind=kind, prompt="P", answer="A", explanation="E", section="S"
    )
    base.update(changes)
    return Question(**base)  # type: ignore[arg-type]


def test_is_correct_choice() -> None:
    q = _question("choice", answer="b", options=(Option("a", False, "w"), Option("b", True, "w")))
    assert (q.is_correct(0), q.is_correct(1)) == (False, True)
    with pytest.raises(ValueError) as caught:
        q.is_correct(2)
    assert str(caught.value) == "option index 2 is out of range for question '00-q' (0 to 1)"
    with pytest.raises(TypeError) as wrong_type:
        q.is_correct("b")  # type: ignore[arg-type]
    assert str(wrong_type.value) == "a choice answer is a 0-based option index, got str"


def test_is_correct_numeric() -> None:
    q = _question("numeric", answer=0.3, tolerance=0.0)
    assert q.is_correct(0.1 + 0.2) is True  # float noise is not a wrong answer
    assert q.is_correct(" 0.3 ") is True
    assert q.is_correct(0.31) is False
    assert q.is_correct(float("nan")) is False
    tolerant = _question("numeric", answer=64, tolerance=0.5)
    assert [tolerant.is_correct(x) for x in (63.5, 64.5, 64.51, "−63.5", 64)] == [
        True,
        True,
        False,
        False,
        True,
    ]
    with pytest.raises(ValueError) as caught:
        tolerant.is_correct("sixty")
    assert str(caught.value) == "not a number: 'sixty'"
    with pytest.raises(TypeError) as wrong_type:
        tolerant.is_correct(True)
    assert str(wrong_type.value) == "a numeric answer is a number, got bool"


@pytest.mark.parametrize(
    ("typed", "value"),
    [("4", 4.0), ("4h", 4.0), (" 4 h ", 4.0), ("\N{MINUS SIGN}0.5h", -0.5), ("1e1 h", 10.0)],
)
def test_parse_number_with_the_unit(typed: str, value: float) -> None:
    q = _question("numeric", answer=4, tolerance=0.0, unit="h")
    assert q.parse_number(typed) == value
    assert q.is_correct(typed) is (value == 4.0)


@pytest.mark.parametrize(
    ("unit", "typed", "value"),
    [
        ("bytes", "64 MiB", 67_108_864.0),  # 08-score-matrix-bytes: 64 MiB is the right answer too
        ("bytes", "65536KiB", 67_108_864.0),
        ("bytes", "67.108864 mb", 67_108_864.0),
        ("bytes", "2 GB", 2e9),
        ("bytes", "12 B", 12.0),
        ("MiB", "67108864 bytes", 64.0),
        ("MiB", "1 GiB", 1024.0),
        ("MiB", "1 MB", 1e6 / 2**20),
        ("bits", "3 bit", 3.0),
    ],
)
def test_a_number_may_be_typed_in_another_unit_of_the_same_kind(unit: str, typed: str, value: float) -> None:
    q = _question("numeric", answer=4, tolerance=0.0, unit=unit)
    assert q.parse_number(typed) == value


@pytest.mark.parametrize(("unit", "typed"), [("bytes", "64 bits"), ("bits", "3 bytes"), ("h", "4 MiB")])
def test_a_unit_of_another_kind_is_not_a_number(unit: str, typed: str) -> None:
    q = _question("numeric", answer=4, tolerance=0.0, unit=unit)
    with pytest.raises(ValueError) as caught:
        q.parse_number(typed)
    assert str(caught.value) == f"not a number: {typed!r}"


@pytest.mark.parametrize("typed", ["h", "4 hours", "4m", "4h h", ""])
def test_parse_number_rejects_other_text(typed: str) -> None:
    q = _question("numeric", answer=4, tolerance=0.0, unit="h")
    with pytest.raises(ValueError) as caught:
        q.parse_number(typed)
    assert str(caught.value) == f"not a number: {typed!r}"


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("3/4", 0.75),
        ("-1/2", -0.5),
        ("\N{MINUS SIGN}1/2", -0.5),
        (" 3 / 4 h", 0.75),
        ("1/-4", -0.25),
        ("1.5/3", 0.5),
        ("1e-3", 0.001),
        ("2.5E3h", 2500.0),
        ("1E-3/1e-3", 1.0),
    ],
)
def test_parse_number_fractions_and_scientific_notation(typed: str, value: float) -> None:
    q = _question("numeric", answer=0.75, tolerance=0.0, unit="h")
    assert q.parse_number(typed) == value
    assert q.is_correct(typed) is (value == 0.75)


@pytest.mark.parametrize(
    "typed", ["1/0", "0/0", "1/0.0", "3/4/5", "/4", "3/", "/", "inf/2", "1/nan", "3//4", "e3"]
)
def test_parse_number_rejects_bad_fractions(typed: str) -> None:
    q = _question("numeric", answer=0.75, tolerance=0.0, unit="h")
    with pytest.raises(ValueError) as caught:
        q.parse_number(typed)
    assert str(caught.value) == f"not a number: {typed!r}"


def test_is_correct_recall_raises() -> None:
    with pytest.raises(TypeError) as caught:
        _question("recall").is_correct("A")
    assert (
        str(caught.value)
        == "question '00-q' is a recall question: the learner grades it, is_correct does not"
    )


def test_bank_error_shape() -> None:
    err = BankError(["a: one", "b: two"])
    assert err.problems == ["a: one", "b: two"]
    assert str(err) == "a: one\nb: two"


# ---- the shipped bank

WELCOME_SECTIONS = {
    "1. How the course is laid out",
    "2. Running cells",
    "3. Quizzes, reviews and your schedule",
    "4. Where your progress lives",
    "5. The maths the course uses",
    "6. Environment check",
}


def test_shipped_bank_loads_clean() -> None:
    bank = load_bank()
    assert bank.lessons()[0] == "00"
    for lesson in bank.lessons():
        questions = bank.questions(lesson)
        assert len(questions) >= 6, lesson
        kinds = {"recall", "choice", "numeric"} | ({"code"} if lesson != "00" else set())
        assert {q.kind for q in questions} == kinds, lesson  # code cards in lessons 01-09
        assert all(q.source.startswith(lesson + "-") for q in questions)
    assert {q.section for q in bank.questions("00")} <= WELCOME_SECTIONS


def test_lessons_table() -> None:
    assert list(LESSONS) == ["00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "review"]
    assert tuple(LESSONS)[:10] == QUIZ_LESSONS
    assert LESSONS["00"] == ("Welcome", "00-welcome.ipynb")
    assert all(notebook.startswith(lesson) for lesson, (_, notebook) in LESSONS.items())


@pytest.mark.parametrize(
    ("given", "expected"), [("2", "02"), (2, "02"), ("02", "02"), (" 8 ", "08"), (0, "00")]
)
def test_lesson_id(given: str | int, expected: str) -> None:
    assert lesson_id(given) == expected
    assert lesson_id(given, ("00", "02", "08")) == expected


@pytest.mark.parametrize("given", ["review", "10", 10, "-1", "\N{SUPERSCRIPT TWO}", "1x", ""])
def test_lesson_id_unknown(given: str | int) -> None:
    with pytest.raises(ValueError) as caught:
        lesson_id(given)
    assert str(caught.value) == f"unknown lesson {given!r} (lessons with a quiz: {KNOWN})"


def test_lesson_id_without_questions() -> None:
    with pytest.raises(ValueError) as caught:
        lesson_id(6, ("00", "01"))
    assert str(caught.value) == "lesson 06 has no questions yet (lessons with questions: 00, 01)"
    with pytest.raises(TypeError) as wrong_type:
        lesson_id(True)
    assert (
        str(wrong_type.value) == "a lesson is given as a string or a whole number, e.g. '02' or 2; got True"
    )


def test_lesson_title() -> None:
    assert lesson_title("02") == "Scaled dot-product attention"
    assert lesson_title("review") == "Review"
    assert lesson_title("xx") == "xx"


# ---- bank input of any size gets a named problem, in time linear in its size

TOO_DEEP = "not valid TOML: nested too deeply (more than 100 levels)"
DEEP = 100_000


def best_time(work: Callable[[], object]) -> float:
    """The least CPU time of five runs: this process's own time, which other programs on a busy machine do not
    add to (wall time did: the ratio below flaked under load)."""
    return min(timeit.repeat(work, timer=time.process_time, number=1, repeat=5))


@pytest.mark.parametrize(
    "nested",
    [
        pytest.param("x = " + "[" * DEEP + "]" * DEEP + "\n", id="arrays"),
        pytest.param("x = " + "{ a = " * DEEP + "1" + " }" * DEEP + "\n", id="inline tables"),
        pytest.param("x = " + "[" * DEEP + "\n", id="unclosed arrays"),
        pytest.param(".".join(["x"] * DEEP) + " = 1\n", id="dotted key"),
        pytest.param(".".join(['"x"'] * DEEP) + " = 1\n", id="quoted dotted key"),
        pytest.param("[" + ".".join(["x"] * DEEP) + "]\n", id="table header"),
        pytest.param("[[" + ".".join(["x"] * DEEP) + "]]\n", id="array of tables header"),
    ],
)
def test_a_file_nested_100000_deep_is_one_named_problem(tmp_path: Path, nested: str) -> None:
    assert problems(tmp_path, {F: lesson_file() + nested}) == [f"{F}: {TOO_DEEP}"]


def test_check_prints_one_line_for_a_file_nested_too_deeply(tmp_path: Path) -> None:
    (tmp_path / F).write_text(lesson_file() + "x = " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    out = io.StringIO()
    assert main(["check", "--bank", str(tmp_path)], stdout=out, stderr=io.StringIO()) != 0
    assert out.getvalue() == f"{F}: {TOO_DEEP}\nquestion bank has 1 problem\n"


def test_nesting_up_to_100_levels_is_parsed() -> None:
    assert _toml.loads("x = " + "[" * 100 + "]" * 100) == {"x": _nested_list(100)}
    key = _toml.loads(".".join(["x"] * 100) + " = 1")
    for _ in range(99):
        key = key["x"]
    assert key == {"x": 1}
    with pytest.raises(_toml.TOMLDecodeError) as caught:
        _toml.loads("x = " + "[" * 101 + "]" * 101)
    assert str(caught.value) == "nested too deeply (more than 100 levels)"
    with pytest.raises(_toml.TOMLDecodeError) as caught:
        _toml.loads(".".join(["x"] * 101) + " = 1")
    assert str(caught.value) == "nested too deeply (more than 100 levels)"


def _nested_list(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_brackets_and_dots_in_strings_and_comments_are_not_nesting() -> None:
    text = "[" * DEEP + "." * DEEP
    document = (
        f'a = "{text}"\nb = \'{text}\'\nc = """\n{text}\\"\n"""\nd = \'\'\'\n{text}\n\'\'\'\n# {text}\n'
        f'"{text}" = 1\ne = [1.5, 2.5, 1979-05-27T07:32:00.999]\n'
    )
    data = _toml.loads(document)
    assert data["a"] == data["b"] == text
    assert data["c"] == text + '"\n'
    assert data[text] == 1


def test_a_prompt_of_unclosed_code_fences_is_validated_in_linear_time(tmp_path: Path) -> None:
    def bank_with_fences(n: int, folder: str) -> Path:
        directory = tmp_path / folder
        directory.mkdir()
        prompt = "```x\n" * n
        (directory / F).write_text(lesson_file(question(f"prompt = '''{prompt}'''")), encoding="utf-8")
        return directory

    small, large = bank_with_fences(2_000, "small"), bank_with_fences(20_000, "large")
    assert len(load_bank(large)) == 1
    # A linear scan takes about 10 times as long for 10 times the fences; the quadratic one took about 100.
    assert best_time(lambda: load_bank(large)) < 30 * best_time(lambda: load_bank(small))
    # ... and a '$' after them is still found unbalanced
    (large / F).write_text(lesson_file(question("prompt = '''" + "```x\n" * 20_000 + "$'''")))
    assert problems(large, {}) == [f"{Q}: field 'prompt': {MATH}"]


def test_many_sentence_ends_are_counted_in_linear_time() -> None:
    # `python -m course check` lints a valid bank: a recall answer of 40,000 sentences must not stall it
    small, large = "a. " * 4_000, "a. " * 40_000
    assert sentence_count(large) == 40_000
    assert best_time(lambda: sentence_count(large)) < 30 * best_time(lambda: sentence_count(small))
    assert sentence_count("See e.g. this. And I.E. that, etc. and so") == 2


# The definition of code the scan implements, as the regular expression it replaced (quadratic on unclosed
# fences): a fenced block from a line starting with ``` to the next line that is only ```, or an inline span.
CODE = re.compile(r"^```.*?^```[ \t]*$|`[^`\n]+`", re.MULTILINE | re.DOTALL)


def test_the_linear_code_scan_removes_what_the_regular_expression_removes() -> None:
    rng = random.Random(24)
    pieces = ["`", "```", "\n", " ", "x", "$", "\\", "\t", "\n```\n", "```x", "\n``` \t\n"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert _without_code(text) == CODE.sub("", text), text
