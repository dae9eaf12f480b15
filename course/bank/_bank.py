"""The question bank: one TOML file per lesson in ``course/questions/``, loaded and validated.

File format (``NN-slug.toml``, ``NN`` being the lesson id)::

    lesson = "00"
    retired = ["00-old-id"]       # optional: ids of this lesson that are no longer questions (see below)

    [[question]]
    id = "00-what-enrolls"        # ^NN-[a-z0-9]+(-[a-z0-9]+)*$, NN = the file's lesson
    kind = "recall"               # recall | choice | numeric | code (course.bank)
    prompt = '''...'''            # Markdown with $...$ / $$...$$ math
    answer = '''...'''            # recall: text; numeric: a number; choice, code: none
    explanation = '''...'''
    section = "3. Quizzes, reviews and your schedule"
    # choice only: 2 to 6 options, exactly one correct, each with its own explanation
    options = [{ text = "...", correct = true, why = "..." }, { text = "...", why = "..." }]
    # numeric only: tolerance (absolute, >= 0, required) and unit (optional)
    # code only, all required: the checker (a check_... function of course.checkers, given the learner's
    # function), the name of the function the learner writes, and starter and solution code (Python that
    # defines it). The answer of a code question is its solution, as a fenced code block.
    checker = "check_card_causal_mask"
    function = "causal_mask"
    starter = '''def causal_mask(t, s): ...'''
    solution = '''...'''
    # code, optional: the named mistakes (course.checkers.MISTAKES) of the exercises that bring it back
    mistakes = ["causal-top-left", "causal-off-by-one"]

    [[prediction]]                # optional: what a lesson's Predict prompt asks, answered in its widget
    id = "02-variance-at-64"      # the same id rule, unique among questions and predictions
    kind = "numeric"              # choice (2 to 4 options) | numeric
    card = "02-variance-grows"    # the review question that holds the idea it tests: a wrong prediction
                                  # brings it back the next day ("" for a prompt on how the course works,
                                  # which no review question holds: nothing comes back)
    prompt = '''...'''            # then explanation, section, options or answer, tolerance, unit

A prediction is not a review question: reviews, quizzes and statistics never serve it. `Bank.predictions`
returns them (`Question` records whose `card` is set), `Bank.prediction` one by id.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from course.bank._checks import check_bank
from course.bank._kinds import KINDS, Kind
from course.lessons import QUIZ_LESSONS

if TYPE_CHECKING:
    from scheduler import Item

__all__ = ["KINDS", "UNITS", "Bank", "BankError", "Option", "Question", "load_bank"]

DEFAULT_DIRECTORY = Path(__file__).resolve().parent.parent / "questions"


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
    """One self-check question. For ``choice`` the ``answer`` is the correct option's text; for ``code`` it
    is the `solution` as a fenced Markdown code block (how plain text and Anki show it), and `checker`,
    `function`, `starter` and `solution` are its fields (None for the other kinds), `mistakes` the named
    mistakes of the exercises that bring it back (`course.checkers.MISTAKES`).

    `kind` is one of `KINDS`: the loader gives a `course.bank.Kind` member, which is a ``str`` equal to its
    name (``Kind.CHOICE == "choice"``), so a question built with the bare name behaves the same.
    """

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
    checker: str | None = None
    function: str | None = None
    starter: str | None = None
    solution: str | None = None
    mistakes: tuple[str, ...] = ()
    card: str | None = None

    @property
    def correct_option(self) -> int:
        """0-based index of the correct option (choice questions only)."""
        if self.kind != Kind.CHOICE:
            raise TypeError(
                f"question {self.id!r} is a {self.kind} question; only choice questions have options"
            )
        return next(i for i, option in enumerate(self.options) if option.correct)

    def is_correct(self, response: int | float | str) -> bool:
        """Grade a response: choice -> the 0-based option index; numeric -> a number (or its text), right
        when within ``tolerance`` of the answer. Recall questions are graded by the learner, code questions
        by their checker (`course.checkers.run_code`): TypeError.
        """
        if self.kind == Kind.CHOICE:
            return self._is_right_option(response)
        if self.kind == Kind.NUMERIC:
            return self._is_right_number(response)
        if self.kind == Kind.CODE:
            raise TypeError(
                f"question {self.id!r} is a code question: its checker {self.checker} grades it "
                "(course.checkers.run_code), is_correct does not"
            )
        raise TypeError(
            f"question {self.id!r} is a recall question: the learner grades it, is_correct does not"
        )

    def _is_right_option(self, response: object) -> bool:
        if isinstance(response, bool) or not isinstance(response, int):
            raise TypeError(f"a choice answer is a 0-based option index, got {type(response).__name__}")
        if not 0 <= response < len(self.options):
            raise ValueError(
                f"option index {response} is out of range for question {self.id!r} "
                f"(0 to {len(self.options) - 1})"
            )
        return self.options[response].correct

    def _is_right_number(self, response: object) -> bool:
        value = self.parse_number(response) if isinstance(response, str) else _to_number(response)
        expected = float(self.answer)
        slack = 1e-9 * max(1.0, abs(expected))  # absorb float noise such as 0.1 + 0.2
        return math.isfinite(value) and abs(value - expected) <= self.tolerance + slack

    def parse_number(self, text: str) -> float:
        """The number a learner typed, in this question's unit: a number, optionally followed by the unit
        ("4", "4h" and "4 h" all give 4.0 when the unit is "h") or by another unit of the same kind, converted
        (`UNITS`: "64 MiB" is 67108864 when the unit is "bytes"). A number is a decimal, in scientific
        notation or not ("0.001", "1e-3", "2.5E3"), or a simple fraction of two ("3/4", "-1/2"). ValueError
        ``not a number: '4x'`` for anything else, a zero denominator included."""
        number, scale = text.strip(), 1.0
        if self.unit and number.endswith(self.unit):
            number = number[: -len(self.unit)].rstrip()
        else:
            found = _UNIT_AT_END.search(number)
            factor = _factor(self.unit, found.group(1)) if found else None
            if found and factor is not None:
                number, scale = number[: found.start()].rstrip(), factor
        value = _typed_number(number.replace("\N{MINUS SIGN}", "-"))
        if value is None:
            raise ValueError(f"not a number: {text!r}")
        return value * scale


UNITS: tuple[Mapping[str, float], ...] = (
    {
        "b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9,
        "kib": 2.0**10, "mib": 2.0**20, "gib": 2.0**30,
    },
    {"bit": 1, "bits": 1},
)  # fmt: skip
"""Units of one kind (lower case) and their sizes: a learner may answer in any unit of the question's."""
_UNIT_AT_END = re.compile(r"([A-Za-z]+)$")


