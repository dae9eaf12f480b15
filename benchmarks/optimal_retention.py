"""Which desired retention should the course default to? What each retention from 0.70 to 0.97 costs in review
time per question remembered a year on, lapses and relearning charged as Anki's "compute minimum recommended
retention" (CMRR) charges them, under three memories and three sets of answer times.

Run it from the repository root: ``python benchmarks/optimal_retention.py`` (two or three minutes on 2 cores,
one of them fitting FSRS; ``--learners`` for fewer). Everything is seeded: the same command prints the same
numbers. Its default run writes ``benchmarks/results/optimal_retention.json``, from which
``benchmarks/figures.py`` writes the README's table (``readme_block``).

**What CMRR charges** (fsrs-rs's ``simulate`` and ``SimulatorConfig::default()``, ``src/simulation.rs``;
Anki ran it with the config ``extract_simulator_config`` draws from the learner's own log, until Anki 25.07
dropped CMRR). Every answer costs the mean time of its state (learning, review, relearning) and rating. A
forgotten review costs its Again time *and* the relearning steps after it that day: their ratings drawn from
a chain of same-day ratings (from Again at a step, by default: Again 0.2157, Hard 0.0643, Good 0.6595, Easy
0.0604) until a step is passed (one relearning step; at most 5 answers), each at its relearning time and
each changing stability by FSRS's short-term formula. A new card's first answer and its two learning steps
are charged the same way. The default times (seconds; Again, Hard, Good, Easy): learning 19.58, 18.79, 13.78,
10.71; review 19.38, 17.59, 12.38, 8.94; relearning 16.44, 15.25, 12.32, 8.03. So a lapse costs 19.4 s and
18.8 s of relearning, 38.2 s, against 13.0 s for a recalled review (Hard 0.224, Good 0.631, Easy 0.145 of
them): 2.9 times. (Earlier fsrs-rs charged a lapse the review's Again time times a "loss aversion" of 2.5, "to
make the optimal retention higher than the minimal point", its author wrote: 23.0 x 2.5 = 57.5 s against
7.33 s for Good.) The cost is every answer's time, first answers included; the knowledge, the sum of the
cards' retrievability on the last day; CMRR searched 0.70 to 0.95 for the least cost per knowledge. It is a
*minimum*: Anki's manual advised against going below it, and warns that forgetting often is demotivating.

**Answer times, three sets.** *The log's*, with Anki's steps: ``extract_simulator_config``'s accounting of
``benchmarks/data/review_logs_josh.csv`` in its learner's days (UTC-7 from 04:00: that learner never answered
between 06:00 and 15:00 UTC): an answer on the card's first day is learning, the first of a later day review,
the later ones that day relearning after a forgotten review; mean times by state and rating (a rating the
log never shows in a state takes that state's Good time); rating chances and step chains counted and
smoothed towards fsrs-rs's defaults as it does. A lapse there costs 15.5 s and 17.0 s of relearning, 32.4 s,
against 12.1 s recalled. *fsrs-rs's defaults*, with Anki's steps (above). *The course's*: no same-day steps
(the course has none), 12 s recalled, 18 s Hard, 30 s forgotten, its explanation read: that is the course's
relearning, 2.5 times a recalled answer.

**Memories, three.** *FSRS-6 fitted to the log* (fsrs's optimizer, as the course's ``optimize``, in the
learner's days above): recall at a review drawn with FSRS's retrievability, first ratings and same-day step
ratings drawn from the set's chances, as fsrs-rs draws them. *The exponential and ACT-R models* of
``benchmarks/retention_sim.py`` (not FSRS: recall and every rating, same-day steps included, come from the
model), scheduled as the course schedules (``scheduler.Memory``: fsrs's default parameters, due from the
start of the learner's day), without its fuzz, with 1- and 10-minute learning steps and a 10-minute relearning
step where Anki's times are charged, none with the course's. The learners are that simulation's (lesson days,
skipped days, session hours), the same learners and random numbers at every retention; each learns the
course's questions and answers each when it is due, for a year.

**The measure.** For each memory and set of times, the seconds of every answer of the year per question
remembered at day 365 (the sum of recall then), at each desired retention from 0.70 to 0.97 by 0.01, relative
to the least; the least-cost retention; which retentions come within 2% and 3% of it.

**The default.** 0.85, unless a memory under the course's own times (no steps: how the course schedules) has
its least cost higher: then the highest of those. The least cost is a floor, where lowering the retention
stops paying; the default is above it so that fewer than one question in six is forgotten when it comes back.

fsrs 6.3.2's own ``Optimizer.compute_optimal_retention`` is printed too, on the same log and fitted
parameters. It simulates 1,000 cards for a year at six retentions, 0.70 to 0.95 by 0.05, with fsrs's default
same-day steps (1 and 10 minutes for a new card, 10 after a lapse), and charges every answer the log's mean
time for its rating (first answers apart), forgotten ones included. But it draws every recall, same-day steps
included, at exactly the desired retention, not at the card's retrievability: at 0.70 three steps in ten fail
and are repeated, each charged, which over-charges low retentions; and it counts the knowledge as the desired
retention times the cards.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from datetime import timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from _results import BANK, SCHEDULING_CODE, write_results  # noqa: E402
from prediction_bench import LOG, read_log  # noqa: E402
from retention_sim import FSRS_STEPS, MODELS, SEED, Learner, Scheduler, questions_of, simulate  # noqa: E402

from scheduler import LogEntry, Memory, Rating, Review, day_numbers, fit_parameters  # noqa: E402
from scheduler._memory import DEFAULT_PARAMETERS  # noqa: E402

DAYS = 365
RETENTIONS = tuple(round(0.70 + 0.01 * k, 2) for k in range(28))
NEAR = (0.02, 0.03)  # retentions within 2% and 3% of the least cost are reported
LEARNERS = 32
FLOOR = 0.85  # the default unless the course's own times find the least cost higher
SHOWN = (0.77, 0.85, 0.90)  # the retentions whose relative cost the README's table shows
LOG_DAY: tuple[tzinfo, int] = (
    timezone(timedelta(hours=-7)),
    4,
)  # the log's learner's days: UTC-7, from 04:00
LEARNING, REVIEW, RELEARNING = 0, 1, 2  # states, as fsrs-rs numbers them
MAX_STEPS = 5  # fsrs-rs: at most 5 same-day answers after a first answer or a lapse
LONGEST_MS = 1_200_000  # fsrs-rs: answers of 20 minutes or more are left out of the times
DEPENDS = (
    "benchmarks/optimal_retention.py",
    "benchmarks/retention_sim.py",
    "benchmarks/prediction_bench.py",
    "benchmarks/data/review_logs_josh.csv",
    BANK,
    *SCHEDULING_CODE,
)

Matrix = tuple[tuple[float, float, float, float], ...]
MEMORY = "FSRS fitted to the log"
SHORT = {MEMORY: "FSRS", "exponential model": "exp", "ACT-R model": "ACT-R", "the log's, Anki's steps": "log",
         "fsrs-rs's defaults, Anki's steps": "fsrs-rs", "the course's, no steps": "course"}  # fmt: skip


@dataclass(frozen=True)
class Costs:
    """What answers cost and how they are rated where the memory does not say: fsrs-rs's ``SimulatorConfig``
    (its fields ``state_rating_costs``, ``first_rating_prob``, ``review_rating_prob``,
    ``learning_step_count``, ``relearning_step_count`` and the two step transitions)."""

    label: str
    seconds: Matrix  # by state (LEARNING, REVIEW, RELEARNING), then rating (Again, Hard, Good, Easy)
    first: tuple[float, float, float, float]  # chance of each rating at a card's first answer
    recalled: tuple[float, float, float]  # chance of Hard, Good, Easy at a recalled review
    learning_steps: int
    relearning_steps: int
    learning_transitions: Matrix  # from Again, Hard, Good (rows) to each rating, at a learning step
    relearning_transitions: Matrix


FSRS_RS = Costs(
    "fsrs-rs's defaults, Anki's steps",
    ((19.58, 18.79, 13.78, 10.71), (19.38, 17.59, 12.38, 8.94), (16.44, 15.25, 12.32, 8.03)),
    (0.24, 0.094, 0.495, 0.171),
    (0.224, 0.631, 0.145),
    2,
    1,
    ((0.3686, 0.0628, 0.5108, 0.0577), (0.0442, 0.4553, 0.4457, 0.0549), (0.0519, 0.047, 0.8462, 0.055)),
    ((0.2157, 0.0643, 0.6595, 0.0604), (0.05, 0.4638, 0.4475, 0.0387), (0.1057, 0.1434, 0.7266, 0.0244)),
)
"""fsrs-rs's ``SimulatorConfig::default()`` (``src/simulation.rs``)."""
COURSE_SECONDS = (30.0, 18.0, 12.0, 12.0)  # the course's: Again (its explanation read), Hard, Good, Easy


