"""Does the schedule work? Simulated learners study the course's real question bank for a year under two
memory models that are not FSRS, and every scheduler is measured by the true retention the models give.

Run it from the repository root: ``python benchmarks/retention_sim.py`` (a few minutes on 2 cores;
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

**Schedulers**, all on the same learners and the same random numbers (each question of each learner has its
own stream, so its k-th answer draws the same chance of recall and the same rating noise under every
scheduler): the course's own (`scheduler.Memory`, FSRS with fuzz, due on the learner's day as the course
serves it: ``scheduler.due_from``) at several desired retentions, with same-day steps (1 and 10 min for a new
question, 10 min after a lapse) and without; personal parameters (the course's optimizer run on day 60, and
every 30 days after while the log is below its threshold; a learner who never reaches it has no
personal-parameters point: their year is the default's); SM-2 as published (answers below Good repeated the
same day until Good) and as commonly implemented (no same-day repetition), each with interval modifiers
from 0.5 to 25; Leitner boxes (1, 2, 4, ..., 64 days, scaled by 0.5 to 25); fixed intervals. The baselines
reach down to a true retention of 0.90 or below.

**Comparison.** Each family is a curve of (retention, reviews) points, means over the learners (± 95%
confidence intervals over them). Each family is read at the default's own retention, linearly between its
two points around it and never outside them ("out of range"), for its reviews, minutes and knowledge at
day 365 (mean recall then); the ratios' 95% confidence intervals come from resampling the learners (the
same resampled learners for the default and the family). Personal parameters are compared with the default
on the learners who were fitted only.
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
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from _results import BANK, SCHEDULING_CODE, write_results  # noqa: E402

from course.bank import load_bank  # noqa: E402
from scheduler import Memory, Rating, Review, due_from  # noqa: E402

DEPENDS = ("benchmarks/retention_sim.py", BANK, *SCHEDULING_CODE)
"""What the figures are made from: a change to any of these makes the README's table stale."""

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
        return (due_from(state.due, state.last_review, timezone.utc) - START) / timedelta(days=1)

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


DEFAULT_RETENTION = Memory().desired_retention
RETENTIONS = tuple(sorted({0.70, 0.75, 0.80, 0.85, 0.875, 0.90, 0.925, 0.95, DEFAULT_RETENTION}))
FIT_RETENTIONS = tuple(sorted({0.75, 0.80, 0.85, 0.90, 0.95, DEFAULT_RETENTION}))
SM2_MODIFIERS = (0.5, 1.0, 2.5, 4.0, 6.0, 9.0, 15.0, 25.0)  # down to a true retention of 0.90 and below
LEITNER_SCALES = (0.5, 1.0, 2.0, 4.0, 6.0, 9.0, 15.0, 25.0)


def schedulers() -> list[Callable[[], Scheduler]]:
    """Every scheduler but the personal parameters, as factories (each learner gets fresh ones)."""
    made: list[Callable[[], Scheduler]] = []
    for steps in (True, False):
        made += [lambda r=r, s=steps: Course(r, s) for r in RETENTIONS]
    for published in (True, False):
        made += [lambda m=m, p=published: Sm2(m, p) for m in SM2_MODIFIERS]
    made += [lambda s=s: Leitner(s) for s in LEITNER_SCALES]
    made += [lambda d=d: Fixed(d) for d in (3, 7, 14, 30, 60)]
    return made


DEFAULT_STEPS = Memory().learning_steps == FSRS_STEPS["learning_steps"]
DEFAULT_LABEL = Course(DEFAULT_RETENTION, DEFAULT_STEPS).label
PERSONAL_LABEL = Course(DEFAULT_RETENTION, DEFAULT_STEPS, fit=True).label
PERSONAL = "course, personal parameters"


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
    learner: int
    retention: list[float]  # true mean recall over the questions studied, at each check day
    reviews: int
    same_day: int
    late: int  # reviews answered on a later day than the one they came due on
    minutes: float
    fitted: tuple[int, tuple[float, ...]] | None = None  # the day of the fit and the parameters


