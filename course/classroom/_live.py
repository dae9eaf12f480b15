"""Live class review: the course's side of a live session (`scheduler.postgres.LiveRoom` keeps it in the
class database). Which questions can be asked live, how the projector's option order travels to every learner,
what a learner's answer is recorded as, how the room's answers are tallied, and the report at the end.

Choice, numeric and code questions are asked live: each has a right answer to count. A choice question is
shown to the whole room in one order (the projector draws it, `layout_text`; every learner's widget shows the
same labels, `presentation_of`), and a learner's answer is recorded as the bank index of the option chosen, so
that changing the labels changes nothing recorded. A numeric answer is recorded as the number typed, written
one way (`numeric_answer`: "1/8", "0.125" and "1.25e-1" are all "0.125"). The projector counts only answers
the question can have (`counted`): nothing else a learner could write into the class database reaches it.

A code question is answered with code that runs beside the learner's own kernel
(`course.checkers.run_code_limited`, the notebook's limits); the learner sees their checker's sentence, and
only a number is recorded (`code_answer`): ``"0"`` for code that passed, ``k`` for the k-th named mistake of
the card's `mistakes` that the checker's sentence names, ``"-1"`` for code wrong in another way (or that could
not be judged). The code itself never leaves the learner's computer. The projector shows how many passed and
the most common named mistakes by their label (`option_counts`, `named_mistakes`); the reveal shows the card's
worked solution, never anyone's code.

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
from course.progress import SERVICE_SCHEMES, learner_url, server_url
from scheduler import StoreError

if TYPE_CHECKING:  # psycopg: only for a class database, and only the types here
    from scheduler.postgres import LiveRoom, LiveState

__all__ = [
    "LIVE_KINDS",
    "OTHER_MISTAKE",
    "PASSED",
    "ROOM_VAR",
    "OptionCount",
    "answer_of",
    "class_url",
    "code_answer",
    "code_tally_text",
    "counted",
    "instructor_url",
    "is_right",
    "layout_text",
    "live_questions",
    "mistake_label",
    "named_mistakes",
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

LIVE_KINDS = (Kind.CHOICE, Kind.NUMERIC, Kind.CODE)
"""The kinds of question a live session asks: each has a right answer the room's answers are counted by."""
PASSED = "0"
"""What a code answer that passed its checker is recorded as."""
OTHER_MISTAKE = "-1"
"""What a code answer is recorded as when it did not pass and names none of the card's mistakes."""


def class_url(db: str | None = None) -> str | None:
    """The class database a live session runs in: `db`, else ``$COURSE_DB`` when it names one, logging in as
    `course.progress.learner_url` says. None without a class database (self-study has no live sessions)."""
    url = server_url(db)
    return None if url is None else learner_url(url)


def instructor_url(url: str) -> str:
    """`url`, unless it is a class service's: the service acts for learners only, and an instructor's
    projector or class report needs the database itself (a StoreError says so)."""
    if url.startswith(SERVICE_SCHEMES):
        raise StoreError(
            url,
            f"{url} is the class service, which acts for learners only: the projector and the class report "
            "need the class database's own URL, postgresql://INSTRUCTOR@HOST/course, in COURSE_DB or --db",
        )
    return url


def open_room(url: str) -> LiveRoom:
    """A `scheduler.postgres.LiveRoom` on the class database at `url` (a ``StoreError`` if it cannot be
    used). Through a class service (an ``https://`` URL), the learner's side of it
    (``scheduler.service.RemoteLiveRoom``, as the owner of ``$JUPYTERHUB_API_TOKEN``): an instructor runs a
    session with the class database's own URL."""
    if url.startswith(SERVICE_SCHEMES):
        from scheduler.service import RemoteLiveRoom

        # the learner's side only (what live() calls): the projector opens `instructor_url`s only
        return RemoteLiveRoom.open(url, os.environ.get("JUPYTERHUB_API_TOKEN", ""))  # type: ignore[return-value]
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


def code_answer(question: Question, ok: bool, sentence: str) -> str:
    """What a code answer is recorded as, from its checker's verdict (`course.checkers.CodeVerdict`'s `ok`
    and `sentence`): `PASSED` ("0"); else the 1-based place in `question.mistakes` of the named mistake
    the sentence names (`course.checkers.mistake_in`); else `OTHER_MISTAKE` ("-1"). Never the code."""
    if ok:
        return PASSED
    from course.checkers import mistake_in  # numpy and the checkers: only once code has been run

    mistake = mistake_in(sentence.strip())
    if mistake is not None and mistake.name in question.mistakes:
        return str(question.mistakes.index(mistake.name) + 1)
    return OTHER_MISTAKE