def course_costs(base: Costs) -> Costs:
    """The course's times, 12 s recalled (18 s Hard) and 30 s forgotten in every state, and no same-day steps;
    the rating chances of ``base`` (for a memory that does not rate answers itself)."""
    return replace(base, label="the course's, no steps", seconds=(COURSE_SECONDS,) * 3, learning_steps=0,
                   relearning_steps=0)  # fmt: skip


def _lerp(measured: Sequence[float], default: Sequence[float], weight: float) -> tuple[float, ...]:
    return tuple(weight * m + (1 - weight) * d for m, d in zip(measured, default, strict=True))


def _transitions(sequences: Sequence[Sequence[int]], default: Matrix) -> Matrix:
    """fsrs-rs's ``calculate_transitions`` (Laplace smoothing 1) of the first three ratings' rows, smoothed
    towards ``default`` by their counts (weight n / (50 + n))."""
    counts = [[1.0] * 4 for _ in range(4)]
    for ratings in sequences:
        for a, b in itertools.pairwise(ratings):
            counts[a - 1][b - 1] += 1
    rows = []
    for row, fallback in zip(counts[:3], default, strict=True):
        n = sum(row)
        rows.append(_lerp([c / n for c in row], fallback, n / (50 + n)))
    return tuple(rows)  # type: ignore[arg-type]


