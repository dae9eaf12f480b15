"""Plain helpers shared by the scheduler tests (fixtures are in conftest.py): stores with fuzz off, the
learner-facing error messages, and ways to put an SQLite store into a state from outside."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import scheduler
from scheduler import SCHEMA_VERSION, Memory, Rating, Storage, Store

AGAIN, HARD, GOOD, EASY = Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY
REPO = Path(next(iter(scheduler.__path__))).parent  # the checkout holding the scheduler package


def exact_store(path: Path, **options: object) -> Store:
    """A store with fuzz off, so due dates are exact."""
    return Store.open(path, memory=Memory(enable_fuzzing=False), **options)  # type: ignore[arg-type]


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
