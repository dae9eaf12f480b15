"""Benchmark the classroom store: 300 learners answering at once against a real PostgreSQL, and the class
report over 300 learners x 100 questions.

Run it from the repository root: ``python benchmarks/class_bench.py`` (needs Debian's PostgreSQL binaries,
as the tests do; about a minute). It starts a throw-away cluster on a unix socket with durable settings
(fsync and synchronous commit on, unlike the tests' cluster), installs the course's schema, adds 300 learners
(each a database role) and an instructor, then:

1. **Concurrent answers.** 300 learners, in 10 processes of 30 threads (the learners' kernels), each with its
   own connection, start together and answer 20 questions each: 10 as a class would (a pause of up to 2 s
   before each answer, about 300 answers a second arriving), then 10 in a burst (no pause). It reports the
   time to save one answer (p50, p99; target p99 <= 50 ms) and checks that all 6,000 answers are kept, each
   learner's log numbered 1 to 20.
2. **Class report.** The same learners answer 80 more questions each (100 per learner, 30,000 answers), then
   the instructor reads the class (`scheduler.postgres.class_records`) and `course.classroom` reports on
   it; it reports the time for both (target <= 1 s).
3. **Live review.** The instructor asks 3 questions of a live session (`scheduler.postgres.LiveRoom`);
   every learner's widget looks at the session once a second, as `course.widgets.live` does, and answers each
   question after a pause of up to 10 s; the projector reads the tally once a second. It reports the time of
   one look and of one answer (p50, p99), and checks that every answer is counted.

Timings include the client's share of a 2-core machine shared by the 300 learners' threads and the server.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the repository first (its packages, not the tests' folders of the same names), then the tests' helpers:
# their throw-away PostgreSQL cluster (and service runner)
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import psycopg  # noqa: E402
from postgres_server import PostgresServer, find_binaries, learner_password  # noqa: E402

from course.bank import load_bank  # noqa: E402
from course.classroom import class_report  # noqa: E402
from scheduler import Rating  # noqa: E402
from scheduler.postgres import (  # noqa: E402
    LiveRoom,
    PostgresStore,
    add_instructor,
    add_learner,
    class_records,
    install,
)

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on", "max_connections": "400"}


def answer_all(task: tuple[dict[str, str], list[str], float, int, float]) -> list[float]:
    """One process: a thread per learner (name: URL), each opening its store, waiting for ``start`` (a
    wall-clock time), then answering ``questions`` one after the other, ``offset`` days after T0. Returns the
    save times. ``think``: the mean pause before each answer, in seconds (uniform from 0 to twice it)."""
    urls, questions, start, offset, think = task
    times: list[float] = []
    lock = threading.Lock()

    def learner(name: str) -> None:
        rng = random.Random(name)
        with PostgresStore.open(urls[name]) as store:
            store.enroll(questions[0][:2], T0)
            time.sleep(max(0.0, start - time.time()))
            mine = []
            for k, question in enumerate(questions):
                time.sleep(rng.uniform(0, 2 * think))
                rating = Rating.AGAIN if rng.random() < 0.2 else Rating.GOOD
                at = T0 + timedelta(days=offset, minutes=k)
                began = time.perf_counter()
                store.record(question, rating, at, duration_ms=9000)
                mine.append(time.perf_counter() - began)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=learner, args=(name,)) for name in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def run_round(
    urls: dict[str, str], questions: list[str], processes: int, offset: int, think: float
) -> list[float]:
    """Every learner answers ``questions`` at once; the save times of all."""
    names = sorted(urls)
    groups = [{name: urls[name] for name in names[k::processes]} for k in range(processes)]
    start = time.time() + 3.0  # every connection open before the first answer
    with ProcessPoolExecutor(processes) as pool:
        results = pool.map(answer_all, [(group, questions, start, offset, think) for group in groups])
        return [t for part in results for t in part]


def live_learners(task: tuple[dict[str, str], int, float]) -> tuple[list[float], list[float]]:
    """One process of live learners: each looks at the session every second (like the widget) and answers
    each new question after 0-10 s, until ``questions`` have been answered. Returns the look and answer
    times."""
    urls, questions, deadline = task
    looks: list[float] = []
    answers: list[float] = []
    lock = threading.Lock()

    def learner(name: str) -> None:
        rng = random.Random(name)
        mine_looks, mine_answers = [], []
        answered: set[int] = set()
        with LiveRoom.open(urls[name]) as room:
            due: float | None = None
            while len(answered) < questions and time.time() < deadline:
                time.sleep(1.0 + rng.uniform(-0.1, 0.1))
                began = time.perf_counter()
                state = room.state()
                mine_looks.append(time.perf_counter() - began)
                if state is None or not state.open or state.position in answered:
                    continue
                if due is None:
                    due = time.time() + rng.uniform(0, 10)
                if time.time() >= due:
                    began = time.perf_counter()
                    room.answer(state, str(rng.randrange(4)), datetime.now(timezone.utc))
                    mine_answers.append(time.perf_counter() - began)
                    answered.add(state.position)
                    due = None
        with lock:
            looks.extend(mine_looks)
            answers.extend(mine_answers)

    threads = [threading.Thread(target=learner, args=(name,)) for name in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return looks, answers


def live_round(
    urls: dict[str, str], teacher: str, processes: int
) -> tuple[list[float], list[float], list[int]]:
    """A live session of 3 questions: the learners in processes, the projector here moving on once every
    learner's answer is counted (or after 60 s). Returns look times, answer times and each question's
    count."""
    names = sorted(urls)
    groups = [{name: urls[name] for name in names[k::processes]} for k in range(processes)]
    questions, deadline = 3, time.time() + 300
    counted = []
    with ProcessPoolExecutor(processes) as pool, LiveRoom.open(teacher) as room:
        running = pool.map(live_learners, [(group, questions, deadline) for group in groups])
        session = room.start("bench", datetime.now(timezone.utc)).session
        for k in range(questions):
            state = room.ask(session, f"q{k}", datetime.now(timezone.utc))
            asked = time.time()
            while time.time() - asked < 60:
                time.sleep(1.0)
                if room.answers(session, state.position).answered == len(urls):
                    break
            room.reveal(session, datetime.now(timezone.utc))
            counted.append(room.answers(session, state.position).answered)
        room.end(session, datetime.now(timezone.utc))
        parts = list(running)
    return [t for looks, _ in parts for t in looks], [t for _, done in parts for t in done], counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--processes", type=int, default=10)
    args = parser.parse_args(argv)
    binaries = find_binaries()
    if binaries is None:
        print("PostgreSQL's binaries were not found (Debian: apt-get install postgresql)", file=sys.stderr)
        return 2
    server = PostgresServer(binaries)
    with (server.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
        conf.writelines(f"{name} = {value}\n" for name, value in DURABLE.items())
    server.start()
    try:
        database = server.create_database("class_bench")
        admin = server.admin_url(database)
        install(admin)
        names = [f"learner{k:03d}" for k in range(args.learners)]
        began = time.perf_counter()
        for name in names:
            add_learner(admin, name, password=learner_password(name))
        add_instructor(admin, "teacher", password=learner_password("teacher"))
        print(f"{args.learners} learners added in {time.perf_counter() - began:.1f} s")
        bank = load_bank()
        questions = [question.id for question in bank.all()]
        urls = {name: server.learner_url(database, name) for name in names}
        rounds = [
            ("a class answering (a pause of 0-2 s before each answer)", questions[:10], 1.0),
            ("a burst (every learner answering as fast as possible)", questions[10:20], 0.0),
        ]
        times: list[float] = []
        for offset, (what, asked, think) in enumerate(rounds):
            began = time.perf_counter()
            mine = sorted(run_round(urls, asked, args.processes, offset, think))
            wall = time.perf_counter() - began - 3.0
            times += mine
            p50, p99 = statistics.median(mine), mine[int(0.99 * (len(mine) - 1))]
            print(
                f"{what}: {len(mine)} answers in {wall:.1f} s ({len(mine) / wall:.0f}/s); time to save one: "
                f"p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms (target p99 <= 50 ms)"
            )
        with psycopg.connect(admin) as connection:
            kept = connection.execute("SELECT count(*) FROM course.review_log").fetchone()[0]
            numbered = connection.execute(
                "SELECT count(*) FROM (SELECT learner FROM course.review_log GROUP BY learner "
                "HAVING min(seq) = 1 AND max(seq) = 20 AND count(*) = 20) AS complete"
            ).fetchone()[0]
        print(
            f"kept: {kept} of the {len(times)} answers saved; {numbered} of {args.learners} learners with "
            "their log numbered 1 to 20"
        )
        run_round(urls, questions[20:100], args.processes, 2, 0.0)
        began = time.perf_counter()
        records = class_records(server.learner_url(database, "teacher"))
        read = time.perf_counter() - began
        report = class_report(records.answers, records.due_times, bank, T0 + timedelta(days=2), timezone.utc)
        total = time.perf_counter() - began
        answers = sum(len(rows) for rows in records.answers.values())
        print(
            f"class report: {report.learners} learners, {len(report.questions)} questions, {answers} "
            f"answers: read {read:.2f} s, read and report {total:.2f} s (target <= 1 s)"
        )
        looks, answered, counted = live_round(urls, server.learner_url(database, "teacher"), args.processes)
        looks.sort()
        answered.sort()
        print(
            f"live review: {args.learners} learners looking once a second; one look p50 "
            f"{statistics.median(looks) * 1e3:.1f} ms, p99 "
            f"{looks[int(0.99 * (len(looks) - 1))] * 1e3:.1f} ms; "
            f"one answer p50 {statistics.median(answered) * 1e3:.1f} ms, p99 "
            f"{answered[int(0.99 * (len(answered) - 1))] * 1e3:.1f} ms; counted per question: "
            f"{', '.join(f'{n} of {args.learners}' for n in counted)}"
        )
        live_ok = counted == [args.learners] * len(counted)
        return 0 if kept == len(times) == args.learners * 20 and live_ok else 1
    finally:
        server.stop()
        server.remove()


if __name__ == "__main__":
    raise SystemExit(main())