def log_costs(log: Sequence[LogEntry], tz: tzinfo, rollover_hour: int) -> Costs:
    """fsrs-rs's ``extract_simulator_config(..., smooth=true)`` on ``log``, in the learner's days (``tz``,
    from ``rollover_hour``): an answer on the item's first day is learning, the first of a later day review,
    the later ones that day relearning after a forgotten review (review after a recalled one). A rating the
    log never shows in a state takes that state's Good time."""
    ordered = sorted(log, key=lambda e: e.reviewed_at)
    days = day_numbers([e.reviewed_at for e in ordered], tz, rollover_hour)
    first_day: dict[str, int] = {}
    groups: dict[tuple[str, int], list[LogEntry]] = {}
    for entry, day in zip(ordered, days, strict=True):
        first_day.setdefault(entry.item_id, day)
        groups.setdefault((entry.item_id, day), []).append(entry)
    times: list[list[list[int]]] = [[[] for _ in range(4)] for _ in range(3)]
    first, review = [0] * 4, [0] * 4
    learning_runs: list[list[int]] = []
    relearning_runs: list[list[int]] = []
    for (item, day), answers in groups.items():
        ratings = [int(a.rating) for a in answers]
        if day == first_day[item]:
            states = [LEARNING] * len(answers)
            first[ratings[0] - 1] += 1
            learning_runs.append(ratings)
        else:
            later = RELEARNING if ratings[0] == Rating.AGAIN else REVIEW
            states = [REVIEW] + [later] * (len(answers) - 1)
            review[ratings[0] - 1] += 1
            if ratings[0] == Rating.AGAIN:
                relearning_runs.append(ratings)
        for state, answer in zip(states, answers, strict=True):
            if answer.duration_ms is not None and 0 < answer.duration_ms < LONGEST_MS:
                times[state][int(answer.rating) - 1].append(answer.duration_ms)
    seconds = tuple(tuple(sum(t) / len(t) / 1000 if t else -1.0 for t in row) for row in times)
    seconds = tuple(tuple(s if s >= 0 else row[Rating.GOOD - 1] for s in row) for row in seconds)
    if not any(first):
        first = [1, 1, 1, 1]
    if not any(review[1:]):
        review = [review[0], 1, 1, 1]
    n_first, n_recalled = sum(first), sum(review[1:])
    return Costs(
        "the log's, Anki's steps",
        seconds,  # type: ignore[arg-type]
        _lerp([c / n_first for c in first], FSRS_RS.first, n_first / (50 + n_first)),  # type: ignore[arg-type]
        _lerp([c / n_recalled for c in review[1:]], FSRS_RS.recalled, n_recalled / (50 + n_recalled)),  # type: ignore[arg-type]
        FSRS_RS.learning_steps,
        FSRS_RS.relearning_steps,
        _transitions(learning_runs, FSRS_RS.learning_transitions),
        _transitions(relearning_runs, FSRS_RS.relearning_transitions),
    )


# ------------------------------------------------------------------------------------ what an answer costs
def _step_limit(costs: Costs, state: int, rating: int) -> int:
    """fsrs-rs: how many passed steps (Good or Easy) end the same-day run begun by ``rating``."""
    count = costs.learning_steps if state == LEARNING else costs.relearning_steps
    return max(count - 1, 0) if rating > Rating.HARD else count


