"""Several processes writing one store, and a writer killed with SIGKILL mid-session (threads sharing one
store, and writers on several handles, are in the contract suite, test_store_contract.py)."""

from __future__ import annotations

import multiprocessing
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import assert_schedule_is_the_log_replayed, child_env

from scheduler import Rating, Store

pytestmark = pytest.mark.slow


def write_reviews(path: str, worker: int, count: int, start: Barrier) -> None:
    """Runs in a child process: ``count`` reviews of ten items shared with the other workers."""
    start.wait(timeout=60)  # all four create the file and write together
    with Store.open(path) as store:  # fuzzing on
        for index in range(count):
            at = T0 + timedelta(days=worker * 1000, minutes=index)
            store.record(f"q{index % 10}", Rating(1 + (index + worker) % 4), at, duration_ms=worker)


def test_four_processes_lose_no_review(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(4)
    workers = [
        context.Process(target=write_reviews, args=(str(path), worker, 300, start)) for worker in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    with Store.open(path) as store:
        reviews = store.reviews()
        assert len(reviews) == 1200
        assert Counter(review.duration_ms for review in reviews) == {0: 300, 1: 300, 2: 300, 3: 300}
        assert sum(card.reps for card in store.cards().values()) == 1200
        assert_schedule_is_the_log_replayed(store)


CHILD = """
import os
import sys
import time
from datetime import datetime, timedelta, timezone
from scheduler import Item, Limits, Rating, Session, Store

path, pause_at, t0 = sys.argv[1], int(sys.argv[2]), datetime.fromisoformat(sys.argv[3])
items = [Item(f"q{index:03d}", "deck") for index in range(100)]
answers = 0
wal_at_begin = 0


def report(*words):
    os.write(1, (" ".join(map(str, words)) + "\\n").encode())  # one write: no half line if killed


def trace(statement):
    global wal_at_begin
    if statement == "BEGIN IMMEDIATE":
        wal_at_begin = os.path.getsize(path + "-wal")
    elif statement == "COMMIT" and answers == pause_at:
        # This answer's rows are written (spilled into the WAL, not committed): be killed right here.
        report("committing", wal_at_begin, os.path.getsize(path + "-wal"))
        time.sleep(60)


with Store.open(path) as store:
    store.enroll("deck", t0)
    store._connection.execute("PRAGMA cache_size = 1")  # spill each write into the WAL before its COMMIT
    store._connection.set_trace_callback(trace)
    at = t0
    while True:  # session after session, until killed
        session = Session(store, items, at, timezone.utc, Limits(new_per_day=len(items)))
        while (item := session.next()) is not None:
            at += timedelta(seconds=20)
            rating = Rating(1 + answers % 4)  # every fourth answer is AGAIN: the item comes back later
            review = session.answer(item, rating, at, duration_ms=answers)
            report(answers, review.item_id, int(review.rating))  # only once it is committed
            answers += 1
        at += timedelta(days=1)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("when", ["inside a commit", "running free"])
def test_sigkill_mid_session_keeps_every_committed_review(tmp_path: Path, when: str) -> None:
    path = tmp_path / "progress.sqlite3"
    pause_at = 110 if when == "inside a commit" else -1
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(pause_at), T0.isoformat()],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=tmp_path,
    )
    assert child.stdout is not None
    reported: list[tuple[int, str, int]] = []
    for line in child.stdout:
        words = line.split()
        if words[0] == "committing":
            assert int(words[2]) > int(words[1])  # the WAL already holds this answer's uncommitted pages
            break
        reported.append((int(words[0]), words[1], int(words[2])))
        if len(reported) == 110 and when == "running free":
            break
    child.send_signal(signal.SIGKILL)
    reported += [(int(n), item, int(r)) for n, item, r in map(str.split, child.stdout)]
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert [answer for answer, _, _ in reported] == list(range(len(reported)))
    assert len(reported) >= 110

    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    connection.close()
    with Store.open(path, create=False) as store:
        logged = [(review.duration_ms, review.item_id, int(review.rating)) for review in store.reviews()]
        if when == "inside a commit":
            assert logged == reported  # the answer being committed is gone, whole
        else:
            assert logged[: len(reported)] == reported
            assert len(logged) - len(reported) in (0, 1)  # at most one commit was not yet reported
        served = [item for _, item, _ in reported]
        assert served[:100] == [f"q{index:03d}" for index in range(100)]
        assert served[100:110] == served[0:40:4]  # the session served the AGAIN answers again, in order
        assert_schedule_is_the_log_replayed(store)
        store.record("q000", Rating.GOOD, T0 + timedelta(days=3650))  # and it is still writable
