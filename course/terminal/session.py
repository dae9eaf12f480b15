"""What ``review`` and ``cram`` share around the questions they ask: the heading of each, the time taken, a
rating kept when the learner stops, how a stop or an answer that could not be saved ends the command, and, on
a class database, answers kept on this computer while the server cannot be reached (`Keeper`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from course.bank import Question
from course.keeping import KeepingStore
from course.outbox import note_for, sent_note, waiting_note
from course.outlook import lesson_label
from course.store_source import StoreSource
from course.terminal.console import Console, Quit
from scheduler import Rating, Storage, StoreError

__all__ = ["Keeper", "NotSaved", "elapsed_ms", "heading", "lessons_named", "rating_or_kept", "stopped"]


class Keeper:
    """The store a terminal session writes through. On a class database, an answer the server cannot take is
    kept on this computer (`course.outbox`) and sent at the next answer or session, as the notebooks' widgets
    do (`course.keeping.KeepingStore`); on a progress file, the store itself. `store` is what the session
    takes; `notes` says, after an answer, what happened to kept answers (nothing on a progress file)."""

    def __init__(self, store: Storage, *, create: bool) -> None:
        self._source = StoreSource(store)
        self._keeping: KeepingStore | None = None
        self.kept = False  # whether the last answer was kept rather than saved
        self.store = store
        if self._source.outbox is not None:
            self._source.hold(create=create)  # sends what an earlier session kept, if it can
            self._keeping = KeepingStore(self._source, create=create)
            self._keeping.remember()
            self.store = self._keeping.storage

    def notes(self) -> list[str]:
        """What to tell the learner after an answer: kept answers just sent; this answer kept."""
        if self._keeping is None:
            return []
        kept = self._keeping.take_kept()
        self.kept = kept is not None
        said = [sent_note(self._source.take_sent())]
        if kept is not None:
            said.append(note_for(kept))
        return [note for note in said if note]

    def waiting(self) -> str:
        """What waits on this computer to be sent, for the end of a session ("" for nothing)."""
        try:
            return waiting_note(self._source.waiting())
        except (StoreError, OSError) as problem:
            return str(problem)


class NotSaved(Exception):
    """An answer could not be saved: `problem` says why, `done` what was saved before it."""

    def __init__(self, problem: Exception, done: str) -> None:
        super().__init__(str(problem))
        self.problem = problem
        self.done = done


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