def _next_passed(passed: int, rating: int) -> int:
    return passed + 1 if rating > Rating.HARD else 0 if rating == Rating.AGAIN else passed


def steps_cost(costs: Costs, state: int, rating: int = Rating.AGAIN) -> float:
    """The mean seconds of the same-day steps after an answer ``rating`` (the first answer, state LEARNING;
    a lapse, state RELEARNING), by fsrs-rs's chain: exact, not drawn."""
    transitions = costs.learning_transitions if state == LEARNING else costs.relearning_transitions
    limit = _step_limit(costs, state, rating)

    def after(rating: int, passed: int, done: int) -> float:
        if passed >= limit or rating == Rating.EASY or done >= MAX_STEPS:
            return 0.0
        return sum(
            p * (costs.seconds[state][k] + after(k + 1, _next_passed(passed, k + 1), done + 1))
            for k, p in enumerate(transitions[rating - 1])
        )

    return after(rating, 0, 0)


def lapse_cost(costs: Costs) -> float:
    """The mean seconds of a forgotten review: its Again time and the relearning steps after it."""
    return costs.seconds[REVIEW][0] + steps_cost(costs, RELEARNING)


def recall_cost(costs: Costs) -> float:
    """The mean seconds of a recalled review."""
    return sum(p * s for p, s in zip(costs.recalled, costs.seconds[REVIEW][1:], strict=True))


def _choose(chances: Sequence[float], u: float) -> int:
    """The index drawn by ``u`` in [0, 1) from ``chances`` (which need not sum to 1), cumulatively."""
    u *= sum(chances)
    total = 0.0
    for index, chance in enumerate(chances):
        total += chance
        if u < total:
            return index
    return len(chances) - 1


# ------------------------------------------------------------------------------------------- FSRS as memory
class Fsrs:
    """FSRS-6's formulas, as fsrs-rs's simulator and py-fsrs (``fsrs.Scheduler``) compute them, on days."""

    def __init__(self, parameters: Sequence[float]) -> None:
        self.w = tuple(float(p) for p in parameters)
        self.decay = -self.w[20]
        self.factor = math.pow(0.9, 1 / self.decay) - 1

    def init_s(self, rating: int) -> float:
        return max(self.w[rating - 1], 0.001)

    def _init_d(self, rating: int) -> float:
        return self.w[4] - math.exp(self.w[5] * (rating - 1)) + 1

    def init_d(self, rating: int) -> float:
        return min(max(self._init_d(rating), 1.0), 10.0)

    def next_d(self, d: float, rating: int) -> float:
        moved = d + (10.0 - d) * -(self.w[6] * (rating - 3)) / 9.0
        return min(max(self.w[7] * self._init_d(Rating.EASY) + (1 - self.w[7]) * moved, 1.0), 10.0)

    def recall(self, days: float, s: float) -> float:
        return math.pow(1 + self.factor * days / s, self.decay)

    def interval(self, s: float, retention: float) -> int:
        return min(max(round(s / self.factor * (math.pow(retention, 1 / self.decay) - 1)), 1), 36500)

    def recalled_s(self, s: float, r: float, d: float, rating: int) -> float:
        w = self.w
        bonus = w[15] if rating == Rating.HARD else w[16] if rating == Rating.EASY else 1.0
        return max(
            s
            * (1 + math.exp(w[8]) * (11 - d) * math.pow(s, -w[9]) * (math.exp((1 - r) * w[10]) - 1) * bonus),
            0.001,
        )

    def forgotten_s(self, s: float, r: float, d: float) -> float:
        w = self.w
        long_term = w[11] * math.pow(d, -w[12]) * (math.pow(s + 1, w[13]) - 1) * math.exp((1 - r) * w[14])
        return max(min(long_term, s / math.exp(w[17] * w[18])), 0.001)

    def same_day_s(self, s: float, rating: int) -> float:
        w = self.w
        grow = math.exp(w[17] * (rating - 3 + w[18])) * math.pow(s, -w[19])
        return max(s * (max(grow, 1.0) if rating > Rating.AGAIN else grow), 0.001)

    def steps(
        self, s: float, d: float, costs: Costs, state: int, rating: int, draws: random.Random
    ) -> tuple[float, float, float]:
        """fsrs-rs's ``memory_state_short_term``: the same-day steps after an answer ``rating`` (first
        answer: LEARNING; lapse: RELEARNING, ``rating`` Again), their ratings drawn from the set's chain;
        stability, difficulty and the steps' seconds after them."""
        transitions = costs.learning_transitions if state == LEARNING else costs.relearning_transitions
        limit = _step_limit(costs, state, rating)
        passed = done = 0
        seconds = 0.0
        while passed < limit and rating != Rating.EASY and done < MAX_STEPS:
            rating = _choose(transitions[rating - 1], draws.random()) + 1
            s, d = self.same_day_s(s, rating), self.next_d(d, rating)
            seconds += costs.seconds[state][rating - 1]
            passed, done = _next_passed(passed, rating), done + 1
        return s, d, seconds


