"""Predictions that count: what a learner committed under a lesson's **Predict:** prompt before the cell
below showed its result. Each is graded by its prediction in the bank (`course.bank.Bank.predictions`) and
kept in the learner's store as a `scheduler.PredictionEvent`, an event of its own, never a review. A wrong one
brings back, from the start of the learner's next day, the review card it names (its ``card``), as a named
mistake brings back a code card (`bring_back`): a nudge whose reason is ``prediction <its id>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from course.bank import Kind, Question, plain_text
from course.progress._bringing_back import bring_back
from scheduler import MAX_PREDICTION_ANSWER, PredictionEvent, Storage

__all__ = ["Committed", "PredictionCounts", "commit_prediction", "graded", "prediction_counts", "reason"]


@dataclass(frozen=True)
class Committed:
    """A prediction as kept, and whether its card was brought back for the next day (a wrong one, not
    already brought back today for it)."""

    prediction: PredictionEvent
    brought_back: bool


def reason(prediction_id: str) -> str:
    """The reason of the nudge a wrong prediction makes."""
    return f"prediction {prediction_id}"


def graded(question: Question, response: int | str | None) -> tuple[str, bool | None]:
    """The answer as kept and whether it is right, for prediction `question`: `response` is the 0-based index
    of an option in the bank's order (choice), the text typed (numeric: ValueError ``not a number: ...`` when
    it is not one), or None for a skip (``("", None)``)."""
    if response is None:
        return "", None
    if question.kind == Kind.CHOICE:
        assert isinstance(response, int)
        text = plain_text(question.options[response].text)
        return _bounded(text), question.is_correct(response)
    assert isinstance(response, str)
    question.parse_number(response)  # a ValueError for text that is not a number
    return _bounded(response.strip()), question.is_correct(response)


def _bounded(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_PREDICTION_ANSWER else line[: MAX_PREDICTION_ANSWER - 1] + "…"


def commit_prediction(
    store: Storage,
    question: Question,
    response: int | str | None,
    at: datetime,
    tz: tzinfo,
    cards: Sequence[Question] = (),
) -> Committed:
    """Keep the learner's `response` to prediction `question` at `at`; when it is wrong, bring back the card
    it names (found among `cards`, the bank's questions) for the next day in `tz`."""
    answer, right = graded(question, response)
    kept = store.predict(PredictionEvent(question.id, at, answer, right))
    card = next((card for card in cards if card.id == question.card), None)
    nudged = bring_back(store, [card], reason(question.id), at, tz) if right is False and card else []
    return Committed(kept, bool(nudged))


@dataclass(frozen=True)
class PredictionCounts:
    """A learner's predictions, each prompt counted once, at its first commit (a second one comes after the
    answer was shown): `made` (skips left out), `right`, `skipped` (prompts only ever skipped), and by
    lesson (made, right), in course order."""

    made: int
    right: int
    skipped: int
    by_lesson: tuple[tuple[str, int, int], ...]

    def text(self) -> str:
        """The stats line: ``41 made, 29 right; lesson 02: 3 of 7, ...`` (``none yet`` without any)."""
        if not self.made and not self.skipped:
            return "none yet"
        line = f"{self.made} made, {self.right} right"
        if self.skipped:
            line += f", {self.skipped} skipped"
        lessons = "; ".join(f"lesson {lesson}: {right} of {made}" for lesson, made, right in self.by_lesson)
        return f"{line}; {lessons}" if lessons else line


def prediction_counts(store: Storage, predictions: Sequence[Question]) -> PredictionCounts:
    """Count the learner's predictions of the bank's `predictions` (others, such as retired ones, ignored)."""
    lesson_of = {question.id: question.lesson for question in predictions}
    first: dict[str, bool] = {}
    skipped: set[str] = set()
    for made in store.predictions():
        if made.item_id not in lesson_of:
            continue
        if made.right is None:
            skipped.add(made.item_id)
        elif made.item_id not in first:
            first[made.item_id] = made.right
    skipped -= set(first)
    lessons = list(dict.fromkeys(lesson_of[item_id] for item_id in lesson_of if item_id in first))
    by_lesson = tuple(
        (
            lesson,
            sum(1 for item_id in first if lesson_of[item_id] == lesson),
            sum(1 for item_id, right in first.items() if right and lesson_of[item_id] == lesson),
        )
        for lesson in lessons
    )
    return PredictionCounts(len(first), sum(first.values()), len(skipped), by_lesson)
