"""Fitting the FSRS parameters to a learner's own review log, with fsrs's optimizer.

fsrs's ``Optimizer`` learns only from reviews answered on a later day than the item's previous answer, and
silently returns its default parameters when it has fewer than 512 of them (its mini-batch size):
``fit_reviews`` counts them as it does, and ``fit_parameters`` refuses below ``MIN_FIT_REVIEWS`` instead.
The optimizer imports torch and pandas; it is imported only when a fit runs, so ``import scheduler`` stays
light. A fit is deterministic: fsrs shuffles with its own ``Random(42)``.

Days are the learner's (``scheduler.elapsed_days``), as ``Memory`` counts them: fsrs's optimizer counts whole
24-hour periods between two answers' times, so it is given each answer at the start of its learner's day
(midnight UTC of the day's number), answers of one day in their order.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone, tzinfo
from itertools import pairwise

from scheduler._memory import Memory
from scheduler._records import Review
from scheduler._time import day_numbers, elapsed_days

__all__ = ["MAX_FIT_HISTORY", "MIN_FIT_REVIEWS", "NotEnoughReviews", "fit_parameters", "fit_reviews"]

MIN_FIT_REVIEWS = 512
"""The fewest reviews (see ``fit_reviews``) that fsrs's optimizer fits to: its mini-batch size."""
MAX_FIT_HISTORY = 64
"""fsrs's optimizer reads only the first 64 answers of each item (its ``max_seq_len``)."""


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class NotEnoughReviews(ValueError):
    """Too few reviews to fit the parameters to: ``have`` of the ``need`` needed."""

    def __init__(self, have: int, need: int = MIN_FIT_REVIEWS) -> None:
        self.have = have
        self.need = need
        super().__init__(
            f"fitting needs at least {need} reviews answered on a later day than the question's previous "
            f"answer; there are {have}"
        )


def fit_reviews(reviews: Sequence[Review], tz: tzinfo = timezone.utc, rollover_hour: int = 4) -> int:
    """How many of ``reviews`` a fit learns from, counted as fsrs's optimizer counts them: each item's
    answers in time order (its first ``MAX_FIT_HISTORY``), each after the first given on a later learner's
    day (``tz``, from ``rollover_hour`` o'clock) than the item's previous answer."""
    times: dict[str, list[datetime]] = {}
    for review in reviews:
        times.setdefault(review.item_id, []).append(review.reviewed_at)
    count = 0
    for history in times.values():
        history = sorted(history)[:MAX_FIT_HISTORY]  # stable, as fsrs sorts them
        count += sum(elapsed_days(last, at, tz, rollover_hour) > 0 for last, at in pairwise(history))
    return count


def fit_parameters(
    reviews: Sequence[Review], tz: tzinfo = timezone.utc, rollover_hour: int = 4
) -> tuple[float, ...]:
    """The FSRS parameters fitted to ``reviews`` (a log, in any order) by fsrs's optimizer, days counted as
    the learner's (``tz``, from ``rollover_hour`` o'clock); NotEnoughReviews when fewer than
    ``MIN_FIT_REVIEWS`` count (``fit_reviews``). Takes seconds for a few thousand reviews."""
    have = fit_reviews(reviews, tz, rollover_hour)
    if have < MIN_FIT_REVIEWS:
        raise NotEnoughReviews(have)
    from fsrs import Rating as FsrsRating
    from fsrs import ReviewLog
    from fsrs.optimizer import Optimizer  # imports torch and pandas: only here

    ordered = sorted(reviews, key=lambda review: review.reviewed_at)  # one day's answers keep their order
    days = day_numbers([review.reviewed_at for review in ordered], tz, rollover_hour)
    logs = [
        ReviewLog(
            card_id=Memory.card_id(review.item_id),
            rating=FsrsRating(int(review.rating)),
            review_datetime=_EPOCH + timedelta(days=day),
            review_duration=review.duration_ms,
        )
        for review, day in zip(ordered, days, strict=True)
    ]
    return tuple(float(p) for p in Optimizer(logs).compute_optimal_parameters())
