"""How well does each scheduler's model predict recall on a real review log? An evaluation in the manner of
the open-spaced-repetition srs-benchmark, with the scoring of ``scheduler.score``.

Run it from the repository root: ``python benchmarks/prediction_bench.py`` (the shipped log,
``benchmarks/data/review_logs_josh.csv``: 12,580 reviews by one learner; a few minutes, most of them fitting),
or ``python benchmarks/prediction_bench.py FILE`` for another log: a CSV in py-fsrs's format
(``card_id,review_rating,review_time,review_duration``) or a progress file written by
``python -m course export-progress``. Everything is deterministic: two runs print the same numbers.

**Splits.** The scored answers (each answer a whole day or more after its item's previous one) are cut in
time order into ``--parts`` equal parts (4 by default); each part after the first is predicted by models
trained on everything before it (an expanding window, as srs-benchmark's time-series split), and the scores
are over all the predicted parts together. Every answer, before or inside the part, feeds each item's history.

**Models.** FSRS-6 with fsrs's default parameters; FSRS-6 with parameters fitted by fsrs's optimizer (the
course's ``optimize``) to the answers before the part; SM-2 (intervals 1, 6, then times the E-factor; Again
restarts them) and Leitner boxes (1, 2, 4, ... 64 days; recalled up a box, Again back to the first), each read
as recall ``0.9 ** (t / I)`` after t days of an interval I (the recall such a schedule aims at when an item
comes due), their cards moved only by each day's first answer; a constant, the share recalled before the part.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scheduler import (  # noqa: E402
    FsrsPredictor,
    LogEntry,
    Memory,
    NotEnoughReviews,
    Prediction,
    Predictor,
    Rating,
    Review,
    Scores,
    fit_parameters,
    predictions,
    score,
    split_times,
)

LOG = REPO / "benchmarks" / "data" / "review_logs_josh.csv"
DAY = 86400.0
SM2_QUALITY = {Rating.AGAIN: 1, Rating.HARD: 3, Rating.GOOD: 4, Rating.EASY: 5}


def read_log(path: Path) -> list[LogEntry]:
    """The scheduled answers of a py-fsrs CSV log or of a progress file (``export-progress``)."""
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as file:
            return [
                LogEntry(
                    row["card_id"],
                    Rating(int(row["review_rating"])),
                    datetime.fromisoformat(row["review_time"]).astimezone(timezone.utc),
                    int(row["review_duration"]) if row["review_duration"] else None,
                )
                for row in csv.DictReader(file)
            ]
    from course.progress import read_progress

    return read_progress(path, datetime.now(timezone.utc)).reviews


class _DayBased:
    """A day-based schedule read as a recall model: ``0.9 ** (t / I)``, moved by each day's first answer."""

    def first(self) -> list[float]:
        raise NotImplementedError

    def next(self, card: list[float], rating: Rating) -> float:
        """Update ``card`` for an answer; the interval (days) it sets."""
        raise NotImplementedError

    def item(self, item_id: str, history: Sequence[tuple[datetime, Rating]]) -> list[float]:
        found: list[float] = []
        card = self.first()
        moved, interval = history[0][0], self.next(card, history[0][1])
        for at, rating in history[1:]:
            found.append(0.9 ** ((at - moved).total_seconds() / DAY / interval))
            if (at - moved).days > 0:
                moved, interval = at, self.next(card, rating)
        return found


class Sm2(_DayBased):
    """SM-2 (Wozniak 1990), as ``benchmarks/retention_sim.py`` has it: card = repetitions, E-factor,
    interval."""

    def first(self) -> list[float]:
        return [0, 2.5, 0]

    def next(self, card: list[float], rating: Rating) -> float:
        q = SM2_QUALITY[rating]
        n, ef, interval = card
        if q < 3:
            n, interval = 0, 1.0
        else:
            n += 1
            interval = 1.0 if n == 1 else 6.0 if n == 2 else interval * ef
            ef = max(1.3, ef + 0.1 - (5 - q) * (0.08 + (5 - q) * 0.02))
        card[:] = [n, ef, interval]
        return interval


