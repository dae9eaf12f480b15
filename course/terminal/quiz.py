"""``python -m course quiz LESSON``: a lesson's quiz in the terminal, as its notebook's quiz cell gives it.

Every question of the lesson, in the bank's order, asked as ``review`` asks it; each answer is saved as the
notebook's quiz saves it (`course.progress.Keeper.save_quiz_answer`): the lesson enrolled, then the answer
saved as a review, or as practice when the question is already scheduled on a later day (its schedule
unchanged). So a learner who works in the terminal alone starts a lesson here, and its questions come up in
``review``. A missing progress file is created by the first answer.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, tzinfo
from typing import TextIO

from course.bank import NAMES, Bank, Question
from course.lessons import lesson_id
from course.progress import Keeper, due_day, interval, lesson_label, note_for, plural
from course.terminal.asking import ask
from course.terminal.console import Console, Quit
from course.terminal.exits import EXIT_OK, EXIT_USAGE
from course.terminal.session import NotSaved, elapsed_ms, heading, opened_keeper, rating_or_kept, stopped
from course.terminal.writing import check_writable
from scheduler import Rating, Storage, StoreError, due_from

__all__ = ["quiz"]


def quiz(
    console: Console,
    err: TextIO,
    store: Storage,
    bank: Bank,
    requested: str,
    clock: Callable[[], datetime],
    tz: tzinfo,
    rng: random.Random,
) -> int:
    """Ask every question of the `requested` lesson in order and save each answer as the notebook's quiz
    does; at the end, how many were right and when the lesson's next review is."""
    try:
        lesson = lesson_id(requested, bank.lessons())
    except ValueError as problem:
        err.write(f"{problem}\n")
        return EXIT_USAGE
    questions = bank.questions(lesson)
    keeper = opened_keeper(console, store, create=True)  # a class database: keeps what the server cannot take
    check_writable(store)  # before the first question, not after its answer
    console.say(
        f"Quiz of lesson {lesson_label(lesson)}: {plural(len(questions), 'question')}. Each answer is saved "
        "to your review schedule as you go. Type q at any prompt to stop."
    )
    ratings: list[Rating] = []
    practice = 0
    try:
        for question in questions:
            console.say()
            rating, was_practice, stop = _quiz_one(
                console, keeper, lesson, question, clock, tz, rng, len(ratings), len(questions)
            )
            ratings.append(rating)
            practice += was_practice
            if stop is not None:
                raise stop
    except Quit as stop:
        return stopped(console, stop, plural(len(ratings), "answer") + " saved", keeper.waiting())
    console.say()
    console.say(_summary(keeper, questions, ratings, practice, clock(), tz))
    if waiting := keeper.waiting():
        console.say(waiting)
    return EXIT_OK


def _quiz_one(
    console: Console,
    keeper: Keeper,
    lesson: str,
    question: Question,
    clock: Callable[[], datetime],
    tz: tzinfo,
    rng: random.Random,
    answered: int,
    count: int,
) -> tuple[Rating, bool, Quit | None]:
    """Ask `question` (`answered` of `count` saved before it) and save the answer: its rating, whether it
    was saved as practice, and the learner's stop when they stopped where the answer was already known (a
    right answer counted as Good: saved, and the caller stops after counting it)."""
    at = clock()
    card = keeper.card(question.id)
    due_on = None if card is None else due_from(card.due, card.last_review, tz)  # due on the learner's day
    practising = due_on is not None and due_on > at
    console.say(f"[{answered + 1}/{count}] {heading(question)}{', practice' if practising else ''}")
    if practising:
        assert due_on is not None
        console.say(
            f"This question is already scheduled (next review {_when(due_on, at, tz)}): your answer is saved "
            "as practice and leaves its schedule unchanged."
        )
    began = time.monotonic()
    answered_at: list[datetime] = []  # when the answer was given: the ratings' intervals and the save use it

    def intervals() -> dict[Rating, timedelta]:  # read only when the ratings are offered
        answered_at.append(clock())
        return keeper.memory.preview(card, question.id, answered_at[0])

    rating, stop = rating_or_kept(lambda: ask(console, question, None if practising else intervals, rng))
    saved_at = answered_at[0] if answered_at else clock()  # fuzz is drawn from the time: the label's is saved
    try:
        saved = keeper.save_quiz_answer(
            lesson, question.id, rating, saved_at, elapsed_ms(began), tz=tz, due_seen=due_on
        )
    except StoreError as problem:
        raise NotSaved(problem, plural(answered, "answer") + " saved") from problem
    for note in keeper.notes():  # kept answers sent first
        console.say(note)
    if saved.kept is not None:
        console.say(note_for(saved.kept))
    elif saved.review is None:
        assert saved.due_on is not None
        console.say(
            f"Saved as practice: {NAMES[rating]}. Its next review stays {_when(saved.due_on, saved_at, tz)}."
        )
    else:
        console.say(f"Saved: {NAMES[rating]}. Next review in {interval(saved.review.due - saved_at)}.")
    return rating, saved.practice, stop


def _summary(
    keeper: Keeper,
    questions: Sequence[Question],
    ratings: Sequence[Rating],
    practice: int,
    at: datetime,
    tz: tzinfo,
) -> str:
    """``Quiz over: 2 of 3 right; 3 answers saved. ... Next review of this lesson: tomorrow, with python -m
    course review.``"""
    right = sum(rating != Rating.AGAIN for rating in ratings)
    said = [f"Quiz over: {right} of {len(questions)} right; {plural(len(ratings), 'answer')} saved."]
    if practice:
        were = "was" if practice == 1 else "were"
        said.append(
            f"{plural(practice, 'answer')} {were} practice: questions already scheduled keep their schedule."
        )
    ids = {question.id for question in questions}
    try:
        cards = [card for item_id, card in keeper.cards().items() if item_id in ids]
    except StoreError:  # a class database out of reach: the answers are kept, said above
        cards = []
    if cards:
        first = min(due_from(card.due, card.last_review, tz) for card in cards)
        said.append(f"Next review of this lesson: {_when(first, at, tz)}, with python -m course review.")
    return " ".join(said)


def _when(due: datetime, at: datetime, tz: tzinfo) -> str:
    """``tomorrow``, ``in 3 days`` on a later learner's day; ``in 10m`` on the same day; ``now``."""
    if due <= at:
        return "now"
    day = due_day(due, at, tz)
    return day if day is not None else f"in {interval(due - at)}"
