"""Several processes writing one store, and a writer killed with SIGKILL mid-session."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from datetime import datetime, timedelta, timezone
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

import scheduler
from scheduler import Rating, Store

pytestmark = pytest.mark.slow

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
REPO = Path(next(iter(scheduler.__path__))).parent


def write_reviews(path: str, worker: int, count: int, start: Barrier) -> None:
    """Runs in a child process: ``count`` reviews of ten items shared with the other workers."""
    start.wait(timeout=60)  # all four create the file and write together
    with Store.open(path) as store:  # fuzzing on
        for index in range(count):
            at = T0 + timedelta(days=worker * 1000, minutes=index)
            store.record(f"q{index % 10}", Rating(1 + (index + worker) % 4), at, duration_ms=worker)


def assert_cache_matches_log(store: Store) -> None:
    cards = store.cards()
    assert cards
    for item_id, card in cards.items():
        assert store.memory.replay(item_id, store.reviews(item_id)) == card


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
        assert_cache_matches_log(store)


CHILD = """
import sys
import threading
from datetime import datetime, timedelta, timezone
from scheduler import Rating, Store

t0 = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
with Store.open(sys.argv[1]) as store:
    for index in range(1_000_000):
        at = t0 + timedelta(minutes=index)
        store.record(f"q{index % 50}", Rating(1 + index % 4), at, duration_ms=index)
        print(index, flush=True)  # only after the commit returned
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_session_keeps_every_committed_review(tmp_path: Path) -> None:
    path = tmp_path / "progress.sqlite3"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )
    assert child.stdout is not None
    reported = []
    for line in child.stdout:
        reported.append(int(line))
        if len(reported) == 400:
            break
    child.send_signal(signal.SIGKILL)
    reported += [int(line) for line in child.stdout]
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert reported == list(range(len(reported)))

    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    connection.close()
    with Store.open(path, create=False) as store:
        logged = [review.duration_ms for review in store.reviews()]
        assert logged[: len(reported)] == reported
        assert len(logged) - len(reported) in (0, 1)  # at most one commit was not yet reported
        assert_cache_matches_log(store)
        store.record("q0", Rating.GOOD, T0 + timedelta(days=3650))  # and it is still writable


def test_one_store_shared_by_threads_loses_nothing(tmp_path: Path) -> None:
    # Jupyter calls widget callbacks on another thread than the cell that opened the store.
    with Store.open(tmp_path / "progress.sqlite3") as store:

        def work(worker: int) -> None:
            for index in range(50):
                at = T0 + timedelta(days=worker * 1000, minutes=index)
                store.record(f"t{worker}-{index % 5}", Rating.GOOD, at)

        threads = [threading.Thread(target=work, args=(worker,)) for worker in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(store.reviews()) == 200
        assert Counter(review.item_id[:2] for review in store.reviews()) == {f"t{w}": 50 for w in range(4)}
        assert_cache_matches_log(store)
