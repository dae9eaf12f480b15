"""How well does each scheduler's model predict recall on a real review log? An evaluation in the manner of
the open-spaced-repetition srs-benchmark, with the scoring of ``scheduler.score``.

Run it from the repository root: ``python benchmarks/prediction_bench.py`` (the shipped log,
``benchmarks/data/review_logs_josh.csv``: 12,580 reviews by one learner; a few minutes, most of them fitting),
or ``python benchmarks/prediction_bench.py FILE`` for another log: a CSV in py-fsrs's format
(``card_id,review_rating,review_time,review_duration``, times with their UTC offset) or a progress file
written by ``python -m course export-progress``. Everything is deterministic: two runs print the same
numbers. The default run writes ``benchmarks/results/prediction_bench.json``, from which
``benchmarks/figures.py`` makes the README's table (``readme_block``).

**Days.** An answer is scored when it was given on a later learner's day than its item's previous answer;
the models count days the same way. A log does not say its learner's time zone: the day starts at 04:00 at a
fixed UTC offset, UTC-7 by default (11:00 UTC; ``--utc-offset``, ``--rollover-hour``). The shipped log's
learner never answered between 06:00 and 15:00 UTC, so any rollover in that span splits its days alike; each
run counts the answers in that span and says so.

**Splits.** srs-benchmark's: sklearn's ``TimeSeriesSplit(n_splits=5)`` over the scored answers in time order
(``--splits``): the last five chunks of ``n // 6`` answers are the test folds, each predicted by models
trained on every answer before its first (an expanding window); the scores are over all the test folds
together. Every answer, before or inside a fold, feeds each item's history.

**Models.** FSRS-6 with fsrs's default parameters; FSRS-6 with parameters fitted by fsrs's optimizer (the
course's ``optimize``) to the answers before the fold; SM-2 (intervals 1, 6, then times the E-factor; Again
restarts them) and Leitner boxes (1, 2, 4, ... 64 days; recalled up a box, Again back to the first), each read
as recall ``0.9 ** (t / I)`` after t learner's days of an interval I (the recall such a schedule aims at when
an item comes due), their cards moved only by each learner's day's first answer; a constant, the share
recalled among the scored answers before the fold.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from _results import SCHEDULING_CODE, write_results  # noqa: E402

from scheduler import (  # noqa: E402
    CALIBRATION_BINS,
    FsrsPredictor,
    LogEntry,
    Memory,
    NotEnoughReviews,
    Prediction,
    Predictor,
    Rating,
    Review,
    Scores,
    day_numbers,
    fit_parameters,
    predictions,
    score,
    time_series_split,
)

LOG = REPO / "benchmarks" / "data" / "review_logs_josh.csv"
UTC_OFFSET = -7
"""The shipped log's learner's day: hours from UTC (a fixed offset), with ``ROLLOVER_HOUR``."""
ROLLOVER_HOUR = 4
QUIET = (6, 15)
"""Hours of the day (UTC, from and to) in which the shipped log has no answer: any rollover in them splits
its days alike."""
SPLITS = 5
DEPENDS = (
    "benchmarks/prediction_bench.py",
    "benchmarks/data/review_logs_josh.csv",
    "scheduler/_calibration.py",
    *SCHEDULING_CODE,
)
"""What the figures are made from: a change to any of these makes the README's table stale."""
SM2_QUALITY = {Rating.AGAIN: 1, Rating.HARD: 3, Rating.GOOD: 4, Rating.EASY: 5}
_COLUMNS = ("card_id", "review_rating", "review_time", "review_duration")


class LogError(Exception):
    """A log that cannot be read; the message names the file and says why."""


