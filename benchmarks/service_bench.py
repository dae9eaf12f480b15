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

With ``--attack`` (instead of the live review), one learner of the class, ``ada`` (her own token, and her
own password for direct SQL), attacks the class as issue 35 describes, ``--attacks`` (default all five) at
once, in a process of her own: (1) ``SELECT count(pg_advisory_lock(k)) FROM generate_series(1, 12000) k``
held in an open session; (2) as many connections as she can open, up to 100, held; (3) 10 concurrent
snapshots, never ended; (4) 16 concurrent merges of 5,000 answers each, repeated; (5) a 90 MB body with her
token (a merge with a field it does not take: read, parsed, refused) and three anonymous 99 MB posts, each
sent again when answered. The others save for ``--seconds`` with no attack, then ``--seconds`` under
attack, each save bounded by the client's deadline (its ``timeout_s``, 10 s; a failed save is sent again
with the same time, as the outbox does), while the instructor's projector (a ``LiveRoom`` of their own
connection) looks at a session every second. It prints, per phase, the others' saves (p50, p99, how many
went over the deadline, the other failures), the projector's looks (p99, failures) and the service's
largest RSS; the service process's peak RSS; what each attack got (refused, with the sentence, or how long
it held); the others' answers lost and duplicated. Every attack ends with the phase (a request left
waiting gives up within a minute); one that fails is reported, not raised. Exit status 0 only when every
save and look kept its deadline and nothing was lost or duplicated:
``python benchmarks/service_bench.py --attack --learners 100 --seconds 60``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import logging
import multiprocessing
import random
import select
import socket
import statistics
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# the repository first (its packages, not the tests' folders of the same names), then the tests' helpers:
# their throw-away PostgreSQL cluster (and service runner)
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import psycopg  # noqa: E402
from postgres_server import PostgresServer, find_binaries, learner_password  # noqa: E402

import scheduler  # noqa: E402
from scheduler import LogEntry, Rating  # noqa: E402
from scheduler.postgres import ClassPool, LiveRoom, add_instructor, add_learner, add_service, install  # noqa: E402
from scheduler.service import RemoteLiveRoom, RemoteStore  # noqa: E402
from scheduler.service._wire import encode  # noqa: E402

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}  # max_connections: 100
SERVICE = "class_service"


def serve(url: str, names: list[str], connections: int, ready: object, port_out: object) -> None:
    """The service's process: the pool, tokens ``tok-NAME``, until killed."""
    from service_server import ServiceThread, StaticTokens

    from scheduler.service._server import ClassService

    logging.getLogger("tornado.access").setLevel(logging.ERROR)  # each refusal of an attack: not logged

    pool = ClassPool.open(url, min_size=connections, max_size=connections)
    service = ClassService(pool, StaticTokens({f"tok-{name}": name for name in names}), workers=connections)
    thread = ServiceThread(service).start()
    port_out.value = thread.port  # type: ignore[attr-defined]
    ready.set()  # type: ignore[attr-defined]
    while True:
        time.sleep(3600)


