"""``python -m course review``: the questions that are due across the enrolled lessons, one at a time."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo

from course.bank import NAMES, Bank, Question
from course.progress import (
    Keeper,
    LimitOptions,
    due_again,
    due_in,
    interval,
    lessons_started,
    next_steps,
    outlook,
    plural,
)
from course.terminal.asking import ask
from course.terminal.console import Console, Quit
from course.terminal.exits import EXIT_OK
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
from scheduler import ASKED_AGAIN_WITHIN, Item, Limits, Rating, Session, Storage, StoreError

__all__ = ["START", "WELCOME", "review"]

WELCOME = "00-welcome.ipynb"
START = (
    f"answer a lesson's quiz, in its notebook (start with {WELCOME}) or in the terminal (python -m course "
    "quiz 00)"
)
"""How a lesson is started, said when none is."""
_OPTIONS = LimitOptions(  # they raise today's limits
    "--limit-reviews {n}", "--limit-new {n}", "To answer {them} now, review with {settings}."
)


def review(
    console: Console,
    store: Storage,
    bank: Bank,
    clock: Callable[[], datetime],
    tz: tzinfo,
    limits: Limits,
    rng: random.Random,
) -> int:
    """Serve what is due; when the queue runs out, serve what came due meanwhile (learning steps), until
    nothing is due now or today's limits are reached."""
    items = bank.items()
    started = set(lessons_started(store, items))  # what stats says: a card a mistake brought back starts one
    enrolled = [lesson for lesson in bank.lessons() if lesson in started]  # course order
    if not enrolled:
        console.say(f"No lesson started yet: {START}, and its questions will come up here.")
        return EXIT_OK
    start = clock()
    keeper = opened_keeper(console, store, create=False)
    store = keeper  # every answer goes through it; on a class database it keeps what the server cannot take
    session = Session(store, items, start, tz, limits)
    if not session.remaining:
        console.say(_whats_next(store, items, start, tz, limits, answered=False))
        return EXIT_OK
    check_writable(store)  # before the first question, not after its answer
    console.say(
        f"Review of {lessons_named(enrolled)}: {session.due_count} due now, {session.new_count} new. "
        "Type q at any prompt to stop; each answer is saved as you go."
    )
    answered = 0
    try:
        while session.remaining:
            while (item := session.next()) is not None:
                card = store.card(item.id)
                console.say()
                console.say(
                    f"[{answered + 1}/{answered + session.remaining}] {heading(bank[item.id])}, "
                    f"{'new' if card is None else card.state}"
                )
                stop = _review_one(console, session, item, bank[item.id], clock, rng, answered, keeper)
                answered += 1
                if stop is not None:
                    raise stop
            session = Session(store, items, clock(), tz, limits)
            if session.remaining:
                console.say()
                console.say(due_again(session.remaining))
    except Quit as stop:
        return stopped(console, stop, plural(answered, "answer") + " saved", keeper.waiting())
    after = _whats_next(store, items, clock(), tz, limits, answered=True)
    console.say()
    console.say(f"Session over: {plural(answered, 'answer')} saved. {after}")
    if waiting := keeper.waiting():
        console.say(waiting)
    return EXIT_OK


def _whats_next(
    store: Storage, items: list[Item], at: datetime, tz: tzinfo, limits: Limits, *, answered: bool
) -> str:
    """What comes once nothing more is due now (`course.progress.next_steps`), as one line."""
    view = outlook(store, items, at, tz, limits)
    return " ".join(next_steps(view, at, answered=answered, options=_OPTIONS, next_due=due_in(at, tz)))


def _review_one(
    console: Console,
    session: Session,
    item: Item,
    question: Question,
    clock: Callable[[], datetime],
    rng: random.Random,
    answered: int,
    keeper: Keeper,
) -> Quit | None:
    """Ask `question` and save the answer (`answered`: how many were saved before). Returns the learner's
    stop when they stopped where the answer was already known (a right answer counted as Good): it is saved,
    and the caller stops after counting it."""
    began = time.monotonic()
    answered_at: list[datetime] = []  # when the answer was given: the ratings' intervals and the save use it

    def intervals() -> dict[Rating, timedelta]:  # read only when the ratings are offered
        answered_at.append(clock())
        return session.intervals(item, answered_at[0])

    rating, stop = rating_or_kept(lambda: ask(console, question, intervals, rng))
    at = answered_at[0] if answered_at else clock()  # fuzz is drawn from the time: the label's is saved
    try:
        saved = session.answer(item, rating, at, elapsed_ms(began))
    except StoreError as problem:
        raise NotSaved(problem, plural(answered, "answer") + " saved") from problem
    for note in keeper.notes():  # kept answers sent first; this one kept
        console.say(note)
    if keeper.kept:
        return stop
    if saved.due - at <= ASKED_AGAIN_WITHIN:
        console.say(f"Saved: {NAMES[rating]}. It comes back before this session ends.")
    else:
        console.say(f"Saved: {NAMES[rating]}. Next review in {interval(saved.due - at)}.")
    return stop
