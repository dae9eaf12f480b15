"""How well predicted recall matched what happened: a review log evaluated as the open-spaced-repetition
srs-benchmark evaluates one.

Each item's answers are read in time order, the whole history feeding the model; a prediction is scored at
each answer given on a later learner's day than the item's previous answer (the day starting at
``rollover_hour`` o'clock in ``tz``, as ``Memory`` and fsrs's optimizer count days: ``fit_reviews``): the
predicted chance of recall just before it, against whether it was recalled (any rating but Again).

Scores: log loss; srs-benchmark's RMSE (bins) (``rmse_bins``: the scored answers binned by the learner's days
since the item's previous answer, the answer's place in the item's history and the item's lapses before it,
then the root of the count-weighted mean squared gap between each bin's share recalled and mean prediction);
a calibration error (``calibration_error``: the same gap over 20 equal bins of predicted recall, the bins
``bins`` shows); and AUC (how often a recalled answer had the higher prediction than a forgotten one).
``time_series_split`` is srs-benchmark's split: sklearn's ``TimeSeriesSplit`` over the scored answers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import NamedTuple, Protocol

from scheduler._memory import Memory
from scheduler._records import CardState, Rating
from scheduler._time import day_numbers

__all__ = [
    "CALIBRATION_BINS",
    "MIN_CALIBRATION_REVIEWS",
    "Answered",
    "Bin",
    "FsrsPredictor",
    "Prediction",
    "Predictor",
    "Scores",
    "auc",
    "bins",
    "calibration_error",
    "log_loss",
    "predictions",
    "rmse_bins",
    "score",
    "time_series_split",
]

MIN_CALIBRATION_REVIEWS = 100
"""The fewest scored answers (see the module) before calibration is shown by bins."""
CALIBRATION_BINS = 20
"""The equal bins of predicted recall of ``calibration_error`` and ``bins``."""
_CLIP = 1e-4  # predictions are scored within [_CLIP, 1 - _CLIP], as srs-benchmark clips them


class Answered(Protocol):
    """An answer as a log holds it (``Review`` and ``LogEntry`` both are)."""

    @property
    def item_id(self) -> str: ...
    @property
    def rating(self) -> Rating: ...
    @property
    def reviewed_at(self) -> datetime: ...


class Prediction(NamedTuple):
    """One scored answer: the item, when, the predicted chance of recall and whether it was recalled; and
    srs-benchmark's features of it: the learner's days since the item's previous answer (``elapsed_days``,
    1 or more), its place in the item's history (``i``: 2 for the second answer, every answer counted) and
    the item's ``lapses`` before it (its earlier Again answers given on a later day than their previous)."""

    item_id: str
    at: datetime
    p: float
    recalled: bool
    elapsed_days: int
    i: int
    lapses: int


class Predictor(Protocol):
    """A model of recall: the predicted chance of recall before each of one item's answers after the first,
    from the answers before it (``history``: that item's answers in time order)."""

    def item(self, item_id: str, history: Sequence[tuple[datetime, Rating]]) -> list[float]: ...


class FsrsPredictor:
    """FSRS with ``memory``'s parameters: the retrievability before each answer, days counted as ``memory``
    counts them (its ``tz`` and ``rollover_hour``; score with the same day)."""

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


class _Answer(NamedTuple):
    at: datetime
    rating: Rating
    day: int  # the learner's day, as a number


def _histories(log: Sequence[Answered], tz: tzinfo, rollover_hour: int) -> dict[str, list[_Answer]]:
    days = day_numbers([answer.reviewed_at for answer in log], tz, rollover_hour)
    histories: dict[str, list[_Answer]] = {}
    for answer, day in zip(log, days, strict=True):
        histories.setdefault(answer.item_id, []).append(
            _Answer(answer.reviewed_at, Rating(answer.rating), day)
        )
    for history in histories.values():
        history.sort(key=lambda answer: answer.at)  # stable: answers at one time keep their log order
    return histories


def _scored(item_id: str, history: Sequence[_Answer], ps: Sequence[float]) -> list[Prediction]:
    found: list[Prediction] = []
    lapses = 0
    for j in range(1, len(history)):
        previous, answer = history[j - 1], history[j]
        elapsed = answer.day - previous.day
        if elapsed > 0:
            recalled = answer.rating != Rating.AGAIN
            found.append(Prediction(item_id, answer.at, ps[j - 1], recalled, elapsed, j + 1, lapses))
            lapses += not recalled
    return found


def predictions(
    log: Sequence[Answered], predictor: Predictor, tz: tzinfo = timezone.utc, rollover_hour: int = 4
) -> list[Prediction]:
    """The scored answers of ``log`` (see the module; the learner's day starts at ``rollover_hour`` o'clock
    in ``tz``), in time order (answers at one time: by item in order of first answer); every answer feeds
    the history."""
    found: list[Prediction] = []
    for item_id, history in _histories(log, tz, rollover_hour).items():
        ps = predictor.item(item_id, [(answer.at, answer.rating) for answer in history])
        if len(ps) != len(history) - 1:
            raise ValueError(f"the predictor gave {len(ps)} predictions for {len(history) - 1} answers")
        found += _scored(item_id, history, ps)
    found.sort(key=lambda x: x.at)
    return found


