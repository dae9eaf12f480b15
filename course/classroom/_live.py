"""Live class review: the course's side of a live session (`scheduler.postgres.LiveRoom` keeps it in the
class database). Which questions can be asked live, how the projector's option order travels to every learner,
what a learner's answer is recorded as, how the room's answers are tallied, and the report at the end.

Only choice and numeric questions are asked live: they have one right answer to count. A choice question is
shown to the whole room in one order (the projector draws it, `layout_text`; every learner's widget shows the
same labels, `presentation_of`), and a learner's answer is recorded as the bank index of the option chosen, so
that changing the labels changes nothing recorded. A numeric answer is recorded as the number typed, written
one way (`numeric_answer`: "1/8", "0.125" and "1.25e-1" are all "0.125"). The projector counts only answers
the question can have (`counted`): nothing else a learner could write into the class database reaches it.

A live session runs in a room (the instructor's own by default, named after their role): each learner's
widget follows one room, so that two instructors teaching at once do not collide (`rooms_text` says which
rooms run when a learner has not chosen).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from course.bank import LETTERS, Bank, Kind, Presentation, Question, answer_text
from course.classroom._class_review import ClassReview, Tally
from course.progress import learner_url, server_url

if TYPE_CHECKING:  # psycopg: only for a class database, and only the types here
    from scheduler.postgres import LiveRoom, LiveState

__all__ = [
    "LIVE_KINDS",
    "ROOM_VAR",
    "OptionCount",
    "answer_of",
    "class_url",
    "counted",
    "is_right",
    "layout_text",
    "live_questions",
    "numeric_answer",
    "open_room",
    "option_counts",
    "presentation_of",
    "right_text",
    "room_of",
    "rooms_text",
    "session_summary",
    "shown_answer",
    "valid_answer",
]

ROOM_VAR = "COURSE_ROOM"
"""The environment variable naming the room a learner's ``live()`` joins (a hub may set it per learner)."""

LIVE_KINDS = (Kind.CHOICE, Kind.NUMERIC)
"""The kinds of question a live session asks: each has one right answer the room's answers are counted by."""


def class_url(db: str | None = None) -> str | None:
    """The class database a live session runs in: `db`, else ``$COURSE_DB`` when it names one, logging in as
    `course.progress.learner_url` says. None without a class database (self-study has no live sessions)."""
    url = server_url(db)
    return None if url is None else learner_url(url)


def open_room(url: str) -> LiveRoom:
    """A `scheduler.postgres.LiveRoom` on the class database at `url` (a ``StoreError`` if it cannot be
    used)."""
    from scheduler.postgres import LiveRoom as Room  # psycopg: only for a class database

    return Room.open(url)


def live_questions(bank: Bank, lessons: Sequence[str]) -> list[Question]:
    """The questions of `lessons` a live session can ask (`LIVE_KINDS`), lesson by lesson in bank order."""
    return [q for lesson in lessons for q in bank.questions(lesson) if q.kind in LIVE_KINDS]


def layout_text(presentation: Presentation) -> str:
    """The order of a choice question's options as the room sees it (bank indexes, comma-separated); ""
    for a numeric question."""
    return ",".join(str(index) for index in presentation.order)


def presentation_of(question: Question, layout: str) -> Presentation:
    """The room's presentation of `question` from the projector's `layout_text` (ValueError for a layout
    that is not an order of its options)."""
    order = tuple(int(part) for part in layout.split(",")) if layout else ()
    return Presentation(question, order, LETTERS)


def answer_of(presentation: Presentation, position: int) -> str:
    """What a choice answer is recorded as: the bank index of the option shown at `position`."""
    return str(presentation.order[position])


def numeric_answer(question: Question, typed: str) -> str:
    """What a numeric answer is recorded as: the number typed (`Question.parse_number`: a unit, a fraction
    and scientific notation allowed), written one way: an integer as its digits, any other number as Python's
    shortest form ("0.125", "1e-05"). ValueError for text that is not a finite number."""
    value = question.parse_number(typed)
    if not math.isfinite(value):
        raise ValueError(f"not a number: {typed!r}")
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


_INDEX = re.compile(r"[0-9]{1,3}")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?")


