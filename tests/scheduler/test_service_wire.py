"""What travels between the class service and a kernel (`scheduler.service._wire`): every record the store
calls return comes back equal, times to the millisecond, enums as enums; nothing but the listed records is
ever built; errors come back as the first of their classes known on this side, message and fields kept."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

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
    PredictionEvent,
    Rating,
    Review,
    Settings,
    State,
    StoreAccessError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    StoreUnavailableError,
    StoreVersionError,
)
from scheduler._live_records import LiveState, QuestionClosedError
from scheduler.service._wire import MAX_DEPTH, WireError, checked, decode, encode, error_of, error_value

VALUES = [
    Review("q", Rating.GOOD, T0, 1200, T0 + timedelta(days=3)),
    CardState("q", "review", None, 3.2, 5.1, T0 + timedelta(days=3), T0, 2, 0),
    CramReview("q", Rating.AGAIN, T0, None),
    Answer("q", T0, Rating.HARD, State.RELEARNING),
    Nudge("q", T0, T0 + timedelta(days=1), "causal-top-left"),
    LogEntry("q", Rating.EASY, T0, 7),
    Merged(1, 2, 3, 4, nudges=5),
    Merged(1, 2, 3, 4, nudges=5, predictions=6),
    PredictionEvent("q", T0 + timedelta(milliseconds=1), "[[1, 0], [0, 1]]", True),
    PredictionEvent("q", T0, "", None),
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


STATE = LiveState(7, "teacher", "Week 3", 1, "q", "plain", False, False, T0, "room-1")


def _forged(value: object, index: int, replaced: object) -> Any:
    data = encode(value)
    data["f"][index] = replaced
    return data


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (_forged(STATE, 6, "yes"), "a LiveState whose revealed is a str ('yes'), not a bool"),
        (_forged(STATE, 0, True), "a LiveState whose session is a bool (True), not an int"),
        (_forged(STATE, 8, 0), "a LiveState whose started_at is an int (0), not a datetime"),
        (_forged(STATE, 4, 5), "a LiveState whose item_id is an int (5), not a str or None"),
        (
            _forged(Review("q", Rating.GOOD, T0, None, T0), 1, 3),
            "a Review whose rating is an int (3), not a Rating",
        ),
        (
            _forged(Settings(0.9, (0.1, 0.2)), 1, {"$u": [0.1, "x"]}),
            "a Settings whose parameters[1] is a str ('x'), not a float",
        ),
        (
            _forged(DueItems({"q": T0}, frozenset({"q"})), 1, {"$s": [1]}),
            "a DueItems whose scheduled[1] is an int (1), not a str",
        ),
        (
            _forged(PredictionEvent("q", T0, "1", True), 3, 1),
            "a PredictionEvent whose right is an int (1), not a bool or None",
        ),
        (
            _forged(PredictionEvent("q", T0, "1", True), 2, None),
            "a PredictionEvent whose answer is None, not a str",
        ),
        (
            _forged(PredictionEvent("q", T0, "1", None), 1, 0),
            "a PredictionEvent whose predicted_at is an int (0), not a datetime",
        ),
        ({"$e": "Rating", "v": 9}, "9 is not a Rating"),
        ({"$e": "Rating", "v": True}, "True is not a Rating"),
        ({"$e": "Rating", "v": 3.0}, "3.0 is not a Rating"),
        ({"$e": "State", "v": ["new"]}, "['new'] is not a State"),
        ({"$s": [[1]]}, "a set of values that cannot be in a set"),
        ({"$t": 2**62}, "a time outside the years 1 to 9999"),
        (2**63, "an integer outside signed 64 bits"),
        ({"n": -(2**63) - 1}, "an integer outside signed 64 bits"),
        ([float("nan")], "a number that is not finite (nan)"),
        ({"x": float("inf")}, "a number that is not finite (inf)"),
    ],
)
def test_a_record_of_the_wrong_types_or_a_value_out_of_range_is_refused(data: object, words: str) -> None:
    with pytest.raises(WireError) as raised:
        decode(data)
    assert str(raised.value) == words


def test_the_edges_of_what_is_taken_are_taken() -> None:
    assert decode([2**63 - 1, -(2**63), 1.5, {"$e": "Rating", "v": 4}]) == [
        2**63 - 1,
        -(2**63),
        1.5,
        Rating.EASY,
    ]
    assert decode(_forged(Merged(1, 2, 3, 4), 4, 0)) == Merged(1, 2, 3, 4)  # a field with a default, given
    assert decode({"$r": "Merged", "f": [1, 2, 3, 4]}) == Merged(1, 2, 3, 4, 0)  # and not given
    assert decode({"$r": "Merged", "f": [1, 2, 3, 4, 5]}) == Merged(1, 2, 3, 4, 5, 0)  # an older service's
    made = [PredictionEvent("q", T0, "0.5", False), PredictionEvent("r", T0, "", None)]
    sent = json.loads(json.dumps(encode(made)))
    assert sent[0] == {"$r": "PredictionEvent", "f": ["q", {"$t": int(T0.timestamp() * 1000)}, "0.5", False]}
    assert checked(decode(sent), list[PredictionEvent], "it") == made  # what Storage.predictions promises
    assert decode(_forged(Settings(0.9), 0, 1)) == Settings(1)  # an int where a float is promised


def _nested(levels: int) -> object:
    data: object = []
    for _ in range(levels - 1):
        data = [data]
    return data


def test_nesting_deeper_than_the_limit_is_refused_without_recursion() -> None:
    assert decode(_nested(MAX_DEPTH)) == _nested(MAX_DEPTH)
    for levels in (MAX_DEPTH + 1, 100_000):
        with pytest.raises(WireError, match=f"^a value nested deeper than {MAX_DEPTH} levels$"):
            decode(_nested(levels))


@pytest.mark.parametrize("value", VALUES, ids=lambda value: type(value).__name__)
def test_every_record_is_what_its_type_says(value: object) -> None:
    hint = {dict: dict[str, datetime], list: list[int | float | str | bool | None]}.get(
        type(value), type(value)
    )
    assert checked(decode(json.loads(json.dumps(encode(value)))), hint, "it") == value


CARD = CardState("q", "review", None, 3.2, 5.1, T0, T0, 2, 0)


@pytest.mark.parametrize(
    ("value", "hint", "words"),
    [
        (True, int, "it is not an int: it is a bool (True)"),
        (None, str, "it is not a str: it is None"),
        ("1", float, "it is not a float: it is a str ('1')"),
        (datetime(2024, 1, 1), datetime, "it is not a datetime: it is a datetime"),  # naive
        ("x" * 100, int, f"it is not an int: it is a str ('{'x' * 36}...)"),
        ({}, list[Review], "it is not a list[Review]: it is a dict"),
        ([CARD, "q"], list[CardState], "it is not a list[CardState]: [1] is a str ('q'), not a CardState"),
        ({"q": [1]}, dict[str, int], "it is not a dict[str, int]: ['q'] is a list, not an int"),
        (
            {1: 2},
            dict[str, int],
            "it is not a dict[str, int]: [1] is a key that is no str, not a value under a str key",
        ),
        ((1, 2), tuple[int, str], "it is not a tuple[int, str]: [1] is an int (2), not a str"),
        ((1,), tuple[int, str], "it is not a tuple[int, str]: it is a tuple"),
        ([1], tuple[int, ...], "it is not a tuple[int, ...]: it is a list"),
        (frozenset({1}), frozenset[str], "it is not a frozenset[str]: [1] is an int (1), not a str"),
        (5, CardState | None, "it is not a CardState or None: it is an int (5)"),
        (
            CardState("q", "review", None, 3.2, 5.1, T0, T0, 2, "0"),
            CardState | None,
            "it is not a CardState or None: lapses is a str ('0'), not an int",
        ),
        (
            Answer("q", T0, 3, State.NEW),
            list[Answer] | Answer,
            "it is not a list[Answer] or an Answer: rating is an int (3), not a Rating",
        ),
        ("ok", None, "it is not None: it is a str ('ok')"),
    ],
)
def test_a_value_not_of_the_type_promised_is_named(value: object, hint: Any, words: str) -> None:
    with pytest.raises(WireError) as raised:
        checked(value, hint, "it")
    assert str(raised.value) == words
    assert checked(value, Any, "it") is value


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("boom", "the error is a str ('boom'), not an object"),
        ({"kinds": "StoreError"}, "the error's kinds are not a list of names"),
        ({"kinds": ["ValueError"], "args": [["x"]]}, "the error's arguments are not a list of plain values"),
        (
            {"kinds": ["StoreError"], "args": ["x"], "attributes": []},
            "the error's attributes are not an object of plain values",
        ),
        ({"kinds": ["ValueError"], "args": []}, "a ValueError without its message"),
        (
            {"kinds": ["StoreError"], "args": ["  "], "attributes": {"path": "db"}},
            "a StoreError without its message",
        ),
        ({"kinds": ["StoreError"], "args": ["x"]}, "a StoreError without its path (a str)"),
        (
            {
                "kinds": ["StoreLockedError", "StoreError"],
                "args": ["x"],
                "attributes": {"path": "db", "waited_s": "1"},
            },
            "a StoreLockedError without its waited_s (a float)",
        ),
    ],
)
def test_an_error_that_describes_no_error_is_refused(data: object, words: str) -> None:
    with pytest.raises(WireError) as raised:
        error_of(data)
    assert str(raised.value) == words


def test_an_error_of_a_subclass_unknown_here_gets_the_attributes_it_lacks_empty() -> None:
    back = error_of(
        {"kinds": ["Busy", "StoreUnavailableError"], "args": ["busy"], "attributes": {"path": "db"}}
    )
    assert type(back) is StoreUnavailableError and vars(back) == {"path": "db", "detail": ""}
    made = error_of(
        {"kinds": ["SystemExit"], "args": ["bye"]}, unknown=lambda sentence: StoreError("db", sentence)
    )
    assert type(made) is StoreError and str(made) == "an error of a kind unknown here (SystemExit: bye)"


@pytest.mark.parametrize(
    "error",
    [
        StoreError("db", "x"),
        StoreAccessError("db", "open", "no such folder"),
        StoreCorruptError("db", "bad page", opened=True),
        StoreLockedError("db", 0.5),
        StoreVersionError("db", 7, 5),
        StoreUnavailableError("db", "down"),
        StoreNotFoundError("db"),
        QuestionClosedError("db", 7, 1),
    ],
    ids=lambda error: type(error).__name__,
)
def test_every_store_error_sent_comes_back_with_the_attributes_required(error: StoreError) -> None:
    back = error_of(json.loads(json.dumps(error_value(error))))
    assert type(back) is type(error) and vars(back) == vars(error) and str(back) == str(error)