def _factor(unit: str, typed: str) -> float | None:
    """How many of `unit` one `typed` is, when both are units of one kind in `UNITS`; else None."""
    for sizes in UNITS:
        if unit.lower() in sizes and typed.lower() in sizes:
            return sizes[typed.lower()] / sizes[unit.lower()]
    return None


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
        self,
        questions: Sequence[Question],
        directory: Path | None = None,
        retired: Iterable[str] = (),
        predictions: Sequence[Question] = (),
    ) -> None:
        self.directory = directory
        self._questions = tuple(questions)
        self._predictions = {prediction.id: prediction for prediction in predictions}
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

    def predictions(self, lesson: str | None = None) -> tuple[Question, ...]:
        """The predictions of one lesson (every lesson's when None), in file order: never review questions."""
        return tuple(p for p in self._predictions.values() if lesson is None or p.lesson == lesson)

    def prediction(self, prediction_id: str) -> Question:
        """The prediction with this id; KeyError naming it when the bank has none."""
        try:
            return self._predictions[prediction_id]
        except KeyError:
            raise KeyError(f"the question bank has no prediction {prediction_id!r}") from None

    def find(self, item_id: str) -> Question | None:
        """The question or the prediction with this id (what a live session asks), or None."""
        return self._by_id.get(item_id) or self._predictions.get(item_id)

    def get(self, question_id: str) -> Question | None:
        return self._by_id.get(question_id)

    def __getitem__(self, question_id: str) -> Question:
        return self._by_id[question_id]

    def all(self) -> tuple[Question, ...]:
        """Every question, lesson by lesson, in file order."""
        return self._questions

    def items(self) -> list[Item]:
        """The questions as scheduler items (deck = lesson), in the order of `all`."""
        from scheduler import Item  # here, not at the top: the scheduler (and fsrs) loads only when needed

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
    checked = check_bank(root)
    if checked.problems:
        raise BankError(checked.problems)
    return Bank(
        [_question(fields) for fields in checked.questions],
        root,
        checked.retired,
        [_question(fields) for fields in checked.predictions],
    )


def _question(fields: Mapping[str, Any]) -> Question:
    """The question of fields checked by `check_bank`, its options as `Option` records."""
    return Question(**{**fields, "options": tuple(Option(*option) for option in fields["options"])})