def learners(
    task: tuple[str, list[str], float, float, float],
) -> tuple[list[tuple[float, float]], dict[str, int], list[tuple[float, str]]]:
    """One process: a thread per learner, each answering with a pause of 0-2 s until ``stop`` (wall clock),
    each save bounded by the client's ``timeout_s``. Returns the saves (when each began, wall clock, and how
    long it took), the answers acknowledged per learner, and the calls that failed (when, and what: "timeout"
    for a save past its deadline). A failed save is sent again, with the same time (as the outbox does)."""
    url, names, start, stop, timeout_s = task
    saves: list[tuple[float, float]] = []
    saved: dict[str, int] = {}
    failures: list[tuple[float, str]] = []
    lock = threading.Lock()

    def learner(name: str) -> None:
        rng = random.Random(name)
        store = RemoteStore.open(url, f"tok-{name}", timeout_s=timeout_s)
        time.sleep(max(0.0, start - time.time()))
        mine: list[tuple[float, float]] = []
        count = 0
        while time.time() < stop:
            time.sleep(rng.uniform(0, 2.0))
            at = T0 + timedelta(minutes=count)
            when, began = time.time(), time.perf_counter()
            try:
                store.record(f"q{count % 150}", Rating.GOOD, at, duration_ms=9000)
            except Exception as exc:
                with lock:
                    failures.append((when, _failure(exc)))
                continue
            mine.append((when, time.perf_counter() - began))
            count += 1
        with lock:
            saves.extend(mine)
            saved[name] = count

    threads = [threading.Thread(target=learner, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return saves, saved, failures


def _failure(exc: BaseException) -> str:
    """What a failed call was: "timeout" past its deadline, else its class and message (cut short)."""
    text = str(exc)
    if "timed out" in text.lower():
        return "timeout"
    return f"{type(exc).__name__}: {text[:160]}"


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


# -- the attacker (--attack) ------------------------------------------------------------------------------
ATTACKER = "ada"
ATTACKS = {
    1: "direct SQL: 12,000 advisory locks held in an open session",
    2: "direct SQL: as many connections as she can open (up to 100), held",
    3: "the service: 10 concurrent snapshots, never ended",
    4: "the service: 16 concurrent merges of 5,000 answers each, repeated",
    5: "the service: a 90 MB body with her token and three anonymous 99 MB posts, repeated",
}
DEADLINE_S = 10.0  # the client's timeout_s, RemoteStore's default: a save past it is one the learner lost
T1 = datetime(2026, 4, 1, tzinfo=timezone.utc)  # the attacker's merged answers: after every learner's


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160] if text else ''}"


def _until(end: float) -> None:
    time.sleep(max(0.0, end - time.time()))


def _lock_table(url: str, end: float) -> str:
    """Attack 1: fill PostgreSQL's lock table from one session and keep it open."""
    try:
        connection = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        return f"could not connect: {_first_line(exc)}"
    with connection:
        began = time.time()
        try:
            row = connection.execute(
                "SELECT count(pg_advisory_lock(k)) FROM generate_series(1, 12000) k"
            ).fetchone()
            taken = row[0] if row else 0
            outcome = f"took {taken} advisory locks in {time.time() - began:.1f} s"
        except psycopg.errors.InsufficientPrivilege as exc:
            return f"refused: {_first_line(exc)}"
        except psycopg.Error as exc:  # out of shared memory: what it took so far is still held
            outcome = f"the statement failed ({_first_line(exc)}), what it took still held by her session"
        held = time.time()
        _until(end)
        return f"{outcome}; the session held for {time.time() - held:.0f} s (until the attack ended)"


def _connection_slots(url: str, end: float) -> str:
    """Attack 2: open up to 100 connections as the learner and hold them."""
    opened: list[psycopg.Connection[Any]] = []
    refused = ""
    try:
        while len(opened) < 100 and time.time() < end:
            try:
                opened.append(psycopg.connect(url, autocommit=True, connect_timeout=5))
            except psycopg.Error as exc:
                refused = _first_line(exc)
                break
        held = time.time()
        _until(end)
        then = f"the next refused ({refused})" if refused else "none refused"
        kept = time.time() - held
        return f"opened {len(opened)} of 100, {then}; held {kept:.0f} s (until the attack ended)"
    finally:
        for connection in opened:
            connection.close()


