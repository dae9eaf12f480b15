"""Which desired retention should the course default to? The one that costs the least review time per
question remembered a year on, with FSRS itself as the model of memory, in the manner of the FSRS
optimizer's "compute minimum recommended retention" (CMRR).

Run it from the repository root: ``python benchmarks/optimal_retention.py`` (a minute or two, most of it
fitting). Everything is seeded: the same command prints the same numbers.

**Method.** FSRS-6's parameters are fitted (fsrs's optimizer, the course's ``optimize``) to the real log
``benchmarks/data/review_logs_josh.csv``; so are what answers cost and how they are rated: the chance of
each rating at a question's first answer, the chance of Hard, Good and Easy when recalled later, and the mean
time of each (first answers and later ones apart), as fsrs's own ``compute_optimal_retention`` takes them.
Then the learners of ``benchmarks/retention_sim.py`` (the same lesson days and skipped days) learn the
course's questions and, for a year, answer each on the day it is due (on the next day they study, when they
skip that one), scheduled by FSRS at each desired retention from 0.70 to 0.97 (the range a learner may
choose) without same-day steps, as the course schedules. Memory is FSRS's with the fitted parameters: an
answer is recalled with FSRS's retrievability at that moment, drawn from the same random numbers at every
retention. The cost is the time of every answer, first ones included; the knowledge is the sum of the
questions' retrievability at day 365. The retention that minimises cost per unit of knowledge is the
choice; the script also prints which retentions come within 2% of it, and the same under two other
assumptions (fsrs's default parameters; the course's answer times, 12 s recalled and 30 s forgotten), and
fsrs's own ``compute_optimal_retention`` (a coarser simulation: six retentions, recall at exactly the
desired retention) on the same log.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from fsrs import Card, Scheduler  # noqa: E402
from fsrs import Rating as FsrsRating  # noqa: E402
from prediction_bench import LOG, read_log  # noqa: E402
from retention_sim import SEED, Learner  # noqa: E402

from course.bank import load_bank  # noqa: E402
from scheduler import LogEntry, Memory, Rating, Review, fit_parameters  # noqa: E402

DAYS = 365
START = datetime(2026, 1, 5, 18, tzinfo=timezone.utc)  # day 0, at the hour of the learners' session
RETENTIONS = tuple(round(0.70 + 0.01 * k, 2) for k in range(28))
NEAR = 0.02  # retentions within 2% of the least cost per unit of knowledge are reported as near it
LEARNERS = 100


@dataclass(frozen=True)
class Costs:
    """How answers are rated and what they cost (seconds), as measured in a log."""

    first: dict[Rating, float]  # chance of each rating at a question's first answer
    first_seconds: dict[Rating, float]
    recalled: dict[Rating, float]  # chance of Hard, Good, Easy given recalled, at a later answer
    seconds: dict[Rating, float]  # mean time of a later answer, by rating


def measured_costs(log: Sequence[LogEntry]) -> Costs:
    """``Costs`` from ``log`` (answers without a duration are left out of the times)."""
    seen: set[str] = set()
    first: dict[Rating, list[int]] = {r: [] for r in Rating}
    later: dict[Rating, list[int]] = {r: [] for r in Rating}
    for entry in sorted(log, key=lambda e: e.reviewed_at):
        group = later if entry.item_id in seen else first
        seen.add(entry.item_id)
        group[Rating(entry.rating)].append(-1 if entry.duration_ms is None else entry.duration_ms)
    n_first = sum(len(v) for v in first.values())
    n_recalled = sum(len(later[r]) for r in Rating if r != Rating.AGAIN)

    def mean_seconds(times: list[int]) -> float:
        known = [t for t in times if t >= 0]
        return sum(known) / len(known) / 1000 if known else 0.0

    return Costs(
        {r: len(first[r]) / n_first for r in Rating},
        {r: mean_seconds(first[r]) for r in Rating},
        {r: len(later[r]) / n_recalled for r in Rating if r != Rating.AGAIN},
        {r: mean_seconds(later[r]) for r in Rating},
    )


def course_costs(measured: Costs) -> Costs:
    """``measured``, with the answer times ``benchmarks/retention_sim.py`` assumes: 12 s recalled (18 s
    Hard), 30 s forgotten (its explanation read)."""
    times = {Rating.AGAIN: 30.0, Rating.HARD: 18.0, Rating.GOOD: 12.0, Rating.EASY: 12.0}
    return Costs(measured.first, times, measured.recalled, times)


def _choose(chances: dict[Rating, float], u: float) -> Rating:
    total = 0.0
    for rating, chance in chances.items():
        total += chance
        if u < total:
            return rating
    return next(reversed(chances))


@dataclass(frozen=True)
class Year:
    reviews: float  # per learner, first answers not counted
    minutes: float  # per learner, first answers included
    knowledge: float  # per learner: the sum of retrievability at day 365

    @property
    def cost(self) -> float:
        """Seconds per unit of knowledge."""
        return self.minutes * 60 / self.knowledge


def simulate(
    parameters: Sequence[float], retention: float, costs: Costs, learners: Sequence[Learner]
) -> Year:
    """A year of ``learners`` scheduled at ``retention`` (see the module); per-learner means."""
    scheduler = Scheduler(parameters, retention, learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    reviews = 0
    seconds = knowledge = 0.0
    for learner in learners:
        for day, questions in learner.lessons.items():
            for question in questions:
                draws = random.Random(f"{SEED}-fsrs-{learner.index}-{question}")
                rating = _choose(costs.first, draws.random())
                seconds += costs.first_seconds[rating]
                card, _ = scheduler.review_card(Card(card_id=1), FsrsRating(rating), START + timedelta(day))
                while True:
                    due = (card.due - START).days
                    while due in learner.skipped:
                        due += 1
                    if due > DAYS:
                        break
                    at = START + timedelta(due)
                    recalled = draws.random() < scheduler.get_card_retrievability(card, at)
                    choice = draws.random()  # drawn whether recalled or not: the streams stay aligned
                    rating = _choose(costs.recalled, choice) if recalled else Rating.AGAIN
                    seconds += costs.seconds[rating]
                    reviews += 1
                    card, _ = scheduler.review_card(card, FsrsRating(rating), at)
                knowledge += scheduler.get_card_retrievability(card, START + timedelta(DAYS))
    n = len(learners)
    return Year(reviews / n, seconds / 60 / n, knowledge / n)


def sweep(parameters: Sequence[float], costs: Costs, learners: Sequence[Learner]) -> dict[float, Year]:
    return {r: simulate(parameters, r, costs, learners) for r in RETENTIONS}


def best(years: dict[float, Year]) -> tuple[float, list[float]]:
    """The retention of least cost per unit of knowledge, and those within ``NEAR`` of it."""
    least = min(years, key=lambda r: years[r].cost)
    return least, [r for r, y in years.items() if y.cost <= years[least].cost * (1 + NEAR)]


def _span(near: list[float]) -> str:
    return f"{min(near):.2f}-{max(near):.2f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=LEARNERS, help=f"default {LEARNERS}")
    parser.add_argument("--bank", help="a question bank folder (default: the course's own)")
    args = parser.parse_args(argv)
    log = read_log(LOG)
    fitted = fit_parameters(
        [Review(e.item_id, e.rating, e.reviewed_at, e.duration_ms, e.reviewed_at) for e in log]
    )
    measured = measured_costs(log)
    questions = [(item.id, item.deck) for item in load_bank(args.bank).items()]
    learners = [Learner.make(i, questions) for i in range(args.learners)]
    names = {r: r.name.title() for r in Rating}
    shown = LOG.relative_to(HERE.parent)
    print(f"== FSRS as the model of memory, parameters fitted to {shown} ({len(log)} answers)")
    print("   fitted parameters: " + ", ".join(f"{p:.4f}" for p in fitted))
    print(
        "   first answers: "
        + ", ".join(f"{names[r]} {measured.first[r]:.3f} ({measured.first_seconds[r]:.1f} s)" for r in Rating)
    )
    print(
        "   later answers: "
        + ", ".join(f"{names[r]} {measured.seconds[r]:.1f} s" for r in Rating)
        + "; when recalled: "
        + ", ".join(f"{names[r]} {p:.4f}" for r, p in measured.recalled.items())
    )
    print(f"   {args.learners} learners x {len(questions)} questions, {DAYS} days, no same-day steps")
    scenarios = {
        "fitted, log's costs": sweep(fitted, measured, learners),
        "fsrs defaults, log's costs": sweep(Memory().parameters, measured, learners),
        "fitted, course's costs": sweep(fitted, course_costs(measured), learners),
    }
    main_years = scenarios["fitted, log's costs"]
    print(f"\n   {'retention':>9} {'reviews':>8} {'minutes':>8} {'knowledge':>9} {'s/unit':>7}", end="")
    print("".join(f" {name:>27}" for name in list(scenarios)[1:]))
    for r in RETENTIONS:
        y = main_years[r]
        others = "".join(f" {scenarios[name][r].cost:>27.1f}" for name in list(scenarios)[1:])
        print(f"   {r:>9.2f} {y.reviews:>8.0f} {y.minutes:>8.1f} {y.knowledge:>9.1f} {y.cost:>7.1f}{others}")
    print()
    for name, years in scenarios.items():
        least, near = best(years)
        print(f"   {name:<28} least cost per unit of knowledge at {least:.2f}; within 2%: {_span(near)}")
    from fsrs import ReviewLog
    from fsrs.optimizer import Optimizer

    reviews = [
        ReviewLog(Memory.card_id(e.item_id), FsrsRating(e.rating), e.reviewed_at, e.duration_ms) for e in log
    ]
    theirs = Optimizer(reviews).compute_optimal_retention(fitted)
    print(f"   fsrs's compute_optimal_retention (fitted parameters, 0.70 to 0.95 by 0.05): {theirs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