def _entry(row: dict[str, str]) -> LogEntry:
    rating, time, duration = row["review_rating"], row["review_time"], row["review_duration"]
    if rating not in ("1", "2", "3", "4"):
        raise ValueError(f"review_rating must be 1, 2, 3 or 4, got {rating!r}")
    try:
        at = datetime.fromisoformat(time)
    except (TypeError, ValueError):
        raise ValueError(f"review_time must be an ISO 8601 time, got {time!r}") from None
    if at.utcoffset() is None:
        raise ValueError(f"review_time has no UTC offset: {time!r}")
    if duration and not duration.isdigit():
        raise ValueError(f"review_duration must be whole milliseconds or empty, got {duration!r}")
    utc = at.astimezone(timezone.utc)
    return LogEntry(row["card_id"], Rating(int(rating)), utc, int(duration) if duration else None)


def _read_csv(path: Path) -> list[LogEntry]:
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        missing = [name for name in _COLUMNS if name not in (reader.fieldnames or ())]
        if missing:
            raise LogError(f"{path} is not a py-fsrs review log: it has no column {', '.join(missing)}")
        found = []
        for row in reader:
            try:
                found.append(_entry(row))
            except (TypeError, ValueError) as problem:
                raise LogError(f"{path}, line {reader.line_num}: {problem}") from None
        return found


def read_log(path: Path) -> list[LogEntry]:
    """The scheduled answers of a py-fsrs CSV log or of a progress file (``export-progress``); a LogError
    saying why when it cannot be read."""
    if path.suffix == ".csv":
        try:
            return _read_csv(path)
        except OSError as problem:
            raise LogError(f"{path} cannot be read ({problem.strerror or problem})") from None
        except UnicodeDecodeError:
            raise LogError(f"{path} is not a py-fsrs review log: it is not UTF-8 text") from None
        except csv.Error as problem:
            raise LogError(f"{path} is not a py-fsrs review log: {problem}") from None
    from course.progress import ProgressFileError, read_progress

    try:
        return read_progress(path, datetime.now(timezone.utc)).reviews
    except ProgressFileError as problem:
        raise LogError(str(problem)) from None


class _DayBased:
    """A day-based schedule read as a recall model: ``0.9 ** (t / I)`` after t learner's days of an interval
    I, its card moved by each learner's day's first answer (the day starting at ``rollover_hour`` in
    ``tz``)."""

    def __init__(self, tz: tzinfo = timezone.utc, rollover_hour: int = 4) -> None:
        self.tz, self.rollover_hour = tz, rollover_hour

    def first(self) -> list[float]:
        raise NotImplementedError

    def next(self, card: list[float], rating: Rating) -> float:
        """Update ``card`` for an answer; the interval (days) it sets."""
        raise NotImplementedError

    def item(self, item_id: str, history: Sequence[tuple[datetime, Rating]]) -> list[float]:
        found: list[float] = []
        days = day_numbers([at for at, _ in history], self.tz, self.rollover_hour)
        card = self.first()
        moved, interval = days[0], self.next(card, history[0][1])
        for day, (_, rating) in zip(days[1:], history[1:], strict=True):
            found.append(0.9 ** ((day - moved) / interval))
            if day > moved:
                moved, interval = day, self.next(card, rating)
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


class Untrained(Exception):
    """A model that cannot be trained on the answers before a fold; the message says why."""


MODELS = {
    "FSRS-6, default parameters": "FSRS-6, default parameters (what the course starts with)",
    "FSRS-6, fitted before each fold": (
        "FSRS-6, fitted to the answers before each fold (the course's `optimize`)"
    ),
    "SM-2": "SM-2, its intervals read as recall 0.9^(t/I)",
    "Leitner boxes": "Leitner boxes, read the same way",
    "constant": "a constant: the share recalled before each fold",
}
"""Each model's name in the printed table, and in the README's."""
_NAMES = list(MODELS)


