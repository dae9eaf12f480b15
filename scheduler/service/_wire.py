"""What travels between a class service and a learner's kernel: the scheduler's records as JSON, exactly.

A value is JSON as it is (str, int, float, bool, None, lists, objects with str keys), or one of the
scheduler's types, tagged: a time ``{"$t": ms}`` (integer milliseconds since the epoch, UTC: what the stores
keep, so a time travels unchanged), a `Rating` or `State` ``{"$e": name, "v": value}``, a tuple
``{"$u": [...]}``, a frozenset ``{"$s": [...]}``, a record ``{"$r": name, "f": [fields in order]}`` (only
the records listed in `RECORDS`: nothing else is ever built from what arrives). An error is
``{"type": name, "kinds": [its classes, most derived first], "args": [...], "attributes": {...}}``: the
receiver rebuilds the first of those classes it knows (a ``StoreError`` keeps its message and attributes).

What arrives is refused (`WireError`, a sentence) unless it is such a value: a record whose fields are not of
the types the record declares, an enum value it does not have, an integer outside signed 64 bits, a number
that is not finite, nesting deeper than `MAX_DEPTH`. `checked` holds a decoded value to a type hint (what a
``Storage`` call promises to return).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any, Union

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
    PredictionEvent,
    Rating,
    Review,
    Settings,
    State,
)
from scheduler._time import from_ms, to_ms

__all__ = ["MAX_DEPTH", "RECORDS", "WireError", "checked", "decode", "encode", "error_of", "error_value"]

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
        PredictionEvent,
        Review,
        Settings,
    )
}
MAX_DEPTH = 64
"""How deeply lists, objects and records may nest in what arrives (the records themselves need four)."""

_ENUM_VALUES: Mapping[str, Mapping[tuple[type, Any], Enum]] = {
    kind.__name__: {(type(member.value), member.value): member for member in kind} for kind in (Rating, State)
}
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
# The attributes each store error is made with (its subclasses' too), as `error_of` requires them: of an
# error sent as its own class, all; of a subclass unknown here, its path (the others, if missing, are empty).
_ERROR_ATTRIBUTES: Mapping[type[BaseException], Mapping[str, Any]] = {
    _errors.StoreError: {"path": str},
    _errors.StoreAccessError: {"reason": str, "detail": str},
    _errors.StoreCorruptError: {"detail": str, "opened": bool},
    _errors.StoreLockedError: {"waited_s": float},
    _errors.StoreVersionError: {"found": int, "known": int},
    _errors.StoreUnavailableError: {"detail": str},
}
_INT64 = (-(2**63), 2**63 - 1)
_CARD_STATES = tuple(state.value for state in State if state is not State.NEW)
_SHORT = 40  # characters of a value quoted in a message


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
    """The value `encode` made ``data`` of; WireError for data that is no such value (a record's fields are
    checked against the types it declares)."""
    return _decode(data, 0)


def _decode(data: Any, depth: int) -> Any:
    if data is None or isinstance(data, (str, bool)):
        return data
    if isinstance(data, int):
        if not _INT64[0] <= data <= _INT64[1]:
            raise WireError("an integer outside signed 64 bits")
        return data
    if isinstance(data, float):
        if not math.isfinite(data):
            raise WireError(f"a number that is not finite ({data!r})")
        return data
    if depth >= MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    if isinstance(data, list):
        return [_decode(item, depth + 1) for item in data]
    if not isinstance(data, dict):
        raise WireError(f"unexpected {type(data).__name__}")
    if "$t" in data:
        return _time(data["$t"])
    if "$e" in data:
        return _enum(data["$e"], data.get("v"))
    if "$u" in data:
        return tuple(_decode(item, depth + 1) for item in _list(data["$u"]))
    if "$s" in data:
        try:
            return frozenset(_decode(item, depth + 1) for item in _list(data["$s"]))
        except TypeError:
            raise WireError("a set of values that cannot be in a set") from None
    if "$r" in data:
        return _record(data["$r"], data.get("f"), depth)
    return {str(key): _decode(item, depth + 1) for key, item in data.items()}


def _time(ms: Any) -> datetime:
    if isinstance(ms, bool) or not isinstance(ms, int):
        raise WireError("a time must be whole milliseconds")
    try:
        return from_ms(ms)
    except OverflowError:
        raise WireError("a time outside the years 1 to 9999") from None


def _enum(name: Any, value: Any) -> Enum:
    members = _ENUM_VALUES.get(name) if isinstance(name, str) else None
    if members is None:
        raise WireError(f"unknown enum {_short(name)}")
    member = members.get((type(value), value)) if type(value) in (int, str) else None
    if member is None:  # of the value's own type: True is no Rating, nor 3.0
        raise WireError(f"{_short(value)} is not a {name}")
    return member


def _record(name: Any, fields: Any, depth: int) -> Any:
    kind = RECORDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise WireError(f"unknown record {_short(name)}")
    checks, required = _field_checks(kind)
    given = _list(fields)
    if not required <= len(given) <= len(checks):
        raise WireError(f"a {name} with the wrong fields")
    values = [_decode(item, depth + 1) for item in given]
    for (field, check), value in zip(checks, values, strict=False):  # defaults for those not given
        problem = check(value)
        if problem is not None:
            where, found, promised = _inside(f".{field}", problem)
            raise WireError(f"a {name} whose {where[1:]} is {found}, not {promised}")
    record = kind(*values)
    problem = _values(record)
    if problem is not None:
        where, found, promised = problem
        raise WireError(f"a {name} whose {where[1:]} is {found}, not {promised}")
    return record


@cache
def _field_checks(kind: type) -> tuple[tuple[tuple[str, _Check], ...], int]:
    """A record's fields in order, each with the check of its type, and how many have no default."""
    names, required = _fields(kind)
    return tuple((name, _checker(_hints(kind)[name])) for name in names), required


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise WireError("expected a list")
    return data


