"""Reads that must agree run in one snapshot, so a write by another kernel in between is never half seen;
a Session tells how many due and new items it started with."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0, UTC
from store_helpers import EASY, GOOD, exact_store

from scheduler import Item, Limits, Session, Store, due_queue, stats


@pytest.fixture
def stores(db: Path) -> Iterator[tuple[Store, Store]]:
    """One file opened twice, as by two kernels."""
    with exact_store(db) as mine, Store.open(db) as other:
        yield mine, other


def write_before(store: Store, name: str, write: Callable[[], object]) -> None:
    """Make ``store``'s read ``name`` run ``write`` (another kernel's answer) just before reading."""
    read = getattr(store, name)

    def interleaved(*args: object, **options: object) -> object:
        write()
        return read(*args, **options)

    setattr(store, name, interleaved)


def test_due_queue_does_not_see_a_write_half_way(stores: tuple[Store, Store]) -> None:
    mine, other = stores
    mine.enroll("n", T0)
    items = [Item("n1", "n"), Item("n2", "n")]
    at = T0 + timedelta(seconds=1)
    # The other kernel answers n1 after today's answers were counted and before the cards are read:
    # seen half, n1 would count as not answered today and as not new either, and n2 would be served
    # although the day's one new item is used up.
    write_before(mine, "due_by", lambda: other.record("n1", GOOD, T0))
    assert [item.id for item in due_queue(mine, items, at, UTC, Limits(new_per_day=1))] == ["n1"]
    del mine.due_by  # the plain read again
    assert due_queue(mine, items, at, UTC, Limits(new_per_day=1)) == []  # now n1's answer counts


def test_session_does_not_see_a_write_half_way(stores: tuple[Store, Store]) -> None:
    mine, other = stores
    mine.enroll("n", T0)
    write_before(mine, "due_by", lambda: other.record("n1", GOOD, T0))
    session = Session(mine, [Item("n1", "n"), Item("n2", "n")], T0, UTC, Limits(new_per_day=1))
    assert (session.next(), session.due_count, session.new_count) == (Item("n1", "n"), 0, 1)


def test_stats_do_not_see_a_write_half_way(stores: tuple[Store, Store]) -> None:
    mine, other = stores
    mine.enroll("d", T0)
    items = [Item(f"d{index}", "d") for index in range(4)]
    mine.record("d0", EASY, T0 - timedelta(days=10))
    mine.record("d1", GOOD, T0 - timedelta(days=1))
    at = T0 + timedelta(hours=1)
    before = stats(mine, items, at, UTC)
    write_before(mine, "review_counts", lambda: other.record("d2", GOOD, T0))
    assert stats(mine, items, at, UTC) == before  # everything as before the write, nothing mixed
    del mine.review_counts
    after = stats(mine, items, at, UTC)
    assert (after.reviews_total, after.reviews_today, after.new_available) == (3, 1, 1)


def test_snapshot_nests_refuses_writes_and_holds_other_threads(stores: tuple[Store, Store]) -> None:
    mine, other = stores
    mine.record("a", GOOD, T0)
    waiting = threading.Thread(target=lambda: mine.record("b", GOOD, T0))
    with mine.snapshot() as snapshot:
        assert snapshot is mine
        assert len(mine.reviews()) == 1
        other.record("c", GOOD, T0)
        with mine.snapshot():
            assert len(mine.reviews()) == 1  # nested: the same snapshot
        assert [review.item_id for review in mine.reviews()] == ["a"]
        with pytest.raises(RuntimeError) as info:
            mine.record("d", GOOD, T0)
        assert str(info.value) == "cannot write inside Store.snapshot(); write after the block ends"
        waiting.start()
        waiting.join(timeout=0.2)
        assert waiting.is_alive()  # another thread's write waits for the block to end
        assert len(mine.reviews()) == 1
    waiting.join(timeout=10)
    assert not waiting.is_alive()
    assert sorted(review.item_id for review in mine.reviews()) == ["a", "b", "c"]
    with pytest.raises(KeyError), mine.snapshot():
        mine.reviews()
        raise KeyError("a bug inside the block")
    assert not mine._connection.in_transaction  # the read transaction ended with the block
    mine.record("e", GOOD, T0)


def test_session_counts_its_due_and_new_items(stores: tuple[Store, Store]) -> None:
    mine, _ = stores
    mine.enroll("a", T0)
    items = [Item(f"a{index}", "a") for index in range(6)]
    for item_id in ("a0", "a2", "a4"):
        mine.record(item_id, EASY, T0)
    at = T0 + timedelta(days=39)  # the three EASY answers are due (38 days)
    session = Session(mine, items, at, UTC, Limits(new_per_day=2, reviews_per_day=2))
    assert (session.due_count, session.new_count, session.remaining) == (2, 2, 4)
    assert [
        item.id for item in due_queue(mine, items, at, UTC, Limits(new_per_day=2, reviews_per_day=2))
    ] == [
        "a0",
        "a2",
        "a1",
        "a3",
    ]
    item = session.next()
    assert item is not None
    session.answer(item, GOOD, at)
    assert (session.due_count, session.new_count, session.remaining) == (2, 2, 3)  # counts at creation
    empty = Session(mine, [], at, UTC)
    assert (empty.due_count, empty.new_count, empty.next()) == (0, 0, None)
