"""A write sent again saves once: a learner's kernel names each write with a key of its own (``"once"`` in
the request, `scheduler.service._client`), and the class service answers a write whose key it has seen with
the first one's answer, without a second call (issue 35: the same ``record`` sent three times saved three
rows). A key is kept `KEEP_SECONDS`, at most `PER_LEARNER` a learner; a write that failed is forgotten, so
that sending it again tries again. A copy that arrives while the first still runs waits for its answer.

The keys live in the service's memory: a write sent again after the service restarted is saved again, as
the outbox's answers are merged (``merge`` saves an answer already there once).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["KEEP_SECONDS", "MAX_KEY", "PER_LEARNER", "Once", "check_key"]

KEEP_SECONDS = 600.0
PER_LEARNER = 256
MAX_KEY = 64  # characters in a key
_T = TypeVar("_T")


def check_key(key: Any) -> str | None:
    """The request's key, or None for none; ValueError for one that is not 1 to `MAX_KEY` letters, digits,
    ``-`` or ``_``."""
    if key is None:
        return None
    if (
        not isinstance(key, str)
        or not 0 < len(key) <= MAX_KEY
        or not key.replace("-", "").replace("_", "").isalnum()
        or not key.isascii()
    ):
        raise ValueError(f"a write's key (once) is 1 to {MAX_KEY} ASCII letters, digits, - or _")
    return key


class Once:
    """The answers of the writes seen, by learner and key."""

    def __init__(self) -> None:
        self._seen: dict[str, OrderedDict[str, tuple[float, asyncio.Future[Any]]]] = {}
        self.repeats = 0  # writes answered from a first copy

    async def run(self, learner: str, key: str | None, write: Callable[[], Awaitable[_T]]) -> _T:
        if key is None:
            return await write()
        now = time.monotonic()
        theirs = self._seen.setdefault(learner, OrderedDict())
        while theirs and (now - next(iter(theirs.values()))[0] > KEEP_SECONDS or len(theirs) >= PER_LEARNER):
            theirs.popitem(last=False)
        seen = theirs.get(key)
        if seen is not None:
            self.repeats += 1
            first: _T = await asyncio.shield(seen[1])
            return first
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        theirs[key] = (now, answer)
        try:
            result = await write()
        except BaseException as error:
            theirs.pop(key, None)
            if not theirs:
                self._seen.pop(learner, None)
            if isinstance(error, Exception):
                answer.set_exception(error)
                answer.exception()  # retrieved: no "never retrieved" warning when no copy waits
            else:
                answer.cancel()
            raise
        answer.set_result(result)
        return result
