"""``python -m course stats --calibration``: how well the schedule's predicted recall matched what happened,
on the learner's own history, scored as ``benchmarks/prediction_bench.py`` scores a real log
(``scheduler.predictions``)."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler import (
    MIN_CALIBRATION_REVIEWS,
    FsrsPredictor,
    Item,
    Prediction,
    Storage,
    auc,
    bins,
    log_loss,
    predictions,
    rmse_bins,
)

__all__ = ["calibration_report"]

_SCORED = "reviews answered a day or more after the question's previous answer"


def calibration_report(store: Storage, items: Sequence[Item]) -> str:
    """The calibration of the schedule over the answers to ``items``: by bins of predicted recall once there
    are ``MIN_CALIBRATION_REVIEWS`` scored reviews; until then, how many more are needed."""
    ids = {item.id for item in items}
    found = predictions([r for r in store.reviews() if r.item_id in ids], FsrsPredictor(store.memory))
    if len(found) < MIN_CALIBRATION_REVIEWS:
        return (
            f"Calibration: needs {MIN_CALIBRATION_REVIEWS} {_SCORED}; you have {len(found)} "
            f"({MIN_CALIBRATION_REVIEWS - len(found)} to go)."
        )
    lines = [
        "Calibration: the recall the schedule predicted (its current FSRS parameters) against what happened,",
        f"over {len(found)} {_SCORED}:",
        f"  {'predicted':<10} {'reviews':>7} {'predicted':>10} {'recalled':>9}",
    ]
    for b in bins(found):
        span = f"{b.low * 100:.0f}-{b.high:.0%}"
        lines.append(f"  {span:<10} {b.count:>7} {b.predicted:>10.1%} {b.recalled:>9.1%}")
    lines.append(f"  Log loss {log_loss(found):.3f}, RMSE over bins {rmse_bins(found):.3f}, {_auc(found)}.")
    return "\n".join(lines)


def _auc(found: Sequence[Prediction]) -> str:
    recalled = sum(x.recalled for x in found)
    if recalled in (0, len(found)):
        return "AUC n/a (every review " + ("recalled)" if recalled else "forgotten)")
    return f"AUC {auc(found):.3f}"