def checked(value: Any, hint: Any, what: str) -> Any:
    """``value`` when it is what the type ``hint`` says (str, int (never a bool), float (an int too), bool,
    None, datetime (aware), an enum, a record of `RECORDS` field by field, ``list[X]``, ``dict[str, X]``,
    ``Mapping[str, X]``, ``tuple[X, ...]``, ``frozenset[X]``, ``X | Y``, ``Any``); else a WireError
    naming ``what`` and what was wrong, e.g. "the answer to cards is not a dict[str, CardState]: ['q'].reps
    is a str ('3'), not an int"."""
    problem = _checker(hint)(value)
    if problem is None:
        return value
    where, found, promised = problem
    if not where:
        raise WireError(f"{what} is not {_promised(hint)}: it is {found}")
    raise WireError(f"{what} is not {_promised(hint)}: {where.removeprefix('.')} is {found}, not {promised}")


_Problem = tuple[str, str, str]  # where (a path in the value, "" for itself), what is there, what should be
_Check = Callable[[Any], "_Problem | None"]


@cache
def _checker(hint: Any) -> _Check:
    """A function telling what in a value is not what ``hint`` says (None: nothing)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    promised = _promised(hint)
    if hint is Any:
        return lambda value: None
    if origin in (Union, types.UnionType):
        return _union_checker([_checker(arg) for arg in args], promised)
    if origin is list:
        return _items_checker(list, _checker(args[0]), promised)
    if origin is frozenset:
        return _items_checker(frozenset, _checker(args[0]), promised)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _items_checker(tuple, _checker(args[0]), promised)
    if origin is tuple:
        return _tuple_checker([_checker(arg) for arg in args], promised)
    if origin in (dict, Mapping):
        return _mapping_checker(dict if origin is dict else Mapping, _checker(args[1]), promised)
    if hint is None or hint is type(None):
        return _kind_checker(lambda value: value is None, promised)
    if hint is int:
        return _kind_checker(lambda value: isinstance(value, int) and not isinstance(value, bool), promised)
    if hint is float:
        return _kind_checker(
            lambda value: isinstance(value, (int, float)) and not isinstance(value, bool), promised
        )
    if hint is datetime:
        return _kind_checker(
            lambda value: isinstance(value, datetime) and value.utcoffset() is not None, promised
        )
    if hint in RECORDS.values():
        return _record_checker(hint, promised)
    if isinstance(hint, type) and origin is None:  # str, bool, an enum
        return _kind_checker(lambda value: isinstance(value, hint), promised)
    raise TypeError(f"cannot check a value against {hint!r}")


def _kind_checker(fits: Callable[[Any], bool], promised: str) -> _Check:
    return lambda value: None if fits(value) else ("", _found(value), promised)


def _union_checker(checks: list[_Check], promised: str) -> _Check:
    def check(value: Any) -> _Problem | None:
        problems = []
        for each in checks:
            problem = each(value)
            if problem is None:
                return None
            problems.append(problem)
        inside = [problem for problem in problems if problem[0]]  # of one alternative's kind, wrong within
        return inside[0] if inside else ("", _found(value), promised)

    return check


def _items_checker(kind: type[Any], item: _Check, promised: str) -> _Check:
    def check(value: Any) -> _Problem | None:
        if not isinstance(value, kind):
            return "", _found(value), promised
        for index, each in enumerate(value):
            problem = item(each)
            if problem is not None:
                return _inside(f"[{_short(each)}]" if kind is frozenset else f"[{index}]", problem)
        return None

    return check


def _tuple_checker(items: list[_Check], promised: str) -> _Check:
    def check(value: Any) -> _Problem | None:
        if not isinstance(value, tuple) or len(value) != len(items):
            return "", _found(value), promised
        for index, (each, item) in enumerate(zip(value, items, strict=True)):
            problem = item(each)
            if problem is not None:
                return _inside(f"[{index}]", problem)
        return None

    return check


def _mapping_checker(kind: type[Any], item: _Check, promised: str) -> _Check:
    def check(value: Any) -> _Problem | None:
        if not isinstance(value, kind):
            return "", _found(value), promised
        for key, each in value.items():
            if not isinstance(key, str):
                return f"[{_short(key)}]", "a key that is no str", "a value under a str key"
            problem = item(each)
            if problem is not None:
                return _inside(f"[{_short(key)}]", problem)
        return None

    return check


def _record_checker(kind: type, promised: str) -> _Check:
    fields, _ = _field_checks(kind)

    def check(value: Any) -> _Problem | None:
        if not isinstance(value, kind):
            return "", _found(value), promised
        for name, field in fields:
            problem = field(getattr(value, name))
            if problem is not None:
                return _inside(f".{name}", problem)
        return _values(value)

    return check


def _values(record: Any) -> _Problem | None:
    """What in ``record`` its types allow and its meaning does not (a card's state)."""
    if isinstance(record, CardState) and record.state not in _CARD_STATES:
        return ".state", _found(record.state), "one of " + ", ".join(map(repr, _CARD_STATES))
    return None


@cache
def _fields(kind: type) -> tuple[tuple[str, ...], int]:
    """A record's field names in order and how many of them have no default."""
    if dataclasses.is_dataclass(kind):
        fields = dataclasses.fields(kind)
        required = [
            f for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        return tuple(f.name for f in fields), len(required)
    named_tuple: Any = kind
    names: tuple[str, ...] = named_tuple._fields
    parameters = inspect.signature(kind).parameters.values()
    return names, sum(1 for parameter in parameters if parameter.default is parameter.empty)


@cache
def _hints(kind: type) -> Mapping[str, Any]:
    return typing.get_type_hints(kind)


def _inside(step: str, problem: _Problem) -> _Problem:
    where, found, promised = problem
    return step + where, found, promised


def _name(hint: Any) -> str:
    """``hint`` as a type checker writes it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is None or hint is type(None):
        return "None"
    if origin in (Union, types.UnionType):
        return " | ".join(_name(arg) for arg in args)
    if origin is not None:
        inner = ", ".join("..." if arg is Ellipsis else _name(arg) for arg in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    return getattr(hint, "__name__", str(hint))


def _promised(hint: Any) -> str:
    """``hint`` as a message says what was promised: "a list[Review]", "a CardState or None"."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_promised(arg) for arg in typing.get_args(hint))
    name = _name(hint)
    if name in ("None", "Any"):
        return name
    return f"{'an' if name[0] in 'AEIOUaeiou' else 'a'} {name}"


def _found(value: Any) -> str:
    """What ``value`` is, for a message: "None", "a str ('3')", "a list"."""
    if value is None:
        return "None"
    name = type(value).__name__
    article = "an" if name[0] in "AEIOUaeiou" else "a"
    if isinstance(value, (str, int, float)) and not isinstance(value, Enum):
        return f"{article} {name} ({_short(value)})"
    return f"{article} {name}"


def _short(value: Any) -> str:
    """``value``'s repr, cut to a few words (a huge integer is not written out)."""
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64[0] <= value <= _INT64[1]:
        return "an integer outside signed 64 bits"
    text = repr(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."


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


def error_of(data: Any, unknown: Callable[[str], BaseException] = RuntimeError) -> BaseException:
    """The error `error_value` describes, as the first of its classes known here; ``unknown(sentence)``
    (a RuntimeError unless given) for one of no class known here. WireError for data that describes no
    error: not an object, kinds that are no list of names, arguments or attributes that are not plain
    values, a known error without its message (a non-empty str first argument), a store error without the
    attributes it is made with."""
    if not isinstance(data, dict):
        raise WireError(f"the error is {_found(data)}, not an object")
    kinds, args, attributes = data.get("kinds", []), data.get("args", []), data.get("attributes", {})
    if not isinstance(kinds, list) or not all(isinstance(name, str) for name in kinds):
        raise WireError("the error's kinds are not a list of names")
    if not isinstance(args, list) or not all(_plain(arg) for arg in args):
        raise WireError("the error's arguments are not a list of plain values")
    if not isinstance(attributes, dict) or not all(
        isinstance(key, str) and _plain(item) for key, item in attributes.items()
    ):
        raise WireError("the error's attributes are not an object of plain values")
    message = args[0] if args and isinstance(args[0], str) else ""
    kind = next((_ERRORS[name] for name in kinds if name in _ERRORS), None)
    if kind is None:
        sent = data.get("type")
        name = sent if isinstance(sent, str) else (kinds or ["no name"])[0]
        said = f": {message[:_SHORT]}" if message else ""
        return unknown(f"an error of a kind unknown here ({name[:_SHORT]}{said})")
    if not message.strip():
        raise WireError(f"a {kind.__name__} without its message")
    attributes = dict(attributes)
    for owner in kind.__mro__:
        for attribute, hint in _ERROR_ATTRIBUTES.get(owner, {}).items():
            if attribute not in attributes and (
                owner is not _errors.StoreError and kinds[0] != kind.__name__
            ):
                attributes[attribute] = hint()  # a subclass unknown here, made without it: its empty value
            elif attribute not in attributes or _checker(hint)(attributes[attribute]) is not None:
                raise WireError(f"a {kind.__name__} without its {attribute} ({_promised(hint)})")
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    if issubclass(kind, _errors.StoreError):
        error.__dict__.update(attributes)
    return error


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))
