"""What comes next for a learner, and how they are doing, as plain sentences any front end can show.

`outlook` reads what a review started at some time would find (an `Outlook`); `next_steps` says it in
sentences: what today's limits hold back, and when the next question is due. `progress_report` is the
summary of ``python -m course stats`` and of the review notebook. The sentences are plain text: a front end
escapes them (HTML) or wraps them (terminal), and passes in its own words for the parts that differ, such as
how to raise today's limits or how to say a due time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import NamedTuple

from course.bank import Question
from course.lessons import QUIZ_LESSONS, lesson_title
from course.progress._bringing_back import brought_back
from course.progress._predicting import prediction_counts
from scheduler import (
    AnsweredToday,
    Item,
    Limits,
    Memory,
    Session,
    Settings,
    Storage,
    day_numbers,
    day_start,
    due_from,
    format_interval,
    stats,
)

__all__ = [
    "NOTEBOOK_LIMITS",
    "NOTHING_DUE",
    "NOTHING_SCHEDULED",
    "LimitOptions",
    "Outlook",
    "due_again",
    "due_day",
    "due_in",
    "held_sentence",
    "interval",
    "lesson_label",
    "lessons_started",
    "local_date",
    "next_steps",
    "outlook",
    "parameters_text",
    "plural",
    "progress_report",
    "retention_text",
    "scheduling_text",
]

NOTHING_DUE = "Nothing is due right now."
NOTHING_SCHEDULED = "No question is scheduled yet."
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Outlook:
    """What a review started at some time would find.

    ``due_now``: the questions it would serve (due ones, then new ones); ``held_due`` and ``held_new``: the
    due and new questions that today's limits hold back until tomorrow; ``next_due``: the earliest time after
    that time at which a question is due on the learner's day (``scheduler.due_from``: an interval of a day
    or more from that day's rollover; None when no question is scheduled after it); ``limits``: today's
    limits; ``answered``: what the day's answers so far counted against them, by lesson (a quiz's answers
    too).
    """

    due_now: int
    held_due: int
    held_new: int
    next_due: datetime | None
    limits: Limits = field(default_factory=Limits)
    answered: AnsweredToday = field(default_factory=AnsweredToday)

    def held_text(self) -> str | None:
        """``10 due and 3 new questions wait``, ``1 new question waits``; None when nothing is held back."""
        parts = [f"{n} {kind}" for n, kind in ((self.held_due, "due"), (self.held_new, "new")) if n]
        if not parts:
            return None
        one = self.held_due + self.held_new == 1
        return f"{' and '.join(parts)} {'question waits' if one else 'questions wait'}"


class LimitOptions(NamedTuple):
    """How a front end raises today's limits: `reviews` and `new` say one limit, ``{n}`` standing for it
    (``--limit-new {n}``); `how` is the sentence that says how to answer what is held back now, ``{them}``
    standing for "it" or "them" and ``{settings}`` for the limits needed, joined by `separator`."""

    reviews: str
    new: str
    how: str
    separator: str = " "


NOTEBOOK_LIMITS = LimitOptions(
    "reviews_per_day={n}",
    "new_per_day={n}",
    "To answer {them} now: from scheduler import Limits, then review(limits=Limits({settings})).",
    ", ",
)
"""How the review notebook raises today's limits: ``review(limits=Limits(new_per_day=68))``."""


def outlook(store: Storage, items: Sequence[Item], at: datetime, tz: tzinfo, limits: Limits) -> Outlook:
    """The `Outlook` at `at` for `items`, read from one snapshot of `store`."""
    ids = {item.id for item in items}
    with store.snapshot():
        session = Session(store, items, at, tz, limits)
        cards = {item_id: card for item_id, card in store.cards().items() if item_id in ids}
        decks = set(store.enrolled())
    dues = [due_from(card.due, card.last_review, tz) for card in cards.values()]  # due on the learner's day
    due = sum(when <= at for when in dues)
    unseen = len({item.id for item in items if item.deck in decks and item.id not in cards})
    later = [when for when in dues if when > at]
    return Outlook(
        due_now=session.remaining,
        held_due=max(0, due - session.due_count),
        held_new=max(0, unseen - session.new_count),
        next_due=min(later, default=None),
        limits=limits,
        answered=session.answered_today,
    )


# ------------------------------------------------------------------------------------------------ words


