"""Benchmark the class service: N simulated learners saving answers over HTTP through one service process that
holds a small pool of server connections, against a PostgreSQL left at ``max_connections = 100``.

Run it from the repository root: ``python benchmarks/service_bench.py --learners 300`` (and ``--learners
1000``); needs Debian's PostgreSQL binaries, as the tests do. It starts a throw-away cluster on a unix socket
with durable settings (fsync and synchronous commit on) and the default ``max_connections``, installs the
schema, adds the learners and the service role, starts the service in a child process (``ClassService`` on a
pool of ``--connections``, tokens from a table, as `tests/service_server.py` does; JupyterHub's own token
check is not in the times, it is cached a minute per token), then runs the learners in ``--processes``
processes of threads, each its own ``RemoteStore``: a pause of 0-2 s (uniform) before each answer, for
``--seconds``. It prints the server connections used (the most seen at once, from ``pg_stat_activity``,
sampled every 0.1 s), the answers saved a second, the time to save one (p50, p99), and the answers lost
(acknowledged, not in the database) and duplicated (in it twice). Everything runs on this machine: the
learners' share of its cores is in the times.

Then a live review: the instructor (their own connection, as a projector) asks 3 questions, 15 s each; every
learner's widget looks at the session once a second through the service (`RemoteLiveRoom`, as `live()` does)
and answers each question after 0-10 s; it prints the server connections used meanwhile, the time of one look
and one answer (p50, p99) and the answers counted before each reveal, out of those given.
"""

from __future__ import annotations

import argparse
import multiprocessing
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

from scheduler import Rating  # noqa: E402
from scheduler.postgres import ClassPool, LiveRoom, add_instructor, add_learner, add_service, install  # noqa: E402
from scheduler.service import RemoteLiveRoom, RemoteStore  # noqa: E402

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}  # max_connections: 100
SERVICE = "class_service"


def serve(url: str, names: list[str], connections: int, ready: object, port_out: object) -> None:
    """The service's process: the pool, tokens ``tok-NAME``, until killed."""
    from service_server import ServiceThread, StaticTokens

    from scheduler.service._server import ClassService

    pool = ClassPool.open(url, min_size=connections, max_size=connections)
    service = ClassService(pool, StaticTokens({f"tok-{name}": name for name in names}), workers=connections)
    thread = ServiceThread(service).start()
    port_out.value = thread.port  # type: ignore[attr-defined]
    ready.set()  # type: ignore[attr-defined]
    while True:
        time.sleep(3600)