def _fitted(train: Sequence[LogEntry], tz: tzinfo, rollover_hour: int) -> Predictor:
    reviews = [Review(e.item_id, e.rating, e.reviewed_at, e.duration_ms, e.reviewed_at) for e in train]
    try:
        parameters = fit_parameters(reviews, tz, rollover_hour)
    except NotEnoughReviews as short:
        raise Untrained(f"not fitted: {short.have} of {short.need} reviews") from None
    return FsrsPredictor(Memory(parameters=parameters, tz=tz, rollover_hour=rollover_hour))


def _constant(train: Sequence[LogEntry], tz: tzinfo, rollover_hour: int) -> Predictor:
    found = predictions(train, Constant(0.5), tz, rollover_hour)
    if not found:
        raise Untrained("no scored answer")
    return Constant(sum(x.recalled for x in found) / len(found))


TRAINED: dict[str, Callable[[Sequence[LogEntry], tzinfo, int], Predictor]] = {
    _NAMES[0]: lambda train, tz, hour: FsrsPredictor(Memory(tz=tz, rollover_hour=hour)),
    _NAMES[1]: _fitted,
    _NAMES[2]: lambda train, tz, hour: Sm2(tz, hour),
    _NAMES[3]: lambda train, tz, hour: Leitner(tz, hour),
    _NAMES[4]: _constant,
}


@dataclass(frozen=True)
class Evaluation:
    """Each model's scores over the test folds (or why it has none), the scored answers in time order (as
    the constant 0.5 predicts them) and the test folds (indices into them)."""

    results: dict[str, Scores | str]
    scored: list[Prediction]
    folds: list[range]

    @property
    def tested(self) -> list[Prediction]:
        """The scored answers in the test folds."""
        return [x for fold in self.folds for x in self.scored[fold.start : fold.stop]]


def evaluate(log: Sequence[LogEntry], splits: int, tz: tzinfo, rollover_hour: int) -> Evaluation:
    """Each model trained before each test fold and scored over all of them (see the module); a ValueError
    when there are too few scored answers for ``splits``."""
    scored = predictions(log, Constant(0.5), tz, rollover_hour)
    folds = time_series_split(len(scored), splits)
    found: dict[str, list[Prediction]] = {name: [] for name in MODELS}
    missing: dict[str, str] = {}
    for k, fold in enumerate(folds, 1):
        first = scored[fold.start].at
        train = [e for e in log if e.reviewed_at < first]
        for name, make in TRAINED.items():
            if name in missing:
                continue
            try:
                predictor = make(train, tz, rollover_hour)
            except Untrained as why:
                missing[name] = f"{why} before test fold {k}"
                continue
            found[name] += predictions(log, predictor, tz, rollover_hour)[fold.start : fold.stop]
    results: dict[str, Scores | str] = {
        name: missing[name] if name in missing else score(found[name]) for name in MODELS
    }
    return Evaluation(results, scored, folds)


def _auc_text(result: Scores) -> str:
    return "n/a" if result.auc is None else f"{result.auc:.3f}"


def table(results: dict[str, Scores | str]) -> list[str]:
    """The printed table: each model's scores, or why it has none."""
    calibration = f"calibration error ({CALIBRATION_BINS} bins)"
    lines = [f"   {'model':<32} {'log loss':>8} {'RMSE (bins)':>11} {calibration:>27} {'AUC':>5}"]
    for name, result in results.items():
        if isinstance(result, str):
            lines.append(f"   {name:<32} {result}")
        else:
            lines.append(
                f"   {name:<32} {result.log_loss:>8.3f} {result.rmse_bins:>11.3f} "
                f"{result.calibration_error:>27.3f} {_auc_text(result):>5}"
            )
    return lines


def _hours(hour: int) -> str:
    return f"{hour % 24:02d}:00"


def quiet_answers(log: Sequence[LogEntry]) -> int:
    """How many answers of ``log`` fall in the hours ``QUIET`` (UTC)."""
    low, high = QUIET
    return sum(low <= e.reviewed_at.astimezone(timezone.utc).hour < high for e in log)


