"""What both stores (SQLite and PostgreSQL) check on the way in and keep as rows: answers, settings, cards.

Times are integer milliseconds since the Unix epoch (UTC); states are coded 0 new, 1 learning, 2 review, 3
relearning; settings are one row per setting that is not None, its value as JSON text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any

from scheduler._bounds import (
    EARLIEST_TIME,
    LATEST_TIME,
    MAX_DURATION_MS,
    id_problem,
    prediction_answer_problem,
    reason_problem,
    time_range_text,
)
from scheduler._errors import StoreCorruptError
from scheduler._memory import Memory
from scheduler._records import (
    CardState,
    Nudge,
    PredictionEvent,
    Rating,
    Review,
    Settings,
    State,
    check_rating,
    retention_problem,
)
from scheduler._time import from_ms, require_aware, to_ms

__all__ = [
    "CARD_COLUMNS",
    "CARD_STATE_CODES",
    "CARD_STATE_NAMES",
    "RATINGS",
    "REVIEW_COLUMNS",
    "STATES",
    "STATE_CODES",
    "card_from_row",
    "card_row",
    "check_answer",
    "check_id",
    "check_nudge",
    "check_prediction",
    "check_settings",
    "check_time",
    "memory_for",
    "new_nudge_rows",
    "new_prediction_rows",
    "prediction_from_row",
    "read_settings",
    "replayed_cards",
    "review_from_row",
    "settings_change",
    "settings_from_rows",
    "settings_rows",
    "stored_memory",
]

STATE_CODES = {State.NEW: 0, State.LEARNING: 1, State.REVIEW: 2, State.RELEARNING: 3}
STATES = {code: state for state, code in STATE_CODES.items()}
CARD_STATE_CODES = {state.value: code for state, code in STATE_CODES.items() if state is not State.NEW}
CARD_STATE_NAMES = {code: name for name, code in CARD_STATE_CODES.items()}
RATINGS = {int(rating): rating for rating in Rating}  # a dict lookup: Rating(code) is slow over many rows
CARD_COLUMNS = "item_id, state, step, stability, difficulty, due, last_review, reps, lapses"
REVIEW_COLUMNS = "item_id, rating, reviewed_at, duration_ms, due"


def card_from_row(row: Sequence[Any]) -> CardState:
    """The CardState of a row of CARD_COLUMNS (further columns ignored)."""
    item_id, state, step, stability, difficulty, due, last_review, reps, lapses = row[:9]
    return CardState(
        item_id=item_id,
        state=CARD_STATE_NAMES[state],
        step=step,
        stability=stability,
        difficulty=difficulty,
        due=from_ms(due),
        last_review=None if last_review is None else from_ms(last_review),
        reps=reps,
        lapses=lapses,
    )


def card_row(card: CardState, log_id: int) -> tuple[object, ...]:
    """The row of CARD_COLUMNS, then ``log_id`` (the log row it covers), that keeps ``card``."""
    return (
        card.item_id,
        CARD_STATE_CODES[card.state],
        card.step,
        card.stability,
        card.difficulty,
        to_ms(card.due),
        None if card.last_review is None else to_ms(card.last_review),
        card.reps,
        card.lapses,
        log_id,
    )


def replayed_cards(memory: Memory, rows: Sequence[Sequence[Any]]) -> Iterator[tuple[CardState, int]]:
    """Every item's card replayed with ``memory`` from the log ``rows`` (a row's id, then REVIEW_COLUMNS; an
    item's rows next to each other, in log order), with the id of the item's last row."""
    for item_id, group in groupby(rows, key=itemgetter(1)):
        item_rows = list(group)
        yield memory.replay(item_id, [review_from_row(row[1:]) for row in item_rows]), item_rows[-1][0]


def review_from_row(row: Sequence[Any]) -> Review:
    """The Review of a row of REVIEW_COLUMNS."""
    item_id, rating, reviewed_at, duration_ms, due = row
    return Review(item_id, RATINGS[rating], from_ms(reviewed_at), duration_ms, from_ms(due))


def check_id(value: object, name: str) -> str:
    """`value`, an item's or a deck's id that a store can hold (`scheduler._bounds`); a ValueError naming it
    (`name`) otherwise."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty str, got {value!r}")
    problem = id_problem(value)
    if problem is not None:
        raise ValueError(f"{name} {problem}")
    return value


def check_time(value: datetime, name: str) -> datetime:
    """`value` in UTC, when it is a time a store can hold (`scheduler._bounds`: from 1970 to 8999); a
    ValueError naming it (`name`) otherwise, a TypeError for what is not a datetime."""
    try:
        at = require_aware(value, name)
        held = EARLIEST_TIME <= at < LATEST_TIME
    except OverflowError:  # an offset from the first or the last moment datetime can hold
        held = False
    if not held:
        raise ValueError(f"{name} must be a time {time_range_text()} (UTC), got {value.isoformat()}")
    return at