@dataclass(frozen=True)
class Year:
    """One learner's year at one retention: seconds of every answer, reviews (first answers not counted),
    knowledge (the sum of recall at day 365)."""

    seconds: float
    reviews: int
    knowledge: float


def fsrs_year(fsrs: Fsrs, retention: float, costs: Costs, learner: Learner) -> Year:
    """A year of ``learner`` with FSRS as the memory, scheduled by FSRS at ``retention`` (on days, no fuzz):
    each question's first answer on its lesson's day, each review on the day it is due (the next day studied,
    when that one is skipped), up to day 364; lapses and steps charged as fsrs-rs does."""
    seconds = knowledge = 0.0
    reviews = 0
    for day, questions in learner.lessons.items():
        for question in questions:
            draws = random.Random(f"{SEED}-fsrs-{learner.index}-{question}")
            step_draws = random.Random(f"{SEED}-fsrs-steps-{learner.index}-{question}")
            rating = _choose(costs.first, draws.random()) + 1
            s, d, spent = fsrs.steps(
                fsrs.init_s(rating), fsrs.init_d(rating), costs, LEARNING, rating, step_draws
            )
            seconds += costs.seconds[LEARNING][rating - 1] + spent
            last = day
            while True:
                due = last + fsrs.interval(s, retention)
                while due in learner.skipped:
                    due += 1
                if due >= DAYS:
                    break
                r = fsrs.recall(due - last, s)
                recalled = draws.random() < r
                choice = draws.random()  # drawn whether recalled or not: the streams stay aligned
                if recalled:
                    rating = _choose(costs.recalled, choice) + 2
                    s, d = fsrs.recalled_s(s, r, d, rating), fsrs.next_d(d, rating)
                    seconds += costs.seconds[REVIEW][rating - 1]
                else:
                    s, d = fsrs.forgotten_s(s, r, d), fsrs.next_d(d, Rating.AGAIN)
                    s, d, spent = fsrs.steps(s, d, costs, RELEARNING, Rating.AGAIN, step_draws)
                    seconds += costs.seconds[REVIEW][0] + spent
                reviews += 1
                last = due
            knowledge += fsrs.recall(DAYS - last, s)
    return Year(seconds, reviews, knowledge)


# ------------------------------------------------------------------------- the simulation's memory models
ROLLOVER = 4 / 24  # the simulated learners' day starts at 04:00 UTC (``scheduler.Memory``'s default)
LEARNING_STEPS = tuple(step / timedelta(days=1) for step in FSRS_STEPS["learning_steps"])
RELEARNING_STEPS = tuple(step / timedelta(days=1) for step in FSRS_STEPS["relearning_steps"])


def _day(t: float) -> int:
    """The learner's day of a time ``t`` days after day 0's midnight (a time a microsecond before a day's
    rollover is in the day before: float sums of days land within 1e-9 of it)."""
    return math.floor(t - ROLLOVER + 1e-9)


def _step(steps: Sequence[float], step: int, rating: int) -> tuple[int, float | None]:
    """py-fsrs's same-day steps (``Scheduler.review_card``, learning and relearning alike): the next step and
    the wait until it (days), or a wait of None when the question graduates to intervals in days."""
    if not steps or (step >= len(steps) and rating != Rating.AGAIN) or rating == Rating.EASY:
        return 0, None
    if rating == Rating.AGAIN:
        return 0, steps[0]
    if rating == Rating.HARD:
        if step == 0:
            return 0, steps[0] * 1.5 if len(steps) == 1 else (steps[0] + steps[1]) / 2
        return step, steps[step]
    return (0, None) if step + 1 == len(steps) else (step + 1, steps[step + 1])