def day_line(log: Sequence[LogEntry], offset: float, rollover_hour: int) -> str:
    """The day definition, and how many answers fall in ``QUIET``: the check that where the day starts
    (within it) does not matter."""
    tz = _offset_tz(offset)
    at = datetime(2000, 1, 1, rollover_hour, tzinfo=tz).astimezone(timezone.utc)
    low, high = QUIET
    quiet = quiet_answers(log)
    shown = (
        f"Days: the learner's, taken to start at {_hours(rollover_hour)} at {tz.tzname(None)} "
        f"({at:%H:%M} UTC; the log gives no time zone)"
    )
    span = f"{_hours(low)} and {_hours(high)} UTC"
    if quiet == 0:
        return f"{shown}; 0 answers fall between {span}, so any rollover in that span splits the days alike."
    return f"{shown}; {quiet} answers fall between {span}: where in it the day starts can change the days."


def split_line(scored: int, folds: Sequence[range]) -> str:
    """The split, in words."""
    return (
        f"Split: srs-benchmark's, sklearn's TimeSeriesSplit(n_splits={len(folds)}) over the {scored} scored "
        f"answers (each on a later learner's day than its item's previous one) in time order: the first "
        f"{folds[0].start} only train; then {len(folds)} test folds of {len(folds[0])}, each predicted by "
        f"models trained on every answer before it, {len(folds) * len(folds[0])} answers scored together."
    )


def notes(evaluation: Evaluation) -> list[str]:
    """Why a score is n/a."""
    tested = evaluation.tested
    recalled = sum(x.recalled for x in tested)
    if recalled in (0, len(tested)):
        every = "recalled" if recalled else "forgotten"
        return [
            f"AUC n/a: every predicted answer was {every}; AUC needs both recalled and forgotten answers."
        ]
    return []


def _offset_tz(offset: float) -> tzinfo:
    return timezone(timedelta(hours=offset))


def nothing_to_score(log: Sequence[LogEntry]) -> str:
    """Why a log with no scored answer has none."""
    if len({e.reviewed_at for e in log}) == 1:
        return "All of its answers were given at one time: there is no later answer to predict."
    return (
        "None of its answers was given on a later learner's day than its item's previous answer: "
        "there is nothing to score."
    )


