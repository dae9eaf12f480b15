"""Benchmark the scheduler on a large store: 10,000 questions and 1,000,000 reviews.

Run it from the repository root: ``python benchmarks/scheduler_bench.py``. It builds the store in a
temporary directory (log rows are synthesized from real FSRS histories, shifted in time, so the store is
valid and its card cache matches a replay of the log), then measures opening the store and computing the
due queue, recording one review (commit included), ``import scheduler`` in a fresh interpreter, and the
size on disk.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scheduler import CardState, Item, Memory, Rating, Review, Store, due_queue, forecast, stats  # noqa: E402
from scheduler._time import from_ms, to_ms  # noqa: E402

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2025, 6, 2, 9, 30, tzinfo=timezone.utc)
STATE_CODES = {"learning": 1, "review": 2, "relearning": 3}
Row = tuple[int, int, int | None, int, int]  # rating, reviewed_at, duration_ms, due, state_before


def template(memory: Memory, rng: random.Random, length: int) -> tuple[list[Row], CardState]:
    """One plausible history starting at time 0: answers come when due, or earlier."""
    ratings = rng.choices(list(Rating), weights=(10, 15, 65, 10), k=length)
    state: CardState | None = None
    at = from_ms(0)
    rows: list[Row] = []
    for rating in ratings:
        if state is not None:
            early = state.last_review + timedelta(hours=rng.uniform(1, 96))  # type: ignore[operator]
            at = min(state.due, early)
        before = 0 if state is None else STATE_CODES[state.state]
        state = memory.review(state, "template", rating, at)
        rows.append((int(rating), to_ms(at), rng.randint(2_000, 30_000), to_ms(state.due), before))
    assert state is not None
    return rows, state


def build(path: Path, questions: int, reviews: int, seed: int = 1) -> tuple[list[Item], float]:
    started = time.perf_counter()
    rng = random.Random(seed)
    random.seed(seed)  # fsrs fuzz
    memory = Memory()
    per_item = reviews // questions
    templates = [template(memory, rng, per_item) for _ in range(64)]
    Store.open(path, memory=memory).close()  # the real schema, created by the real code

    items = [
        Item(f"{deck:02d}-question-{index:03d}", f"{deck:02d}") for deck in range(100) for index in range(100)
    ]
    items = items[:questions]
    log: list[tuple[object, ...]] = []
    cards: list[tuple[object, ...]] = []
    now_ms = to_ms(NOW)
    for item in items:
        rows, final = templates[rng.randrange(len(templates))]
        shift = now_ms - rng.randint(3_600_000, 30 * 86_400_000) - rows[-1][1]  # last answer 1 h to 30 d ago
        for rating, reviewed_at, duration, due, before in rows:
            log.append((len(log) + 1, item.id, rating, reviewed_at + shift, duration, due + shift, before))
        cards.append(
            (
                item.id,
                STATE_CODES[final.state],
                final.step,
                final.stability,
                final.difficulty,
                to_ms(final.due) + shift,
                to_ms(final.last_review) + shift,  # type: ignore[arg-type]
                final.reps,
                final.lapses,
                len(log),
            )
        )
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous = OFF")
    indexes = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'review_log'"
    ).fetchall()
    connection.execute("BEGIN IMMEDIATE")
    for name, _ in indexes:
        connection.execute(f"DROP INDEX {name}")
    connection.executemany(
        "INSERT INTO review_log (id, item_id, rating, reviewed_at, duration_ms, due, state_before) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        log,
    )
    for _, sql in indexes:
        connection.execute(sql)
    connection.executemany("INSERT INTO cards VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", cards)
    connection.executemany(
        "INSERT INTO decks VALUES (?, ?)",
        [(deck, now_ms - 90 * 86_400_000) for deck in sorted({i.deck for i in items})],
    )
    connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()

    with Store.open(path, memory=memory) as store:  # check: the cache is what a replay of the log gives
        for item in rng.sample(items, 25):
            log_rows = store.reviews(item.id)
            assert len(log_rows) == per_item and isinstance(log_rows[0], Review)
            assert memory.replay(item.id, log_rows) == store.card(item.id)
    new_items = [Item(f"{deck:02d}-new-{index}", f"{deck:02d}") for deck in range(100) for index in range(2)]
    return items + new_items, time.perf_counter() - started


def measure_open_and_queue(path: Path, items: list[Item], runs: int) -> tuple[list[float], int]:
    times = []
    length = 0
    for _ in range(runs):
        started = time.perf_counter()
        store = Store.open(path)
        queue = due_queue(store, items, NOW, TZ)
        times.append(time.perf_counter() - started)
        length = len(queue)
        store.close()
    return times, length


def measure_stats(path: Path, items: list[Item], runs: int) -> list[float]:
    """What the review notebook's progress cell and `python -m course stats` compute: stats and a forecast."""
    times = []
    with Store.open(path) as store:
        for _ in range(runs):
            started = time.perf_counter()
            stats(store, items, NOW, TZ)
            forecast(store, items, NOW, TZ, days=30)
            times.append(time.perf_counter() - started)
    return times


def measure_record(path: Path, items: list[Item], count: int) -> list[float]:
    times = []
    with Store.open(path) as store:
        queue = due_queue(store, items, NOW, TZ)
        for index, item in enumerate((queue * count)[:count]):
            at = NOW + timedelta(seconds=index)
            started = time.perf_counter()
            store.record(item.id, Rating.GOOD if index % 5 else Rating.AGAIN, at, duration_ms=4000)
            times.append(time.perf_counter() - started)
    return times


def measure_import(runs: int) -> list[float]:
    code = "import time; t = time.perf_counter(); import scheduler; print(time.perf_counter() - t)"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            ).stdout
        )
        for _ in range(runs)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scheduler-bench-") as directory:
        path = Path(directory) / "progress.sqlite3"
        items, built = build(path, arguments.questions, arguments.reviews)
        print(
            f"store: {arguments.questions:,} questions, {arguments.reviews:,} reviews, built in {built:.1f} s"
        )
        gc.collect()  # each measure starts without the garbage of building the store or of the one before
        opened, length = measure_open_and_queue(path, items, runs=7)
        gc.collect()
        summarized = measure_stats(path, items, runs=5)
        gc.collect()
        recorded = measure_record(path, items, count=300)
        imported = measure_import(runs=5)
        size = sum(p.stat().st_size for p in Path(directory).iterdir())
        print(f"due queue at {NOW:%Y-%m-%d %H:%M} UTC: {length} items (default limits)")
        print()
        print(f"{'measure':48} {'measured':>10} {'target':>10} {'ratio':>7}")
        rows = [
            ("open store + due queue (median of 7)", statistics.median(opened) * 1000, 100.0, "ms"),
            ("open store + due queue (first run)", opened[0] * 1000, 100.0, "ms"),
            ("stats + 30-day forecast (median of 5)", statistics.median(summarized) * 1000, 2000.0, "ms"),
            (
                "record one review incl. commit (median of 300)",
                statistics.median(recorded) * 1000,
                10.0,
                "ms",
            ),
            ("record one review incl. commit (max of 300)", max(recorded) * 1000, 10.0, "ms"),
            (
                "import scheduler, fresh process (median of 5)",
                statistics.median(imported) * 1000,
                300.0,
                "ms",
            ),
        ]
        for name, value, target, unit in rows:
            print(f"{name:48} {value:7.2f} {unit} {target:7.0f} {unit} {value / target:7.2f}")
        print(f"{'size on disk (db + wal + shm)':48} {size / 1e6:7.1f} MB {'-':>10} {'-':>7}")


if __name__ == "__main__":
    main()
