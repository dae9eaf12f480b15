"""Each learner's fair share of the class service: at most `ClassShare.per_learner` of one learner's calls
run at once (each holds a worker thread and a server connection while it runs), at most
`ClassShare.waiting` more wait their turn, and a call beyond that is refused at once. Issue 35: sixteen
merges from one learner held all ten workers, and every other learner's saves timed out behind them.

A call waits for its turn before its body is read (`scheduler.service._server`), so the calls waiting hold
no body in memory; one that waits longer than ``timeout_s`` is refused too. All of it runs on the service's
event loop: no lock is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass, field

from scheduler._errors import StoreError, StoreUnavailableError

__all__ = ["BusyError", "ClassShare", "Turn"]


class BusyError(StoreUnavailableError):
    """A learner sent more calls at once than their share: their kernel keeps the answer and sends it again
    later, as for a service that cannot be reached."""

    def __init__(self, where: str, detail: str) -> None:
        self.detail = detail
        StoreError.__init__(self, where, f"{where} is busy with this learner's calls: {detail}")


@dataclass
class _Learner:
    running: int = 0
    queue: deque[asyncio.Future[None]] = field(default_factory=deque)


class Turn:
    """One call's turn: `release` (once; again does nothing) lets the learner's next call run."""

    def __init__(self, share: ClassShare, learner: str) -> None:
        self._share = share
        self._learner = learner
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._share._release(self._learner)


class ClassShare:
    """How many calls of one learner run at once (``per_learner``) and wait (``waiting``), and how long
    one may wait (``timeout_s``)."""

    def __init__(self, per_learner: int, waiting: int, timeout_s: float) -> None:
        for name, value in (("per_learner", per_learner), ("waiting", waiting)):
            least = 1 if name == "per_learner" else 0
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number (per_learner at least 1), got {value!r}")
        self.per_learner = per_learner
        self.waiting = waiting
        self.timeout_s = timeout_s
        self.refused = 0  # calls refused, for the benchmark and the tests
        self._learners: dict[str, _Learner] = {}

    def running(self, learner: str) -> int:
        seen = self._learners.get(learner)
        return 0 if seen is None else seen.running

    async def turn(self, learner: str, where: str) -> Turn:
        """Wait for the learner's turn; BusyError when too many of theirs already wait, or after
        ``timeout_s``."""
        seen = self._learners.setdefault(learner, _Learner())
        if seen.running < self.per_learner and not seen.queue:
            seen.running += 1
            return Turn(self, learner)
        if len(seen.queue) >= self.waiting:
            self.refused += 1
            raise BusyError(
                where,
                f"{seen.running + len(seen.queue)} are running or waiting, the most it takes at once; the "
                "answer is kept and sent again in a moment",
            )
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        seen.queue.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), self.timeout_s)
        except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
            if waiter.done() and not waiter.cancelled():  # given the turn just as the wait ended
                self._release(learner)
            else:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    seen.queue.remove(waiter)
                self._forget(learner)
            if isinstance(exc, asyncio.CancelledError):
                raise
            self.refused += 1
            raise BusyError(
                where,
                f"their earlier calls kept it busy for {self.timeout_s:g} s; the answer is kept and sent "
                "again in a moment",
            ) from None
        return Turn(self, learner)

    def _release(self, learner: str) -> None:
        seen = self._learners.get(learner)
        if seen is None:
            return
        while seen.queue:  # the turn passes to the next call still waiting
            waiter = seen.queue.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        seen.running -= 1
        self._forget(learner)

    def _forget(self, learner: str) -> None:
        seen = self._learners.get(learner)
        if seen is not None and seen.running <= 0 and not seen.queue:
            del self._learners[learner]