def simulate(learner: Learner, model: ExponentialModel | ActrModel, scheduler: Scheduler) -> Outcome:
    """One learner's year under one scheduler: true retention at the check days, reviews and minutes."""
    streams: dict[str, random.Random] = {}  # per question: its k-th answer draws the same in every scheduler
    memory: dict[str, list[float]] = {}
    due: dict[str, float] = {}
    heap: list[tuple[float, str]] = []
    retention: list[float] = []
    reviews = same_day = late = 0
    seconds = 0.0

    def rate(item: str, p: float) -> Rating:
        if item not in streams:
            streams[item] = random.Random(f"{SEED}-{model.name}-{learner.index}-{item}")
        chance, noise = streams[item].random(), streams[item].gauss(0, RATING_NOISE)  # both, always
        if chance >= p:
            return Rating.AGAIN
        felt = p + noise
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
            rating = rate(item, model.recall(memory[item], t + 10 * MINUTE))
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
            rating = rate(item, recalled_p)
            model.expose(memory[item], t, rating != Rating.AGAIN)
            reviews += 1
            same_day += math.floor(previous) == math.floor(t)
            late += day > math.floor(when)
            seconds += SECONDS[rating]
            t += SECONDS[rating] * SECOND
            schedule(item, scheduler.answer(item, t, rating))
    fitted = getattr(scheduler, "fitted", None)
    return Outcome(
        scheduler.label,
        scheduler.family,
        learner.index,
        retention,
        reviews,
        same_day,
        late,
        seconds / 60,
        fitted,
    )


def personal_outcomes(first: Outcome, rerun: Callable[[float], Outcome]) -> list[Outcome]:
    """One learner's personal-parameters points: ``first`` (fitting at the default retention) and ``rerun``
    of each other retention of FIT_RETENTIONS with its fit; none for a learner never fitted, whose year is
    the default's and is counted there only."""
    if first.fitted is None:
        return []
    return [first] + [rerun(r) for r in FIT_RETENTIONS if r != DEFAULT_RETENTION]


def questions_of(bank: str | None) -> list[tuple[str, str]]:
    """(id, lesson) of each question of the bank in ``bank`` (a folder; None: the course's own)."""
    return [(item.id, item.deck) for item in load_bank(bank).items()]


def run_learner(task: tuple[str, int, bool, str | None]) -> list[Outcome]:
    """Every scheduler for one learner under one memory model (one worker task)."""
    model_name, index, fit, bank = task
    if fit:
        import torch

        torch.set_num_threads(1)
    model = MODELS[model_name]()
    learner = Learner.make(index, questions_of(bank))
    outcomes = [simulate(learner, model, make()) for make in schedulers()]
    if fit:
        first = simulate(learner, model, Course(DEFAULT_RETENTION, DEFAULT_STEPS, fit=True))
        outcomes += personal_outcomes(
            first, lambda r: simulate(learner, model, Course(r, DEFAULT_STEPS, preset=first.fitted))
        )
    return outcomes


# ------------------------------------------------------------------------------------------------ the report
MEASURES = ("retention", "final", "reviews", "minutes")  # per learner: mean over check days, day 365, counts
QUESTIONS = [0]  # how many questions the bank has (set by main)
RESAMPLES = 2000  # bootstrap resamples of the learners, for the confidence intervals of matched ratios


def _measures(o: Outcome) -> list[float]:
    return [sum(o.retention) / len(o.retention), o.retention[-1], float(o.reviews), o.minutes]


@dataclass
class Point:
    label: str
    family: str
    learners: int
    retention: float  # mean over learners and check days
    final: float  # knowledge at day 365: mean recall over the questions
    reviews: float  # per learner
    minutes: float
    same_day: float = 0.0
    late: float = 0.0  # the share of spaced reviews (not same-day) a day or more late
    half: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)  # 95% CI half-widths of retention, final, reviews, minutes
    fit_day: float = 0.0  # the mean day of the fit (personal parameters)


def summarize(outcomes: Sequence[Outcome]) -> list[Point]:
    """One point per label, in the order first seen: means over its learners with 95% CIs (normal)."""
    by_label: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_label.setdefault(outcome.label, []).append(outcome)
    points = []
    for label, group in by_label.items():
        values = np.array([_measures(o) for o in group])
        n = len(group)
        half = 1.96 * values.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.zeros(len(MEASURES))
        spaced = sum(o.reviews - o.same_day for o in group)
        fits = [o.fitted[0] for o in group if o.fitted]
        points.append(
            Point(
                label,
                group[0].family,
                n,
                *(float(v) for v in values.mean(axis=0)),
                same_day=sum(o.same_day for o in group) / n,
                late=sum(o.late for o in group) / spaced if spaced else 0.0,
                half=tuple(float(h) for h in half),
                fit_day=sum(fits) / len(fits) if fits else 0.0,
            )
        )
    return points