def figures_of(log: Sequence[LogEntry], evaluation: Evaluation, shown: str, day: str) -> dict[str, Any]:
    """Everything the README shows, as JSON values (``shown``: the log's name, ``day``: the day line)."""
    folds = evaluation.folds
    models: list[dict[str, Any]] = []
    for name, result in evaluation.results.items():
        if isinstance(result, str):
            models.append({"name": name, "readme": MODELS[name], "missing": result})
        else:
            models.append(
                {
                    "name": name,
                    "readme": MODELS[name],
                    "answers": result.answers,
                    "log_loss": round(result.log_loss, 6),
                    "rmse_bins": round(result.rmse_bins, 6),
                    "calibration_error": round(result.calibration_error, 6),
                    "auc": None if result.auc is None else round(result.auc, 6),
                }
            )
    return {
        "log": shown,
        "answers": len(log),
        "items": len({e.item_id for e in log}),
        "not_again": sum(e.rating != Rating.AGAIN for e in log),
        "scored": len(evaluation.scored),
        "splits": len(folds),
        "train_only": folds[0].start,
        "fold_size": len(folds[0]),
        "predicted": len(folds) * len(folds[0]),
        "calibration_bins": CALIBRATION_BINS,
        "day": {
            "utc_offset_hours": UTC_OFFSET,
            "rollover_hour": ROLLOVER_HOUR,
            "quiet_utc_hours": list(QUIET),
            "answers_in_quiet_hours": quiet_answers(log),
            "line": day,
        },
        "models": models,
    }


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def readme_block(figures: dict[str, Any]) -> str:
    """The README's table of this benchmark, from the figures its default run saved."""
    bins = figures["calibration_bins"]
    rows = [
        f"  | model | log loss | RMSE (bins) | calibration error ({bins} bins) | AUC |",
        "  |---|---|---|---|---|",
    ]
    for model in figures["models"]:
        if "missing" in model:
            rows.append(f"  | {model['readme']} | {model['missing']} | | | |")
        else:
            cells = [_cell(model[key]) for key in ("log_loss", "rmse_bins", "calibration_error", "auc")]
            rows.append(f"  | {model['readme']} | {' | '.join(cells)} |")
    counts = f"{figures['answers']:,} answers to {figures['items']:,} cards"
    scored = f"{figures['scored']:,} of them scored (on a later day than the card's previous answer)"
    folds = f"{figures['predicted']:,} predicted, in {figures['splits']} folds of {figures['fold_size']:,}"
    rows += ["", f"  {counts}, {scored}; {folds}."]
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "log", nargs="?", type=Path, default=LOG, help="a py-fsrs CSV or an export-progress file"
    )
    parser.add_argument("--splits", type=int, default=SPLITS, help=f"time-series splits (default {SPLITS})")
    parser.add_argument(
        "--utc-offset",
        type=float,
        default=UTC_OFFSET,
        help=f"the learner's hours from UTC (default {UTC_OFFSET})",
    )
    parser.add_argument(
        "--rollover-hour",
        type=int,
        default=ROLLOVER_HOUR,
        help=f"when the day starts (default {ROLLOVER_HOUR})",
    )
    args = parser.parse_args(argv)
    if args.splits < 2:
        parser.error(f"--splits must be 2 or more, got {args.splits}")
    if not -24 < args.utc_offset < 24:
        parser.error(f"--utc-offset must be between -24 and 24 hours, got {args.utc_offset:g}")
    if not 0 <= args.rollover_hour <= 23:
        parser.error(f"--rollover-hour must be from 0 to 23, got {args.rollover_hour}")
    return run(args.log, args.splits, args.utc_offset, args.rollover_hour)


def run(path: Path, splits: int, offset: float, rollover_hour: int) -> int:
    """Read, evaluate and print; write the results file on the default run. 1, with a sentence saying why,
    when there is nothing to evaluate."""
    shown = (path.relative_to(REPO) if path.is_relative_to(REPO) else path).as_posix()
    try:
        log = read_log(path)
    except LogError as problem:
        print(f"Cannot evaluate: {str(problem).rstrip('.')}.")
        return 1
    if not log:
        print(f"== {shown} holds no answers: there is nothing to predict.")
        return 1
    items = len({e.item_id for e in log})
    recalled = sum(e.rating != Rating.AGAIN for e in log)
    print(f"== {shown}: {len(log)} answers of {items} item{'s' * (items != 1)} ({recalled} not Again)")
    day = day_line(log, offset, rollover_hour)
    print(day)
    tz = _offset_tz(offset)
    scored = len(predictions(log, Constant(0.5), tz, rollover_hour))
    if scored == 0:
        print(nothing_to_score(log))
        return 1
    if scored < splits + 1:
        print(
            f"Only {scored} of its answers {'is' if scored == 1 else 'are'} scored (given on a later "
            f"learner's day than their item's previous one): {splits} time-series splits need at least "
            f"{splits + 1}."
        )
        return 1
    evaluation = evaluate(log, splits, tz, rollover_hour)
    print(split_line(scored, evaluation.folds))
    print("\n".join(table(evaluation.results) + notes(evaluation)))
    if (path.resolve(), splits, offset, rollover_hour) == (LOG.resolve(), SPLITS, UTC_OFFSET, ROLLOVER_HOUR):
        write_results("prediction_bench", figures_of(log, evaluation, shown, day), DEPENDS)
        print(
            "results: benchmarks/results/prediction_bench.json "
            "(python benchmarks/figures.py puts them in the README)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