def check_answer(
    item_id: str, rating: Rating, at: datetime, duration_ms: int | None
) -> tuple[Rating, datetime]:
    """The rating and the time (to the millisecond, as kept) of an answer a store can hold; a ValueError
    otherwise (`scheduler._bounds`: the id, the time, the duration)."""
    check_id(item_id, "item_id")
    if duration_ms is not None and (
        isinstance(duration_ms, bool) or not isinstance(duration_ms, int) or duration_ms < 0
    ):
        raise ValueError(f"duration_ms must be None or a non-negative int, got {duration_ms!r}")
    if duration_ms is not None and duration_ms > MAX_DURATION_MS:
        raise ValueError(f"duration_ms must be at most {MAX_DURATION_MS}, got {duration_ms!r}")
    return check_rating(rating), from_ms(to_ms(check_time(at, "at")))


def check_nudge(nudge: Nudge) -> Nudge:
    """``nudge`` with its times to the millisecond, as kept, when a store can hold it; a ValueError naming the
    field otherwise (a TypeError for what is not a Nudge or a time that is not a datetime)."""
    if not isinstance(nudge, Nudge):
        raise TypeError(f"expected a Nudge, got {type(nudge).__name__}")
    check_id(nudge.item_id, "item_id")
    at = from_ms(to_ms(check_time(nudge.nudged_at, "nudged_at")))
    due = from_ms(to_ms(check_time(nudge.due, "due")))
    reason = nudge.reason
    problem = reason_problem(reason)
    if problem is not None:
        raise ValueError(f"reason {problem}, got {reason if not isinstance(reason, str) else reason[:60]!r}")
    return Nudge(nudge.item_id, at, due, reason)


def new_nudge_rows(nudges: Sequence[Nudge], present: set[tuple[Any, ...]]) -> list[tuple[str, int, int, str]]:
    """The rows (item_id, nudged_at, due, reason; times in ms) of the checked ``nudges`` that are not among
    the ``present`` rows, nor repeated, in the order given."""
    added: list[tuple[str, int, int, str]] = []
    for nudge in nudges:
        row = (nudge.item_id, to_ms(nudge.nudged_at), to_ms(nudge.due), nudge.reason)
        if row not in present:
            present.add(row)
            added.append(row)
    return added


def check_prediction(prediction: PredictionEvent) -> PredictionEvent:
    """``prediction`` with its time to the millisecond, as kept, when a store can hold it; a ValueError naming
    the field otherwise (a TypeError for what is not a PredictionEvent or a time that is not a datetime)."""
    if not isinstance(prediction, PredictionEvent):
        raise TypeError(f"expected a PredictionEvent, got {type(prediction).__name__}")
    check_id(prediction.item_id, "item_id")
    at = from_ms(to_ms(check_time(prediction.predicted_at, "predicted_at")))
    answer = prediction.answer
    problem = prediction_answer_problem(answer)
    if problem is not None:
        raise ValueError(f"answer {problem}, got {answer if not isinstance(answer, str) else answer[:60]!r}")
    right = prediction.right
    if right is not None and not isinstance(right, bool):
        raise ValueError(f"right must be True, False or None (skipped), got {right!r}")
    return PredictionEvent(prediction.item_id, at, answer, right)


def new_prediction_rows(
    predictions: Sequence[PredictionEvent], present: set[tuple[Any, ...]]
) -> list[tuple[str, int, str, bool | None]]:
    """The rows (item_id, predicted_at in ms, answer, right) of the checked ``predictions`` that are not among
    the ``present`` rows (``right`` as True, False or None, or as 1, 0 or None: equal in Python), nor
    repeated, in the order given."""
    added: list[tuple[str, int, str, bool | None]] = []
    for prediction in predictions:
        row = (prediction.item_id, to_ms(prediction.predicted_at), prediction.answer, prediction.right)
        if row not in present:
            present.add(row)
            added.append(row)
    return added


def prediction_from_row(row: Sequence[Any]) -> PredictionEvent:
    """The PredictionEvent of a row (item_id, predicted_at in ms, answer, right: a bool, 0 or 1, or None)."""
    item_id, at, answer, right = row
    return PredictionEvent(item_id, from_ms(at), answer, None if right is None else bool(right))