def read_at(curve: Sequence[tuple[float, float]], x: float) -> float | None:
    """The curve's value at retention ``x``, linear between the two points around it; None outside the
    retentions its points span: never extrapolated."""
    ordered = sorted(curve)
    xs = [a for a, _ in ordered]
    if not ordered or not xs[0] <= x <= xs[-1]:
        return None
    i = max(1, bisect.bisect_left(xs, x))
    if len(ordered) == 1:
        return ordered[0][1]
    (x0, y0), (x1, y1) = ordered[i - 1], ordered[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


@dataclass
class Matched:
    """A family read at the reference's own retention: its reviews and minutes as ratios of the
    reference's, and its knowledge at day 365, each with a bootstrap 95% CI over the learners."""

    retention: float  # the reference's
    reviews: float
    minutes: float
    final: float
    reviews_ci: tuple[float, float]
    minutes_ci: tuple[float, float]
    final_ci: tuple[float, float]
    outside: int  # resamples in which the reference's retention fell outside the family's curve


def _matched_once(family: np.ndarray, reference: np.ndarray) -> tuple[float, float, float] | None:
    """(reviews ratio, minutes ratio, knowledge) from mean measures: ``family`` (points x MEASURES) and
    ``reference`` (MEASURES)."""
    r0 = float(reference[0])
    found = [read_at([(float(p[0]), float(p[k])) for p in family], r0) for k in (2, 3, 1)]
    if found[0] is None or found[1] is None or found[2] is None:
        return None
    return found[0] / float(reference[2]), found[1] / float(reference[3]), found[2]


def matched(family: Sequence[Sequence[Outcome]], reference: Sequence[Outcome]) -> Matched | None:
    """``family`` (its points, each the outcomes of the same learners as ``reference``, in the same order)
    read at the reference's retention; None when that retention is outside the family's curve."""
    values = np.array([[_measures(o) for o in point] for point in family])  # points x learners x MEASURES
    base = np.array([_measures(o) for o in reference])
    estimate = _matched_once(values.mean(axis=1), base.mean(axis=0))
    if estimate is None:
        return None
    rng = np.random.default_rng(SEED)
    draws = rng.integers(0, len(reference), size=(RESAMPLES, len(reference)))
    found = [_matched_once(values[:, d].mean(axis=1), base[d].mean(axis=0)) for d in draws]
    kept = np.array([f for f in found if f is not None])
    low, high = np.percentile(kept, [2.5, 97.5], axis=0)
    return Matched(
        float(base[:, 0].mean()),
        *estimate,
        (float(low[0]), float(high[0])),
        (float(low[1]), float(high[1])),
        (float(low[2]), float(high[2])),
        RESAMPLES - len(kept),
    )


def families(points: Sequence[Point]) -> dict[str, list[Point]]:
    grouped: dict[str, list[Point]] = {}
    for point in points:
        grouped.setdefault(point.family, []).append(point)
    return grouped


def _by_family(outcomes: Sequence[Outcome], learners: Sequence[int]) -> dict[str, list[list[Outcome]]]:
    """Each family's points, each the outcomes of ``learners`` in that order (a point that lacks one of
    them is left out)."""
    by_label: dict[str, dict[int, Outcome]] = {}
    for o in outcomes:
        by_label.setdefault(o.label, {})[o.learner] = o
    grouped: dict[str, list[list[Outcome]]] = {}
    for found in by_label.values():
        if all(i in found for i in learners):
            first = next(iter(found.values()))
            grouped.setdefault(first.family, []).append([found[i] for i in learners])
    return grouped


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _matched_line(family: str, found: Matched | None) -> str:
    if found is None:
        return f"     {family:<34} out of range: its curve does not reach the default's retention"
    outside = f"  ({found.outside} resamples out of range)" if found.outside else ""
    return (
        f"     {family:<34} {found.reviews:>5.2f} {_ci(found.reviews_ci):>13} {found.minutes:>6.2f} "
        f"{_ci(found.minutes_ci):>13} {found.final:>6.3f} {_ci(found.final_ci):>15}{outside}"
    )


def _matched_figures(found: Matched | None) -> dict[str, object] | None:
    if found is None:
        return None
    return {
        "reviews": found.reviews,
        "reviews_ci": list(found.reviews_ci),
        "minutes": found.minutes,
        "minutes_ci": list(found.minutes_ci),
        "final": found.final,
    }


def report(
    model: ExponentialModel | ActrModel, outcomes: Sequence[Outcome], learners: int
) -> tuple[list[str], dict[str, object]]:
    """The printed report of one memory model, and its figures for the README (``readme_block``)."""
    points = summarize(outcomes)
    lines = [
        f"== Memory model: {model.name} ({model.constants()})",
        f"   one exposure: recall {model.fit[0]:.3f} after 1 day, {model.fit[1]:.3f} after 7 days "
        f"(targets {RECALL_1D}, {RECALL_7D}); {learners} learners, {QUESTIONS[0]} questions, 365 days; "
        "± 95% CI over learners",
        "",
        f"   {'scheduler':<40} {'n':>2} {'retention':>13} {'day 365':>13} {'reviews':>10} {'minutes':>8} "
        f"{'same-day':>8} {'late':>5}",
    ]
    for p in points:
        fit = f"  (fit on day {p.fit_day:.0f} on average)" if p.family == PERSONAL else ""
        lines.append(
            f"   {p.label:<40} {p.learners:>2} {p.retention:>6.3f} ±{p.half[0]:.3f} {p.final:>6.3f} "
            f"±{p.half[1]:.3f} {p.reviews:>5.0f} ±{p.half[2]:>3.0f} {p.minutes:>4.0f} ±{p.half[3]:>2.0f} "
            f"{p.same_day:>8.0f} {p.late:>5.0%}{fit}"
        )
    everyone = sorted({o.learner for o in outcomes})
    grouped = _by_family(outcomes, everyone)
    default = next(p for p in points if p.label == DEFAULT_LABEL)
    reference = next(point for point in grouped[default.family] if point[0].label == DEFAULT_LABEL)
    figures: dict[str, object] = {
        "learners": learners,
        "questions": QUESTIONS[0],
        "default": {
            "retention_setting": DEFAULT_RETENTION,
            "reviews": default.reviews,
            "minutes": default.minutes,
            "retention": default.retention,
            "final": default.final,
            "late": default.late,
        },
        "families": {},
    }
    lines += [
        "",
        f"   Matched retention: each family read at the default's own retention ({default.label}: "
        f"{default.retention:.3f}), interpolated",
        "   between its two nearest points, never extrapolated; reviews and minutes as ratios of the "
        "default's, knowledge at day 365.",
        f"     {'family':<34} {'reviews':>5} {'95% CI':>13} {'minutes':>6} {'95% CI':>13} {'day 365':>6} "
        f"{'95% CI':>15}",
        f"     {'(the default)':<34} {1:>5.2f} {'':>13} {1:>6.2f} {'':>13} {default.final:>6.3f}",
    ]
    for family, members in grouped.items():
        if family not in (default.family, PERSONAL):
            found = matched(members, reference)
            lines.append(_matched_line(family, found))
            figures["families"][family] = _matched_figures(found)  # type: ignore[index]
    fitted = sorted(o.learner for o in outcomes if o.family == PERSONAL and o.label == PERSONAL_LABEL)
    if fitted:
        same = _by_family(outcomes, fitted)
        base = next(point for point in same[default.family] if point[0].label == DEFAULT_LABEL)
        lines.append(
            f"   Personal parameters, against the default on the same {len(fitted)} learners (those fitted; "
            f"their default retention {sum(_measures(o)[0] for o in base) / len(base):.3f}):"
        )
        found = matched(same[PERSONAL], base)
        lines.append(_matched_line(PERSONAL, found))
        figures["personal"] = {"fitted": len(fitted), "matched": _matched_figures(found)}
    cost_lines, costs = knowledge_cost(grouped[default.family], model.name)
    figures["cost_per_question"] = costs
    lines += ["", *cost_lines]
    return lines, figures


def knowledge_cost(
    family: Sequence[Sequence[Outcome]], name: str
) -> tuple[list[str], dict[str, list[float]]]:
    """The default family's cost per unit of knowledge at day 365, by desired retention (the check of the
    default retention's choice, ``benchmarks/optimal_retention.py``): printed lines, and by label the
    reviews and minutes per question remembered."""
    questions = QUESTIONS[0]
    rows = []
    for point in family:
        values = np.array([_measures(o) for o in point]).mean(axis=0)
        remembered = values[1] * questions
        rows.append((point[0].label, float(values[2] / remembered), float(values[3] / remembered)))
    best = min(rows, key=lambda row: row[2])
    lines = [f"   Cost per question remembered at day 365 ({name}), by desired retention:"]
    lines += [
        f"     {label:<40} {reviews:>6.2f} reviews {minutes:>6.3f} min{'  <- least' if row is best else ''}"
        for row in rows
        for label, reviews, minutes in [row]
    ]
    return lines, {label: [reviews, minutes] for label, reviews, minutes in rows}


# The README's names of the families, in its order.
README_ROWS = {
    "course, steps": "FSRS with same-day steps (1 and 10 min; 10 min after a lapse)",
    "SM-2 as published": "SM-2 as published (below Good repeated the same day)",
    "SM-2 as commonly implemented": "SM-2 as commonly implemented",
    "Leitner boxes": "Leitner boxes (1, 2, 4, ... 64 days, scaled)",
    "fixed intervals": "fixed intervals",
}


def _cell(found: dict[str, object] | None, final: bool = True) -> str:
    if found is None:
        return "out of range"
    ci = lambda pair: f"[{pair[0]:.2f}, {pair[1]:.2f}]"  # noqa: E731
    cell = (
        f"{found['reviews']:.2f} {ci(found['reviews_ci'])}, {found['minutes']:.2f} {ci(found['minutes_ci'])}"
    )
    return cell + (f", {found['final']:.3f}" if final else "")


def readme_block(figures: dict[str, dict[str, object]]) -> str:
    """The README's table of this benchmark, from the figures its default run saved (by memory model)."""
    models = [name for name in MODELS if name in figures]  # the file's keys are sorted: MODELS' order
    heads = " | ".join(f"{name} model: reviews, minutes, day 365" for name in models)
    first = figures[models[0]]["default"]
    rows = [f"  | scheduler | {heads} |", "  |---|---|---|"]
    cells = []
    for name in models:
        d = figures[name]["default"]
        cells.append(
            f"1.00 ({d['reviews']:,.0f} reviews, {d['minutes']:,.0f} min; retention {d['retention']:.3f}), "
            f"{d['final']:.3f}"
        )
    rows.append(
        f"  | **the course's default**: FSRS, desired retention {first['retention_setting']:.2f}, "
        f"no same-day steps | {' | '.join(cells)} |"
    )
    for family, shown in README_ROWS.items():
        found = [figures[name]["families"].get(family) for name in models]  # type: ignore[union-attr]
        rows.append(f"  | {shown} | {' | '.join(_cell(f) for f in found)} |")
    personal = [figures[name].get("personal") for name in models]
    if all(personal):
        counts = " and ".join(str(p["fitted"]) for p in personal)  # type: ignore[index]
        learners = figures[models[0]]["learners"]
        cells = [_cell(p["matched"], final=False) for p in personal]  # type: ignore[index]
        rows.append(
            f"  | FSRS with personal parameters (`optimize`), against the default on the learners fitted "
            f"({counts} of {learners}) | {' | '.join(cells)} |"
        )
    return "\n".join(rows) + "\n"


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
        ax.set_xlim(300, 3000)
        ax.set_ylim(0.70, 1.0)
        ax.set_title(f"Memory model: {name}")
        ax.set_xlabel(f"reviews per learner in a year ({QUESTIONS[0]} questions)")
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
    parser.add_argument("--bank", help="a question bank folder (default: the course's own)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    QUESTIONS[0] = len(questions_of(args.bank))
    tasks = [(name, index, not args.no_fit, args.bank) for name in MODELS for index in range(args.learners)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(run_learner, tasks))
    results: dict[str, list[Point]] = {}
    figures: dict[str, dict[str, object]] = {}
    for name in MODELS:
        mine = [
            o
            for (model_name, *_), group in zip(tasks, outcomes, strict=True)
            if model_name == name
            for o in group
        ]
        results[name] = summarize(mine)
        lines, figures[name] = report(MODELS[name](), mine, args.learners)
        print("\n".join(lines), end="\n\n")
    figure(results, args.figure)
    if (args.learners, args.no_fit, args.bank) == (32, False, None):  # the default run: the README's
        write_results("retention_sim", figures, DEPENDS)
        print(
            "results: benchmarks/results/retention_sim.json "
            "(python benchmarks/figures.py puts them in the README)"
        )
    print(f"figure: {args.figure.relative_to(REPO) if args.figure.is_relative_to(REPO) else args.figure}")
    print(
        f"# NBVAL-free timing: {time.perf_counter() - started:.0f} s with {args.jobs} worker(s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
