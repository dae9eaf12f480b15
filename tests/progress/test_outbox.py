"""The outbox file: answers kept on the learner's computer while the class database cannot be reached."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import child_env

from course.progress import Kept, sent_note, waiting_note
from course.progress._outbox import (
    Outbox,
    OutboxError,
    OutboxOwnerError,
    Owner,
    kept_note,
    legacy_path,
    outbox_path,
)
from scheduler import LogEntry, Rating, Store, StoreUnavailableError

PICK = Kept(LogEntry("01-pick", Rating.AGAIN, T0, 7250), deck="01")
NUMBER = Kept(LogEntry("01-number", Rating.GOOD, T0 + timedelta(seconds=30, microseconds=999), 4000))
DRILL = Kept(LogEntry("02-drill", Rating.EASY, T0 + timedelta(minutes=1), None), practice=True)
MS = 1741597200000  # T0


@pytest.fixture
def outbox(tmp_path: Path) -> Outbox:
    return Outbox(tmp_path / "box" / "outbox-ana.jsonl")


def test_each_answer_is_one_line_appended(outbox: Outbox) -> None:
    assert outbox.pending() == [] and not outbox.path.exists()
    for kept in (PICK, NUMBER, DRILL):
        outbox.keep(kept)
    assert outbox.path.read_text(encoding="utf-8").splitlines() == [
        f'{{"kind": "answer", "item": "01-pick", "rating": 1, "at": {MS}, "duration_ms": 7250, '
        '"deck": "01"}',
        f'{{"kind": "answer", "item": "01-number", "rating": 3, "at": {MS + 30000}, "duration_ms": 4000, '
        '"deck": null}',
        f'{{"kind": "practice", "item": "02-drill", "rating": 4, "at": {MS + 60000}, "duration_ms": null, '
        '"deck": null}',
    ]
    # read back to the millisecond, in UTC
    number = Kept(LogEntry("01-number", Rating.GOOD, T0 + timedelta(seconds=30), 4000))
    assert outbox.pending() == [PICK, number, DRILL]
    assert outbox.pending()[0].entry.reviewed_at.utcoffset() == timedelta(0)


def test_a_torn_last_line_is_ignored_and_dropped_by_the_next_write(outbox: Outbox) -> None:
    outbox.keep(PICK)
    with outbox.path.open("ab") as handle:
        handle.write(b'{"kind": "answer", "item": "01-num')  # a crash mid-write
    assert outbox.pending() == [PICK]
    outbox.keep(DRILL)
    assert outbox.pending() == [PICK, DRILL]
    assert outbox.path.read_text(encoding="utf-8").count("\n") == 2


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "expected the keys kind, item, rating, at, duration_ms, deck"),
        (
            '{"kind": "quiz", "item": "q", "rating": 3, "at": 0, "duration_ms": null, "deck": null}',
            "kind must be answer or practice, got 'quiz'",
        ),
        (
            '{"kind": "answer", "item": "q", "rating": 7, "at": 0, "duration_ms": null, "deck": null}',
            "rating must be 1, 2, 3 or 4, got 7",
        ),
        (
            '{"kind": "answer", "item": "q", "rating": 3, "at": "now", "duration_ms": null, "deck": null}',
            "at must be an integer (ms since 1970), got 'now'",
        ),
    ],
)
def test_a_malformed_line_is_an_error_naming_the_file_and_line_and_is_kept(
    outbox: Outbox, line: str, detail: str
) -> None:
    outbox.keep(PICK)
    with outbox.path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    outbox.keep(DRILL)
    before = outbox.path.read_bytes()
    with pytest.raises(OutboxError) as info:
        outbox.pending()
    assert str(info.value) == (
        f"{outbox.path}, line 2, is not an answer kept for the class database ({detail}); it was left as it "
        "is: correct or delete that line, then try again"
    )
    assert (info.value.path, info.value.line) == (str(outbox.path), 2)
    with Store.open(outbox.path.parent / "p.sqlite3") as store, pytest.raises(OutboxError):
        outbox.send(store)
    assert outbox.path.read_bytes() == before


def test_send_merges_everything_in_one_call_and_empties_the_file(outbox: Outbox, tmp_path: Path) -> None:
    for kept in (PICK, NUMBER, DRILL):
        outbox.keep(kept)
    calls = []
    with Store.open(tmp_path / "p.sqlite3") as store:
        merge = store.merge

        def counted(*args: object) -> object:
            calls.append(args)
            return merge(*args)  # type: ignore[arg-type]

        store.merge = counted  # type: ignore[method-assign]
        assert outbox.send(store) == 3
        assert len(calls) == 1
        assert [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.reviews()] == [
            ("01-pick", Rating.AGAIN, T0, 7250),
            ("01-number", Rating.GOOD, T0 + timedelta(seconds=30), 4000),
        ]
        assert [(r.item_id, r.rating) for r in store.cram_reviews()] == [("02-drill", Rating.EASY)]
        assert store.enrolled() == {"01": T0}
        assert outbox.pending() == [] and outbox.path.read_bytes() == b""
        assert outbox.send(store) == 0
        assert len(calls) == 1  # nothing to send: no call


class Unreachable:
    location = "postgresql://ana@/course"

    def merge(self, *args: object) -> object:
        raise StoreUnavailableError(self.location, "server closed the connection")


def test_a_failed_send_keeps_everything(outbox: Outbox) -> None:
    outbox.keep(PICK)
    before = outbox.path.read_bytes()
    with pytest.raises(StoreUnavailableError):
        outbox.send(Unreachable())  # type: ignore[arg-type]
    assert outbox.path.read_bytes() == before


def test_a_crash_between_merge_and_rewrite_only_sends_again_which_adds_nothing(
    outbox: Outbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outbox.keep(PICK)
    outbox.keep(DRILL)
    with Store.open(tmp_path / "p.sqlite3") as store:

        def crash(*args: object) -> None:
            raise OSError("the kernel died here")

        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", crash)
            with pytest.raises(OSError, match="the kernel died here"):
                outbox.send(store)
        assert len(outbox.pending()) == 2  # still there
        assert [name for name in os.listdir(outbox.path.parent) if name.endswith(".tmp")] == []
        assert outbox.send(store) == 2
        assert len(store.reviews()) == 1 and len(store.cram_reviews()) == 1  # merge skipped them


_WRITER = """
import sys
from datetime import datetime, timedelta, timezone
from course.progress import Kept
from course.progress._outbox import Outbox
from scheduler import LogEntry, Rating

