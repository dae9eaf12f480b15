"""Short, Anki-like labels for intervals."""

from __future__ import annotations

from datetime import timedelta

__all__ = ["format_interval"]


def _half_up(value: float) -> int:
    return int(value + 0.5)


def format_interval(td: timedelta) -> str:
    """``"<1m"``, ``"10m"``, ``"3h"``, ``"4d"``, ``"2.1mo"`` (30-day months) or ``"1.3y"`` (365-day years)."""
    seconds = td.total_seconds()
    if seconds < 60:
        return "<1m"
    minutes = _half_up(seconds / 60)
    if minutes < 60:
        return f"{minutes}m"
    hours = _half_up(seconds / 3600)
    if hours < 24:
        return f"{hours}h"
    days = seconds / 86400
    if _half_up(days) < 30:
        return f"{_half_up(days)}d"
    if days < 365:
        return f"{days / 30:.1f}mo"
    return f"{days / 365:.1f}y"