def _post(base: str, path: str, body: bytes, token: str | None, timeout_s: float) -> tuple[str, float, int]:
    """POST ``body`` to the service, sent 1 MB at a time and stopped as soon as the service answers (or
    closes): its status (or what went wrong), the seconds to the answer, and the bytes sent before it."""
    parts = urllib.parse.urlsplit(base)
    head = (
        f"POST {parts.path}{path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n"
        + (f"Authorization: token {token}\r\n" if token else "")
        + "\r\n"
    )
    began = time.perf_counter()
    sent = 0
    try:
        with socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout_s) as sock:
            sock.sendall(head.encode())
            view = memoryview(body)
            try:
                while sent < len(body):
                    if select.select([sock], [], [], 0)[0]:
                        break  # the service answered (or closed) before the whole body
                    sock.sendall(view[sent : sent + (1 << 20)])
                    sent = min(len(body), sent + (1 << 20))
            except OSError:
                pass  # closed by the service while sending: its answer, if any, is read below
            answer = b""
            try:
                while b"\r\n" not in answer:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            except OSError as exc:
                if not answer:
                    return f"no answer ({_first_line(exc)})", time.perf_counter() - began, sent
            status = answer.split(b"\r\n", 1)[0].split(b" ")
            code = status[1].decode(errors="replace") if len(status) > 1 else "closed without an answer"
            return code, time.perf_counter() - began, sent
    except OSError as exc:
        return f"no answer ({_first_line(exc)})", time.perf_counter() - began, sent


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _snapshots(base: str, token: str, end: float) -> str:
    """Attack 3: 10 concurrent snapshots, never ended; each looked at every 2 s to see how long it stays
    open (a read inside it: a service that ends a snapshot refuses its id, one that keeps it open answers;
    whether it holds a connection meanwhile shows in the others' saves)."""
    with ThreadPoolExecutor(10) as threads:
        begun = list(threads.map(lambda _: _request(base, "api/v1/snapshot", {}, token, 15.0), range(10)))
    opened_at = time.time()
    keys = [payload["snapshot"] for status, _, payload in begun if status == "200" and "snapshot" in payload]
    statuses = Counter(status for status, _, _ in begun)
    seconds = sorted(s for _, s, _ in begun)
    refusals = {status: _error_text(payload.get("error")) for status, _, payload in begun if status != "200"}
    ended: dict[str, float] = {}  # when the service first refused the id as not open
    answered: dict[str, float] = {}  # when a read inside it last succeeded
    reads: Counter[str] = Counter()

    def look(key: str) -> None:
        wait = min(5.0, end - time.time())
        if wait > 0.1:
            status, _, _ = _request(
                base, "api/v1/store/review_counts", {"args": {}, "snapshot": key}, token, wait
            )
            reads[status] += 1
            if status == "200":
                answered[key] = time.time()
            elif status in ("400", "404", "410"):  # the service ended it (an answer, not a timeout)
                ended.setdefault(key, time.time())

    with ThreadPoolExecutor(10) as threads:
        while keys and time.time() < end and len(ended) < len(keys):
            list(threads.map(look, [key for key in keys if key not in ended]))
            time.sleep(min(2.0, max(0.0, end - time.time())))
    lines = [
        f"10 asked: {_tally(statuses)} (in {seconds[0]:.1f}-{seconds[-1]:.1f} s)",
        *(f"{status}: {error}" for status, error in refusals.items() if error),
    ]
    if keys:
        lines.append(f"{len(keys)} opened; reads inside them every 2 s: {_tally(reads)}")
        if ended:
            after = sorted(when - opened_at for when in ended.values())
            lines.append(f"{len(ended)} ended by the service, {after[0]:.0f}-{after[-1]:.0f} s after opening")
        live = sorted(answered[key] - opened_at for key in keys if key not in ended and key in answered)
        if live:
            lines.append(
                f"{len(live)} not seen ended, a read inside last answered "
                f"{live[0]:.0f}-{live[-1]:.0f} s after"
            )
        unseen = sum(1 for key in keys if key not in ended and key not in answered)
        if unseen:
            lines.append(f"{unseen} neither ended nor read")
    return "; ".join(lines)


def _tally(statuses: Counter[str]) -> str:
    """How many requests got each status ("answered 200") or failed each way ("timeout")."""
    return ", ".join(
        f"{n} {'answered ' if status.isdigit() else ''}{status}" for status, n in sorted(statuses.items())
    )