def plural(n: int, word: str) -> str:
    """``1 question``, ``2 questions``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def interval(delta: timedelta) -> str:
    """`delta` as ``10m``, ``3h``, ``4d`` (``scheduler.format_interval``); a negative one as ``<1m``."""
    return format_interval(max(delta, timedelta(0)))


def lesson_label(lesson: str) -> str:
    """``02 Scaled dot-product attention``."""
    return f"{lesson} {lesson_title(lesson)}"


# ------------------------------------------------------------------------------------------ what's next


def due_again(n: int) -> str:
    """``Due now as well: 2 questions that came due during this session.``"""
    return f"Due now as well: {plural(n, 'question')} that came due during this session."


def due_day(due: datetime, at: datetime, tz: tzinfo) -> str | None:
    """The learner's day of `due` seen from that of `at` (days roll over at 4 am in `tz`): ``tomorrow``,
    ``in 3 days``; None on the same day."""
    today, then = day_numbers([at, due], tz)
    days = then - today
    return None if days <= 0 else "tomorrow" if days == 1 else f"in {days} days"


def due_in(at: datetime, tz: tzinfo | None = None) -> Callable[[datetime], str]:
    """The default sentence for the next due time, seen at `at`: ``Next question due in 10m.``; with `tz`, one
    due on a later learner's day is said as that day (``Next question due tomorrow.``, ``... in 3 days.``)."""

    def sentence(due: datetime) -> str:
        day = None if tz is None else due_day(due, at, tz)
        return f"Next question due {day if day is not None else f'in {interval(due - at)}'}."

    return sentence


def held_sentence(view: Outlook, options: LimitOptions = NOTEBOOK_LIMITS) -> str | None:
    """What today's limits hold back, in three sentences: which limits are reached and what counted against
    them, lesson by lesson (``Today's limit of 20 new questions is reached: you answered 45 new questions (12
    in lesson 00, 16 in 01, 17 in 02) today, quizzes included.``), what waits (``23 new questions wait until
    tomorrow.``), and how to answer it now, in the words of `options` (default `NOTEBOOK_LIMITS`), with the
    limits that serve every question held back (``To answer them now, review with --limit-new 68.``). None
    when nothing is held back."""
    held = view.held_text()
    if held is None:
        return None
    reached = []  # (the limit, what counted against it, the setting that serves every question held back)
    if view.held_due:
        limit, done = view.limits.reviews_per_day, view.answered.reviews
        setting = options.reviews.format(n=max(limit, sum(done.values())) + view.held_due)
        reached.append((plural(limit, "review"), _answered(done, "review"), setting))
    if view.held_new:
        limit, done = view.limits.new_per_day, view.answered.new
        setting = options.new.format(n=max(limit, sum(done.values())) + view.held_new)
        reached.append((plural(limit, "new question"), _answered(done, "new question"), setting))
    one = len(reached) == 1
    opening = (
        f"Today's limit{'' if one else 's'} of {' and '.join(limit for limit, _, _ in reached)} "
        f"{'is' if one else 'are'} reached"
    )
    counted = [done for _, done, _ in reached if done]
    if counted:
        opening += f": you answered {' and '.join(counted)} today, quizzes included"
    how = options.how.format(
        them="it" if view.held_due + view.held_new == 1 else "them",
        settings=options.separator.join(setting for _, _, setting in reached),
    )
    return f"{opening}. {held} until tomorrow. {how}"


def _answered(by_lesson: Mapping[str, int], word: str) -> str:
    """``45 new questions (12 in lesson 00, 16 in 01, 17 in 02)``, ``3 reviews (all in lesson 01)``, the
    lessons in course order; "" for none."""
    total = sum(by_lesson.values())
    if not total:
        return ""
    lessons = _in_course_order(lesson for lesson, n in by_lesson.items() if n)
    if len(lessons) == 1:
        return f"{plural(total, word)} (all in lesson {lessons[0]})"
    counts = [
        f"{by_lesson[lesson]} in {'lesson ' if k == 0 else ''}{lesson}" for k, lesson in enumerate(lessons)
    ]
    return f"{plural(total, word)} ({', '.join(counts)})"


def next_steps(
    view: Outlook,
    at: datetime,
    *,
    answered: bool,
    options: LimitOptions = NOTEBOOK_LIMITS,
    next_due: Callable[[datetime], str] | None = None,
    unscheduled: str | None = NOTHING_SCHEDULED,
) -> list[str]:
    """What comes once nothing more is due now, as sentences: `NOTHING_DUE` (unless questions were
    `answered` in this session, or today's limits hold some back), what the limits hold back
    (`held_sentence` in the words of `options`), and when the next question is due: `next_due` (default
    `due_in`) of that time, or `unscheduled` (None: nothing) when no question is scheduled. The next due
    time is left out when due questions are held back: they come first."""
    held = held_sentence(view, options)
    if view.next_due is None:
        upcoming = None if held is not None else unscheduled
    elif not view.held_due:
        upcoming = (next_due if next_due is not None else due_in(at))(view.next_due)
    else:
        upcoming = None
    opening = [held] if held is not None else [] if answered else [NOTHING_DUE]
    return opening + ([upcoming] if upcoming is not None else [])


# ------------------------------------------------------------------------------------------- scheduling


def retention_text(settings: Settings) -> str:
    """``85% (the default)``, ``90%``."""
    default = " (the default)" if settings.desired_retention is None else ""
    return f"{_percent(_retention(settings))}{default}"


