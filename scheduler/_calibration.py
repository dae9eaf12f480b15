"""How well predicted recall matched what happened: a review log evaluated as the open-spaced-repetition
srs-benchmark evaluates one.

Each item's answers are read in time order, the whole history feeding the model; a prediction is scored at
each answer given at least one whole day (24 hours) after the item's previous one (the answers fsrs's
optimizer learns from, ``fit_reviews``): the predicted chance of recall just before it, against whether it
was recalled (any rating but Again). Scores: log loss, RMSE over bins (the predictions in 20 equal bins of
predicted recall; the root of the count-weighted mean squared gap between each bin's mean prediction and its
share recalled) and AUC (how often a recalled answer had the higher prediction than a forgotten one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import NamedTuple, Protocol

from scheduler._memory import Memory
from scheduler._records import CardState, Rating

__all__ = [
    "MIN_CALIBRATION_REVIEWS",
    "Answered",
    "Bin",
    "FsrsPredictor",
    "Prediction",
    "Predictor",
    "Scores",
    "auc",
    "bins",
    "log_loss",
    "predictions",
    "rmse_bins",
    "score",
    "split_times",
]

MIN_CALIBRATION_REVIEWS = 100
"""The fewest scored answers (see the module) before calibration is shown by bins."""
_CLIP = 1e-4  # predictions are scored within [_CLIP, 1 - _CLIP], as srs-benchmark clips them
_BINS = 20


class Answered(Protocol):
    """An answer as a log holds it (``Review`` and ``LogEntry`` both are)."""

    @property
    def item_id(self) -> str: ...
    @property
    def rating(self) -> Rating: ...
    @property
    def reviewed_at(self) -> datetime: ...


class Prediction(NamedTuple):
    """One scored answer: the item, when, the predicted chance of recall and whether it was recalled."""

    item_id: str
    at: datetime
    p: float
    recalled: bool


class Predictor(Protocol):
    """A model of recall: the predicted chance of recall before each of one item's answers after the first,
    from the answers before it (``history``: that item's answers in time order)."""

    def item(self, item_id: str, history: Sequence[tuple[datetime, Rating]]) -> list[float]: ...


class FsrsPredictor:
    """FSRS with ``memory``'s parameters: the retrievability before each answer (whole days elapsed)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def item(self, item_id: str, history: Sequence[tuple[datetime, Rating]]) -> list[float]:
        found: list[float] = []
        state: CardState | None = None
        for at, rating in history:
            if state is not None:
                found.append(self.memory.retrievability(state, at))
            state = self.memory.review(state, item_id, rating, at)
        return found


def _histories(log: Sequence[Answered]) -> dict[str, list[tuple[datetime, Rating]]]:
    histories: dict[str, list[tuple[datetime, Rating]]] = {}
    for answer in log:
        histories.setdefault(answer.item_id, []).append((answer.reviewed_at, Rating(answer.rating)))
    for history in histories.values():
        history.sort(key=lambda pair: pair[0])  # stable: answers at one time keep their log order
    return histories


def predictions(
    log: Sequence[Answered], predictor: Predictor, start: datetime | None = None, end: datetime | None = None
) -> list[Prediction]:
    """The scored answers of ``log`` (see the module) with ``start <= time < end`` (either bound optional),
    by item in order of first answer, then in time order; every answer feeds the history."""
    found: list[Prediction] = []
    for item_id, history in _histories(log).items():
        ps = predictor.item(item_id, history)
        for (last, _), (at, rating), p in zip(history[:-1], history[1:], ps, strict=True):
            if (at - last).days > 0 and (start is None or at >= start) and (end is None or at < end):
                found.append(Prediction(item_id, at, p, rating != Rating.AGAIN))
    return found


def split_times(log: Sequence[Answered], parts: int) -> list[datetime]:
    """The ``parts - 1`` times that cut the scored answers of ``log``, in time order, into ``parts`` parts
    as equal as can be (each time starts a part), for time-ordered train and test splits."""
    if parts < 2:
        raise ValueError(f"parts must be 2 or more, got {parts!r}")
    times = sorted(
        at
        for history in _histories(log).values()
        for (last, _), (at, _) in pairwise(history)
        if (at - last).days > 0
    )
    if len(times) < parts:
        raise ValueError(f"{len(times)} scored answers cannot be cut into {parts} parts")
    return [times[len(times) * k // parts] for k in range(1, parts)]


def _clipped(p: float) -> float:
    return min(max(p, _CLIP), 1 - _CLIP)


def log_loss(found: Sequence[Prediction]) -> float:
    """The mean negative log-likelihood of what happened."""
    total = sum(-math.log(_clipped(x.p) if x.recalled else 1 - _clipped(x.p)) for x in found)
    return total / len(found)


def rmse_bins(found: Sequence[Prediction], count: int = _BINS) -> float:
    """The RMSE over ``count`` equal bins of predicted recall (see the module)."""
    return math.sqrt(sum(b.count * (b.predicted - b.recalled) ** 2 for b in bins(found, count)) / len(found))


def auc(found: Sequence[Prediction]) -> float:
    """The area under the ROC curve (ties count a half): 0.5 for predictions that tell nothing."""
    order = sorted(found, key=lambda x: x.p)
    rank_sum = 0.0
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and order[end].p == order[start].p:
            end += 1
        mean_rank = (start + end + 1) / 2  # ranks start..end-1 plus one, averaged over the tie
        rank_sum += mean_rank * sum(x.recalled for x in order[start:end])
        start = end
    positive = sum(x.recalled for x in order)
    negative = len(order) - positive
    if not positive or not negative:
        raise ValueError("AUC needs both recalled and forgotten answers")
    return (rank_sum - positive * (positive + 1) / 2) / (positive * negative)


@dataclass(frozen=True)
class Bin:
    """Predictions from ``low`` to ``high``: how many, their mean, and the share recalled."""

    low: float
    high: float
    count: int
    predicted: float
    recalled: float


def bins(found: Sequence[Prediction], count: int = 10) -> list[Bin]:
    """The non-empty bins among ``count`` equal bins of predicted recall (a prediction of 1 in the last)."""
    groups: dict[int, list[Prediction]] = {}
    for x in found:
        groups.setdefault(min(int(x.p * count), count - 1), []).append(x)
    return [
        Bin(
            k / count,
            (k + 1) / count,
            len(group),
            sum(x.p for x in group) / len(group),
            sum(x.recalled for x in group) / len(group),
        )
        for k, group in sorted(groups.items())
    ]


class Scores(NamedTuple):
    """A model's scores over some predictions."""

    answers: int
    log_loss: float
    rmse_bins: float
    auc: float


def score(found: Sequence[Prediction]) -> Scores:
    """Log loss, RMSE over bins and AUC of ``found`` (at least one recalled and one forgotten answer)."""
    return Scores(len(found), log_loss(found), rmse_bins(found), auc(found))
