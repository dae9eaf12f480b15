"""``python -m course stats --calibration``: how well the schedule's predicted recall matched what happened,
on the learner's own history, scored as ``benchmarks/prediction_bench.py`` scores a real log
(``scheduler.predictions``, the learner's days as their schedule counts them: ``store.memory``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from course.progress._outlook import local_date
from scheduler import (
    CALIBRATION_BINS,
    MIN_CALIBRATION_REVIEWS,
    FsrsPredictor,
    Item,
    Prediction,
    Settings,
    Storage,
    auc,
    bins,
    calibration_error,
    log_loss,
    predictions,
    rmse_bins,
)

__all__ = ["calibration_report"]

_SCORED = "reviews answered on a later day than the question's previous answer"


def calibration_report(store: Storage, items: Sequence[Item]) -> str:
    """The calibration of the schedule over the answers to ``items``: by bins of predicted recall once there
    are ``MIN_CALIBRATION_REVIEWS`` scored reviews; until then, how many more are needed."""
    ids = {item.id for item in items}
    memory = store.memory
    reviews = [r for r in store.reviews() if r.item_id in ids]
    found = predictions(reviews, FsrsPredictor(memory), memory.tz, memory.rollover_hour)
    if len(found) < MIN_CALIBRATION_REVIEWS:
        return (
            f"Calibration: needs {MIN_CALIBRATION_REVIEWS} {_SCORED}; you have {len(found)} "
            f"({MIN_CALIBRATION_REVIEWS - len(found)} to go)."
        )
    settings = store.settings()
    which = "FSRS's default parameters" if settings.parameters is None else "your fitted FSRS parameters"
    lines = [
        f"Calibration: the recall {which} predict for each review, from the answers before it,",
        f"against what happened, over {len(found)} {_SCORED},",
        f"in {CALIBRATION_BINS} bins of predicted recall (empty ones not shown):",
        f"  {'predicted':<10} {'reviews':>7} {'predicted':>10} {'recalled':>9}",
    ]
    for b in bins(found, CALIBRATION_BINS):
        span = f"{b.low * 100:.0f}-{b.high:.0%}"
        lines.append(f"  {span:<10} {b.count:>7} {b.predicted:>10.1%} {b.recalled:>9.1%}")
    error = calibration_error(found, CALIBRATION_BINS)
    lines += [
        f"  Calibration error (these {CALIBRATION_BINS} bins) {error:.3f}. "
        f"RMSE (bins) {rmse_bins(found):.3f}: srs-benchmark's, over bins of",
        "  days since the previous answer, answer number and lapses. "
        f"Log loss {log_loss(found):.3f}. {_auc(found)}.",
    ]
    return "\n".join(lines + _in_sample(settings, found, store))


def _auc(found: Sequence[Prediction]) -> str:
    recalled = sum(x.recalled for x in found)
    if recalled in (0, len(found)):
        return "AUC n/a (every review " + ("recalled)" if recalled else "forgotten)")
    return f"AUC {auc(found):.3f}"


def _in_sample(settings: Settings, found: Sequence[Prediction], store: Storage) -> list[str]:
    """The warning that fitted parameters are scored on the reviews they were fitted to."""
    if settings.parameters is None:
        return []
    if settings.fitted_at is None:
        return ["  If your parameters were fitted to these reviews, these scores flatter them (in-sample)."]
    fitted: datetime = settings.fitted_at
    before = sum(x.at < fitted for x in found)
    on = local_date(fitted, store.memory.tz)
    if before == 0:
        return [f"  None of these reviews came before your parameters were fitted ({on}): out of sample."]
    return [
        f"  In-sample: your parameters were fitted ({on}, optimize) to your reviews until then, and "
        f"{before} of",
        f"  these {len(found)} came before that, so these scores flatter them.",
    ]
