"""Generic spaced repetition on FSRS: a review log in SQLite, due queues, sessions and statistics.

It knows nothing about the course it serves; everything it schedules is an ``Item`` (an id and a deck).
"""

from __future__ import annotations

from scheduler._errors import (
    StoreAccessError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    StoreVersionError,
)
from scheduler._format import format_interval
from scheduler._memory import Memory
from scheduler._records import (
    Answer,
    CardState,
    CramReview,
    DueItems,
    Item,
    Limits,
    LogEntry,
    Merged,
    Rating,
    Review,
    State,
)
from scheduler._schema import SCHEMA_VERSION
from scheduler._serving import CramSession, Session, due_queue
from scheduler._stats import Stats, forecast, stats
from scheduler._storage import Storage
from scheduler._store import Store
from scheduler._time import day_start

__all__ = [
    "SCHEMA_VERSION",
    "Answer",
    "CardState",
    "CramReview",
    "CramSession",
    "DueItems",
    "Item",
    "Limits",
    "LogEntry",
    "Memory",
    "Merged",
    "Rating",
    "Review",
    "Session",
    "State",
    "Stats",
    "Storage",
    "Store",
    "StoreAccessError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreNotFoundError",
    "StoreVersionError",
    "day_start",
    "due_queue",
    "forecast",
    "format_interval",
    "stats",
]