def _error_text(error: Any) -> str:
    """The sentence of an error the service sent (its ``args``), else what was sent, cut short."""
    if isinstance(error, dict) and error.get("args"):
        return " ".join(str(a) for a in error["args"])[:200]
    return "" if error is None else str(error)[:200]


def _request(base: str, path: str, body: Any, token: str | None, timeout_s: float) -> tuple[str, float, Any]:
    """One JSON POST: its status (or "timeout", or what went wrong), seconds, and the JSON answered."""
    request = urllib.request.Request(
        base + path,
        data=_json(body),
        method="POST",
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"token {token}"} if token else {}),
        },
    )
    began = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status, data = str(response.status), response.read()
    except urllib.error.HTTPError as exc:
        status, data = str(exc.code), exc.read()
    except Exception as exc:
        return _failure(exc).split(":")[0], time.perf_counter() - began, {}
    try:
        payload = json.loads(data)
    except ValueError:
        payload = {}
    return status, time.perf_counter() - began, payload if isinstance(payload, dict) else {}


def _merges(base: str, token: str, end: float) -> str:
    """Attack 4: 16 threads, each merging 5,000 new answers at a time until the attack ends."""
    counter = itertools.count()
    outcomes: list[tuple[str, float]] = []
    errors: dict[str, str] = {}
    lock = threading.Lock()

    def merging() -> None:
        while time.time() < end:
            batch = next(counter)
            answers = [
                LogEntry(f"q{k % 150}", Rating.GOOD, T1 + timedelta(seconds=batch * 5000 + k), 9000)
                for k in range(5000)
            ]
            args = encode({"answers": answers, "practice": [], "decks": {}, "nudges": []})
            status, seconds, payload = _request(base, "api/v1/store/merge", {"args": args}, token, 30.0)
            with lock:
                outcomes.append((status, seconds))
                if status != "200":
                    errors.setdefault(status, _error_text(payload.get("error")))

    threads = [threading.Thread(target=merging) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = Counter(status for status, _ in outcomes)
    done = sorted(seconds for status, seconds in outcomes if status == "200")
    line = f"{len(outcomes)} merges sent: {_tally(statuses)}"
    if done:
        line += f"; a merge took p50 {statistics.median(done):.1f} s, longest {done[-1]:.1f} s"
    for status, error in errors.items():
        line += f"; {status}: {error}" if error else ""
    return line


def _bodies(base: str, token: str, end: float) -> str:
    """Attack 5: a 90 MB merge (with a field a merge does not take: parsed, then refused) with her token,
    and three anonymous 99 MB posts, each sent again as soon as it is answered, until the attack ends."""
    entry = _json(encode(LogEntry("q1", Rating.GOOD, T1, 9000)))
    count = 90_000_000 // (len(entry) + 1)
    big = (
        b'{"args": {"answers": [], "practice": [], "decks": {}, "padding": ['
        + b",".join([entry] * count)
        + b"]}}"
    )
    huge = b'{"args": {"x": "' + b"a" * (99_000_000 - 20) + b'"}}'
    results: dict[str, list[tuple[str, float, int]]] = {"with her token": [], "anonymous": []}
    lock = threading.Lock()

    def posting(kind: str, body: bytes, who: str | None) -> None:
        while time.time() < end:
            outcome = _post(base, "api/v1/store/merge", body, who, 60.0)
            with lock:
                results[kind].append(outcome)

    threads = [threading.Thread(target=posting, args=("with her token", big, token))]
    threads += [threading.Thread(target=posting, args=("anonymous", huge, None)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = []
    for kind, size in (("with her token", len(big)), ("anonymous", len(huge))):
        posted = results[kind]
        if not posted:
            lines.append(f"{kind} ({size / 1e6:.0f} MB): none sent")
            continue
        statuses = Counter(status for status, _, _ in posted)
        seconds = sorted(s for _, s, _ in posted)
        sent = sorted(n for _, _, n in posted)
        lines.append(
            f"{len(posted)} {kind} ({size / 1e6:.0f} MB): "
            + _tally(statuses)
            + f", each in {seconds[0]:.1f}-{seconds[-1]:.1f} s, {sent[0] / 1e6:.0f}-{sent[-1] / 1e6:.0f} MB "
            "of the body sent before the answer"
        )
    return "; ".join(lines)


def attacker(task: tuple[str, str, list[int], float, float]) -> dict[int, str]:
    """The attacker's process: from ``begin`` to ``end`` (wall clock), the attacks asked for, at once, each
    in its own thread; what each got. An attack that fails says so."""
    base, sql_url, chosen, begin, end = task
    token = f"tok-{ATTACKER}"
    runs: dict[int, Callable[[], str]] = {
        1: lambda: _lock_table(sql_url, end),
        2: lambda: _connection_slots(sql_url, end),
        3: lambda: _snapshots(base, token, end),
        4: lambda: _merges(base, token, end),
        5: lambda: _bodies(base, token, end),
    }
    results: dict[int, str] = {}

    def run(number: int) -> None:
        try:
            results[number] = runs[number]()
        except Exception as exc:  # the benchmark reports an attack that broke, and goes on
            results[number] = f"the attack itself failed: {_first_line(exc)}"

    _until(begin)
    threads = {number: threading.Thread(target=run, args=(number,), daemon=True) for number in chosen}
    for thread in threads.values():
        thread.start()
    for number, thread in threads.items():
        thread.join(max(1.0, end + 90.0 - time.time()))
        results.setdefault(number, "still running 90 s after the attack should have ended")
    return results


def _rss_kb(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (``VmHWM``: its peak), in kB; 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _ms(at: datetime) -> int:
    """``at`` as the review log keeps it: milliseconds since the epoch."""
    return round(at.timestamp() * 1000)


def _scalar(connection: psycopg.Connection[Any], query: str) -> Any:
    """The one value ``query`` answers."""
    row = connection.execute(query.encode()).fetchone()
    if row is None:
        raise RuntimeError(f"no answer to {query}")
    return row[0]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))] if ordered else float("nan")


def under_attack(
    args: argparse.Namespace,
    context: Any,
    groups: list[list[str]],
    urls: tuple[str, str, str],
    service_pid: int,
    peak: list[int],
) -> tuple[list[str], dict[str, int], bool]:
    """``--attack``: the class saves for ``--seconds`` with no attack, then ``--seconds`` more while the
    attacker runs the attacks asked for, at once; the instructor's projector (their own connection) looks
    at a session every second throughout. The others' answers lost and duplicated, the phases' figures and
    what each attack got, as the report's lines; the answers acknowledged per learner; whether every save
    and every look of the projector kept its deadline."""
    service_url, teacher_url, attacker_url = urls
    chosen = sorted({int(n) for n in args.attacks.split(",") if n.strip()})
    start = time.time() + 5.0 + args.learners / 200
    calm_end = start + args.seconds
    stop = calm_end + args.seconds
    looks: list[tuple[float, float]] = []
    projector_failures: list[tuple[float, str]] = []
    memory: list[tuple[float, int]] = []
    running = [True]

    def projector() -> None:
        room, session = None, 0
        while running[0] and time.time() < stop:
            when, began = time.time(), time.perf_counter()
            try:
                if room is None:
                    room = LiveRoom.open(teacher_url, timeout_s=DEADLINE_S)
                    session = room.start("service_bench --attack", T0).session
                if when >= start:
                    room.state(session)
                    looks.append((when, time.perf_counter() - began))
            except Exception as exc:
                if when >= start:
                    projector_failures.append((when, _failure(exc)))
            time.sleep(max(0.0, 1.0 - (time.time() - when)))
        if room is not None:
            with contextlib.suppress(Exception):
                room.end(session, T0)
            room.close()

    def resident() -> None:
        while running[0]:
            memory.append((time.time(), _rss_kb(service_pid)))
            time.sleep(0.2)

    helpers = [threading.Thread(target=work, daemon=True) for work in (projector, resident)]
    for helper in helpers:
        helper.start()
    try:
        with ProcessPoolExecutor(args.processes + 1, mp_context=context) as pool:
            attacking = pool.submit(attacker, (service_url, attacker_url, chosen, calm_end, stop))
            results = list(
                pool.map(learners, [(service_url, group, start, stop, DEADLINE_S) for group in groups])
            )
            got = attacking.result(timeout=max(1.0, stop + 120.0 - time.time()))
    finally:
        running[0] = False
        for helper in helpers:
            helper.join(DEADLINE_S + 5.0)
    peak_kb = _rss_kb(service_pid, "VmHWM")
    saves = [save for part, _, _ in results for save in part]
    failures = [failure for _, _, part in results for failure in part]
    acknowledged = {name: n for _, saved, _ in results for name, n in saved.items()}
    lines = [
        f"{args.learners} learners saving (a pause of 0-2 s before each answer, each save's deadline the "
        f"client's timeout_s, {DEADLINE_S:.0f} s; a failed save sent again) through one service process with "
        f"a pool of {args.connections}; {args.seconds:.0f} s with no attack, then {args.seconds:.0f} s while "
        f"learner {ATTACKER!r} runs attacks {', '.join(map(str, chosen))} at once",
    ]
    phases = (("no attack", start, calm_end), ("under attack", calm_end, stop + DEADLINE_S))
    for phase, begin, end in phases:
        took = [s for when, s in saves if begin <= when < end]
        failed = [what for when, what in failures if begin <= when < end]
        timeouts = sum(1 for what in failed if what == "timeout") + sum(1 for s in took if s > DEADLINE_S)
        others = Counter(what for what in failed if what != "timeout")
        seen = [s for when, s in looks if begin <= when < end]
        missed = [what for when, what in projector_failures if begin <= when < end]
        rss = max((kb for when, kb in memory if begin <= when < end), default=0)
        lines.append(
            f"{phase}: {len(took)} saves ({len(took) / args.seconds:.0f}/s), p50 "
            f"{_percentile(took, 0.5) * 1e3:.1f} ms, p99 {_percentile(took, 0.99) * 1e3:.1f} ms; "
            f"{timeouts} over the {DEADLINE_S:.0f} s deadline, {sum(others.values())} other failures; "
            f"the projector: {len(seen)} looks, p99 {_percentile(seen, 0.99) * 1e3:.1f} ms, {len(missed)} "
            f"failed; the service's RSS at most {rss / 1024:.0f} MB"
        )
        for what, n in others.most_common(3):
            lines.append(f"  {n} x {what}")
        for what, n in Counter(missed).most_common(3):
            lines.append(f"  the projector, {n} x {what}")
    lines.append(f"the service process's peak RSS (VmHWM): {peak_kb / 1024:.0f} MB")
    lines.append(
        f"server connections used, most at once: {peak[0]} (the service's pool, the projector's and the "
        "attacker's; the benchmark's own watcher not counted)"
    )
    lines.append(f"{ATTACKER}'s attacks, what each got:")
    for number in chosen:
        lines.append(f"  {number}. {ATTACKS[number]}: {got.get(number, 'no result')}")
    kept = not failures and not projector_failures and all(s <= DEADLINE_S for _, s in saves)
    return lines, acknowledged, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--attack",
        action="store_true",
        help=f"learner {ATTACKER!r} attacks the class: --seconds with no attack, then --seconds under attack "
        "(instead of the live review)",
    )
    parser.add_argument(
        "--attacks",
        default="1,2,3,4,5",
        help="which attacks, at once: "
        + "; ".join(f"{number}: {what}" for number, what in ATTACKS.items())
        + " (default: all five)",
    )
    args = parser.parse_args(argv)
    if not {n.strip() for n in args.attacks.split(",")} <= {str(n) for n in ATTACKS}:
        parser.error(f"--attacks takes numbers from 1 to {len(ATTACKS)}, comma-separated: {args.attacks!r}")
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
        if args.attack:  # a learner of the class too, with a password of her own for direct SQL
            add_learner(admin, ATTACKER, password=learner_password(ATTACKER))
        add_service(admin, SERVICE, password=learner_password(SERVICE))
        add_instructor(admin, "teacher", password=learner_password("teacher"))
        print(f"{args.learners} learners added in {time.perf_counter() - began:.1f} s")
        with psycopg.connect(admin) as connection:
            limit = _scalar(connection, "SHOW max_connections")
        context = multiprocessing.get_context("spawn")
        ready, port = context.Event(), context.Value("i", 0)
        url = server.url(SERVICE, learner_password(SERVICE), database)
        tokens = [*names, ATTACKER] if args.attack else names
        child = context.Process(target=serve, args=(url, tokens, args.connections, ready, port), daemon=True)
        child.start()
        if not ready.wait(60):
            print("the service did not start", file=sys.stderr)
            return 2
        service_url = f"http://127.0.0.1:{port.value}/services/course/"
        peak, sampling = [0], [True]

        def sample() -> None:
            with psycopg.connect(admin, autocommit=True) as watcher:
                while sampling[0]:
                    with contextlib.suppress(psycopg.Error):  # an attack on the server: sampled again
                        used = _scalar(
                            watcher,
                            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                            "AND pid <> pg_backend_pid()",
                        )
                        peak[0] = max(peak[0], used)
                    time.sleep(0.1)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        groups = [names[k :: args.processes] for k in range(args.processes)]
        if args.attack:
            imported = Path(scheduler.__file__).parent
            print(f"the scheduler imported (here and by the service's process): {imported}")
            teacher_url = server.learner_url(database, "teacher")
            urls = (service_url, teacher_url, server.learner_url(database, ATTACKER))
            lines, acknowledged, kept = under_attack(args, context, groups, urls, child.pid or 0, peak)
            sampling[0] = False
            watcher.join()
            with psycopg.connect(admin) as connection:
                kept_rows = connection.execute(
                    "SELECT learner, reviewed_at, count(*) FROM course.review_log WHERE learner <> %s "
                    "GROUP BY learner, reviewed_at",
                    (ATTACKER,),
                ).fetchall()
            found: dict[str, set[int]] = {}  # each learner's answers' times, in ms
            for learner, reviewed_at, _ in kept_rows:
                found.setdefault(learner, set()).add(reviewed_at)
            duplicated = sum(n - 1 for _, _, n in kept_rows)
            lost = sum(
                sum(1 for k in range(n) if _ms(T0 + timedelta(minutes=k)) not in found.get(name, set()))
                for name, n in acknowledged.items()
            )
            for line in lines:
                print(line)
            print(
                f"the others' answers lost (acknowledged, not in the database): {lost}; duplicated (in it "
                f"twice: a save past its deadline that the service made anyway, sent again): {duplicated}"
            )
            print(f"the others and the projector kept their deadline throughout: {'yes' if kept else 'no'}")
            return 0 if kept and lost == 0 and duplicated == 0 else 1
        start = time.time() + 5.0 + args.learners / 200  # every learner's store open first
        stop = start + args.seconds
        with ProcessPoolExecutor(args.processes, mp_context=context) as pool:
            results = list(pool.map(learners, [(service_url, group, start, stop, 30.0) for group in groups]))
        sampling[0] = False
        watcher.join()
        times = sorted(t for part, _, _ in results for _, t in part)
        acknowledged = {name: n for _, saved, _ in results for name, n in saved.items()}
        failed = sum(len(f) for _, _, f in results)
        with psycopg.connect(admin) as connection:
            rows: dict[str, int] = dict(
                connection.execute(
                    "SELECT learner, count(*) FROM course.review_log GROUP BY learner"
                ).fetchall()
            )
            duplicated = _scalar(
                connection, "SELECT count(*) - count(DISTINCT (learner, reviewed_at)) FROM course.review_log"
            )
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
