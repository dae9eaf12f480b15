"""Mistakes that come back: when an exercise's checker names a typical mistake, the code cards that practise
it (their ``mistakes`` field) are brought back, due from the start of the learner's next day, so that the
learner writes that step again from memory. Each is a `scheduler.Nudge` (an event of its own, never a
review) whose reason is the mistake's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, tzinfo

from course.bank import Bank, Kind, Question
from scheduler import Nudge, Storage, day_start

__all__ = ["WEEK", "bring_back", "brought_back", "next_day", "practising"]

WEEK = timedelta(days=7)


def practising(bank: Bank, mistake: str) -> list[Question]:
    """The code questions of `bank` that practise the named `mistake`, in bank order."""
    return [question for question in bank if question.kind == Kind.CODE and mistake in question.mistakes]


def next_day(at: datetime, tz: tzinfo, rollover_hour: int = 4) -> datetime:
    """The start of the learner's day after the one that holds `at` (UTC)."""
    return day_start(day_start(at, tz, rollover_hour) + timedelta(hours=36), tz, rollover_hour)


def bring_back(
    store: Storage, cards: Sequence[Question], mistake: str, at: datetime, tz: tzinfo, rollover_hour: int = 4
) -> list[Question]:
    """Nudge each of `cards` for `mistake` at `at`, due at the start of the next day; a card already brought
    back for that mistake since the start of today is not nudged again. Returns the cards nudged now."""
    due = next_day(at, tz, rollover_hour)
    today = store.nudges(day_start(at, tz, rollover_hour))
    done = {nudge.item_id for nudge in today if nudge.reason == mistake}
    nudged = [card for card in cards if card.id not in done]
    for card in nudged:
        store.nudge(Nudge(card.id, at, due, mistake))
    return nudged


def brought_back(store: Storage, at: datetime) -> int:
    """How many cards nudges brought back in the week up to `at` (each card once)."""
    return len({nudge.item_id for nudge in store.nudges(at - WEEK, at + timedelta(milliseconds=1))})
