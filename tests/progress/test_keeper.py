"""`course.progress.Keeper`, the one object every answer goes through: a whole `scheduler.Storage` written out
(no attribute forwarded by ``__getattr__``, no cast), on a progress file the database's own answers, and the
quiz's save: enroll, then a review, or practice when the question is already due on a later day."""

from __future__ import annotations

import inspect
from datetime import datetime, timedelta, timezone
from pathlib import Path

from store_helpers import exact_store

from course.progress import Keeper, QuizSave, StoreSource
from scheduler import Rating, Storage

AT = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def _members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_") or name in ("__enter__", "__exit__")}


def test_the_keeper_defines_every_member_of_storage_itself() -> None:
    missing = sorted(name for name in _members(Storage) if name not in vars(Keeper))
    assert missing == []
    assert "__getattr__" not in vars(Keeper)
    for name in _members(Storage) - {"memory", "location"}:
        ours, theirs = inspect.signature(getattr(Keeper, name)), inspect.signature(getattr(Storage, name))
        assert list(ours.parameters) == list(theirs.parameters), name


def test_on_a_progress_file_an_answer_through_the_keeper_is_the_stores_own(tmp_path: Path) -> None:
    direct = exact_store(tmp_path / "direct.sqlite3")
    kept = exact_store(tmp_path / "kept.sqlite3")
    keeper = Keeper(StoreSource(kept), create=True)
    for store in (direct, keeper):
        store.enroll("01", AT)
    assert keeper.record("01-a", Rating.GOOD, AT, 1500) == direct.record("01-a", Rating.GOOD, AT, 1500)
    assert keeper.take_kept() is None and keeper.notes() == [] and keeper.kept is False
    assert keeper.cards() == direct.cards() and keeper.enrolled() == direct.enrolled()
    keeper.record_cram("01-a", Rating.AGAIN, AT + timedelta(minutes=1), 900)
    assert [(r.item_id, r.rating) for r in kept.cram_reviews()] == [("01-a", Rating.AGAIN)]


def test_a_quiz_answer_is_a_review_then_practice_while_the_question_is_due_later(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    source = StoreSource(path)
    keeper = Keeper(source, create=True)
    tz = timezone.utc
    first = keeper.save_quiz_answer("01", "01-a", Rating.GOOD, AT, 2000, tz=tz, due_seen=None)
    assert source.held is None  # released after the answer: a quiz's step is a session of one answer
    assert first.review is not None and first.review.due > AT + timedelta(days=1)
    assert (first.practice, first.due_on, first.kept) == (False, None, None)
    again = keeper.save_quiz_answer(
        "01", "01-a", Rating.AGAIN, AT + timedelta(hours=1), 800, tz=tz, due_seen=None
    )
    due_on = datetime.combine(first.review.due.date(), datetime.min.time(), tz) + timedelta(hours=4)
    assert again == QuizSave(None, True, due_on, None)
    with source.lease(create=False) as store:
        assert store.enrolled() == {"01": AT}
        assert [r.rating for r in store.reviews("01-a")] == [Rating.GOOD]
        assert [r.rating for r in store.cram_reviews()] == [Rating.AGAIN]
