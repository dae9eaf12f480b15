"""The snapshots a class service holds open for its learners' kernels (``RemoteStore.snapshot()``).

A held snapshot keeps one server connection in one transaction from its `begin` to its end, so they are
bounded (issue 35: ten snapshots of one learner held the whole pool, and they expired only when another
began): at most ``slots`` are held at once in the class and one per learner, each ends by itself after
``seconds`` (a timer on the event loop), and a learner keeps at most `PER_LEARNER` ids open. A snapshot
asked for beyond those bounds is *unheld*: it has an id like any other, and each of its reads is one
consistent read of its own, as a ``RemoteStore`` call outside a snapshot is (the client's docstring says
so already: a due queue made meanwhile may miss an answer another kernel gives; the next queue has it).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

from scheduler.postgres import PostgresStore

__all__ = ["PER_LEARNER", "Snapshot", "Snapshots"]

PER_LEARNER = 4
"""Snapshot ids a learner keeps open at once (held or not): a fifth ends the oldest."""


class Snapshot:
    """One open snapshot. Held: a store of its own and the one thread its reads run on (the store's
    snapshot is held by that thread, from `begin` to `end`). Unheld: ``store`` is None."""

    def __init__(self, store: PostgresStore | None) -> None:
        self.store = store
        self.opened_at = time.monotonic()
        self.timer: asyncio.TimerHandle | None = None
        self._thread = (
            None if store is None else ThreadPoolExecutor(max_workers=1, thread_name_prefix="course-snapshot")
        )
        self._stack = ExitStack()

    @property
    def held(self) -> bool:
        return self.store is not None

    def begin(self) -> None:
        if self.store is not None and self._thread is not None:
            self._thread.submit(self._stack.enter_context, self.store.snapshot()).result()

    async def read(self, method: str, args: Mapping[str, Any]) -> Any:
        store, thread = self.store, self._thread
        assert store is not None and thread is not None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(thread, lambda: getattr(store, method)(**args))

    def end(self) -> None:
        """Let go of the transaction and its connection (in any thread; once)."""
        if self.timer is not None:
            self.timer.cancel()
        if self.store is None or self._thread is None:
            return
        thread, self._thread = self._thread, None
        try:
            thread.submit(self._stack.close).result()
        finally:
            thread.shutdown(wait=False)
            self.store.close()


class Snapshots:
    """The open snapshots, by (learner, id): at most ``slots`` held in the class and one held per learner,
    each for ``seconds`` at most. ``make(learner)`` makes a learner's store for a held one (in a worker
    thread); ``ending`` runs a held snapshot's `end` off the event loop."""

    def __init__(
        self,
        slots: int,
        seconds: float,
        make: Callable[[str], PostgresStore],
        ending: Callable[[Snapshot], Any],
    ) -> None:
        self.slots = slots
        self.seconds = seconds
        self._make = make
        self._ending = ending
        self._open: dict[tuple[str, str], Snapshot] = {}
        self._beginning: set[str] = set()  # learners whose held snapshot is being begun
        self.held_peak = 0  # the most held at once

    def held(self) -> int:
        return sum(snapshot.held for snapshot in self._open.values()) + len(self._beginning)

    def _held_by(self, learner: str) -> bool:
        mine = (snapshot.held for (owner, _), snapshot in self._open.items() if owner == learner)
        return learner in self._beginning or any(mine)

    def reserve(self, learner: str) -> bool:
        """Whether a new snapshot of the learner's will be held, its slot taken if so (on the event loop;
        `add` or `unreserve` gives the slot to the snapshot or back)."""
        if self.held() >= self.slots or self._held_by(learner):
            return False
        self._beginning.add(learner)
        return True

    def unreserve(self, learner: str) -> None:
        self._beginning.discard(learner)

    def opened(self, learner: str, held: bool) -> Snapshot:
        """A new snapshot (not yet begun): held only when ``held`` (in a worker thread)."""
        return Snapshot(self._make(learner) if held else None)

    def add(self, learner: str, snapshot: Snapshot) -> str:
        """Keep the begun ``snapshot`` (on the event loop): its id. It ends by itself after ``seconds``; the
        learner's oldest id ends when they have `PER_LEARNER` open."""
        self._beginning.discard(learner)
        theirs = [key for key in self._open if key[0] == learner]
        for old in theirs[: max(0, len(theirs) - PER_LEARNER + 1)]:
            self.end(*old)
        key = secrets.token_urlsafe(16)
        self._open[(learner, key)] = snapshot
        loop = asyncio.get_running_loop()
        snapshot.timer = loop.call_later(self.seconds, self.end, learner, key)
        self.held_peak = max(self.held_peak, self.held())
        return key

    def get(self, learner: str, key: str) -> Snapshot | None:
        """The learner's open snapshot of that id (another learner's id finds nothing)."""
        return self._open.get((learner, key))

    def end(self, learner: str, key: str) -> None:
        """End it (on the event loop; an id not open does nothing)."""
        snapshot = self._open.pop((learner, key), None)
        if snapshot is not None:
            if snapshot.timer is not None:
                snapshot.timer.cancel()
            if snapshot.held:
                self._ending(snapshot)

    def close(self) -> None:
        for snapshot in self._open.values():
            snapshot.end()
        self._open.clear()
