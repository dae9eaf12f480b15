"""What travels between a class service and a learner's kernel: the scheduler's records as JSON, exactly.

A value is JSON as it is (str, int, float, bool, None, lists, objects with str keys), or one of the
scheduler's types, tagged: a time ``{"$t": ms}`` (integer milliseconds since the epoch, UTC: what the stores
keep, so a time travels unchanged), a `Rating` or `State` ``{"$e": name, "v": value}``, a tuple
``{"$u": [...]}``, a frozenset ``{"$s": [...]}``, a record ``{"$r": name, "f": [fields in order]}`` (only
the records listed in `RECORDS`: nothing else is ever built from what arrives). An error is
``{"type": name, "kinds": [its classes, most derived first], "args": [...], "attributes": {...}}``: the
receiver rebuilds the first of those classes it knows (a ``StoreError`` keeps its message and attributes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduler import _errors, _live_records
from scheduler._live_records import LiveAnswers, LiveState
from scheduler._records import (
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
)
from scheduler._time import from_ms, to_ms

__all__ = ["RECORDS", "WireError", "decode", "encode", "error_of", "error_value"]

RECORDS: Mapping[str, type] = {
    kind.__name__: kind
    for kind in (
        Answer,
        CardState,
        CramReview,
        DueItems,
        LiveAnswers,
        LiveState,
        LogEntry,
        Merged,
        Nudge,
        Review,
        Settings,
    )
}
_ENUMS: Mapping[str, Any] = {"Rating": Rating, "State": State}
_ERRORS: Mapping[str, type[BaseException]] = {
    **{
        name: value
        for module in (_errors, _live_records)
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, _errors.StoreError)
    },
    "ValueError": ValueError,
    "TypeError": TypeError,
    "RuntimeError": RuntimeError,
}


class WireError(ValueError):
    """What arrived is not a value this side can read."""


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data (tagged where JSON has no such type)."""
    if isinstance(value, datetime):
        return {"$t": to_ms(value)}
    if isinstance(value, (Rating, State)):
        return {"$e": type(value).__name__, "v": value.value}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if type(value).__name__ in RECORDS and dataclasses.is_dataclass(value):
        return {
            "$r": type(value).__name__,
            "f": [encode(getattr(value, f.name)) for f in dataclasses.fields(value)],
        }
    if isinstance(value, Answer):  # a named tuple
        return {"$r": "Answer", "f": [encode(item) for item in value]}
    if isinstance(value, tuple):
        return {"$u": [encode(item) for item in value]}
    if isinstance(value, (frozenset, set)):
        return {"$s": sorted(encode(item) for item in value)}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise WireError("a mapping sent must have str keys")
        return {key: encode(item) for key, item in value.items()}
    raise WireError(f"cannot send a {type(value).__name__}")


def decode(data: Any) -> Any:
    """The value `encode` made ``data`` of; WireError for data that is no such value."""
    if data is None or isinstance(data, (str, bool, int, float)):
        return data
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        raise WireError(f"unexpected {type(data).__name__}")
    if "$t" in data:
        ms = data["$t"]
        if isinstance(ms, bool) or not isinstance(ms, int):
            raise WireError("a time must be whole milliseconds")
        return from_ms(ms)
    if "$e" in data:
        kind = _ENUMS.get(data["$e"])
        if kind is None:
            raise WireError(f"unknown enum {data['$e']!r}")
        return kind(data.get("v"))
    if "$u" in data:
        return tuple(decode(item) for item in _list(data["$u"]))
    if "$s" in data:
        return frozenset(decode(item) for item in _list(data["$s"]))
    if "$r" in data:
        kind = RECORDS.get(data["$r"])
        if kind is None:
            raise WireError(f"unknown record {data['$r']!r}")
        try:
            return kind(*(decode(item) for item in _list(data.get("f"))))
        except TypeError as exc:
            raise WireError(f"a {data['$r']} with the wrong fields") from exc
    return {str(key): decode(item) for key, item in data.items()}


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise WireError("expected a list")
    return data


def error_value(error: BaseException) -> dict[str, Any]:
    """``error`` as the service sends it: its class names, arguments and (JSON-ready) attributes."""
    attributes = {
        key: item
        for key, item in vars(error).items()
        if item is None or isinstance(item, (str, int, float, bool))
    }
    kinds = [kind.__name__ for kind in type(error).__mro__ if issubclass(kind, BaseException)]
    return {
        "type": type(error).__name__,
        "kinds": kinds,
        "args": [str(arg) if not isinstance(arg, (str, int, float)) else arg for arg in error.args],
        "attributes": attributes,
    }


def error_of(data: Any) -> BaseException:
    """The error `error_value` describes, as the first of its classes known here (a StoreError for an
    unknown kind of store error, a RuntimeError for anything else)."""
    if not isinstance(data, dict):
        return RuntimeError("the class service sent an error that cannot be read")
    kinds = [name for name in data.get("kinds", []) if isinstance(name, str)]
    kind = next((_ERRORS[name] for name in kinds if name in _ERRORS), RuntimeError)
    given = data.get("args")
    args: list[Any] = given if isinstance(given, list) else []
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    attributes = data.get("attributes")
    if isinstance(attributes, dict) and issubclass(kind, _errors.StoreError):
        error.__dict__.update({str(key): item for key, item in attributes.items()})
    return error
