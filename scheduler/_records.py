"""The plain records the scheduler passes around: ratings, items, log rows, card states and limits."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum, IntEnum
from typing import NamedTuple

__all__ = [
    "RETENTION_RANGE",
    "Answer",
    "AnsweredToday",
    "CardState",
    "CramReview",
    "DueItems",
    "Item",
    "Limits",
    "LogEntry",
    "Merged",
    "Nudge",
    "PredictionEvent",
    "Rating",
    "Review",
    "Settings",
    "State",
    "check_rating",
    "retention_problem",
]


class Rating(IntEnum):
    """How well an answer went; maps one to one onto ``fsrs.Rating``."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4


def check_rating(value: object) -> Rating:
    """``value`` as a Rating; an int from 1 to 4 is accepted, a bool, float or anything else is refused."""
    expected = "rating must be a Rating or an int from 1 to 4"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{expected}, got {value!r} ({type(value).__name__})")
    if not 1 <= value <= 4:
        raise ValueError(f"{expected}, got {value!r}")
    return Rating(value)


class State(Enum):
    """Where an item stands in the schedule; ``NEW`` before its first answer. A ``CardState.state`` is one of
    the other three's values."""

    NEW = "new"
    LEARNING = "learning"
    REVIEW = "review"
    RELEARNING = "relearning"


@dataclass(frozen=True)
class Item:
    """Something that can be reviewed, e.g. one quiz question."""

    id: str
    deck: str


@dataclass(frozen=True)
class Review:
    """One row of the append-only review log, the source of truth for the schedule."""

    item_id: str
    rating: Rating
    reviewed_at: datetime
    duration_ms: int | None
    due: datetime


class Answer(NamedTuple):
    """One scheduled answer as statistics and daily limits see it: who, when, how, and the item's state
    just before it (``State.NEW`` for a first answer).

    A named tuple rather than a dataclass: statistics read every answer of the log, a million on a large
    store, and a tuple is built three times faster.
    """

    item_id: str
    reviewed_at: datetime
    rating: Rating
    state_before: State


@dataclass(frozen=True)
class DueItems:
    """The schedule at one moment: the items due by then, with when each is due, earliest first, and every
    item that has a card (answered at least once), due or not."""

    due: Mapping[str, datetime]
    scheduled: frozenset[str]
    nudged: Mapping[str, datetime] = field(default_factory=dict)
    """Items brought forward by a `Nudge` not answered since, with the earliest due time asked for (the
    serving queue offers them from then, whatever their card says; an item without a card, as a new one)."""


@dataclass(frozen=True)
class Nudge:
    """A request to see an item again by ``due``, made at ``nudged_at`` for ``reason`` (a short text: what
    brought it back). It is an event of its own, never a review: it changes no card; the due queue offers
    the item from ``due`` (as a new item if it has never been answered) until it is answered after
    ``nudged_at``. An item's schedule is otherwise what its reviews make it."""

    item_id: str
    nudged_at: datetime
    due: datetime
    reason: str


@dataclass(frozen=True)
class PredictionEvent:
    """A guess committed before its outcome is shown (a learner predicting what a cell will print): an
    event of its own, never a review; it changes no card and no schedule. ``answer`` is the guess as
    committed (plain text, one line; "" when skipped), ``right`` whether it was right (None: skipped).

    Not named ``Prediction``: that is ``scheduler.Prediction``, an answer's predicted chance of recall as
    the calibration scores it (``scheduler.predictions``)."""

    item_id: str
    predicted_at: datetime
    answer: str
    right: bool | None


@dataclass(frozen=True)
class CramReview:
    """One practice answer; kept in its own log and never part of the schedule."""

    item_id: str
    rating: Rating
    reviewed_at: datetime
    duration_ms: int | None


@dataclass(frozen=True)
class LogEntry:
    """One answer as given, without what the schedule made of it: what ``Storage.merge`` takes, scheduled
    or practice. Two entries with the same item, rating, time (to the millisecond) and duration are the same
    answer."""

    item_id: str
    rating: Rating
    reviewed_at: datetime
    duration_ms: int | None


@dataclass(frozen=True)
class Merged:
    """What ``Storage.merge`` added: scheduled answers, practice answers and decks newly enrolled, how many
    answers (of either log) it skipped as already present, and the nudges and predictions it added (those
    present are skipped without being counted)."""

    answers: int
    practice: int
    decks: int
    skipped: int
    nudges: int = 0
    predictions: int = 0


@dataclass(frozen=True)
class CardState:
    """The scheduling state of one item, as cached by the store and rebuilt from the log on demand."""

    item_id: str
    state: str
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    reps: int
    lapses: int


@dataclass(frozen=True)
class Limits:
    """Daily caps on new items and on reviews of items already seen."""

    new_per_day: int = 20
    reviews_per_day: int = 200

    def __post_init__(self) -> None:
        for name in ("new_per_day", "reviews_per_day"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")


@dataclass(frozen=True)
class AnsweredToday:
    """What the learner's day so far counts against its `Limits`, by deck: the first answers of new items
    (``new``) and the other scheduled answers (``reviews``), wherever they were given. Practice answers are
    not counted."""

    new: Mapping[str, int] = field(default_factory=dict)
    reviews: Mapping[str, int] = field(default_factory=dict)

    @property
    def new_total(self) -> int:
        return sum(self.new.values())

    @property
    def reviews_total(self) -> int:
        return sum(self.reviews.values())


RETENTION_RANGE = (0.70, 0.97)
"""The desired retentions a learner may choose, both ends included."""


def retention_problem(value: float) -> str | None:
    """Why ``value`` cannot be a desired retention (a sentence without its subject), or None when it can."""
    low, high = RETENTION_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"must be a number from {low:.2f} to {high:.2f}, got {value!r}"
    if value < low:
        return (
            f"must be at least {low:.2f}, got {value!r}: below that, more than 3 in 10 answers would be "
            "forgotten"
        )
    if value > high:
        return (
            f"must be at most {high:.2f}, got {value!r}: above that, the reviews grow steeply for little "
            "gain in what you remember"
        )
    return None


@dataclass(frozen=True)
class Settings:
    """A learner's scheduling settings, kept in the store.

    ``desired_retention``: the chance of recall each review aims at (None: ``Memory``'s default);
    ``parameters``: the FSRS parameters (None: fsrs's defaults); ``fitted_at`` and ``fitted_reviews``: when
    the parameters were fitted to the learner's log and how many reviews the fit used (None unless fitted).
    """

    desired_retention: float | None = None
    parameters: tuple[float, ...] | None = None
    fitted_at: datetime | None = None
    fitted_reviews: int | None = None
