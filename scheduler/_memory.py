"""A thin wrapper over ``fsrs.Scheduler`` that speaks in CardStates and Ratings."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone, tzinfo

from fsrs import Card, Scheduler, State
from fsrs import Rating as FsrsRating
from fsrs.scheduler import DEFAULT_PARAMETERS, FUZZ_RANGES

from scheduler._bounds import EARLIEST_TIME, LATEST_TIME, MAX_INTERVAL_DAYS, time_range_text
from scheduler._records import CardState, Rating, Review, check_rating
from scheduler._time import check_rollover_hour, elapsed_days, require_aware, to_ms

__all__ = [
    "DEFAULT_LEARNING_STEPS",
    "DEFAULT_PARAMETERS",
    "DEFAULT_RELEARNING_STEPS",
    "DEFAULT_RETENTION",
    "Memory",
]

DEFAULT_RETENTION = 0.85
"""The desired retention: 0.85, above the least cost ``benchmarks/optimal_retention.py`` finds. That benchmark
charges each retention from 0.70 to 0.97 its review time per question remembered a year on, a lapse and its
relearning charged as Anki's "compute minimum recommended retention" (CMRR, fsrs-rs's simulator) charges them,
under FSRS fitted to a real log and the two memory models of ``benchmarks/retention_sim.py``, with the log's,
fsrs-rs's and the course's answer times (a forgotten question, 30 s with its explanation, costs 2.5 recalled
ones). The least cost is at 0.70-0.76 in each case, as FSRS's developers found of CMRR with FSRS-6 (Anki
dropped CMRR in 25.07). That is a minimum, not a recommendation: below it a learner pays more for less.
0.85 costs more time per question remembered than the least (the benchmark says how much) and forgets fewer
than one question in six when it comes back, against one in four or more there, and learners who forget one
question in four lose heart (Anki's manual: forgetting often is demotivating). fsrs's
``compute_optimal_retention`` says 0.85 on that log. A learner may choose any retention in
``RETENTION_RANGE``, the lower ones included, with ``python -m course settings --retention``."""
DEFAULT_LEARNING_STEPS: tuple[timedelta, ...] = ()
"""Same-day steps of a new item before its first interval in days: none. fsrs's own (1 and 10 minutes) cost
more reviews at the same true retention in ``benchmarks/retention_sim.py`` (the README's table); a learner has
just studied the lesson when a question is first answered."""
DEFAULT_RELEARNING_STEPS: tuple[timedelta, ...] = ()
"""Same-day steps of a forgotten item before it goes back to intervals in days: none, as above."""

_STATE_NAMES = {State.Learning: "learning", State.Review: "review", State.Relearning: "relearning"}
_STATES = {name: state for state, name in _STATE_NAMES.items()}


class Memory:
    """Computes the next CardState from the previous one and a rating, with FSRS: fsrs's default parameters
    unless fitted ones are given, desired retention ``DEFAULT_RETENTION`` and no same-day steps unless others
    are given (fsrs's own are 1 and 10 minutes for a new item, 10 for a forgotten one).

    Fuzz (fsrs's: a review interval of 3 days or more moved by a few days, so cards learned together spread
    out) is drawn from a seed made of the item, the rating and the answer time in whole milliseconds, so
    ``preview`` gives exactly the interval that ``review`` will give at that time: a button's label and the
    note after saving agree. ``replay`` takes each due date from the log, so fuzz cannot change history.

    FSRS counts the days since an item's previous answer in the learner's days (``tz``, starting at
    ``rollover_hour`` o'clock: ``scheduler.elapsed_days``), as Anki feeds it, not in 24-hour periods as fsrs
    alone would: a question due the next day and answered the next morning, 14 hours later, is a day old, as
    its due date said. Same-day answers (0 days) are fsrs's short-term ones.
    """

    def __init__(
        self,
        desired_retention: float = DEFAULT_RETENTION,
        *,
        parameters: Sequence[float] | None = None,
        learning_steps: Sequence[timedelta] = DEFAULT_LEARNING_STEPS,
        relearning_steps: Sequence[timedelta] = DEFAULT_RELEARNING_STEPS,
        enable_fuzzing: bool = True,
        maximum_interval: int = 36500,
        tz: tzinfo = timezone.utc,
        rollover_hour: int = 4,
    ) -> None:
        if not 0.0 < desired_retention < 1.0:
            raise ValueError(f"desired_retention must be between 0 and 1, got {desired_retention!r}")
        if not 1 <= maximum_interval <= MAX_INTERVAL_DAYS:
            raise ValueError(
                f"maximum_interval must be from 1 to {MAX_INTERVAL_DAYS} days, got {maximum_interval!r}"
            )
        longest = timedelta(days=MAX_INTERVAL_DAYS)
        for name, steps in (("learning_steps", learning_steps), ("relearning_steps", relearning_steps)):
            if any(not isinstance(step, timedelta) or not timedelta(0) < step <= longest for step in steps):
                raise ValueError(
                    f"{name} must be positive timedeltas of at most {MAX_INTERVAL_DAYS} days, got "
                    f"{tuple(steps)!r}"
                )
        if not isinstance(tz, tzinfo):
            raise TypeError(f"tz must be a tzinfo, got {type(tz).__name__}")
        check_rollover_hour(rollover_hour)
        self._fuzzing = bool(enable_fuzzing)
        self._tz, self._rollover_hour = tz, rollover_hour
        self._exact = Scheduler(
            parameters=DEFAULT_PARAMETERS if parameters is None else tuple(float(p) for p in parameters),
            desired_retention=desired_retention,
            learning_steps=tuple(learning_steps),
            relearning_steps=tuple(relearning_steps),
            maximum_interval=maximum_interval,
            enable_fuzzing=False,
        )

    @property
    def desired_retention(self) -> float:
        return self._exact.desired_retention

    @property
    def parameters(self) -> tuple[float, ...]:
        """The 21 FSRS parameters in use (fsrs's defaults unless fitted ones were given)."""
        return tuple(self._exact.parameters)

    @property
    def learning_steps(self) -> tuple[timedelta, ...]:
        return tuple(self._exact.learning_steps)

    @property
    def relearning_steps(self) -> tuple[timedelta, ...]:
        return tuple(self._exact.relearning_steps)

    @property
    def enable_fuzzing(self) -> bool:
        return self._fuzzing

    @property
    def maximum_interval(self) -> int:
        return self._exact.maximum_interval

    @property
    def tz(self) -> tzinfo:
        """The learner's time zone, in which their days are counted."""
        return self._tz

    @property
    def rollover_hour(self) -> int:
        """The local hour at which the learner's day starts."""
        return self._rollover_hour

    def elapsed_days(self, last: datetime, at: datetime) -> int:
        """The learner's days from an answer at ``last`` to one at ``at`` (``scheduler.elapsed_days``)."""
        return elapsed_days(last, at, self._tz, self._rollover_hour)

    def __repr__(self) -> str:
        fitted = "" if self.parameters == tuple(DEFAULT_PARAMETERS) else ", parameters=(fitted)"
        steps = ""
        if self.tz is not timezone.utc or self.rollover_hour != 4:
            steps += f", tz={self.tz!r}, rollover_hour={self.rollover_hour!r}"
        if self.learning_steps != DEFAULT_LEARNING_STEPS or self.relearning_steps != DEFAULT_RELEARNING_STEPS:
            steps = f", learning_steps={self.learning_steps!r}, relearning_steps={self.relearning_steps!r}"
        return (
            f"Memory(desired_retention={self.desired_retention!r}{fitted}{steps}, "
            f"enable_fuzzing={self.enable_fuzzing!r}, maximum_interval={self.maximum_interval!r})"
        )

    @staticmethod
    def card_id(item_id: str) -> int:
        """A stable positive int below 2**53 derived from the SHA-256 of ``item_id``."""
        digest = hashlib.sha256(item_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % (2**53 - 1) + 1

    def review(self, state: CardState | None, item_id: str, rating: Rating, at: datetime) -> CardState:
        """The state after answering ``item_id`` (``state`` None for a new item) with ``rating`` at ``at`` (a
        time from 1970 to 8999, so that its due date can be held: a ValueError otherwise)."""
        rating, at = check_rating(rating), _in_range(at)
        return self._fuzzed(self._step(self._exact, state, item_id, rating, at), rating, at)

    def replay(self, item_id: str, reviews: Sequence[Review]) -> CardState:
        """Rebuild an item's state from its log rows (in log order); each due date is taken from the log."""
        state: CardState | None = None
        for review in reviews:
            if review.item_id != item_id:
                raise ValueError(
                    f"cannot replay a review of {review.item_id!r} into the history of {item_id!r}"
                )
            at = require_aware(review.reviewed_at, "reviewed_at")
            due = require_aware(review.due, "due")
            state = replace(self._step(self._exact, state, item_id, Rating(review.rating), at), due=due)
        if state is None:
            raise ValueError(f"no reviews to replay for {item_id!r}")
        return state

    def preview(self, state: CardState | None, item_id: str, at: datetime) -> dict[Rating, timedelta]:
        """The interval each rating would lead to at ``at`` (fuzz included), e.g. for button labels."""
        at = _in_range(at)
        return {rating: self.review(state, item_id, rating, at).due - at for rating in Rating}

    def _fuzzed(self, card: CardState, rating: Rating, at: datetime) -> CardState:
        """``card`` with fsrs's fuzz applied to its review interval, drawn from a seed (see the class)."""
        days = (card.due - at).days
        if not self._fuzzing or card.state != "review" or days < 3:  # fsrs: no fuzz below 2.5 days
            return card
        delta = 1.0
        for part in FUZZ_RANGES:
            delta += part["factor"] * max(min(float(days), part["end"]) - part["start"], 0.0)
        high = min(round(days + delta), self.maximum_interval)
        low = min(max(2, round(days - delta)), high)
        seed = hashlib.sha256(f"{card.item_id}|{int(rating)}|{to_ms(at)}".encode()).digest()
        draw = random.Random(int.from_bytes(seed[:8], "big")).random()
        fuzzed = min(round(draw * (high - low + 1) + low), self.maximum_interval)
        return replace(card, due=at + timedelta(days=fuzzed))

    def retrievability(self, state: CardState, at: datetime) -> float:
        """FSRS's predicted chance of recall at ``at``, the learner's days since the last answer elapsed."""
        at = require_aware(at, "at")
        return float(self._exact.get_card_retrievability(self._card(state, state.item_id, at), at))

    def _card(self, state: CardState | None, item_id: str, at: datetime) -> Card:
        if state is None:
            return Card(card_id=self.card_id(item_id), state=State.Learning, step=0, due=at)
        if state.item_id != item_id:
            raise ValueError(f"the state given is for {state.item_id!r}, not {item_id!r}")
        return Card(
            card_id=self.card_id(item_id),
            state=_STATES[state.state],
            step=state.step,
            stability=state.stability,
            difficulty=state.difficulty,
            due=require_aware(state.due, "due"),
            last_review=None
            if state.last_review is None
            else self._as_fsrs_counts(require_aware(state.last_review, "last_review"), at),
        )

    def _as_fsrs_counts(self, last: datetime, at: datetime) -> datetime:
        """The time of the previous answer that makes fsrs, which counts whole 24-hour periods from it to
        ``at``, count the learner's days between ``last`` and ``at`` (``elapsed_days``) instead."""
        days = self.elapsed_days(last, at)
        if days > 0:
            return at - timedelta(days=days)
        if days == 0 and at - last >= timedelta(days=1):  # a day of 25 hours, where the clock fell back
            return at - timedelta(hours=23)
        return last  # the same day (or an answer before the last one: fsrs's own count)

    def _step(
        self, scheduler: Scheduler, state: CardState | None, item_id: str, rating: Rating, at: datetime
    ) -> CardState:
        card, _ = scheduler.review_card(self._card(state, item_id, at), FsrsRating(int(rating)), at)
        reps = 1 if state is None else state.reps + 1
        lapses = 0 if state is None else state.lapses
        if state is not None and state.state == "review" and rating == Rating.AGAIN:
            lapses += 1
        return CardState(
            item_id=item_id,
            state=_STATE_NAMES[card.state],
            step=card.step,
            stability=card.stability,
            difficulty=card.difficulty,
            due=card.due,
            last_review=card.last_review,
            reps=reps,
            lapses=lapses,
        )


def _in_range(at: datetime) -> datetime:
    """`at` in UTC, when it is a time from 1970 to 8999 (`scheduler._bounds`); a ValueError otherwise."""
    at = require_aware(at, "at")
    if not EARLIEST_TIME <= at < LATEST_TIME:
        raise ValueError(f"at must be a time {time_range_text()} (UTC), got {at.isoformat()}")
    return at