def _code_answers(question: Question) -> tuple[str, ...]:
    """Every answer a code question can be given live: passed, each of its named mistakes, another."""
    return (PASSED, *(str(k) for k in range(1, len(question.mistakes) + 1)), OTHER_MISTAKE)


def valid_answer(question: Question, answer: str) -> bool:
    """Whether `answer` is one that `question` can be given live: an index of one of a choice question's
    options, a number written as `numeric_answer` writes one, or for a code question one of `code_answer`'s
    ("0", "1" to the number of its named mistakes, "-1"). Anything else (what a learner could write into the
    class database by hand) is no answer."""
    if question.kind == Kind.CODE:
        return answer in _code_answers(question)
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
    answer that is not a number is wrong), a code question's `PASSED`."""
    if question.kind == Kind.CODE:
        return answer == PASSED
    if question.kind == Kind.CHOICE:
        return answer.isdigit() and question.is_correct(int(answer))
    try:
        return question.is_correct(answer)
    except ValueError:
        return False


def mistake_label(question: Question, answer: str) -> str | None:
    """The label of the named mistake a code answer records (`course.checkers.Mistake.label`, its name
    where the checkers no longer know it); None for an answer that names none."""
    if not answer.isdigit() or not 1 <= int(answer) <= len(question.mistakes):
        return None
    from course.checkers import MISTAKES  # numpy and the checkers: only for a code question

    name = question.mistakes[int(answer) - 1]
    mistake = MISTAKES.get(name)
    return name if mistake is None else mistake.label


def shown_answer(presentation: Presentation, answer: str) -> str:
    """A recorded answer as the room reads it: a choice question's label ("B"), a number as typed; for a
    code question "passed", "not passed: " and the named mistake's label, or "not passed"."""
    if presentation.question.kind == Kind.CODE:
        if answer == PASSED:
            return "passed"
        label = mistake_label(presentation.question, answer)
        return "not passed" if label is None else f"not passed: {label}"
    if presentation.question.kind == Kind.CHOICE and answer.isdigit():
        index = int(answer)
        if index in presentation.order:
            return presentation.label(presentation.order.index(index))
    return answer


@dataclass(frozen=True)
class OptionCount:
    """One bar of the projector's distribution: a label ("B", a number typed, or for a code question
    "passed", a named mistake's label or "other mistakes"), the option's text (choice questions), how many
    gave it, and whether it is right."""

    label: str
    text: str
    count: int
    right: bool


def named_mistakes(question: Question, counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """A code question's named mistakes that its answers (`counts`, as `counted` gives them) record, as
    (label, how many), most common first (ties in the card's order)."""
    given = [
        (label, counts[answer])
        for answer in _code_answers(question)
        if counts.get(answer) and (label := mistake_label(question, answer)) is not None
    ]
    return sorted(given, key=lambda pair: -pair[1])


def option_counts(presentation: Presentation, counts: dict[str, int], *, top: int = 5) -> list[OptionCount]:
    """The distribution the projector shows: every option of a choice question in the order shown (none
    chosen: 0); for a numeric question the `top` answers most given, then "other" for the rest; for a code
    question how many passed, the named mistakes given, most common first, then "other mistakes" (if any)."""
    question = presentation.question
    if question.kind == Kind.CODE:
        rows = [OptionCount("passed", "", counts.get(PASSED, 0), True)]
        rows += [OptionCount(label, "", n, False) for label, n in named_mistakes(question, counts)]
        other = counts.get(OTHER_MISTAKE, 0)
        if other:
            rows.append(OptionCount("other mistakes", "", other, False))
        return rows
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


def code_tally_text(question: Question, counts: Mapping[str, int]) -> str:
    """A code question's answers in one line: "2 of 5 passed", then the named mistakes given, most common
    first ("causal mask: transposed: 2"), then "other mistakes: 1" (`counts` as `counted` gives them)."""
    answered = sum(counts.values())
    parts = [f"{counts.get(PASSED, 0)} of {answered} passed"]
    parts += [f"{label}: {n}" for label, n in named_mistakes(question, counts)]
    if counts.get(OTHER_MISTAKE):
        parts.append(f"other mistakes: {counts[OTHER_MISTAKE]}")
    return "; ".join(parts)


def right_text(presentation: Presentation) -> str:
    """The right answer as the room reads it: the right option's label, a numeric answer with its unit, or
    for a code question "the worked solution below" (shown as code: `Question.answer`)."""
    if presentation.question.kind == Kind.CODE:
        return "the worked solution below"
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
    answered got it right (a code question: how many passed; its named mistakes are `code_tally_text`'s).
    Questions no longer in the bank are left out."""
    tallies = []
    for item_id, given in results:
        question = bank.find(item_id)  # a question, or a prediction asked live
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