outbox, worker = Outbox(sys.argv[1]), int(sys.argv[2])
start = datetime(2025, 3, 10, tzinfo=timezone.utc)
for index in range(40):
    outbox.keep(Kept(LogEntry(f"q{worker}", Rating.GOOD, start + timedelta(seconds=index), worker)))
"""


def test_two_kernels_of_one_learner_share_it(outbox: Outbox) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(outbox.path), str(worker)], env=child_env())
        for worker in (1, 2)
    ]
    assert [writer.wait(timeout=60) for writer in writers] == [0, 0]
    kept = outbox.pending()
    assert sorted((k.entry.item_id, k.entry.reviewed_at) for k in kept) == sorted(
        (f"q{worker}", T0.replace(hour=0) + timedelta(seconds=index))
        for worker in (1, 2)
        for index in range(40)
    )


def test_one_file_per_learner_and_class_whatever_the_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COURSE_OUTBOX", raising=False)
    a = outbox_path(Owner("ana", "course"), tmp_path)
    assert a.parent == tmp_path and a.name.startswith("outbox-ana-") and a.suffix == ".jsonl"
    assert outbox_path(Owner("ana", "other"), tmp_path) != a
    assert outbox_path(Owner("bo b/..", "course"), tmp_path).name.startswith("outbox-bo_b_..-")
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "env"))
    assert outbox_path(Owner("ana", "course")).parent == tmp_path / "env"
    # names that the naming before (a location's digest, the learner made safe for a file name) sent to
    # four files: nine learners whose URL names no role ($PGUSER names it) shared them
    names = ["ana b", "ana_b", "ana/b", "bo@b", "bo b", "a" * 40 + "x", "a" * 40 + "y", "é", "ü"]
    location = "postgresql://@db.example/course"
    assert len({legacy_path(location, name, tmp_path) for name in names}) == 4
    assert len({outbox_path(Owner(name, "course"), tmp_path) for name in names}) == 9
    assert outbox_path(Owner("ana", "b-course"), tmp_path) != outbox_path(Owner("ana-b", "course"), tmp_path)


def test_the_file_says_whose_answers_it_keeps_and_takes_nobody_elses(tmp_path: Path) -> None:
    ana = Outbox(tmp_path / "box.jsonl", Owner("ana", "course"))
    ana.keep(PICK)
    ana.keep(DRILL)
    lines = ana.path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == '{"kind": "owner", "learner": "ana", "database": "course"}'
    assert len(lines) == 3 and ana.pending() == [PICK, DRILL]
    before = ana.path.read_bytes()
    for other in (Owner("bob", "course"), Owner("ana", "other")):
        with pytest.raises(OutboxOwnerError) as refused:
            Outbox(ana.path, other).keep(NUMBER)
        assert str(refused.value) == (
            f"{ana.path} holds the answers of 'ana' in the class database 'course', not {other.learner!r} in "
            f"{other.database!r}: they were not sent, and nothing was added to it"
        )
    with Store.open(tmp_path / "p.sqlite3") as store:
        with pytest.raises(OutboxOwnerError) as refused:
            ana.send(store, learner="bob")  # a store that logs in as bob
        assert str(refused.value) == (
            f"{ana.path} holds the answers of 'ana' in the class database 'course', not 'bob', whom the "
            "store logs in as: they were not sent, and nothing was added to it"
        )
        assert ana.path.read_bytes() == before and store.reviews() == []
        assert ana.send(store, learner="ana") == 2
    assert ana.path.read_bytes() == b""
    ana.keep(NUMBER)  # an emptied file gets its owner's line again
    assert ana.path.read_text(encoding="utf-8").splitlines()[0] == lines[0]
    with ana.path.open("a", encoding="utf-8") as handle:
        handle.write(lines[0] + "\n")  # an owner's line anywhere but first is not an answer
    with pytest.raises(OutboxError, match="line 3, is not an answer kept for the class database"):
        ana.pending()


def test_a_file_of_the_naming_before_is_adopted_once(tmp_path: Path) -> None:
    old = legacy_path("postgresql://ana@old.example:5432/course", "ana", tmp_path)
    Outbox(old).keep(PICK)  # as the naming before wrote it: no owner's line
    Outbox(old).keep(NUMBER)
    ana = Outbox(outbox_path(Owner("ana", "course"), tmp_path), Owner("ana", "course"))
    ana.keep(PICK)  # kept in both (a crash between adopting and deleting): taken once
    assert ana.adopt(old) == 2
    assert not old.exists() and not old.with_name(old.name + ".lock").exists()
    number = Kept(LogEntry("01-number", Rating.GOOD, T0 + timedelta(seconds=30), 4000))
    assert ana.pending() == [PICK, number]
    assert ana.adopt(old) == 0


def test_what_the_learner_is_told() -> None:
    assert kept_note("server closed the connection") == (
        "Kept on this computer: the class database cannot be reached (server closed the connection). It is "
        "sent when the database is back; nothing is lost."
    )
    assert sent_note(0) == ""
    assert sent_note(1) == "1 answer kept while the class database was unreachable was sent."
    assert sent_note(3) == "3 answers kept while the class database was unreachable were sent."
    assert waiting_note(0) == ""
    assert waiting_note(1) == (
        "1 answer waits on this computer to be sent to the class database: it is sent as soon as the "
        "database can be reached (your next answer or session)."
    )
    assert waiting_note(2) == (
        "2 answers wait on this computer to be sent to the class database: they are sent as soon as the "
        "database can be reached (your next answer or session)."
    )
