"""``python -m course settings`` and ``python -m course optimize``: the learner's scheduling settings (desired
retention, FSRS parameters), shown, changed, or fitted to their own review log.

A change is saved in the progress file and applies from each question's next answer: the due dates already
set stay as they are.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone, tzinfo
from typing import TextIO

from course.progress import parameters_text, plural, retention_text
from course.terminal.exits import EXIT_OK, EXIT_TOO_FEW_REVIEWS
from course.terminal.writing import check_writable
from scheduler import (
    MIN_FIT_REVIEWS,
    RETENTION_RANGE,
    Memory,
    Rating,
    Settings,
    Storage,
    fit_parameters,
    fit_reviews,
    format_interval,
)

__all__ = ["SCHEDULING", "optimize", "settings"]

SCHEDULING = ("settings", "optimize")
_APPLIES = "This applies from each question's next answer; the due dates already set stay as they are."
_EXAMPLE = "example"  # the item id of the comparison optimize prints (without fuzz: any id gives the same)


def settings(args: argparse.Namespace, store: Storage, out: TextIO, at: datetime, tz: tzinfo) -> int:
    """Show the settings, or change them: ``--retention``, ``--default-retention``,
    ``--default-parameters``."""
    old = store.settings()
    new = old
    if args.retention is not None:  # the default's own value is the default: it follows the course's default
        retention = None if args.retention == Memory().desired_retention else args.retention
        new = Settings(retention, new.parameters, new.fitted_at, new.fitted_reviews)
    if args.default_retention:
        new = Settings(None, new.parameters, new.fitted_at, new.fitted_reviews)
    if args.default_parameters:
        new = Settings(new.desired_retention, None, None, None)
    changing = args.retention is not None or args.default_retention or args.default_parameters
    if not changing:
        out.write(_show(old, tz))
        return EXIT_OK
    if new == old:
        out.write("Nothing changed.\n" + _show(old, tz))
        return EXIT_OK
    check_writable(store)
    store.save_settings(new, at)
    if new.desired_retention != old.desired_retention:
        out.write(f"Desired retention: {retention_text(new)}, was {retention_text(old)}.\n")
    if new.parameters != old.parameters:
        out.write(f"FSRS parameters: {parameters_text(new, tz)}, were {parameters_text(old, tz)}.\n")
    out.write(_APPLIES + "\n")
    return EXIT_OK


def _show(settings: Settings, tz: tzinfo) -> str:
    retention = retention_text(settings)
    if settings.desired_retention is None:  # the default: why, and what else a learner may choose
        default, (low, high) = Memory().desired_retention, RETENTION_RANGE
        retention = (
            f"{retention_text(Settings(default))} (the default: about {1 - default:.0%} of questions "
            "forgotten when they come back; a lower one\n                   saves review time but forgets "
            f"more, which discourages: {low:.2f} to {high:.2f} with --retention)"
        )
    return f"Desired retention: {retention}\nFSRS parameters:   {parameters_text(settings, tz)}\n"


def optimize(args: argparse.Namespace, store: Storage, out: TextIO, err: TextIO, at: datetime) -> int:
    """Fit the FSRS parameters to the learner's log and save them (not with ``--dry-run``); exit status
    `EXIT_TOO_FEW_REVIEWS`, with nothing changed, when the log has too few reviews to fit to."""
    reviews = store.reviews()
    day = (store.memory.tz, store.memory.rollover_hour)  # the learner's days, as their schedule counts them
    count = fit_reviews(reviews, *day)
    if count < MIN_FIT_REVIEWS:
        err.write(
            f"Not enough reviews to fit your own parameters yet: {count} of the {MIN_FIT_REVIEWS} needed "
            "(answers given on a later day than the question's previous answer). Keep reviewing with the "
            "default parameters and run python -m course optimize again later. Nothing was changed.\n"
        )
        return EXIT_TOO_FEW_REVIEWS
    if not args.dry_run:
        check_writable(store)  # before the fit, which takes seconds, not after it
    out.write(f"Fitting FSRS parameters to your {plural(count, 'review')}; this takes a few seconds...\n")
    out.flush()
    old = store.settings()
    fitted = fit_parameters(reviews, *day)
    new = Settings(old.desired_retention, fitted, at, count)
    before, after = _good_intervals(store.memory, old.parameters), _good_intervals(store.memory, fitted)
    which = "the default parameters" if old.parameters is None else "your previous parameters"
    if args.dry_run:
        out.write(f"Fitted to {plural(count, 'review')}; not saved (--dry-run).\n")
    else:
        store.save_settings(new, at)
        out.write(f"Fitted your own FSRS parameters to {plural(count, 'review')} and saved them.\n")
    out.write(
        f"For example, the intervals of a new question answered Good each time it is due: {before} with "
        f"{which}; {after} with the new ones.\n"
    )
    if not args.dry_run:
        out.write(_APPLIES + " To go back: python -m course settings --default-parameters\n")
    return EXIT_OK


def _good_intervals(memory: Memory, parameters: tuple[float, ...] | None, count: int = 3) -> str:
    """``4d, 1.0mo, 5.8mo``: the first ``count`` intervals in days of a new question answered Good each time
    it is due (and at each same-day step, if any), with `parameters` and `memory`'s desired retention and
    steps, without fuzz."""
    exact = Memory(
        memory.desired_retention,
        parameters=parameters,
        learning_steps=memory.learning_steps,
        relearning_steps=memory.relearning_steps,
        enable_fuzzing=False,
        maximum_interval=memory.maximum_interval,
        tz=memory.tz,
        rollover_hour=memory.rollover_hour,
    )
    at = datetime(2000, 1, 3, 9, tzinfo=timezone.utc)
    state = None
    intervals: list[str] = []
    while len(intervals) < count:
        state = exact.review(state, _EXAMPLE, Rating.GOOD, at)
        if state.state == "review":  # same-day steps are not intervals in days
            intervals.append(format_interval(state.due - at))
        at = state.due
    return ", ".join(intervals)
