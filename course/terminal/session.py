"""What ``review``, ``quiz`` and ``cram`` share around the questions they ask: the heading of each, the time
taken, a rating kept when the learner stops, how a stop or an answer that could not be saved ends the command,
and, on a class database, answers kept on this computer while the server cannot be reached
(`course.progress.Keeper`, which every answer goes through)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from course.bank import Question
from course.progress import Keeper, StoreSource, lesson_label
from course.terminal.console import Console, Quit
from scheduler import Rating, Storage

__all__ = ["NotSaved", "elapsed_ms", "heading", "lessons_named", "opened_keeper", "rating_or_kept", "stopped"]


class NotSaved(Exception):
    """An answer could not be saved: `problem` says why, `done` what was saved before it."""

    def __init__(self, problem: Exception, done: str) -> None:
        super().__init__(str(problem))
        self.problem = problem
        self.done = done


def opened_keeper(console: Console, store: Storage, *, create: bool) -> Keeper:
    """The `Keeper` every answer of the command goes through, started: what an earlier session kept on this
    computer for a class database is sent now, and said."""
    keeper = Keeper(StoreSource(store), create=create)
    keeper.start()
    for note in keeper.notes():  # answers an earlier session kept, sent now
        console.say(note)
    return keeper


def heading(question: Question) -> str:
    """``lesson 02 Scaled dot-product attention, choice (02-softmax-scale)``."""
    return f"lesson {lesson_label(question.lesson)}, {question.kind} ({question.id})"


def lessons_named(ids: Sequence[str]) -> str:
    """``lesson 02``, ``lessons 01, 02``."""
    return f"lesson{'' if len(ids) == 1 else 's'} {', '.join(ids)}"


def elapsed_ms(began: float) -> int:
    """Milliseconds since `began` (a ``time.monotonic()``)."""
    return round((time.monotonic() - began) * 1000)


def rating_or_kept(ask: Callable[[], Rating]) -> tuple[Rating, Quit | None]:
    """The rating `ask` returns and None; or, when the learner stops where a rating is already known (a right
    answer counted as Good), that rating and the stop, to raise once the rating is saved."""
    try:
        return ask(), None
    except Quit as stop:
        if stop.keep is None:
            raise
        return stop.keep, Quit(stop.reason, status=stop.status)


def stopped(console: Console, stop: Quit, done: str, waiting: str = "") -> int:
    """Say why the command stopped, what was `done` and what still `waiting` to be sent; return the exit
    status of the stop."""
    console.say(f"Stopped ({stop.reason}): {done}.")
    if waiting:
        console.say(waiting)
    return stop.status