class Scheduled(Scheduler):
    """The course's schedule (``scheduler.Memory`` with fsrs's default parameters, a question due from the
    start of the learner's day its interval ends on: ``scheduler.due_from``), without its fuzz, computed on
    days with ``Fsrs`` (the same numbers, a sixth of the time); with ``steps``, fsrs's same-day steps (1 and
    10 minutes for a new question, 10 after a lapse). Each answer is counted by the state it was given in (a
    question's first answer and its learning steps: learning) and its rating. A ``retention_sim`` scheduler:
    its ``simulate`` runs the learners."""

    def __init__(
        self, retention: float, steps: bool, parameters: Sequence[float] = DEFAULT_PARAMETERS
    ) -> None:
        self.fsrs, self.retention = Fsrs(parameters), retention
        self.learning = LEARNING_STEPS if steps else ()
        self.relearning = RELEARNING_STEPS if steps else ()
        self.cards: dict[str, tuple[int, int, float, float, float]] = {}  # state, step, S, D, last answer
        self.counts = [[0] * 4 for _ in range(3)]
        self.family = f"course without fuzz, {'steps' if steps else 'no steps'}"
        self.label = f"{self.family}, r={retention:g}"

    def answer(self, item: str, t: float, rating: Rating) -> float:
        fsrs = self.fsrs
        card = self.cards.get(item)
        if card is None:
            state, step, s, d = LEARNING, 0, fsrs.init_s(rating), fsrs.init_d(rating)
        else:
            state, step, s, d, last = card
            days = _day(t) - _day(last)  # the learner's days between them
            if days < 1:
                s = fsrs.same_day_s(s, rating)
            else:
                r = fsrs.recall(days, s)
                s = fsrs.forgotten_s(s, r, d) if rating == Rating.AGAIN else fsrs.recalled_s(s, r, d, rating)
            d = fsrs.next_d(d, rating)
        self.counts[state][rating - 1] += 1
        wait: float | None
        if state == REVIEW:
            state, step, wait = (
                (RELEARNING, 0, self.relearning[0])
                if rating == Rating.AGAIN and self.relearning
                else (REVIEW, 0, None)
            )
        else:
            step, wait = _step(self.learning if state == LEARNING else self.relearning, step, rating)
            state = REVIEW if wait is None else state
        self.cards[item] = (state, step, s, d, t)
        if wait is not None:
            return t + wait
        return _day(t + fsrs.interval(s, self.retention)) + ROLLOVER


def charge(counts: Sequence[Sequence[int]], costs: Costs) -> float:
    """The seconds of answers counted by state and rating, at ``costs``'s times."""
    return sum(
        n * s
        for row, times in zip(counts, costs.seconds, strict=True)
        for n, s in zip(row, times, strict=True)
    )


def _model_task(task: tuple[str, int, bool, str | None]) -> list[tuple[list[list[int]], float, int]]:
    """One learner's year under one memory model at every retention: answers counted, knowledge, reviews."""
    name, index, steps, bank = task
    questions = questions_of(bank)
    model = MODELS[name]()
    learner = Learner.make(index, questions)
    found = []
    for retention in RETENTIONS:
        scheduler = Scheduled(retention, steps)
        outcome = simulate(learner, model, scheduler)
        found.append((scheduler.counts, outcome.retention[-1] * len(questions), outcome.reviews))
    return found


def _fsrs_task(task: tuple[tuple[float, ...], Costs, int, str | None]) -> list[Year]:
    parameters, costs, index, bank = task
    learner = Learner.make(index, questions_of(bank))
    fsrs = Fsrs(parameters)
    return [fsrs_year(fsrs, r, costs, learner) for r in RETENTIONS]


# ---------------------------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class Curve:
    """One memory under one set of times: per retention, the seconds per question remembered at day 365, and
    the reviews per learner."""

    memory: str
    costs: str
    cost: dict[float, float]
    reviews: dict[float, float]

    @property
    def least(self) -> float:
        return min(self.cost, key=lambda r: (self.cost[r], r))

    def relative(self, retention: float) -> float:
        return self.cost[retention] / self.cost[self.least]

    def within(self, share: float) -> list[float]:
        return [r for r in self.cost if self.cost[r] <= self.cost[self.least] * (1 + share)]


def spans(retentions: Sequence[float]) -> str:
    """``0.80-0.88``, ``0.70-0.72, 0.75``: runs of consecutive retentions (0.01 apart)."""
    runs: list[list[float]] = []
    for r in sorted(retentions):
        if runs and round(r - runs[-1][-1], 2) <= 0.01:
            runs[-1].append(r)
        else:
            runs.append([r])
    return ", ".join(f"{run[0]:.2f}" if len(run) == 1 else f"{run[0]:.2f}-{run[-1]:.2f}" for run in runs)


def chosen_default(curves: Sequence[Curve]) -> float:
    """``FLOOR``, or the highest least-cost retention under the course's own times where that is higher."""
    own = [c.least for c in curves if c.costs == course_costs(FSRS_RS).label]
    return max([FLOOR, *own])


