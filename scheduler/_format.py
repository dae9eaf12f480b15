"""Short, Anki-like labels for intervals, with one rounding rule for every interval shown.

An interval is first rounded to the nearest whole second (half up), then to the unit shown (half up). The
first step makes a label independent of sub-second noise: a due time stored with millisecond precision,
minus an answer time with microseconds, may be 59.999 s for a one-minute step, and is labelled ``1m``, as
the button that offered it was.
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["format_interval"]

_SECOND = timedelta(seconds=1)
_HALF_SECOND = timedelta(milliseconds=500)
_MINUTE = 60
_HOUR = 3600
_DAY = 86400


def _whole_seconds(td: timedelta) -> int:
    """``td`` rounded to the nearest whole second, halves up (exact: no floating point)."""
    return (td + _HALF_SECOND) // _SECOND


def _rounded(seconds: int, unit: int) -> int:
    return (seconds + unit // 2) // unit


def format_interval(td: timedelta) -> str:
    """``"<1m"``, ``"10m"``, ``"3h"``, ``"4d"``, ``"2.1mo"`` (30-day months) or ``"1.3y"`` (365-day years).

    Rounding: to whole seconds, then to the unit shown, halves up (59.5 s is ``1m``, 89.5 min ``1h``,
    90 min ``2h``, 23.5 h ``1d``); under 60 s (negative included) is ``<1m``.
    """
    seconds = _whole_seconds(td)
    if seconds < _MINUTE:
        return "<1m"
    minutes = _rounded(seconds, _MINUTE)
    if minutes < 60:
        return f"{minutes}m"
    hours = _rounded(seconds, _HOUR)
    if hours < 24:
        return f"{hours}h"
    days = _rounded(seconds, _DAY)
    if days < 30:
        return f"{days}d"
    if seconds < 365 * _DAY:
        return f"{seconds / (30 * _DAY):.1f}mo"
    return f"{seconds / (365 * _DAY):.1f}y"
