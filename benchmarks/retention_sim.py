"""Does the schedule work? Simulated learners study the course's real question bank for a year under two
memory models that are not FSRS, and every scheduler is measured by the true retention the models give.

Run it from the repository root: ``python benchmarks/retention_sim.py`` (two to three minutes on 2 cores;
``--help`` for the options). It prints its tables and writes the figure of retention against reviews
(``docs/retention_sim.png`` by default). Everything is seeded: the same command prints the same numbers.

**The learners.** Each studies lesson 00 on day 0 and a new lesson every 1 to 4 days after (all nine by about
day 22), answers that lesson's quiz at once (the first answer of every question), and sits down once a day
at about 18:00 (± an hour) to answer what the scheduler says is due; one day in ten is skipped. Same-day
steps are answered when they come due within 15 minutes of the previous answer, as a learner would who keeps
the review open. Every answer after a question's first counts as a review, same-day ones included. Minutes:
12 s per recalled answer (18 s when rated Hard), 30 s per forgotten one (its explanation read).

**Memory models** (see `ExponentialModel` and `ActrModel`). Each has two constants fixed *before* any
scheduler is compared, from schedule-free behaviour: after one exposure (studying the lesson and answering
its quiz), the average learner recalls 75% of the questions a day later and 55% a week later (in the range
reported for material studied once and tested once, e.g. Roediger & Karpicke 2006: 56% a week later). Their
other constants are published values or stated assumptions, written below and never tuned afterwards. Items
differ in difficulty and learners in ability (half the spread between items, a quarter between learners, a
quarter their interaction). Self-rating is noisy: Again when not recalled; otherwise the felt ease, the
recall probability plus Gaussian noise (sd 0.15), gives Hard below 0.70, Easy above 1.10, Good between.

**Schedulers**, all on the same learners and seeds: the course's own (`scheduler.Memory`, FSRS with fuzz)
at several desired retentions, with same-day steps (1 and 10 min for a new question, 10 min after a lapse)
and without; personal parameters (the course's optimizer run on day 60, and every 30 days after while the
log is below its threshold); SM-2 as published (answers below Good repeated the same day until Good) and
as commonly implemented (no same-day repetition), each with several interval modifiers; Leitner boxes (1,
2, 4, ..., 64 days, scaled); fixed intervals. Each family is a curve of (reviews, retention) points;
schedulers are compared at matched retention by reading one curve at the other's retention.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import heapq
import math
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

from course.progress import items as bank_items  # noqa: E402
from scheduler import Memory, Rating, Review  # noqa: E402

DAYS = 365
CHECK_DAYS = (30, 60, 90, 120, 150, 180, 240, 300, 365)
SEED = 20261201
START = datetime(2026, 1, 5, tzinfo=timezone.utc)  # day 0 of every simulated year
MINUTE = 1 / 1440
SECOND = MINUTE / 60
WAIT = 15 * MINUTE  # a same-day step due this soon after the last answer is waited for
FIT_DAY = 60

# Calibration targets: average recall 1 and 7 days after one exposure (see the module docstring).
RECALL_1D, RECALL_7D = 0.75, 0.55
# Heterogeneity: shares of the variance of a learner-item's strength (items, learners, interaction).
ITEM_SHARE, LEARNER_SHARE, PAIR_SHARE = 0.5, 0.25, 0.25
# Self-rating: felt ease = recall probability + N(0, RATING_NOISE); Hard below, Easy above these.
RATING_NOISE, HARD_BELOW, EASY_ABOVE = 0.15, 0.70, 1.10
SECONDS = {Rating.AGAIN: 30.0, Rating.HARD: 18.0, Rating.GOOD: 12.0, Rating.EASY: 12.0}


# ---------------------------------------------------------------------------------------------- memory models
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()  # E[f(z)], z ~ N(0, 1), as sum(w * f(nodes))


def _bisect(f: Callable[[float], float], low: float, high: float, steps: int = 80) -> float:
    """The root of an increasing ``f`` between ``low`` and ``high``."""
    for _ in range(steps):
        middle = (low + high) / 2
        low, high = (middle, high) if f(middle) < 0 else (low, middle)
    return (low + high) / 2


class ExponentialModel:
    """Exponential forgetting with a spacing effect: recall ``exp(-t / S)`` after ``t`` days.

    A learner-item's first stability is ``S0 * exp(spread * z)`` (z: its standard-normal strength). A recalled
    answer multiplies S by ``1 + GAIN * (1 - p)``, p being the recall probability at that moment: an answer
    that was hard to recall (p low) strengthens memory more than one that was easy (p near 1, e.g. minutes
    after the last); a review at p = 0.9 multiplies S by 2.2, at p = 0.7 by 4.6 (an assumption, of the size
    of the interval growth Anki and SuperMemo users see). A forgotten answer (its explanation read) relearns
    the question: S becomes ``max(LAPSE * S, relearned)``, where ``relearned`` starts at the first S and
    doubles with each lapse (Ebbinghaus's savings: relearning is faster than learning). S0 and spread are
    fixed by the calibration targets. A pure exponential needs a wide spread of strengths to give the slow
    average forgetting people show (an average of exponentials is a power-like curve, Wixted & Ebbesen 1991),
    so some questions are very hard for some learners.
    """

    name = "exponential"
    GAIN = 12.0
    LAPSE = 0.5

    def __init__(self) -> None:
        def one_exposure(s0: float, spread: float, days: float) -> float:
            return float(_WEIGHTS @ np.exp(-days / (s0 * np.exp(spread * _NODES))))

        def s0_for(spread: float) -> float:
            return math.exp(_bisect(lambda ln_s: one_exposure(math.exp(ln_s), spread, 1) - RECALL_1D, -5, 10))

        self.spread = _bisect(lambda sp: one_exposure(s0_for(sp), sp, 7) - RECALL_7D, 0.0, 6.0)
        self.s0 = s0_for(self.spread)
        self.fit = (one_exposure(self.s0, self.spread, 1), one_exposure(self.s0, self.spread, 7))

    def constants(self) -> str:
        return (
            f"S0 = {self.s0:.2f} d, spread = {self.spread:.2f}, GAIN = {self.GAIN:g}, LAPSE = {self.LAPSE:g}"
        )

    def start(self, z: float, t: float) -> list[float]:
        first = self.s0 * math.exp(self.spread * z)
        return [first, t, first]  # stability, last exposure, stability of the next relearning

    def recall(self, state: list[float], t: float) -> float:
        return math.exp(-max(t - state[1], 0.0) / state[0])

    def expose(self, state: list[float], t: float, recalled: bool) -> None:
        p = self.recall(state, t)
        if recalled:
            state[0] *= 1 + self.GAIN * (1 - p)
        else:
            state[0] = max(self.LAPSE * state[0], state[2])
            state[2] *= 2
        state[1] = t


class ActrModel:
    """ACT-R's declarative memory with Pavlik & Anderson's (2005) spacing effect: a sum of power-law traces.

    Every exposure at time t_j leaves a trace; activation ``m = ln sum (age_j in seconds) ** -d_j``; a trace's
    decay ``d_j = C * exp(m at t_j) + ALPHA`` is faster when the item was still active when it was laid down
    (massed practice decays fast, spaced practice lasts); recall ``1 / (1 + exp((tau_i - m) / S))``. C, ALPHA
    and S are Pavlik & Anderson's published values; tau (the average threshold) and its spread between
    learner-items are fixed by the calibration targets. Forgotten answers leave a trace too (the explanation
    is read).
    """

    name = "ACT-R"
    C, ALPHA, S = 0.217, 0.177, 0.255

    def __init__(self) -> None:
        def one_exposure(tau: float, spread: float, days: float) -> float:
            m = -self.ALPHA * math.log(days * 86400)
            return float(_WEIGHTS @ (1 / (1 + np.exp((tau + spread * _NODES - m) / self.S))))

        def tau_for(spread: float) -> float:
            return -_bisect(lambda neg_tau: one_exposure(-neg_tau, spread, 1) - RECALL_1D, -10, 10)

        self.spread = _bisect(lambda sp: one_exposure(tau_for(sp), sp, 7) - RECALL_7D, 0.0, 5.0)
        self.tau = tau_for(self.spread)
        self.fit = (one_exposure(self.tau, self.spread, 1), one_exposure(self.tau, self.spread, 7))

    def constants(self) -> str:
        fixed = f"C = {self.C}, ALPHA = {self.ALPHA}, S = {self.S}"
        return f"tau = {self.tau:.2f}, spread = {self.spread:.2f}, {fixed}"

    def start(self, z: float, t: float) -> list[float]:
        return [self.tau - self.spread * z, t, self.ALPHA]  # threshold, then (time, decay) per trace

    def _activation(self, state: list[float], t: float) -> float:
        total = 0.0
        for j in range(1, len(state), 2):
            total += max((t - state[j]) * 86400, 1.0) ** -state[j + 1]  # an age under 1 s counts as 1 s
        return math.log(total)

    def recall(self, state: list[float], t: float) -> float:
        return 1 / (1 + math.exp((state[0] - self._activation(state, t)) / self.S))

    def expose(self, state: list[float], t: float, recalled: bool) -> None:
        state += [t, self.C * math.exp(self._activation(state, t)) + self.ALPHA]


MODELS: dict[str, Callable[[], ExponentialModel | ActrModel]] = {
    "exponential": ExponentialModel,
    "ACT-R": ActrModel,
}


# ------------------------------------------------------------------------------------------------- schedulers
class Scheduler:
    """Decides each question's next due time (in days since day 0) from the rating just given."""

    family: str
    label: str
    fits = False

    def day_starts(self, day: int) -> None:
        """Called at the start of each simulated day, before the learner's session."""

    def first(self, item: str, t: float, rating: Rating) -> float:
        """The due time after the question's first answer (its lesson's quiz)."""
        return self.answer(item, t, rating)

    def answer(self, item: str, t: float, rating: Rating) -> float:
        raise NotImplementedError


class Course(Scheduler):
    """The course's own: `scheduler.Memory` (FSRS with fuzz).

    Personal parameters: with ``fit=True`` the learner runs the course's optimizer on day FIT_DAY and, while
    their log is below its threshold, again every 30 days; from the first fit on, every question is
    scheduled with the fitted parameters (cards replayed, due dates kept, as ``optimize`` does). ``preset``:
    (day, parameters) found by such a run, switched to on that day (the family's other retentions reuse one
    fit per learner: fitting takes seconds).
    """

    def __init__(
        self,
        retention: float,
        steps: bool,
        fit: bool = False,
        preset: tuple[int, tuple[float, ...]] | None = None,
    ) -> None:
        self.retention, self.steps, self.preset = retention, steps, preset
        self.options = FSRS_STEPS if steps else NO_STEPS
        self.memory = Memory(retention, **self.options)  # type: ignore[arg-type]
        self.states: dict[str, object] = {}
        self.log: dict[str, list[Review]] = {}
        self.fits = fit or preset is not None
        self.fitting = fit
        self.fitted: tuple[int, tuple[float, ...]] | None = None
        kind = "personal parameters" if self.fits else ("steps" if steps else "no steps")
        self.family = f"course, {kind}"
        self.label = f"{self.family}, r={retention:g}"

    def answer(self, item: str, t: float, rating: Rating) -> float:
        at = START + timedelta(days=t)
        state = self.memory.review(self.states.get(item), item, rating, at)  # type: ignore[arg-type]
        self.states[item] = state
        self.log.setdefault(item, []).append(Review(item, rating, at, None, state.due))
        return (state.due - START) / timedelta(days=1)

    def day_starts(self, day: int) -> None:
        if self.fitted is not None:
            return
        if self.preset is not None:
            if day == self.preset[0]:
                self._use(day, self.preset[1])
            return
        if day >= FIT_DAY and (day - FIT_DAY) % 30 == 0:
            from scheduler import NotEnoughReviews, fit_parameters  # imports torch

            try:
                parameters = fit_parameters([r for rows in self.log.values() for r in rows])
            except NotEnoughReviews:
                return
            self._use(day, parameters)

    def _use(self, day: int, parameters: tuple[float, ...]) -> None:
        self.fitted = (day, parameters)
        self.memory = Memory(self.retention, parameters=parameters, **self.options)  # type: ignore[arg-type]
        self.states = {item: self.memory.replay(item, rows) for item, rows in self.log.items()}


FSRS_STEPS = {
    "learning_steps": (timedelta(minutes=1), timedelta(minutes=10)),
    "relearning_steps": (timedelta(minutes=10),),
}
NO_STEPS: dict[str, tuple[timedelta, ...]] = {"learning_steps": (), "relearning_steps": ()}
SM2_QUALITY = {Rating.AGAIN: 1, Rating.HARD: 3, Rating.GOOD: 4, Rating.EASY: 5}


class Sm2(Scheduler):
    """SM-2 (Wozniak 1990): intervals 1, 6, then the last times the E-factor; a failed answer (quality < 3)
    restarts the intervals, E-factor unchanged. ``published``: after the day's reviews, answers below quality
    4 (Good) are repeated the same day until Good; those repetitions change nothing. ``modifier`` scales every
    interval (Anki's interval modifier), giving the family's curve."""

    def __init__(self, modifier: float, published: bool) -> None:
        self.modifier, self.published = modifier, published
        self.cards: dict[str, list[float]] = {}  # repetitions, e-factor, interval (days)
        self.pending: dict[str, float] = {}  # items being repeated today -> the due date already decided
        self.family = "SM-2 as published" if published else "SM-2 as commonly implemented"
        self.label = f"{self.family}, x{modifier:g}"

    def first(self, item: str, t: float, rating: Rating) -> float:
        self.cards[item] = [0, 2.5, 0]
        return self.answer(item, t, rating)

    def answer(self, item: str, t: float, rating: Rating) -> float:
        q = SM2_QUALITY[rating]
        if item in self.pending:  # a same-day repetition: only whether it is now Good matters
            return self.pending.pop(item) if q >= 4 else t + 5 * MINUTE
        n, ef, interval = self.cards[item]
        if q < 3:
            n, interval = 0, 1.0
        else:
            n += 1
            interval = 1.0 if n == 1 else 6.0 if n == 2 else interval * ef
            ef = max(1.3, ef + 0.1 - (5 - q) * (0.08 + (5 - q) * 0.02))
        self.cards[item] = [n, ef, interval]
        due = math.floor(t) + max(1, round(interval * self.modifier))
        if self.published and q < 4:
            self.pending[item] = due
            return t + 5 * MINUTE
        return due


class Leitner(Scheduler):
    """Leitner boxes: box k waits BOXES[k] * scale days; recalled moves up a box, forgotten back to box 0."""

    BOXES = (1, 2, 4, 8, 16, 32, 64)

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.box: dict[str, int] = {}
        self.family = "Leitner boxes"
        self.label = f"{self.family}, x{scale:g}"

    def answer(self, item: str, t: float, rating: Rating) -> float:
        box = (
            0
            if rating == Rating.AGAIN or item not in self.box
            else min(self.box[item] + 1, len(self.BOXES) - 1)
        )
        self.box[item] = box
        return math.floor(t) + max(1, round(self.BOXES[box] * self.scale))


class Fixed(Scheduler):
    """Every question every ``days`` days, whatever the answer."""

    def __init__(self, days: int) -> None:
        self.days = days
        self.family = "fixed intervals"
        self.label = f"{self.family}, {days} d"

    def answer(self, item: str, t: float, rating: Rating) -> float:
        return math.floor(t) + self.days


RETENTIONS = (0.70, 0.75, 0.80, 0.85, 0.875, 0.90, 0.925, 0.95)
FIT_RETENTIONS = (0.80, 0.85, 0.875, 0.90, 0.925, 0.95)


def schedulers() -> list[Callable[[], Scheduler]]:
    """Every scheduler but the personal parameters, as factories (each learner gets fresh ones)."""
    made: list[Callable[[], Scheduler]] = []
    for steps in (True, False):
        made += [lambda r=r, s=steps: Course(r, s) for r in RETENTIONS]
    for published in (True, False):
        made += [lambda m=m, p=published: Sm2(m, p) for m in (0.5, 0.75, 1.0, 1.5, 2.5)]
    made += [lambda s=s: Leitner(s) for s in (0.5, 1.0, 2.0, 3.0)]
    made += [lambda d=d: Fixed(d) for d in (3, 7, 14, 30, 60)]
    return made


DEFAULT_STEPS = Memory().learning_steps == FSRS_STEPS["learning_steps"]
DEFAULT_RETENTION = Memory().desired_retention
DEFAULT_LABEL = Course(DEFAULT_RETENTION, DEFAULT_STEPS).label


# -------------------------------------------------------------------------------------------------- learners
def _gauss(*key: object) -> float:
    digest = hashlib.sha256("|".join(map(str, (SEED, *key))).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).gauss(0, 1)


@dataclass
class Learner:
    """One simulated learner: when each lesson is studied, which days are skipped, the hour of each session,
    each question's strength, and the seed of every chance event."""

    index: int
    lessons: dict[int, list[str]] = field(default_factory=dict)  # day -> the questions studied that day
    hours: list[float] = field(default_factory=list)  # per day: the session's time of day (fraction of a day)
    skipped: set[int] = field(default_factory=set)
    strength: dict[str, float] = field(default_factory=dict)  # question -> z (higher: easier to remember)

    @classmethod
    def make(cls, index: int, questions: Sequence[tuple[str, str]]) -> Learner:
        rng = random.Random(f"{SEED}-learner-{index}")
        learner = cls(index)
        learner.hours = [(18 + max(-3.0, min(3.0, rng.gauss(0, 1)))) / 24 for _ in range(DAYS + 1)]
        learner.skipped = {day for day in range(1, DAYS + 1) if rng.random() < 0.1}
        ability = rng.gauss(0, 1)
        decks = sorted({deck for _, deck in questions})
        day = 0
        for deck in decks:
            while day in learner.skipped:
                day += 1
            learner.lessons[day] = [q for q, d in questions if d == deck]
            day += rng.randint(1, 4)
        for question, _ in questions:
            learner.strength[question] = (
                math.sqrt(ITEM_SHARE) * _gauss("item", question)
                + math.sqrt(LEARNER_SHARE) * ability
                + math.sqrt(PAIR_SHARE) * rng.gauss(0, 1)
            )
        return learner


@dataclass
class Outcome:
    label: str
    family: str
    retention: list[float]  # true mean recall over the questions studied, at each check day
    reviews: int
    same_day: int
    minutes: float
    fitted: tuple[int, tuple[float, ...]] | None = None  # the day of the fit and the parameters


def simulate(learner: Learner, model: ExponentialModel | ActrModel, scheduler: Scheduler) -> Outcome:
    """One learner's year under one scheduler: true retention at the check days, reviews and minutes."""
    rng = random.Random(f"{SEED}-{model.name}-{learner.index}")  # the same for every scheduler
    memory: dict[str, list[float]] = {}
    due: dict[str, float] = {}
    heap: list[tuple[float, str]] = []
    retention: list[float] = []
    reviews = same_day = 0
    seconds = 0.0

    def rate(p: float) -> Rating:
        if rng.random() >= p:
            return Rating.AGAIN
        felt = p + rng.gauss(0, RATING_NOISE)
        return Rating.HARD if felt < HARD_BELOW else Rating.EASY if felt > EASY_ABOVE else Rating.GOOD

    def schedule(item: str, when: float) -> None:
        due[item] = when
        heapq.heappush(heap, (when, item))

    for day in range(DAYS + 1):
        if day in CHECK_DAYS:
            retention.append(sum(model.recall(s, float(day)) for s in memory.values()) / len(memory))
        if scheduler.fits:
            scheduler.day_starts(day)
        if day in learner.skipped:
            continue
        t = day + learner.hours[day]
        for item in learner.lessons.get(day, ()):  # study the lesson, then answer its quiz
            memory[item] = model.start(learner.strength[item], t)
            rating = rate(model.recall(memory[item], t + 10 * MINUTE))
            t += SECONDS[rating] * SECOND
            schedule(item, scheduler.first(item, t, rating))
        while heap and t < day + 1 - WAIT:  # the session ends before midnight; what is left waits
            when, item = heap[0]
            if when > t:
                if when - t > WAIT or when >= day + 1:
                    break
                t = when
            heapq.heappop(heap)
            if due.get(item) != when:
                continue
            previous = memory[item][1] if model.name == "exponential" else memory[item][-2]
            recalled_p = model.recall(memory[item], t)
            rating = rate(recalled_p)
            model.expose(memory[item], t, rating != Rating.AGAIN)
            reviews += 1
            same_day += math.floor(previous) == math.floor(t)
            seconds += SECONDS[rating]
            t += SECONDS[rating] * SECOND
            schedule(item, scheduler.answer(item, t, rating))
    fitted = getattr(scheduler, "fitted", None)
    return Outcome(scheduler.label, scheduler.family, retention, reviews, same_day, seconds / 60, fitted)


def run_learner(task: tuple[str, int, bool]) -> list[Outcome]:
    """Every scheduler for one learner under one memory model (one worker task)."""
    model_name, index, fit = task
    if fit:
        import torch

        torch.set_num_threads(1)
    model = MODELS[model_name]()
    questions = [(item.id, item.deck) for item in bank_items()]
    learner = Learner.make(index, questions)
    outcomes = [simulate(learner, model, make()) for make in schedulers()]
    if fit:
        first = simulate(learner, model, Course(DEFAULT_RETENTION, DEFAULT_STEPS, fit=True))
        outcomes.append(first)
        for retention in FIT_RETENTIONS:
            if retention != DEFAULT_RETENTION:
                preset = Course(retention, DEFAULT_STEPS, preset=first.fitted)
                outcomes.append(
                    simulate(learner, model, preset) if first.fitted else replace(first, label=preset.label)
                )
    return outcomes


# ------------------------------------------------------------------------------------------------ the report
@dataclass
class Point:
    label: str
    family: str
    retention: float  # mean over learners and check days
    final: float  # at day 365
    reviews: float  # per learner
    same_day: float
    minutes: float
    fitted: int = 0  # learners whose parameters were fitted
    fit_day: float = 0.0  # the mean day of their fit


def summarize(outcomes: Sequence[Outcome]) -> list[Point]:
    by_label: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_label.setdefault(outcome.label, []).append(outcome)
    points = []
    for label, group in by_label.items():
        n = len(group)
        points.append(
            Point(
                label,
                group[0].family,
                sum(sum(o.retention) / len(o.retention) for o in group) / n,
                sum(o.retention[-1] for o in group) / n,
                sum(o.reviews for o in group) / n,
                sum(o.same_day for o in group) / n,
                sum(o.minutes for o in group) / n,
                sum(1 for o in group if o.fitted),
                sum(o.fitted[0] for o in group if o.fitted) / max(1, sum(1 for o in group if o.fitted)),
            )
        )
    return points


def reviews_at(points: Sequence[Point], retention: float) -> float | None:
    """A family's reviews at ``retention``, read off its curve (linear between its two nearest points);
    None outside the retention its points span."""
    curve = sorted((p.retention, p.reviews) for p in points)
    xs = [x for x, _ in curve]
    if not xs[0] <= retention <= xs[-1]:
        return None
    i = max(1, bisect.bisect_left(xs, retention))
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (retention - x0) / (x1 - x0)


def families(points: Sequence[Point]) -> dict[str, list[Point]]:
    grouped: dict[str, list[Point]] = {}
    for point in points:
        grouped.setdefault(point.family, []).append(point)
    return grouped


def matched(family: Sequence[Point], course: Sequence[Point]) -> tuple[float, float] | None:
    """The family's best showing against the course's curve: the smallest ratio of its reviews to the
    course's reviews at the same retention, over its points inside the course curve's range, and where."""
    ratios = [
        (p.reviews / needed, p.retention)
        for p in family
        if (needed := reviews_at(course, p.retention)) is not None
    ]
    return min(ratios) if ratios else None


def report(model: ExponentialModel | ActrModel, points: list[Point], learners: int) -> list[str]:
    lines = [
        f"== Memory model: {model.name} ({model.constants()})",
        f"   one exposure: recall {model.fit[0]:.3f} after 1 day, {model.fit[1]:.3f} after 7 days "
        f"(targets {RECALL_1D}, {RECALL_7D}); {learners} learners, 365 days",
        "",
        f"   {'scheduler':<44} {'retention':>9} {'day 365':>7} {'reviews':>8} {'same-day':>8} {'minutes':>7}",
    ]
    for p in points:
        fitted = ""
        if p.family == "course, personal parameters":
            fitted = f"  (fitted: {p.fitted}/{learners}, on day {p.fit_day:.0f} on average)"
        lines.append(
            f"   {p.label:<44} {p.retention:>9.3f} {p.final:>7.3f} {p.reviews:>8.0f} {p.same_day:>8.0f} "
            f"{p.minutes:>7.0f}{fitted}"
        )
    grouped = families(points)
    default = next(p for p in points if p.label == DEFAULT_LABEL)
    course = grouped[default.family]
    lines += [
        "",
        f"   Matched retention, against the course's default ({default.label}: retention "
        f"{default.retention:.3f}, {default.reviews:.0f} reviews).",
        "   'at default': the family's reviews at that retention, read off its curve; 'best': its point that",
        "   needs the fewest reviews relative to the course's curve at the same retention (below 1x: fewer).",
        f"     {'family':<34} {'at default':>16} {'best ratio':>11} {'at retention':>13}",
    ]
    for family, members in grouped.items():
        if family == default.family:
            continue
        needed = reviews_at(members, default.retention)
        at_default = "out of range" if needed is None else f"{needed:.0f} ({needed / default.reviews:.2f}x)"
        best = matched(members, course)
        ratio, where = ("-", "-") if best is None else (f"{best[0]:.2f}x", f"{best[1]:.3f}")
        lines.append(f"     {family:<34} {at_default:>16} {ratio:>11} {where:>13}")
    personal = grouped.get("course, personal parameters")
    if personal:
        best_baseline = min(
            (
                (found, family)
                for family, members in grouped.items()
                if not family.startswith("course")
                if (found := matched(members, personal)) is not None
            ),
            default=None,
        )
        if best_baseline is not None:
            (ratio_p, where_p), family = best_baseline
            lines.append(
                f"   Personal parameters against the best baseline: {family} needs {ratio_p:.2f}x the "
                f"reviews of the personal curve at retention {where_p:.3f}."
            )
    return lines


def figure(results: dict[str, list[Point]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6.2 * len(results), 4.8), sharey=True)
    styles = {
        "course, steps": ("tab:blue", "o"),
        "course, no steps": ("tab:cyan", "s"),
        "course, personal parameters": ("tab:purple", "*"),
        "SM-2 as published": ("tab:red", "^"),
        "SM-2 as commonly implemented": ("tab:orange", "v"),
        "Leitner boxes": ("tab:green", "D"),
        "fixed intervals": ("tab:gray", "x"),
    }
    for ax, (name, points) in zip(axes, results.items(), strict=True):
        for family, members in families(points).items():
            members = sorted(members, key=lambda p: p.reviews)
            colour, marker = styles[family]
            ax.plot(
                [p.reviews for p in members],
                [p.retention for p in members],
                marker=marker,
                color=colour,
                label=family,
            )
        default = next(p for p in points if p.label == DEFAULT_LABEL)
        ax.scatter(
            [default.reviews],
            [default.retention],
            s=220,
            facecolors="none",
            edgecolors="black",
            linewidths=1.5,
            zorder=5,
            label="the course's default",
        )
        ax.set_xlim(400, 3000)
        ax.set_ylim(0.78, 1.0)
        ax.set_title(f"Memory model: {name}")
        ax.set_xlabel("reviews per learner in a year (135 questions)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("true retention (mean recall, days 30-365)")
    fig.text(
        0.5,
        0.005,
        "Up and to the left is better. Fixed intervals of 3 and 7 days lie off to the right.",
        ha="center",
        fontsize=8,
    )
    axes[-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=32, help="learners per memory model (default 32)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--no-fit", action="store_true", help="skip the personal-parameters schedulers")
    parser.add_argument("--figure", type=Path, default=REPO / "docs" / "retention_sim.png")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tasks = [(name, index, not args.no_fit) for name in MODELS for index in range(args.learners)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(run_learner, tasks))
    results: dict[str, list[Point]] = {}
    for name in MODELS:
        mine = [
            o
            for (model_name, _, _), group in zip(tasks, outcomes, strict=True)
            if model_name == name
            for o in group
        ]
        results[name] = summarize(mine)
        print("\n".join(report(MODELS[name](), results[name], args.learners)), end="\n\n")
    figure(results, args.figure)
    print(f"figure: {args.figure.relative_to(REPO) if args.figure.is_relative_to(REPO) else args.figure}")
    print(
        f"# NBVAL-free timing: {time.perf_counter() - started:.0f} s with {args.jobs} worker(s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
