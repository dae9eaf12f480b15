"""One rounding rule for intervals: a button's label and the note after saving agree exactly."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fixed_clock import FSRS_T0, UTC

from scheduler import Item, Memory, Rating, Session, Store, format_interval

# Microseconds below a millisecond, as a real clock gives. FSRS_T0: the fuzzed "2.6mo" below is drawn from it.
AT = FSRS_T0 + timedelta(microseconds=999)


@pytest.mark.parametrize(
    ("interval", "label"),
    [
        (timedelta(seconds=59, milliseconds=499), "<1m"),
        (timedelta(seconds=59, milliseconds=500), "1m"),
        (timedelta(seconds=59, milliseconds=999), "1m"),
        (timedelta(seconds=60), "1m"),
        (timedelta(minutes=5, seconds=29, milliseconds=999), "6m"),  # a 5.5-minute Hard step, stored in ms
        (timedelta(minutes=5, seconds=29, milliseconds=499), "5m"),
        (timedelta(minutes=89, seconds=30), "1h"),
        (timedelta(minutes=89, seconds=59, milliseconds=999), "2h"),
        (timedelta(hours=23, minutes=59, seconds=24), "1d"),
        (timedelta(hours=23, minutes=29, seconds=59, milliseconds=499), "23h"),
        (timedelta(hours=23, minutes=29, seconds=59, milliseconds=500), "1d"),
        (timedelta(days=2, milliseconds=-1), "2d"),
        (timedelta(days=29, hours=11, minutes=59, seconds=59, milliseconds=500), "1.0mo"),
        (timedelta(days=365, milliseconds=-1), "1.0y"),
        (timedelta(milliseconds=-1), "<1m"),
    ],
)
def test_boundaries(interval: timedelta, label: str) -> None:
    assert format_interval(interval) == label


def labels_then_notes(store: Store, item: Item, at: datetime) -> tuple[dict[Rating, str], dict[Rating, str]]:
    """What each button would say at `at`, and what the note says after saving that rating (each rating
    saved on a copy of the same history, so each starts from the same card)."""
    previews = Session(store, [item], at, UTC).intervals(item, at)
    labels = {rating: format_interval(interval) for rating, interval in previews.items()}
    notes = {}
    for rating in Rating:
        copy = Store.open(store.path.with_name(f"copy-{int(rating)}.sqlite3"), memory=store.memory)
        with copy:
            for old in store.reviews(item.id):
                copy.record(old.item_id, old.rating, old.reviewed_at)
            saved = copy.record(item.id, rating, at)
        notes[rating] = format_interval(saved.due - at)
    return labels, notes


@pytest.mark.parametrize("fuzz", [False, True])
@pytest.mark.parametrize(
    "history",
    [
        (),
        (Rating.GOOD,),
        (Rating.AGAIN,),
        (Rating.HARD, Rating.HARD),
        (Rating.EASY,),
        (Rating.EASY, Rating.GOOD),
    ],
)
def test_button_and_saved_note_agree(db: Path, history: tuple[Rating, ...], fuzz: bool) -> None:
    item = Item("q1", "00")
    with Store.open(db, memory=Memory(enable_fuzzing=fuzz)) as store:
        store.enroll("00", AT)
        at = AT
        for rating in history:
            review = store.record(item.id, rating, at)
            at = review.due + timedelta(microseconds=777)
        labels, notes = labels_then_notes(store, item, at)
    assert notes == labels


def test_fuzzed_intervals_are_shown_as_they_will_be_saved(db: Path) -> None:
    """With fuzz on, a review card's Good is moved by a few days; the button shows the moved interval."""
    item = Item("q1", "00")
    with Store.open(db, memory=Memory()) as store:
        review = store.record(item.id, Rating.EASY, AT)
        at = review.due + timedelta(microseconds=777)
        exact = Memory(enable_fuzzing=False).preview(store.card(item.id), item.id, at)
        shown = Session(store, [item], at, UTC).intervals(item, at)
        saved = store.record(item.id, Rating.EASY, at)
    assert (format_interval(exact[Rating.EASY]), format_interval(shown[Rating.EASY])) == ("6.5mo", "6.7mo")
    assert format_interval(saved.due - at) == "6.7mo"
