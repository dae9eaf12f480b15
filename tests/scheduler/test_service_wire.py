"""What travels between the class service and a kernel (`scheduler.service._wire`): every record the store
calls return comes back equal, times to the millisecond, enums as enums; nothing but the listed records is
ever built; errors come back as the first of their classes known on this side, message and fields kept."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from fixed_clock import T0

from scheduler import (
    Answer,
    CardState,
    CramReview,
    DueItems,
    LogEntry,
    Merged,
    Nudge,
    Rating,
    Review,
    Settings,
    State,
    StoreAccessError,
    StoreLockedError,
    StoreVersionError,
)
from scheduler.service._wire import WireError, decode, encode, error_of, error_value

VALUES = [
    Review("q", Rating.GOOD, T0, 1200, T0 + timedelta(days=3)),
    CardState("q", "review", None, 3.2, 5.1, T0 + timedelta(days=3), T0, 2, 0),
    CramReview("q", Rating.AGAIN, T0, None),
    Answer("q", T0, Rating.HARD, State.RELEARNING),
    Nudge("q", T0, T0 + timedelta(days=1), "causal-top-left"),
    LogEntry("q", Rating.EASY, T0, 7),
    Merged(1, 2, 3, 4, nudges=5),
    Settings(0.9, (0.1, 0.2), T0, 400),
    DueItems({"q": T0}, frozenset({"q", "r"}), {"n": T0 + timedelta(hours=1)}),
    {"01": T0, "02": T0 + timedelta(milliseconds=1)},
    [None, 1, 2.5, "text", True],
]


@pytest.mark.parametrize("value", VALUES, ids=lambda value: type(value).__name__)
def test_every_record_comes_back_equal(value: object) -> None:
    back = decode(json.loads(json.dumps(encode(value))))
    assert back == value
    if isinstance(value, Answer):
        assert (
            back.rating is Rating.HARD and back.state_before is State.RELEARNING
        )  # `is`, as statistics test


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"$r": "Popen", "f": ["rm"]}, "unknown record 'Popen'"),
        ({"$e": "Signals", "v": 9}, "unknown enum 'Signals'"),
        ({"$t": 1.5}, "a time must be whole milliseconds"),
        ({"$r": "Review", "f": ["q"]}, "a Review with the wrong fields"),
    ],
)
def test_nothing_else_is_built(data: object, words: str) -> None:
    with pytest.raises(WireError, match=words):
        decode(data)


def test_errors_come_back_with_their_words_and_fields() -> None:
    for error in (
        StoreLockedError("db as alice", 0.3),
        StoreVersionError("db as alice", 7, 5),
        StoreAccessError("db as alice", "read-only"),
        ValueError("rating must be a Rating or an int from 1 to 4, got 9"),
    ):
        back = error_of(json.loads(json.dumps(error_value(error))))
        assert type(back) is type(error) and str(back) == str(error)
        assert vars(back) == vars(error)


def test_an_error_of_a_class_unknown_here_is_its_nearest_known_one() -> None:
    data = {
        "type": "AccessDeniedError",
        "kinds": ["AccessDeniedError", "StoreAccessError", "StoreError"],
        "args": ["db as teacher refused this access"],
        "attributes": {"path": "db", "reason": "denied"},
    }
    back = error_of(data)
    assert type(back) is StoreAccessError and str(back) == "db as teacher refused this access"
    assert type(error_of({"type": "SystemExit", "kinds": ["SystemExit"], "args": []})) is RuntimeError