def learners(task: tuple[str, list[str], float, float]) -> tuple[list[float], dict[str, int], int]:
    """One process: a thread per learner, each answering with a pause of 0-2 s until ``stop`` (wall clock).
    Returns the save times, the answers acknowledged per learner, and the calls that failed."""
    url, names, start, stop = task
    times: list[float] = []
    saved: dict[str, int] = {}
    failed = [0]
    lock = threading.Lock()

    def learner(name: str) -> None:
        rng = random.Random(name)
        store = RemoteStore.open(url, f"tok-{name}", timeout_s=30)
        time.sleep(max(0.0, start - time.time()))
        mine: list[float] = []
        count = 0
        while time.time() < stop:
            time.sleep(rng.uniform(0, 2.0))
            at = T0 + timedelta(minutes=count)
            began = time.perf_counter()
            try:
                store.record(f"q{count % 150}", Rating.GOOD, at, duration_ms=9000)
            except Exception:
                with lock:
                    failed[0] += 1
                continue
            mine.append(time.perf_counter() - began)
            count += 1
        with lock:
            times.extend(mine)
            saved[name] = count

    threads = [threading.Thread(target=learner, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, saved, failed[0]


def live_learners(task: tuple[str, list[str], float, int]) -> tuple[list[float], list[float], int]:
    """One process of live learners: each looks at the session once a second and answers each new question
    after 0-10 s, until ``stop``; the look and answer times, and the answers given."""
    url, names, stop, questions = task
    looks: list[float] = []
    answers: list[float] = []
    given = [0]
    lock = threading.Lock()

    def learner(name: str) -> None:
        rng = random.Random(name)
        room = RemoteLiveRoom.open(url, f"tok-{name}", timeout_s=30)
        mine_looks: list[float] = []
        mine_answers: list[float] = []
        answered: set[int] = set()
        due: dict[int, float] = {}
        while time.time() < stop and len(answered) < questions:
            began = time.perf_counter()
            state = room.state(room="teacher")
            mine_looks.append(time.perf_counter() - began)
            if state is not None and state.open and state.position not in answered:
                when = due.setdefault(state.position, time.time() + rng.uniform(0, 10))
                if time.time() >= when:
                    began = time.perf_counter()
                    room.answer(state, "1", T0)
                    mine_answers.append(time.perf_counter() - began)
                    answered.add(state.position)
            time.sleep(1.0)
        with lock:
            looks.extend(mine_looks)
            answers.extend(mine_answers)
            given[0] += len(answered)

    threads = [threading.Thread(target=learner, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return looks, answers, given[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    binaries = find_binaries()
    if binaries is None:
        print("PostgreSQL's binaries were not found (Debian: apt-get install postgresql)", file=sys.stderr)
        return 2
    server = PostgresServer(binaries)
    with (server.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
        conf.writelines(f"{name} = {value}\n" for name, value in DURABLE.items())
    server.start()
    child = None
    try:
        database = server.create_database("service_bench")
        admin = server.admin_url(database)
        install(admin)
        names = [f"learner{k:04d}" for k in range(args.learners)]
        began = time.perf_counter()
        for name in names:
            add_learner(admin, name)  # no password: a learner of the service logs in nowhere
        add_service(admin, SERVICE, password=learner_password(SERVICE))
        add_instructor(admin, "teacher", password=learner_password("teacher"))
        print(f"{args.learners} learners added in {time.perf_counter() - began:.1f} s")
        with psycopg.connect(admin) as connection:
            limit = connection.execute("SHOW max_connections").fetchone()[0]
        context = multiprocessing.get_context("spawn")
        ready, port = context.Event(), context.Value("i", 0)
        url = server.url(SERVICE, learner_password(SERVICE), database)
        child = context.Process(target=serve, args=(url, names, args.connections, ready, port), daemon=True)
        child.start()
        if not ready.wait(60):
            print("the service did not start", file=sys.stderr)
            return 2
        service_url = f"http://127.0.0.1:{port.value}/services/course/"
        peak, sampling = [0], [True]

        def sample() -> None:
            with psycopg.connect(admin, autocommit=True) as watcher:
                while sampling[0]:
                    (used,) = watcher.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                        "AND pid <> pg_backend_pid()"
                    ).fetchone()
                    peak[0] = max(peak[0], used)
                    time.sleep(0.1)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        groups = [names[k :: args.processes] for k in range(args.processes)]
        start = time.time() + 5.0 + args.learners / 200  # every learner's store open first
        stop = start + args.seconds
        with ProcessPoolExecutor(args.processes, mp_context=context) as pool:
            results = list(pool.map(learners, [(service_url, group, start, stop) for group in groups]))
        sampling[0] = False
        watcher.join()
        times = sorted(t for part, _, _ in results for t in part)
        acknowledged = {name: n for _, saved, _ in results for name, n in saved.items()}
        failed = sum(f for _, _, f in results)
        with psycopg.connect(admin) as connection:
            rows = dict(
                connection.execute(
                    "SELECT learner, count(*) FROM course.review_log GROUP BY learner"
                ).fetchall()
            )
            (duplicated,) = connection.execute(
                "SELECT count(*) - count(DISTINCT (learner, reviewed_at)) FROM course.review_log"
            ).fetchone()
        lost = sum(max(0, n - rows.get(name, 0)) for name, n in acknowledged.items())
        p50, p99 = statistics.median(times), times[int(0.99 * (len(times) - 1))]
        print(
            f"{args.learners} learners, a pause of 0-2 s before each answer, {args.seconds:.0f} s, through "
            f"one service process with a pool of {args.connections} (server max_connections {limit})"
        )
        print(
            f"server connections used, most at once: {peak[0]} (the service's pool; the benchmark's own "
            "watcher not counted)"
        )
        print(
            f"saves: {len(times)} in {args.seconds:.0f} s ({len(times) / args.seconds:.0f}/s); time to save "
            f"one: p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms (target p99 <= 100 ms at 300 learners)"
        )
        print(f"answers lost: {lost}; duplicated: {duplicated}; calls that failed: {failed}")
        saves_ok = lost == 0 and duplicated == 0 and failed == 0 and peak[0] <= 30

        # The live review.
        peak[0], sampling[0] = 0, True
        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        questions, per_question = 3, 15.0
        counted: list[int] = []
        with LiveRoom.open(server.learner_url(database, "teacher")) as teacher:
            session = teacher.start("service_bench", T0)
            begin = time.time() + 3.0 + args.learners / 300
            stop = begin + questions * per_question + 5.0
            with ProcessPoolExecutor(args.processes, mp_context=context) as pool:
                running = pool.map(live_learners, [(service_url, group, stop, questions) for group in groups])
                time.sleep(max(0.0, begin - time.time()))
                for k in range(questions):
                    teacher.ask(session.session, f"q{k}", T0)
                    time.sleep(per_question)
                    counted.append(teacher.answers(session.session, k + 1).answered)
                    teacher.reveal(session.session, T0)
                results_live = list(running)
            teacher.end(session.session, T0)
        sampling[0] = False
        watcher.join()
        looks = sorted(t for part, _, _ in results_live for t in part)
        answered = sorted(t for _, part, _ in results_live for t in part)
        given = sum(n for _, _, n in results_live)

        def p(values: list[float], q: float) -> float:
            return values[int(q * (len(values) - 1))] * 1e3 if values else float("nan")

        print(
            f"live review: {args.learners} learners looking once a second; server connections used, most "
            f"at once: {peak[0]} (the service's pool and the instructor's); one look p50 "
            f"{p(looks, 0.5):.1f} ms, p99 {p(looks, 0.99):.1f} ms; one answer p50 "
            f"{p(answered, 0.5):.1f} ms, p99 {p(answered, 0.99):.1f} ms; counted before each reveal: "
            f"{', '.join(f'{n} of {args.learners}' for n in counted)} ({given} given)"
        )
        live_ok = counted == [args.learners] * questions and peak[0] <= 30
        return 0 if saves_ok and live_ok else 1
    finally:
        if child is not None:
            child.kill()
        server.stop()
        server.remove()


if __name__ == "__main__":
    raise SystemExit(main())