def figures_of(curves: Sequence[Curve], theirs: float, default: float, costs: Sequence[Costs], learners: int,
               questions: int) -> dict[str, Any]:  # fmt: skip
    """The result file's figures: everything the README shows."""
    return {
        "learners": learners,
        "questions": questions,
        "default": default,
        "fsrs_compute_optimal_retention": theirs,
        "charges": [
            {"costs": c.label, "lapse": round(lapse_cost(c), 1), "recalled": round(recall_cost(c), 1)}
            for c in costs
        ],
        "scenarios": [
            {
                "memory": c.memory,
                "costs": c.costs,
                "least": c.least,
                "seconds": round(c.cost[c.least]),
                "within_2": spans(c.within(NEAR[0])),
                "within_3": spans(c.within(NEAR[1])),
                "curve": {f"{r:.2f}": round(c.relative(r), 4) for r in c.cost},
            }
            for c in curves
        ],
    }


def readme_block(figures: dict[str, Any]) -> str:
    """The README's Markdown for this benchmark: a table of each memory and set of times (indented two
    spaces: it sits in a list item)."""
    shown = "".join(f" {r:.2f} |" for r in SHOWN)
    lines = [
        f"| memory | answer times | least cost at | within 2% | within 3% |{shown}",
        "|---|---|---|---|---|" + "---|" * len(SHOWN),
    ]
    for s in figures["scenarios"]:
        at = "".join(f" {s['curve'][f'{r:.2f}']:.2f} |" for r in SHOWN)
        least = f"**{s['least']:.2f}** ({s['seconds']} s)"
        lines.append(f"| {s['memory']} | {s['costs']} | {least} | {s['within_2']} | {s['within_3']} |{at}")
    charges = "; ".join(
        f"{c['costs']}: {c['lapse']:.1f} s against {c['recalled']:.1f} s" for c in figures["charges"]
    )
    lines += [
        "",
        "Least cost: seconds of answers per question remembered at day 365 "
        f"({figures['learners']} learners x {figures['questions']} questions per memory); the last columns, "
        "the cost at that retention relative to the least. A lapse, relearning included, against a recalled "
        f"review: {charges}. fsrs's own `compute_optimal_retention`: "
        f"{figures['fsrs_compute_optimal_retention']:.2f}. The course's default: "
        f"**{figures['default']:.2f}**.",
    ]
    return "".join(f"  {line}\n" if line else "\n" for line in lines)


def _print_costs(costs: Costs) -> None:
    names = ("Again", "Hard", "Good", "Easy")
    print(f"   {costs.label}:")
    for state, label in ((LEARNING, "learning"), (REVIEW, "review"), (RELEARNING, "relearning")):
        print(
            f"     {label:<10} "
            + ", ".join(f"{n} {s:.2f} s" for n, s in zip(names, costs.seconds[state], strict=True))
        )
    print("     first answers: " + ", ".join(f"{n} {p:.3f}" for n, p in zip(names, costs.first, strict=True)))
    print(
        "     recalled: " + ", ".join(f"{n} {p:.3f}" for n, p in zip(names[1:], costs.recalled, strict=True))
    )
    if costs.relearning_steps:
        again = costs.relearning_transitions[0]
        print(
            f"     steps: {costs.learning_steps} learning, {costs.relearning_steps} relearning; from Again "
            "at a relearning step: " + ", ".join(f"{n} {p:.3f}" for n, p in zip(names, again, strict=True))
        )
    lapse, recalled = lapse_cost(costs), recall_cost(costs)
    print(
        f"     a lapse costs {lapse:.1f} s ({costs.seconds[REVIEW][0]:.1f} s and "
        f"{steps_cost(costs, RELEARNING):.1f} s of relearning), a recalled review {recalled:.1f} s: "
        f"{lapse / recalled:.1f} times"
    )