class Leitner(_DayBased):
    """Leitner boxes of 1, 2, 4, ... 64 days: card = [box]; the first answer puts the item in box 0."""

    BOXES = (1, 2, 4, 8, 16, 32, 64)

    def first(self) -> list[float]:
        return [-1]

    def next(self, card: list[float], rating: Rating) -> float:
        box = 0 if rating == Rating.AGAIN or card[0] < 0 else min(int(card[0]) + 1, len(self.BOXES) - 1)
        card[0] = box
        return self.BOXES[box]


class Constant:
    """The same prediction for every answer."""

    def __init__(self, p: float) -> None:
        self.p = p

    def item(self, item_id: str, history: Sequence[tuple[datetime, Rating]]) -> list[float]:
        return [self.p] * (len(history) - 1)


MODELS = (
    "FSRS-6, default parameters",
    "FSRS-6, fitted to the earlier part",
    "SM-2",
    "Leitner boxes",
    "constant",
)


def _fitted(train: Sequence[LogEntry]) -> Predictor:
    reviews = [Review(e.item_id, e.rating, e.reviewed_at, e.duration_ms, e.reviewed_at) for e in train]
    return FsrsPredictor(Memory(parameters=fit_parameters(reviews)))


def _constant(train: Sequence[LogEntry]) -> Predictor:
    found = predictions(train, Constant(0.5))
    return Constant(sum(x.recalled for x in found) / len(found))


TRAINED: dict[str, Callable[[Sequence[LogEntry]], Predictor]] = {
    MODELS[0]: lambda train: FsrsPredictor(Memory()),
    MODELS[1]: _fitted,
    MODELS[2]: lambda train: Sm2(),
    MODELS[3]: lambda train: Leitner(),
    MODELS[4]: _constant,
}


def evaluate(log: Sequence[LogEntry], parts: int) -> tuple[dict[str, Scores | str], int]:
    """Each model's scores over the predicted parts (or why it has none), and how many answers were scored."""
    cuts = split_times(log, parts)
    ordered = sorted(log, key=lambda e: e.reviewed_at)
    found: dict[str, list[Prediction]] = {name: [] for name in MODELS}
    missing: dict[str, str] = {}
    for k, start in enumerate(cuts):
        end = cuts[k + 1] if k + 1 < len(cuts) else None
        train = [e for e in ordered if e.reviewed_at < start]
        for name, make in TRAINED.items():
            try:
                predictor = make(train)
            except NotEnoughReviews as short:
                why = f"not fitted: {short.have} of {short.need} reviews before part {k + 2}"
                missing.setdefault(name, why)
                continue
            found[name] += predictions(log, predictor, start, end)
    results: dict[str, Scores | str] = {
        name: missing[name] if name in missing else score(found[name]) for name in MODELS
    }
    return results, len(found[MODELS[0]])


def table(results: dict[str, Scores | str]) -> list[str]:
    lines = [f"   {'model':<36} {'log loss':>9} {'RMSE(bins)':>10} {'AUC':>6}"]
    for name, result in results.items():
        if isinstance(result, str):
            lines.append(f"   {name:<36} {result}")
        else:
            lines.append(
                f"   {name:<36} {result.log_loss:>9.3f} {result.rmse_bins:>10.3f} {result.auc:>6.3f}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "log", nargs="?", type=Path, default=LOG, help="a py-fsrs CSV or an export-progress file"
    )
    parser.add_argument("--parts", type=int, default=4, help="time-ordered parts (default 4)")
    args = parser.parse_args(argv)
    log = read_log(args.log)
    results, scored = evaluate(log, args.parts)
    shown = args.log.relative_to(REPO) if args.log.is_relative_to(REPO) else args.log
    recalled = sum(e.rating != Rating.AGAIN for e in log)
    print(
        f"== {shown}: {len(log)} answers of {len({e.item_id for e in log})} items ({recalled} not Again); "
        f"{scored} answers predicted, in {args.parts - 1} time-ordered parts after the first"
    )
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