def valid_answer(question: Question, answer: str) -> bool:
    """Whether `answer` is one that `question` can be given live: an index of one of a choice question's
    options, or a number written as `numeric_answer` writes one. Anything else (what a learner could write
    into the class database by hand) is no answer."""
    if question.kind == Kind.CHOICE:
        return (
            bool(_INDEX.fullmatch(answer))
            and str(int(answer)) == answer
            and int(answer) < len(question.options)
        )
    return bool(_NUMBER.fullmatch(answer)) and len(answer) <= 32 and math.isfinite(float(answer))


def counted(question: Question, counts: Mapping[str, int]) -> dict[str, int]:
    """The answers the projector counts: those of `counts` that `question` can be given (`valid_answer`)."""
    return {answer: n for answer, n in counts.items() if valid_answer(question, answer)}


def room_of(room: str | None = None) -> str | None:
    """The room a learner's ``live()`` follows: `room`, else ``$COURSE_ROOM`` when set, else None (the one
    session running, whichever room it is in)."""
    if room is not None:
        return room
    return os.environ.get(ROOM_VAR) or None


def rooms_text(running: Sequence[LiveState]) -> str:
    """What a learner who has chosen no room is told while several sessions run (`running`: their
    `LiveState`s, by room)."""
    listed = ", ".join(f"room “{state.room}” ({state.instructor}: {state.title})" for state in running)
    first = running[0].room if running else "…"
    return (
        f"{len(running)} live sessions are running: {listed}. Join yours with its button below, or run "
        f'live(room="{first}").'
    )


def is_right(question: Question, answer: str) -> bool:
    """Whether a recorded answer is right: a choice question's option index, a numeric question's text (an
    answer that is not a number is wrong)."""
    if question.kind == Kind.CHOICE:
        return answer.isdigit() and question.is_correct(int(answer))
    try:
        return question.is_correct(answer)
    except ValueError:
        return False


def shown_answer(presentation: Presentation, answer: str) -> str:
    """A recorded answer as the room reads it: a choice question's label ("B"), a number as typed."""
    if presentation.question.kind == Kind.CHOICE and answer.isdigit():
        index = int(answer)
        if index in presentation.order:
            return presentation.label(presentation.order.index(index))
    return answer


@dataclass(frozen=True)
class OptionCount:
    """One bar of the projector's distribution: a label ("B", or a number typed), the option's text (choice
    questions), how many gave it, and whether it is right."""

    label: str
    text: str
    count: int
    right: bool


def option_counts(presentation: Presentation, counts: dict[str, int], *, top: int = 5) -> list[OptionCount]:
    """The distribution the projector shows: every option of a choice question in the order shown (none
    chosen: 0); for a numeric question the `top` answers most given, then "other" for the rest."""
    question = presentation.question
    if question.kind == Kind.CHOICE:
        return [
            OptionCount(shown.label, shown.option.text, counts.get(str(index), 0), shown.right)
            for index, shown in zip(presentation.order, presentation.shown(), strict=True)
        ]
    ranked = list(counts.items())
    rows = [OptionCount(answer, "", n, is_right(question, answer)) for answer, n in ranked[:top]]
    rest = sum(n for _, n in ranked[top:])
    if rest:
        rows.append(OptionCount("other", "", rest, False))
    return rows


def right_text(presentation: Presentation) -> str:
    """The right answer as the room reads it: the right option's label, or a numeric answer with its unit."""
    if presentation.question.kind == Kind.CHOICE:
        return presentation.right_label
    return answer_text(presentation.question)


def session_summary(
    session: int,
    started: datetime,
    lessons: Sequence[str],
    results: Sequence[tuple[str, dict[str, int]]],
    bank: Bank,
    at: datetime,
) -> ClassReview:
    """A finished live session as a class review (`course.classroom.class_review_lines` reports it): for each
    question asked and answered, in order (`results`: item id and its answers' counts), how many of those who
    answered got it right. Questions no longer in the bank are left out."""
    tallies = []
    for item_id, given in results:
        question = bank.get(item_id)
        if question is None:
            continue
        counts = counted(question, given)
        answered = sum(counts.values())
        if not answered:
            continue
        right = sum(n for answer, n in counts.items() if is_right(question, answer))
        tallies.append(Tally(item_id, right, answered, at))
    room = max((t.room for t in tallies), default=1)
    return ClassReview(session, started, room, tuple(lessons), tuple(tallies))
