"""Who hears the checkers' verdicts: a listener is called with each `CheckResult` an exercise's checker
returns (`listen`), so that a named mistake can bring back the code card that practises it, while the
checkers import nothing of the progress store. A code card's own grading is `muted`: its verdict is the
card's answer, already recorded as one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from course.checkers._result import CheckResult

__all__ = ["Listener", "heard", "listen", "muted", "unlisten"]

Listener = Callable[[CheckResult], None]

_LISTENERS: list[Listener] = []
_MUTED: ContextVar[bool] = ContextVar("_MUTED", default=False)


def listen(listener: Listener) -> None:
    """Call `listener` with every verdict from now on (once, however often it is added)."""
    if listener not in _LISTENERS:
        _LISTENERS.append(listener)


def unlisten(listener: Listener) -> None:
    """Stop calling `listener` (nothing happens if it was not listening)."""
    if listener in _LISTENERS:
        _LISTENERS.remove(listener)


@contextmanager
def muted() -> Iterator[None]:
    """No listener hears the verdicts given inside the block (in this thread or task)."""
    token = _MUTED.set(True)
    try:
        yield
    finally:
        _MUTED.reset(token)


def heard(result: CheckResult) -> None:
    """Give `result` to every listener, unless muted; a listener that fails is skipped: a checker's verdict
    never ends in a traceback."""
    if _MUTED.get():
        return
    for listener in list(_LISTENERS):
        try:
            listener(result)
        except Exception:
            continue