def time_series_split(count: int, splits: int = 5) -> list[range]:
    """The test folds of ``count`` answers in time order, as sklearn's ``TimeSeriesSplit(n_splits=splits)``
    cuts them (srs-benchmark's split): ``splits`` folds of ``count // (splits + 1)`` answers, the last ones;
    each is to be predicted by a model trained on the answers before it. A ValueError below ``splits + 1``."""
    if isinstance(splits, bool) or not isinstance(splits, int) or splits < 2:
        raise ValueError(f"splits must be an int of 2 or more, got {splits!r}")
    if count < splits + 1:
        raise ValueError(f"{count} answers are too few for {splits} splits: they need at least {splits + 1}")
    size = count // (splits + 1)
    return [range(start, start + size) for start in range(count - splits * size, count, size)]


def _clipped(p: float) -> float:
    return min(max(p, _CLIP), 1 - _CLIP)


def log_loss(found: Sequence[Prediction]) -> float:
    """The mean negative log-likelihood of what happened."""
    total = sum(-math.log(_clipped(x.p) if x.recalled else 1 - _clipped(x.p)) for x in found)
    return total / len(found)


def _binned(value: float, scale: float, base: float) -> float:
    """srs-benchmark's bin of ``value``: ``scale * base ** floor(log(value) / log(base))``."""
    return scale * base ** math.floor(math.log(value) / math.log(base))


def _benchmark_bin(x: Prediction) -> tuple[float, float, float]:
    """srs-benchmark's bin of a scored answer (its ``rmse_matrix``): its elapsed days, place in the item's
    history and lapses, each rounded down to a power of a base (3.62, 1.89, 1.73), scaled and rounded."""
    delta_t = round(_binned(max(x.elapsed_days, 1e-6), 2.48, 3.62), 2)
    i = round(_binned(x.i, 1.99, 1.89), 0)
    lapses = round(_binned(x.lapses, 1.65, 1.73), 0) if x.lapses != 0 else 0.0
    return delta_t, i, lapses


def _gap(groups: Sequence[Sequence[Prediction]], total: int) -> float:
    """The root of the count-weighted mean squared gap between each group's mean prediction and its share
    recalled."""
    squares = sum(
        len(g) * (sum(x.p for x in g) / len(g) - sum(x.recalled for x in g) / len(g)) ** 2 for g in groups
    )
    return math.sqrt(squares / total)


def rmse_bins(found: Sequence[Prediction]) -> float:
    """srs-benchmark's RMSE (bins): the gap (see the module) over srs-benchmark's bins of the answers' three
    features (``Prediction``): elapsed days, place in the history and lapses."""
    groups: dict[tuple[float, float, float], list[Prediction]] = {}
    for x in found:
        groups.setdefault(_benchmark_bin(x), []).append(x)
    return _gap(list(groups.values()), len(found))


def calibration_error(found: Sequence[Prediction], count: int = CALIBRATION_BINS) -> float:
    """The gap (see the module) over ``count`` equal bins of predicted recall (those of ``bins``)."""
    return _gap(list(_equal_bins(found, count).values()), len(found))


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


def _equal_bins(found: Sequence[Prediction], count: int) -> dict[int, list[Prediction]]:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int of 1 or more, got {count!r}")
    groups: dict[int, list[Prediction]] = {}
    for x in found:
        groups.setdefault(min(int(x.p * count), count - 1), []).append(x)
    return dict(sorted(groups.items()))


def bins(found: Sequence[Prediction], count: int = CALIBRATION_BINS) -> list[Bin]:
    """The non-empty bins among ``count`` equal bins of predicted recall (a prediction of 1 in the last)."""
    return [
        Bin(
            k / count,
            (k + 1) / count,
            len(group),
            sum(x.p for x in group) / len(group),
            sum(x.recalled for x in group) / len(group),
        )
        for k, group in _equal_bins(found, count).items()
    ]


class Scores(NamedTuple):
    """A model's scores over some predictions; ``auc`` is None when they were all recalled or all
    forgotten (AUC needs both)."""

    answers: int
    log_loss: float
    rmse_bins: float
    calibration_error: float
    auc: float | None


def score(found: Sequence[Prediction]) -> Scores:
    """Log loss, srs-benchmark's RMSE (bins), the calibration error over 20 bins and AUC (None without both
    recalled and forgotten answers) of ``found``; a ValueError for none."""
    if not found:
        raise ValueError("no predictions to score")
    recalled = sum(x.recalled for x in found)
    area = auc(found) if 0 < recalled < len(found) else None
    return Scores(len(found), log_loss(found), rmse_bins(found), calibration_error(found), area)