def _retention(settings: Settings) -> float:
    """The desired retention in use: the setting, else Memory's default."""
    return Memory().desired_retention if settings.desired_retention is None else settings.desired_retention


def scheduling_text(settings: Settings, tz: tzinfo) -> str:
    """``FSRS default parameters, desired retention 85%.``, ``your own FSRS parameters (fitted 1 Dec 2026 to
    640 reviews), desired retention 90%.``"""
    retention = f"desired retention {_percent(_retention(settings))}."
    if settings.parameters is None:
        return f"FSRS default parameters, {retention}"
    fitted = _fitted(settings, tz)
    return f"your own FSRS parameters{f' (fitted {fitted})' if fitted else ''}, {retention}"


def parameters_text(settings: Settings, tz: tzinfo) -> str:
    """``the defaults``, ``your own, fitted on 1 Dec 2026 to 640 reviews``."""
    if settings.parameters is None:
        return "the defaults"
    fitted = _fitted(settings, tz, on="on ")
    return f"your own, fitted {fitted}" if fitted else "your own"


def _fitted(settings: Settings, tz: tzinfo, on: str = "") -> str:
    """``1 Dec 2026 to 640 reviews`` (with `on` before the date), or as much of it as is known."""
    fitted = []
    if settings.fitted_at is not None:
        fitted.append(f"{on}{local_date(settings.fitted_at, tz)}")
    if settings.fitted_reviews is not None:
        fitted.append(f"to {plural(settings.fitted_reviews, 'review')}")
    return " ".join(fitted)


def local_date(at: datetime, tz: tzinfo) -> str:
    """``1 Dec 2026``: the day of `at` in `tz` (English month names, whatever the locale)."""
    day = at.astimezone(tz).date()
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _percent(value: float) -> str:
    """``85%``, ``87.5%``."""
    return f"{round(value * 100, 2):g}%"


# ------------------------------------------------------------------------------------------------ stats


def progress_report(
    store: Storage, items: Sequence[Item], at: datetime, tz: tzinfo, predictions: Sequence[Question] = ()
) -> str:
    """The summary of ``python -m course stats``, one line per figure: the progress file, the lessons
    started, what is due now, later today and on each of the next 7 days, the reviews so far, the true
    retention, the new questions available, the cards brought back by mistakes in the last 7 days, the
    predictions made of the bank's `predictions` (`prediction_counts`) and the scheduling settings, for
    `items` at `at` (days start at the rollover in `tz`)."""
    result = stats(store, items, at, tz)
    first = day_start(at, tz).astimezone(tz).date()
    days = [_WEEKDAYS[(first + timedelta(days=k)).weekday()] for k in range(1, 8)]
    retention = (
        "n/a (no reviews of learned questions yet)"
        if result.true_retention is None
        else f"{result.true_retention:.1%} (first review each day of learned questions)"
    )
    started = lessons_started(store, items)
    lines = [
        f"Progress file:    {store.location}",
        f"Lessons started:  {', '.join(lesson_label(x) for x in started) if started else 'none yet'}",
        f"Due now:          {result.due_now}",
        f"Later today:      {result.due_later_today}",
        "Next 7 days:     " + "".join(f"{day:>5}" for day in days),
        "                 " + "".join(f"{count:>5}" for count in result.due_next_7_days),
        f"Reviews today:    {result.reviews_today}",
        f"Reviews in total: {result.reviews_total}",
        f"True retention:   {retention}",
        f"New available:    {result.new_available}",
        f"Code cards:       {_brought_back_text(brought_back(store, at))}",
        f"Predictions:      {prediction_counts(store, predictions).text()}",
        f"Scheduling:       {scheduling_text(store.settings(), tz)}",
    ]
    return "\n".join(lines)


def _brought_back_text(count: int) -> str:
    """The stats line of the code cards that named mistakes brought back this week."""
    return f"{plural(count, 'card')} brought back by mistakes this week"


def lessons_started(store: Storage, items: Sequence[Item]) -> list[str]:
    """The lessons (decks) of `items` that the learner has started, in course order: those enrolled (a quiz
    answered) and those of a card a mistake brought back (a nudge), whose questions a review serves. What
    ``python -m course stats`` and ``review`` both say."""
    nudged = {nudge.item_id for nudge in store.nudges()}
    started = set(store.enrolled()) | {item.deck for item in items if item.id in nudged}
    return _in_course_order({item.deck for item in items if item.deck in started})


def _in_course_order(lessons: Iterable[str]) -> list[str]:
    """`lessons` in course order; a deck that is no lesson of the course after them, by name."""
    order = {lesson: k for k, lesson in enumerate(QUIZ_LESSONS)}
    return sorted(lessons, key=lambda deck: (order.get(deck, len(order)), deck))
