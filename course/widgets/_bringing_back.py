"""The listener that brings code cards back: registered when the widgets are imported (a lesson's import
cell does: ``from course import quiz``), it hears every exercise checker's verdict in a Jupyter kernel, and
when the sentence names a mistake a code card practises, nudges that card for the next day in the
learner's progress database and says so under the sentence. Outside a kernel (a script, the tests) it does
nothing. A problem with the database is said in one line; the checker's verdict stands either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, tzinfo

from course.bank import Question, load_bank
from course.checkers import CheckResult, listen, mistake_in
from course.progress import PROBLEMS, Keeper, StoreSource, bring_back, local_tz, practising
from course.widgets._clock import Clock, read_clock, real_clock

__all__ = ["brought_back_text", "hear", "in_kernel"]


def in_kernel() -> bool:
    """Whether this code runs in a Jupyter kernel (where a learner's exercise runs)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def brought_back_text(cards: Sequence[Question]) -> str:
    """What the learner reads under the checker's sentence when `cards` come back."""
    if not cards:
        return ""
    names = ", ".join(f"`{card.function}` (lesson {card.lesson})" for card in cards)
    one = len(cards) == 1
    return (
        f"↻ Your review brings back the code card{'' if one else 's'} that practise{'s' if one else ''} "
        f"this mistake tomorrow: {names}, to write again from memory."
    )


def hear(
    result: CheckResult,
    *,
    store: object = None,
    clock: Clock = real_clock,
    tz: tzinfo | None = None,
    write: Callable[[str], object] = print,
) -> list[Question]:
    """Bring back the code cards that practise the mistake `result` names, if any (the cards nudged now)."""
    mistake = mistake_in(result.message)
    if result.ok or mistake is None:
        return []
    cards = practising(load_bank(), mistake.name)
    if not cards:
        return []
    at: datetime = read_clock(clock)
    try:
        with Keeper(StoreSource(store), create=True) as keeper:  # type: ignore[arg-type]
            nudged = bring_back(keeper, cards, mistake.name, at, tz or local_tz())
    except PROBLEMS as problem:
        write(f"(The code card that practises this mistake could not be brought back: {problem})")
        return []
    write(brought_back_text(cards))
    return nudged


def _listener(result: CheckResult) -> None:
    if in_kernel():
        hear(result)


listen(_listener)
