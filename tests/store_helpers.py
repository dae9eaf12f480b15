"""Plain helpers shared by the scheduler tests (fixtures are in conftest.py): stores with fuzz off, the
learner-facing error messages, and ways to put an SQLite store into a state from outside."""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import scheduler
import scheduler._rows
import scheduler._store
from scheduler import SCHEMA_VERSION, Memory, Rating, Storage, Store

AGAIN, HARD, GOOD, EASY = Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY
REPO = Path(next(iter(scheduler.__path__))).parent  # the checkout holding the scheduler package


# fsrs's own same-day steps (1 and 10 minutes; 10 minutes after a lapse). ``Memory()`` has none: the tests of
# the mechanics of learning and relearning (states, minutes, what comes due later in a session) ask for these.
STEPS = dict(
    learning_steps=(timedelta(minutes=1), timedelta(minutes=10)),
    relearning_steps=(timedelta(minutes=10),),
)
STEPS_RETENTION = (
    0.9  # fsrs's default desired retention, the one the stepped tests' numbers were worked out at
)


def steps_memory(*, enable_fuzzing: bool = False) -> Memory:
    """A Memory with fsrs's same-day steps and desired retention (fuzz off unless asked)."""
    return Memory(STEPS_RETENTION, enable_fuzzing=enable_fuzzing, **STEPS)  # type: ignore[arg-type]


def exact_store(path: Path, **options: object) -> Store:
    """A store with fuzz off, so due dates are exact (``Memory``'s defaults otherwise: no same-day steps)."""
    return Store.open(path, memory=Memory(enable_fuzzing=False), **options)  # type: ignore[arg-type]


def steps_store(path: Path, **options: object) -> Store:
    """A store with fuzz off and fsrs's same-day steps (see ``steps_memory``)."""
    return Store.open(path, memory=steps_memory(), **options)  # type: ignore[arg-type]


def child_env() -> dict[str, str]:
    """The environment for a child Python process that imports this checkout's scheduler."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def assert_schedule_is_the_log_replayed(store: Storage) -> None:
    """The cached schedule is exactly what replaying the review log gives, and covers every item in it."""
    cards = store.cards()
    assert cards
    assert cards == {item_id: store.memory.replay(item_id, store.reviews(item_id)) for item_id in cards}
    assert store.due_times() == {item_id: card.due for item_id, card in cards.items()}
    assert sorted(cards) == sorted({review.item_id for review in store.reviews()})


@contextmanager
def hold_lock(path: Path) -> Iterator[None]:
    """Another writer holds the SQLite store's write lock meanwhile."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def make_newer(path: Path) -> None:
    """Make an existing SQLite store look written by a newer version of the course."""
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.commit()
    connection.close()


# The messages a learner gets (StoreCorruptError and StoreAccessError), as the store words them.


def untouched(path: Path, detail: str) -> str:
    return (
        f"{path} is not a readable progress database ({detail}); it was left untouched. "
        "Move it aside to start fresh."
    )


def damaged(path: Path, detail: str) -> str:
    return (
        f"{path} is damaged ({detail}); stop using it and move it aside to start fresh, "
        "keeping the moved copy"
    )


def full(path: Path) -> str:
    return f"{path} cannot be written: the disk is full; free some space and try again"


def read_only(path: Path) -> str:
    return f"{path} cannot be written (read-only file or folder); check its permissions"


def cannot_open(path: Path, detail: str) -> str:
    return f"{path} cannot be opened ({detail}); check that its folder exists and is writable"


def io_error(path: Path) -> str:
    return f"{path} cannot be read or written (disk I/O error); check the disk it is on and try again"


def fitting_log(store: Storage, items: int = 40, answers: int = 16, start: datetime | None = None) -> None:
    """Answer ``items`` questions ``answers`` times each, each answer at least a day after the previous one
    (about 1 in 7 forgotten, drawn from a fixed seed): ``items * (answers - 1)`` reviews a fit counts (600
    by default, above MIN_FIT_REVIEWS), written in a fraction of a second."""
    draw = random.Random(7)
    first = start if start is not None else datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)
    for index in range(items):
        at = first + timedelta(minutes=index)
        for _ in range(answers):
            rating = Rating.AGAIN if draw.random() < 0.15 else Rating.GOOD
            review = store.record(f"q{index}", rating, at)
            at = max(review.due, at + timedelta(days=1))


def pin_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores opened without a memory (``Store.open``, as the CLI and the widgets open them) get fsrs's
    same-day steps and desired retention, their settings still applied: for tests of same-day behaviour."""

    class StepsMemory(Memory):
        def __init__(self, desired_retention: float = STEPS_RETENTION, **options: Any) -> None:
            for name, steps in STEPS.items():
                options.setdefault(name, steps)
            super().__init__(desired_retention, **options)

    monkeypatch.setattr(scheduler._store, "Memory", StepsMemory)  # a store opened without a memory
    monkeypatch.setattr(scheduler._rows, "Memory", StepsMemory)  # the memory its settings describe


def opened_read_only(monkeypatch: pytest.MonkeyPatch, db: Path) -> None:
    """SQLite opens `db` read-only from now on, as it does a file the operating system will not open for
    writing (whoever runs the tests, root included)."""
    connect = sqlite3.connect

    def read_only_connect(target: object, *args: object, **kwargs: object) -> sqlite3.Connection:
        if str(target) == str(db):
            target, kwargs = f"{db.as_uri()}?mode=ro", {**kwargs, "uri": True}
        return connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", read_only_connect)


def disk_with(monkeypatch: pytest.MonkeyPatch, free_bytes: int, *, for_root: int | None = None) -> None:
    """Every disk reports `free_bytes` free to ordinary users, and `for_root` (default the same) to root,
    whose reserved blocks count (``os.statvfs``, in 4 KiB blocks)."""
    block = 4096
    free = (for_root if for_root is not None else free_bytes) // block
    result = os.statvfs_result((block, block, 10**6, free, free_bytes // block, 1000, 100, 100, 0, 255))
    monkeypatch.setattr(os, "statvfs", lambda path: result)
