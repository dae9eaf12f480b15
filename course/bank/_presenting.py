"""How a question is presented and graded: the rules every front end (the widgets, the terminal) shares.

**Option order.** A multiple-choice question is shown with its options in a new random order each time it is
presented, so that the right answer is not always in the same place. `present` draws the order from the
`random.Random` it is given (front ends make one ``random.Random()`` and accept an injected, seeded one in
tests); a `Presentation` keeps it while the question is on screen. Each shown position has a label, the one
the learner sees and types or clicks: `LETTERS` ("A" to "F") in the widgets, `NUMBERS` ("1" to "6") in the
terminal. Feedback names options by that label, never by their place in the question bank.

**Ratings.** Choice, numeric and code answers rate themselves (`auto_rating`): a wrong answer is Again; a
right one is Good, unless the learner says Hard or Easy instead (`final_rating`: only a right answer may be
overridden, and only by those two). A code answer is right when its checker passes it
(`course.checkers.run_code`, whose verdict the front ends give to `auto_rating`). Recall questions are rated
by the learner with any of the four ratings (`RECALL_RATINGS`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from course.bank._bank import Option, Question
from course.bank._kinds import Kind
from course.bank._ratings import NAMES
from scheduler import Rating

__all__ = [
    "LETTERS",
    "NUMBERS",
    "RECALL_RATINGS",
    "RIGHT_RATINGS",
    "Presentation",
    "ShownOption",
    "Verdict",
    "answer_text",
    "auto_rating",
    "final_rating",
    "grade_choice",
    "grade_number",
    "number_text",
    "present",
]

LETTERS: tuple[str, ...] = ("A", "B", "C", "D", "E", "F")
"""The labels of the shown positions in the widgets."""
NUMBERS: tuple[str, ...] = ("1", "2", "3", "4", "5", "6")
"""The labels of the shown positions in the terminal."""
RIGHT_RATINGS: tuple[Rating, ...] = (Rating.HARD, Rating.GOOD, Rating.EASY)
"""What a right choice, numeric or code answer may be saved as: Good unless the learner picks Hard or Easy."""
RECALL_RATINGS: tuple[Rating, ...] = (Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY)
"""What the learner rates a recall answer with."""


@dataclass(frozen=True)
class ShownOption:
    """One option as the learner sees it: its label and, once answered, whether it was the one chosen."""

    label: str
    option: Option
    chosen: bool = False

    @property
    def right(self) -> bool:
        return self.option.correct


@dataclass(frozen=True)
class Presentation:
    """One showing of `question`: ``order[position]`` is the bank index of the option shown at `position`
    (0-based), labelled ``labels[position]``. Empty `order` for recall and numeric questions."""

    question: Question
    order: tuple[int, ...] = ()
    labels: tuple[str, ...] = LETTERS

    def __post_init__(self) -> None:
        n = len(self.question.options)
        if sorted(self.order) != list(range(n)):
            raise ValueError(
                f"order {self.order} is not an order of the {n} options of question {self.question.id!r}"
            )
        if len(self.labels) < n:
            raise ValueError(f"{len(self.labels)} labels for {n} options of question {self.question.id!r}")

    def label(self, position: int) -> str:
        """The label shown at `position`."""
        return self.labels[position]

    def option(self, position: int) -> Option:
        """The option shown at `position`."""
        return self.question.options[self.order[position]]

    def shown(self) -> tuple[ShownOption, ...]:
        """Every option with its label, in the order shown."""
        return tuple(ShownOption(self.label(p), self.option(p)) for p in range(len(self.order)))

    @property
    def right_position(self) -> int:
        """Where the right option is shown (choice questions only)."""
        return self.order.index(self.question.correct_option)

    @property
    def right_label(self) -> str:
        """The label of the right option as shown (choice questions only)."""
        return self.label(self.right_position)


@dataclass(frozen=True)
class Verdict:
    """A graded choice or numeric answer.

    `answer`: the right answer as the learner sees it (the right option's label, or `answer_text`); `given`:
    what the learner answered (the label chosen, or the text typed), None for "I don't know"; `options`: for
    a choice question, every option in the order shown, the chosen one marked.
    """

    right: bool
    answer: str
    given: str | None
    options: tuple[ShownOption, ...] = ()

    @property
    def word(self) -> str:
        """The verdict in words, as every front end starts its feedback: ``Right`` or ``Not quite``."""
        return "Right" if self.right else "Not quite"

    @property
    def rating(self) -> Rating:
        """The rating it is saved with unless the learner overrides it (`auto_rating`)."""
        return auto_rating(self.right)

    @property
    def ratings(self) -> tuple[Rating, ...]:
        """The ratings the learner may save it as: `RIGHT_RATINGS` when right, only Again when wrong."""
        return RIGHT_RATINGS if self.right else (Rating.AGAIN,)


def present(question: Question, rng: random.Random, labels: Sequence[str] = LETTERS) -> Presentation:
    """Present `question`: a choice question's options in a new order drawn from `rng`, labelled with
    `labels` by shown position. Recall and numeric questions have no options and draw nothing."""
    order = list(range(len(question.options)))
    if order:
        rng.shuffle(order)
    return Presentation(question, tuple(order), tuple(labels))


def grade_choice(presentation: Presentation, position: int | None) -> Verdict:
    """Grade the option chosen at shown `position` (0-based); None means "I don't know" (wrong)."""
    question = presentation.question
    if question.kind != Kind.CHOICE:
        raise TypeError(
            f"question {question.id!r} is a {question.kind} question, not a {Kind.CHOICE} question"
        )
    n = len(presentation.order)
    if position is not None and not 0 <= position < n:
        raise ValueError(
            f"shown position {position} is out of range for question {question.id!r} (0 to {n - 1})"
        )
    options = tuple(
        ShownOption(shown.label, shown.option, chosen=p == position)
        for p, shown in enumerate(presentation.shown())
    )
    right = position is not None and question.is_correct(presentation.order[position])
    given = None if position is None else presentation.label(position)
    return Verdict(right, presentation.right_label, given, options)


def grade_number(question: Question, text: str | None) -> Verdict:
    """Grade the number typed as `text` (the question's unit may follow it); None means "I don't know".
    ValueError ``not a number: '4x'`` when it is not a number (`Question.parse_number`)."""
    if question.kind != Kind.NUMERIC:
        raise TypeError(
            f"question {question.id!r} is a {question.kind} question, not a {Kind.NUMERIC} question"
        )
    if text is None:
        return Verdict(False, answer_text(question), None)
    typed = text.strip()
    return Verdict(question.is_correct(typed), answer_text(question), typed)


def answer_text(question: Question) -> str:
    """A numeric question's answer as feedback shows it: ``64``, ``4 h``, ``0.73 (± 0.01)``."""
    text = number_text(question.answer)  # type: ignore[arg-type]
    if question.unit:
        text += f" {question.unit}"
    if question.tolerance:
        text += f" (± {number_text(question.tolerance)})"
    return text


def number_text(value: int | float) -> str:
    """A number as the learner reads it: ``64``, ``0.125`` (no float noise such as 0.30000000000000004)."""
    return str(value) if isinstance(value, int) else f"{value:.12g}"


def auto_rating(right: bool) -> Rating:
    """The rating of a choice or numeric answer unless the learner overrides it: Good if right, else Again."""
    return Rating.GOOD if right else Rating.AGAIN


def final_rating(right: bool, chosen: Rating | None = None) -> Rating:
    """The rating to save for a choice or numeric answer: `auto_rating`, or the learner's `chosen` one when
    the answer is right and `chosen` is one of `RIGHT_RATINGS` (Hard, Good, Easy). Any other is a ValueError:
    a wrong answer is always Again, and a right one is never Again."""
    if chosen is None:
        return auto_rating(right)
    if right and chosen not in RIGHT_RATINGS:
        raise ValueError(f"a right answer is saved as Hard, Good or Easy, not {NAMES[chosen]}")
    if not right and chosen != Rating.AGAIN:
        raise ValueError(f"a wrong answer is saved as Again, not {NAMES[chosen]}")
    return Rating(chosen)
