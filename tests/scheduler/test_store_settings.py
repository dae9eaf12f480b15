"""The learner's scheduling settings in the store (desired retention, FSRS parameters), and fitting the
parameters to a review log (``scheduler._fitting``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fixed_clock import T0, UTC
from store_helpers import AGAIN, GOOD, assert_schedule_is_the_log_replayed, exact_store, fitting_log

from scheduler import (
    MIN_FIT_REVIEWS,
    Memory,
    NotEnoughReviews,
    Rating,
    Review,
    Settings,
    Store,
    StoreCorruptError,
    fit_parameters,
    fit_reviews,
)
from scheduler._memory import DEFAULT_PARAMETERS

DEFAULTS = tuple(DEFAULT_PARAMETERS)
OWN = (0.3, 1.5, 2.5, 9.0, *DEFAULTS[4:])  # valid: fsrs's defaults with other initial stabilities
FITTED_AT = T0 + timedelta(days=30, milliseconds=250)


@pytest.mark.parametrize(
    "settings",
    [
        Settings(),
        Settings(desired_retention=0.9),  # fsrs's default, not Memory's (0.85)
        Settings(desired_retention=0.7),
        Settings(desired_retention=0.97),
        Settings(parameters=OWN),
        Settings(0.8, OWN, FITTED_AT, 640),
    ],
    ids=["defaults", "retention", "lowest", "highest", "parameters", "fitted"],
)
def test_settings_round_trip_and_make_the_memory(db: Path, settings: Settings) -> None:
    with Store.open(db) as store:
        assert store.settings() == Settings()
        store.save_settings(settings, T0)
        assert store.settings() == settings
        assert store.memory.desired_retention == (settings.desired_retention or 0.85)
        assert store.memory.parameters == (settings.parameters or DEFAULTS)
    with Store.open(db) as reopened:  # no memory given: built from the settings
        assert reopened.settings() == settings
        assert reopened.memory.desired_retention == (settings.desired_retention or 0.85)
        assert reopened.memory.parameters == (settings.parameters or DEFAULTS)
        assert reopened.memory.enable_fuzzing
    with Store.open(db, memory=Memory(0.95, enable_fuzzing=False)) as given:  # a memory given wins
        assert (given.memory.desired_retention, given.memory.parameters) == (0.95, DEFAULTS)
        assert given.settings() == settings


def test_a_missing_or_new_file_has_the_default_settings(tmp_path: Path) -> None:
    with Store.open(tmp_path / "missing.sqlite3", defer_create=True) as store:
        assert store.settings() == Settings()
        assert repr(store.memory) == repr(Memory())
    assert not (tmp_path / "missing.sqlite3").exists()
    with Store.open(tmp_path / "new.sqlite3") as store:
        assert store.settings() == Settings()
        assert repr(store.memory) == repr(Memory())


def test_saving_keeps_the_other_memory_options_and_the_set_time(db: Path) -> None:
    steps = (timedelta(minutes=5),)
    memory = Memory(learning_steps=steps, enable_fuzzing=False, maximum_interval=100)
    with Store.open(db, memory=memory) as store:
        store.save_settings(Settings(0.9, OWN), T0)
        assert repr(store.memory) == (
            "Memory(desired_retention=0.9, parameters=(fitted), "
            "learning_steps=(datetime.timedelta(seconds=300),), "
            "relearning_steps=(), enable_fuzzing=False, maximum_interval=100)"
        )
        store.save_settings(Settings(), T0 + timedelta(days=1))  # back to the defaults: options still kept
        assert repr(store.memory) == repr(
            Memory(learning_steps=steps, enable_fuzzing=False, maximum_interval=100)
        )
        store.save_settings(Settings(0.8), T0 + timedelta(days=2))
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT name, value, set_at FROM settings").fetchall()
    connection.close()
    assert rows == [("desired_retention", "0.8", int((T0 + timedelta(days=2)).timestamp() * 1000))]


NAIVE = T0.replace(tzinfo=None)


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        (
            Settings(0.69),
            ValueError,
            "desired_retention must be at least 0.70, got 0.69: below that, more than 3 in 10 answers would "
            "be forgotten",
        ),
        (
            Settings(0.98),
            ValueError,
            "desired_retention must be at most 0.97, got 0.98: above that, the reviews grow steeply for "
            "little gain in what you remember",
        ),
        (Settings(float("nan")), ValueError, "desired_retention must be a number from 0.70 to 0.97, got nan"),
        (Settings("0.9"), ValueError, "desired_retention must be a number from 0.70 to 0.97, got '0.9'"),  # type: ignore[arg-type]
        (Settings(True), ValueError, "desired_retention must be a number from 0.70 to 0.97, got True"),  # type: ignore[arg-type]
        (
            Settings(parameters=(1.0, 2.0)),
            ValueError,
            "parameters are not valid FSRS parameters: Expected 21 parameters, got 2.",
        ),
        (
            Settings(parameters=(-1.0, *DEFAULTS[1:])),
            ValueError,
            "parameters are not valid FSRS parameters: One or more parameters are out of bounds:\n"
            "parameters[0] = -1.0 is out of bounds: (0.001, 100.0)",
        ),
        (Settings(parameters=("a",)), ValueError, "parameters must be a sequence of numbers, got ('a',)"),  # type: ignore[arg-type]
        (
            Settings(fitted_at=T0),
            ValueError,
            "fitted_at and fitted_reviews describe fitted parameters: without parameters, leave them None",
        ),
        (
            Settings(parameters=OWN, fitted_reviews=-1),
            ValueError,
            "fitted_reviews must be None or a non-negative int, got -1",
        ),
        (
            Settings(parameters=OWN, fitted_at=NAIVE),
            ValueError,
            "fitted_at must be timezone-aware (UTC), got a naive datetime",
        ),
        (None, TypeError, "settings must be a Settings, got None (NoneType)"),
    ],
    ids=[
        "low",
        "high",
        "nan",
        "text",
        "bool",
        "too few parameters",
        "out of bounds",
        "not numbers",
        "fitted without parameters",
        "negative count",
        "naive time",
        "not settings",
    ],
)
def test_settings_refused_change_nothing(db: Path, settings: Settings, error: type, message: str) -> None:
    with exact_store(db) as store:
        store.save_settings(Settings(0.85), T0)
        before = repr(store.memory)
        with pytest.raises(error) as info:
            store.save_settings(settings, T0 + timedelta(hours=1))
        assert str(info.value) == message
        assert store.settings() == Settings(0.85)
        assert repr(store.memory) == before


def test_a_change_rebuilds_the_cards_and_keeps_the_due_dates(db: Path) -> None:
    with exact_store(db) as store:
        at = T0
        for rating in (GOOD, GOOD, AGAIN, GOOD, GOOD):
            at = store.record("q", rating, at).due
        store.record("r", GOOD, T0)
        due, cards = store.due_times(), store.cards()
        store.save_settings(Settings(0.8, OWN), at)
        assert store.due_times() == due  # a change applies from each question's next answer
        assert store.cards() != cards  # stability and difficulty are the new parameters' replay
        assert {item_id: card.due for item_id, card in store.cards().items()} == due
        assert_schedule_is_the_log_replayed(store)
        expected = Memory(0.8, parameters=OWN, enable_fuzzing=False).review(store.card("q"), "q", GOOD, at)
        assert store.record("q", GOOD, at).due == expected.due  # the next answer uses them
    with Store.open(db) as reopened:
        assert_schedule_is_the_log_replayed(reopened)


@pytest.mark.parametrize(
    ("name", "value", "detail"),
    [
        ("desired_retention", "0.5", "desired_retention must be at least 0.70, got 0.5: below that, more "
         "than 3 in 10 answers would be forgotten"),
        ("parameters", "{}", "parameters is {}"),
        ("fitted_at", "1.5", "fitted_at is 1.5"),
        ("desired_retention", "not json", "Expecting value: line 1 column 1 (char 0)"),
    ],
)  # fmt: skip
def test_unreadable_settings_are_reported(db: Path, name: str, value: str, detail: str) -> None:
    exact_store(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO settings VALUES (?, ?, 0)", (name, value))
    connection.close()
    with exact_store(db) as store, pytest.raises(StoreCorruptError) as info:
        store.settings()
    expected = f"{db} is damaged (its settings cannot be read: {detail}); stop using it and move it aside"
    assert str(info.value).startswith(expected)
    with pytest.raises(StoreCorruptError) as info:
        Store.open(db)  # building the memory from them
    assert str(info.value).startswith(expected)


def test_unusable_parameters_are_reported_on_open(db: Path) -> None:
    exact_store(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO settings VALUES ('parameters', '[1, 2]', 0)")
    connection.close()
    with pytest.raises(StoreCorruptError) as info:
        Store.open(db)
    assert info.value.detail == "its settings cannot be used: Expected 21 parameters, got 2."


# ---------------------------------------------------------------------------------------------------- fitting


def reviews_at(*times: tuple[str, datetime]) -> list[Review]:
    return [Review(item_id, Rating.GOOD, at, None, at) for item_id, at in times]


DAY, HOUR, MINUTE = timedelta(days=1), timedelta(hours=1), timedelta(minutes=1)


@pytest.mark.parametrize(
    ("log", "count"),
    [
        ([], 0),
        (reviews_at(("a", T0)), 0),  # a first answer never counts
        (reviews_at(("a", T0), ("a", T0 + 10 * MINUTE)), 0),  # same day
        (reviews_at(("a", T0), ("a", T0 + 19 * HOUR - MINUTE)), 0),  # 03:59: the same day until 4 am
        (reviews_at(("a", T0), ("a", T0 + 19 * HOUR)), 1),  # 04:00: the next learner's day, 19 hours on
        (reviews_at(("a", T0), ("a", T0 + DAY)), 1),  # exactly 24 hours
        (
            reviews_at(("a", T0), ("a", T0 + 10 * MINUTE), ("a", T0 + 20 * HOUR)),
            1,
        ),  # a day from the previous answer, though under 24 hours
        (
            reviews_at(
                ("a", T0), ("a", T0 + 10 * MINUTE), ("a", T0 + DAY + 10 * MINUTE), ("a", T0 + 3 * DAY)
            ),
            2,
        ),
        (reviews_at(("a", T0), ("b", T0 + DAY), ("a", T0 + 2 * DAY), ("b", T0 + 2 * DAY)), 2),  # per item
        (reviews_at(("a", T0 + 2 * DAY), ("a", T0)), 1),  # each item's answers in time order
        (reviews_at(*[("a", T0 + k * DAY) for k in range(70)]), 63),  # fsrs reads an item's first 64 answers
    ],
    ids=[
        "empty",
        "first",
        "same day",
        "before the rollover",
        "at the rollover",
        "a day",
        "from previous",
        "mixed",
        "two items",
        "out of order",
        "first 64",
    ],
)
def test_fit_reviews_counts_as_fsrs_does(log: list[Review], count: int) -> None:
    assert fit_reviews(log) == count


def test_too_few_reviews_are_refused(db: Path) -> None:
    with exact_store(db) as store:
        fitting_log(store, items=10, answers=15)
        reviews = store.reviews()
    assert (len(reviews), fit_reviews(reviews)) == (150, 140)
    with pytest.raises(NotEnoughReviews) as info:
        fit_parameters(reviews)
    assert (info.value.have, info.value.need, MIN_FIT_REVIEWS) == (140, 512, 512)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        "fitting needs at least 512 reviews answered on a later day than the question's previous answer; "
        "there are 140"
    )


def test_a_fit_is_deterministic_and_usable(db: Path) -> None:
    with exact_store(db) as store:
        fitting_log(store)
        reviews = store.reviews()
        assert (len(reviews), fit_reviews(reviews)) == (640, 600)
        first = fit_parameters(reviews)
        second = fit_parameters(list(reversed(reviews)))  # in any order
        assert first == second
        assert len(first) == 21 and first != DEFAULTS
        assert all(isinstance(p, float) for p in first)
        store.save_settings(Settings(None, first, datetime(2025, 6, 1, tzinfo=UTC), 600), T0)
        assert store.memory.parameters == first
        assert_schedule_is_the_log_replayed(store)