def check_settings(settings: Settings) -> Settings:
    """``settings`` with its values normalized (floats, a tuple), or a ValueError saying what is wrong; the
    parameters themselves are checked by building a Memory with them."""
    if not isinstance(settings, Settings):
        raise TypeError(f"settings must be a Settings, got {settings!r} ({type(settings).__name__})")
    retention = settings.desired_retention
    if retention is not None:
        problem = retention_problem(retention)
        if problem is not None:
            raise ValueError(f"desired_retention {problem}")
        retention = float(retention)
    parameters = settings.parameters
    if parameters is not None:
        if isinstance(parameters, (str, bytes)) or any(
            isinstance(p, bool) or not isinstance(p, (int, float)) for p in parameters
        ):
            raise ValueError(f"parameters must be a sequence of numbers, got {parameters!r}")
        parameters = tuple(float(p) for p in parameters)
    elif settings.fitted_at is not None or settings.fitted_reviews is not None:
        raise ValueError(
            "fitted_at and fitted_reviews describe fitted parameters: without parameters, leave them None"
        )
    fitted_at = settings.fitted_at
    if fitted_at is not None:
        fitted_at = from_ms(to_ms(check_time(fitted_at, "fitted_at")))
    reviews = settings.fitted_reviews
    if reviews is not None and (isinstance(reviews, bool) or not isinstance(reviews, int) or reviews < 0):
        raise ValueError(f"fitted_reviews must be None or a non-negative int, got {reviews!r}")
    return Settings(retention, parameters, fitted_at, reviews)


def settings_rows(settings: Settings) -> list[tuple[str, str]]:
    """The rows of the settings table for ``settings`` (checked): one per setting that is not None."""
    values: dict[str, object] = {
        "desired_retention": settings.desired_retention,
        "parameters": None if settings.parameters is None else list(settings.parameters),
        "fitted_at": None if settings.fitted_at is None else to_ms(settings.fitted_at),
        "fitted_reviews": settings.fitted_reviews,
    }
    return [(name, json.dumps(value)) for name, value in values.items() if value is not None]


def settings_from_rows(rows: Sequence[tuple[str, str]]) -> Settings:
    """The Settings the rows of the settings table hold; a ValueError when one cannot be read (a setting
    this code does not know, e.g. from a later version of the same schema, is ignored)."""
    values = {name: json.loads(text) for name, text in rows}
    parameters = values.get("parameters")
    if parameters is not None and not isinstance(parameters, list):
        raise ValueError(f"parameters is {parameters!r}")
    fitted_at = values.get("fitted_at")
    if fitted_at is not None and (isinstance(fitted_at, bool) or not isinstance(fitted_at, int)):
        raise ValueError(f"fitted_at is {fitted_at!r}")
    return check_settings(
        Settings(
            desired_retention=values.get("desired_retention"),
            parameters=None if parameters is None else tuple(parameters),
            fitted_at=None if fitted_at is None else from_ms(fitted_at),
            fitted_reviews=values.get("fitted_reviews"),
        )
    )


def memory_for(base: Memory, settings: Settings) -> Memory:
    """The Memory ``settings`` describe, with ``base``'s other options (steps, fuzz, maximum interval, the
    learner's day)."""
    options: dict[str, Any] = dict(
        parameters=settings.parameters,
        learning_steps=base.learning_steps,
        relearning_steps=base.relearning_steps,
        enable_fuzzing=base.enable_fuzzing,
        maximum_interval=base.maximum_interval,
        tz=base.tz,
        rollover_hour=base.rollover_hour,
    )
    if settings.desired_retention is None:
        return Memory(**options)
    return Memory(settings.desired_retention, **options)


def read_settings(rows: Sequence[tuple[str, str]], location: str | os.PathLike[str]) -> Settings:
    """The Settings a store's settings rows hold; StoreCorruptError (naming ``location``) when one cannot
    be read."""
    try:
        return settings_from_rows(rows)
    except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        raise StoreCorruptError(location, f"its settings cannot be read: {exc}", opened=True) from exc


def stored_memory(base: Memory, settings: Settings, location: str | os.PathLike[str]) -> Memory:
    """The Memory stored ``settings`` describe; StoreCorruptError (naming ``location``) when unusable."""
    try:
        return memory_for(base, settings)
    except ValueError as exc:
        raise StoreCorruptError(location, f"its settings cannot be used: {exc}", opened=True) from exc


def settings_change(
    base: Memory, settings: Settings, at: datetime
) -> tuple[Memory, list[tuple[str, str, int]]]:
    """For saving ``settings`` at ``at``: the Memory they describe (``base``'s other options kept) and the
    settings table's rows (name, JSON value, time in ms). A ValueError for settings refused."""
    settings = check_settings(settings)
    at_ms = to_ms(check_time(at, "at"))
    try:
        memory = memory_for(base, settings)
    except ValueError as exc:
        raise ValueError(f"parameters are not valid FSRS parameters: {exc}") from None
    return memory, [(name, value, at_ms) for name, value in settings_rows(settings)]
