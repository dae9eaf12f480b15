"""``python -m course cram``: every question of the lessons named, as practice that leaves the schedule as it
was."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import TextIO

from course.bank import NAMES, Bank
from course.lessons import lesson_id
from course.progress import plural
from course.terminal.asking import ask
from course.terminal.console import Console, Quit
from course.terminal.exits import EXIT_OK, EXIT_USAGE
from course.terminal.session import (
    NotSaved,
    elapsed_ms,
    heading,
    lessons_named,
    opened_keeper,
    rating_or_kept,
    stopped,
)
from course.terminal.writing import check_writable
from scheduler import CramSession, Storage, StoreError

__all__ = ["cram"]


def cram(
    console: Console,
    err: TextIO,
    store: Storage,
    bank: Bank,
    requested: Sequence[str],
    clock: Callable[[], datetime],
    rng: random.Random,
) -> int:
    """Ask every question of the `requested` lessons (default: the enrolled ones) in course order, and log
    each answer as practice."""
    lessons = _lessons(err, store, bank, requested)
    if lessons is None:
        return EXIT_USAGE
    items = [item for item in bank.items() if item.deck in lessons]
    keeper = opened_keeper(console, store, create=True)  # a class database: keeps what the server cannot take
    check_writable(store)  # before the first question, not after its answer
    console.say(
        f"Practice of {lessons_named(lessons)}: {plural(len(items), 'question')}. Practice answers are "
        "logged apart and do not change your review schedule. Type q at any prompt to stop."
    )
    session = CramSession(keeper, items)
    answered = 0
    try:
        while (item := session.next()) is not None:
            question = bank[item.id]
            console.say()
            console.say(f"[{answered + 1}/{answered + session.remaining}] {heading(question)}, practice")
            began = time.monotonic()
            rating, stop = rating_or_kept(partial(ask, console, question, None, rng))
            try:
                session.answer(item, rating, clock(), elapsed_ms(began))
            except StoreError as problem:
                raise NotSaved(problem, plural(answered, "practice answer") + " logged") from problem
            answered += 1
            for note in keeper.notes():  # kept answers sent first; this one kept
                console.say(note)
            if not keeper.kept:
                console.say(f"Logged as practice: {NAMES[rating]}.")
            if stop is not None:
                raise stop
    except Quit as stop:
        return stopped(console, stop, plural(answered, "practice answer") + " logged", keeper.waiting())
    console.say()
    console.say(f"Practice over: {plural(answered, 'practice answer')} logged; your schedule is unchanged.")
    if waiting := keeper.waiting():
        console.say(waiting)
    return EXIT_OK


def _lessons(err: TextIO, store: Storage, bank: Bank, requested: Sequence[str]) -> list[str] | None:
    """The lessons to practise, in course order: the `requested` ones, else the enrolled ones; None (after
    saying why on `err`) when a requested one is unknown or none is enrolled."""
    if requested:
        try:
            lessons = [lesson_id(raw, bank.lessons()) for raw in requested]
        except ValueError as problem:
            err.write(f"{problem}\n")
            return None
    else:
        lessons = [lesson for lesson in bank.lessons() if lesson in store.enrolled()]
        if not lessons:
            err.write("no lesson started yet: name the lessons to practise, e.g. python -m course cram 00\n")
            return None
    return [lesson for lesson in bank.lessons() if lesson in lessons]  # course order