def curves_of(
    sets: Sequence[Costs],
    fsrs_runs: Sequence[Sequence[Year]],
    model_runs: Mapping[tuple[str, bool], Sequence[Sequence[tuple[list[list[int]], float, int]]]],
) -> list[Curve]:
    """Each memory's curve under each set of times, in the order of ``sets`` (FSRS first): ``fsrs_runs``, the
    learners' years under each set in turn; ``model_runs``, by model and whether with steps, each learner's
    answers counted, knowledge and reviews at each retention."""
    learners = len(fsrs_runs) // len(sets)
    curves = []
    for k, costs in enumerate(sets):
        years = fsrs_runs[k * learners : (k + 1) * learners]
        cost = {
            r: sum(y[j].seconds for y in years) / sum(y[j].knowledge for y in years)
            for j, r in enumerate(RETENTIONS)
        }
        count = {r: sum(y[j].reviews for y in years) / learners for j, r in enumerate(RETENTIONS)}
        curves.append(Curve(MEMORY, costs.label, cost, count))
        for name in MODELS:
            runs = model_runs[name, costs.relearning_steps > 0]  # Anki's steps with Anki's times
            cost = {
                r: sum(charge(run[j][0], costs) for run in runs) / sum(run[j][1] for run in runs)
                for j, r in enumerate(RETENTIONS)
            }
            count = {r: sum(run[j][2] for run in runs) / len(runs) for j, r in enumerate(RETENTIONS)}
            curves.append(Curve(f"{name} model", costs.label, cost, count))
    return curves


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=LEARNERS, help=f"per memory (default {LEARNERS})")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--bank", help="a question bank folder (default: the course's own)")
    args = parser.parse_args(argv)
    assert (FSRS_RS.learning_steps, FSRS_RS.relearning_steps) == (len(LEARNING_STEPS), len(RELEARNING_STEPS))
    log = read_log(LOG)
    measured = log_costs(log, *LOG_DAY)
    sets = [measured, FSRS_RS, course_costs(measured)]
    n_questions = len(questions_of(args.bank))
    keys = [(name, steps) for name in MODELS for steps in (True, False)]
    model_tasks = [(name, i, steps, args.bank) for name, steps in keys for i in range(args.learners)]
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        pending = pool.map(_model_task, model_tasks)  # while the main process fits
        reviews = [Review(e.item_id, e.rating, e.reviewed_at, e.duration_ms, e.reviewed_at) for e in log]
        fitted = fit_parameters(reviews, *LOG_DAY)
        fsrs_tasks = [(fitted, costs, i, args.bank) for costs in sets for i in range(args.learners)]
        fsrs_runs = list(pool.map(_fsrs_task, fsrs_tasks))
        found = list(pending)
    model_runs = {key: found[k * args.learners : (k + 1) * args.learners] for k, key in enumerate(keys)}
    curves = curves_of(sets, fsrs_runs, model_runs)
    shown = LOG.relative_to(HERE.parent)
    print(f"== Answer times and ratings (the log: {shown}, {len(log)} answers, days from 04:00 UTC-7)")
    for costs in sets:
        _print_costs(costs)
    print("   FSRS fitted to the log: " + ", ".join(f"{p:.4f}" for p in fitted))
    print(
        f"\n== Cost per question remembered at day 365, relative to each column's least ({args.learners} "
        f"learners x {n_questions} questions per memory; < the least)"
    )
    heads = [f"{SHORT[c.memory]}/{SHORT[c.costs]}" for c in curves]
    print("   " + f"{'retention':>9}" + "".join(f" {h:>13}" for h in heads))
    for r in RETENTIONS:
        cells = "".join(f" {c.relative(r):>12.3f}{'<' if r == c.least else ' '}" for c in curves)
        print(f"   {r:>9.2f}{cells}")
    print()
    for c in curves:
        print(
            f"   {c.memory:<22} {c.costs:<32} least at {c.least:.2f} ({round(c.cost[c.least])} s, "
            f"{c.reviews[c.least]:.0f} reviews); within 2%: {spans(c.within(NEAR[0]))}; within 3%: "
            f"{spans(c.within(NEAR[1]))}"
        )
    from fsrs import Rating as FsrsRating
    from fsrs import ReviewLog
    from fsrs.optimizer import Optimizer

    theirs: float = Optimizer(  # fsrs annotates a list, and returns one of its retentions
        [
            ReviewLog(Memory.card_id(e.item_id), FsrsRating(e.rating), e.reviewed_at, e.duration_ms)
            for e in log
        ]
    ).compute_optimal_retention(fitted)  # type: ignore[assignment]
    default, shipped = chosen_default(curves), Memory().desired_retention
    print(f"\n   fsrs's compute_optimal_retention (fitted parameters, 0.70 to 0.95 by 0.05): {theirs}")
    print(
        f"   the default: {default:.2f} ({FLOOR:.2f}, or the highest least cost under the course's times if "
        f"higher); scheduler.Memory's: {shipped:.2f}"
        + ("" if shipped == default else ": set DEFAULT_RETENTION to it")
    )
    if args.learners == LEARNERS and args.bank is None:
        figures = figures_of(curves, theirs, default, sets, args.learners, n_questions)
        path = write_results("optimal_retention", figures, DEPENDS)
        print(f"   written: {path.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
