"""One learner cannot take the class service down (issue 35): Ada, with her own token, attacks the real
service on a real PostgreSQL while Bob saves. Her snapshots hold one connection at most and end by
themselves; her many calls at once take her share of the workers, not Bob's; a body over the limit, or one
without a known token, is refused before it is read; a slow client is cut off; what she sends that cannot
be read is a 400 in words, never a 500; a write sent again saves once; the database's URL is in no answer;
a pooled connection the server dropped is not lent. The direct-SQL denials (advisory locks, connection
slots) are in test_postgres_attacks.py.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password
from service_server import ServiceThread, StaticTokens
from store_helpers import GOOD

from scheduler import LogEntry

postgres = pytest.importorskip("scheduler.postgres")
server_module = pytest.importorskip("scheduler.service._server")
from scheduler.service import RemoteStore  # noqa: E402

SERVICE = "class_service"
TOKENS = {"ada-token": "ada", "bob-token": "bob"}
DEADLINE_S = 5.0  # the most a save of Bob's may take under attack (his kernel's timeout is 10 s)


class Klass:
    """A class (learners ada and bob, instructor teacher) and its service on a pool of four connections."""

    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.name = server.create_database()
        admin = server.admin_url(self.name)
        postgres.install(admin)
        for learner in ("ada", "bob"):
            postgres.add_learner(admin, learner, password=learner_password(learner))
        postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
        postgres.add_service(admin, SERVICE, password=learner_password(SERVICE))
        self.pool = postgres.ClassPool.open(
            server.url(SERVICE, learner_password(SERVICE), self.name), min_size=4, max_size=4
        )
        self.service = server_module.ClassService(self.pool, StaticTokens(TOKENS))
        self.thread = ServiceThread(self.service).start()
        self.url = self.thread.url

    def close(self) -> None:
        self.thread.stop()
        self.pool.close()

    def post(self, path: str, body: Any, token: str | None = "ada-token") -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"token {token}"
        connection = http.client.HTTPConnection("127.0.0.1", self.thread.port, timeout=60)
        try:
            connection.request("POST", self.url.split(str(self.thread.port), 1)[1] + path, data, headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def bob_saves(self, count: int) -> list[float]:
        """The seconds each of ``count`` saves of Bob's took (his kernel's own RemoteStore)."""
        bob = RemoteStore.open(self.url, "bob-token", timeout_s=10)
        took = []
        for number in range(count):
            started = time.monotonic()
            bob.record(f"b{number}", GOOD, T0 + timedelta(minutes=number))
            took.append(time.monotonic() - started)
        return took


@pytest.fixture
def klass(postgres_server: PostgresServer) -> Iterator[Klass]:
    made = Klass(postgres_server)
    try:
        yield made
    finally:
        made.close()


def test_snapshots_hold_one_connection_and_end_by_themselves(klass: Klass) -> None:
    klass.service.snapshots.seconds = 1.0
    keys = [klass.post("api/v1/snapshot", {})[1]["snapshot"] for _ in range(4)]
    assert klass.service.snapshots.held() == 1  # one held, the three others each read on their own
    keys += [klass.post("api/v1/snapshot", {})[1]["snapshot"] for _ in range(6)]
    assert klass.service.snapshots.held() <= 1 and klass.service.snapshots.held_peak == 1
    # a learner keeps four ids: the sixth to the tenth ended the first five
    first = klass.post("api/v1/store/reviews", {"args": {}, "snapshot": keys[0]})
    assert first == (400, first[1]) and first[1]["error"]["args"] == [
        "that snapshot is not open (it ended, or was open too long)"
    ]
    assert klass.post("api/v1/store/reviews", {"args": {}, "snapshot": keys[-1]}) == (200, {"result": []})
    assert max(klass.bob_saves(3)) < DEADLINE_S
    bob = RemoteStore.open(klass.url, "bob-token")
    with bob.snapshot():  # unheld while Ada holds the one slot: it still reads
        assert sorted(bob.review_counts()) == ["b0", "b1", "b2"]
    time.sleep(1.5)  # nobody begins another: they end by themselves
    assert klass.service.snapshots.held() == 0
    assert klass.post("api/v1/store/reviews", {"args": {}, "snapshot": keys[-1]})[0] == 400


def _merge_body(count: int, start: int) -> dict[str, Any]:
    from scheduler.service._wire import encode

    answers = [LogEntry(f"a{start + n}", GOOD, T0 + timedelta(seconds=start + n), 1000) for n in range(count)]
    return {"args": encode({"answers": answers, "practice": [], "decks": {}, "nudges": []})}


def test_a_pool_under_four_holds_no_snapshot(klass: Klass) -> None:
    # behind PgBouncer with a pool of one, one held snapshot stopped the class: a small pool holds none
    small = postgres.ClassPool.open(
        klass.server.url(SERVICE, learner_password(SERVICE), klass.name), min_size=1, max_size=3
    )
    services = [server_module.ClassService(small, StaticTokens(TOKENS), snapshots=n) for n in (None, 1)]
    try:
        assert [service.snapshots.slots for service in services] == [0, 1]
    finally:
        for service in services:
            service.close()
        small.close()


def test_many_calls_at_once_take_the_learners_share_not_the_class(klass: Klass) -> None:
    assert (klass.service.workers, klass.service.share.per_learner) == (4, 1)
    bodies = [_merge_body(2000, 10_000 * n) for n in range(16)]
    answers: list[tuple[int, Any]] = []
    done = threading.Event()

    def attack() -> None:
        with ThreadPoolExecutor(16) as threads:
            answers.extend(threads.map(lambda body: klass.post("api/v1/store/merge", body), bodies))
        done.set()

    projector = postgres.LiveRoom.open(klass.server.url("teacher", learner_password("teacher"), klass.name))
    session = projector.start("Week 3", T0)
    attacker = threading.Thread(target=attack)
    attacker.start()
    time.sleep(0.3)
    took = klass.bob_saves(5)
    started = time.monotonic()
    assert projector.state(session.session) == session  # the instructor's projector, meanwhile
    took.append(time.monotonic() - started)
    attacker.join(120)
    projector.close()
    assert done.is_set()
    assert max(took) < DEADLINE_S, took
    statuses = sorted(status for status, _ in answers)
    assert set(statuses) <= {200, 429} and 429 in statuses and 200 in statuses
    busy = [body["error"] for status, body in answers if status == 429]
    assert {tuple(error["kinds"][:2]) for error in busy} == {("BusyError", "StoreUnavailableError")}
    said = {error["args"][-1] for error in busy}  # her kernel keeps the answers (StoreUnavailableError)
    assert said <= {
        "the class service is busy with this learner's calls: 9 are running or waiting, the most it takes at "
        "once; the answer is kept and sent again in a moment",
        "the class service is busy with this learner's calls: their earlier calls kept it busy for 10 s; the "
        "answer is kept and sent again in a moment",
    }, said


def _raw(klass: Klass, head: bytes, send_body: bytes = b"", wait_s: float = 10.0) -> bytes:
    """What the service answers to ``head`` (and ``send_body``), read until it closes or ``wait_s``."""
    with socket.create_connection(("127.0.0.1", klass.thread.port), timeout=wait_s) as raw:
        raw.sendall(head + send_body)
        got = b""
        try:
            while chunk := raw.recv(65536):
                got += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return got


def _head(klass: Klass, path: str, length: int, token: str | None) -> bytes:
    prefix = klass.url.split(str(klass.thread.port), 1)[1]
    lines = [f"POST {prefix}{path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {length}"]
    if token is not None:
        lines.append(f"Authorization: token {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _status_and_error(reply: bytes) -> tuple[int, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]["args"][-1]


def test_a_body_over_the_limit_is_refused_before_it_is_read(klass: Klass) -> None:
    size = 99 * 1024 * 1024
    # headers only, no byte of the body sent: the answer comes back anyway, and the connection closes
    reply = _raw(klass, _head(klass, "api/v1/store/merge", size, "ada-token"))
    assert _status_and_error(reply) == (
        413,
        f"the request is too large ({size:,} bytes); the class service takes at most 8,388,608 bytes",
    )
    reply = _raw(klass, _head(klass, "api/v1/store/merge", size, None))
    assert _status_and_error(reply) == (
        401,
        "the class service takes no request without a valid JupyterHub token (a learner's server has one in "
        "$JUPYTERHUB_API_TOKEN)",
    )
    # a body sent in chunks past the limit is cut off where it passes it
    head = _head(klass, "api/v1/store/merge", 0, "ada-token").replace(
        b"Content-Length: 0", b"Transfer-Encoding: chunked"
    )
    chunk = b"%x\r\n%s\r\n" % (1024 * 1024, b" " * 1024 * 1024)
    with socket.create_connection(("127.0.0.1", klass.thread.port), timeout=10) as raw:
        raw.sendall(head)
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            for _ in range(64):
                raw.sendall(chunk)
    assert max(klass.bob_saves(2)) < DEADLINE_S


def test_a_slow_client_is_cut_off(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "CLIENT_SECONDS", 1.0)
    klass = Klass(postgres_server)
    try:
        started = time.monotonic()
        assert _raw(klass, b"POST /services/course/api/v1/store/merge HTTP/1.1\r\nHost: x", wait_s=10) == b""
        headers_cut = time.monotonic() - started
        started = time.monotonic()
        reply = _raw(klass, _head(klass, "api/v1/store/merge", 1000, "ada-token"), b"{", wait_s=10)
        body_cut = time.monotonic() - started
        assert reply == b""
        assert headers_cut < 5 and body_cut < 5, (headers_cut, body_cut)
    finally:
        klass.close()


def test_a_body_is_parsed_off_the_event_loop(klass: Klass, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    parsed = server_module._parsed

    def spy(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return parsed(*args)

    monkeypatch.setattr(server_module, "_parsed", spy)
    assert klass.post("api/v1/store/merge", _merge_body(10, 0))[0] == 200
    assert len(threads) == 1 and threads[0].startswith("course_")


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("api/v1/store/reviews", b"\xff\xfe{", "the request cannot be read: "),
        ("api/v1/store/reviews", b"[" * 100_000 + b"]" * 100_000, "the request cannot be read: "),
        (
            "api/v1/store/reviews",
            b'{"args": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            "the request cannot be read",
        ),
        (
            "api/v1/store/record",
            {"args": {"item_id": "q", "rating": 3, "at": {"$t": 0}, "duration_ms": 10**30}},
            "the request cannot be read: an integer outside signed 64 bits",
        ),
        (
            "api/v1/store/record",
            {"args": {"item_id": "q", "rating": 3, "at": {"$t": 10**30}}},
            "the request cannot be read: a time",
        ),
        (
            "api/v1/live/answer",
            {"args": {"state": {"$r": "LiveState", "f": [[1], 2, 3, 4, 5, 6, 7, 8, 9, 10]}, "answer": "A"}},
            "LiveState",
        ),
        (
            "api/v1/store/record",
            {"args": {"item_id": "q", "rating": 3, "at": {"$t": 0}}, "once": "é" * 3},
            "key",
        ),
    ],
    ids=["not-utf8", "deep-json", "deep-args", "huge-duration", "huge-time", "forged-state", "bad-key"],
)
def test_what_cannot_be_read_is_a_400_in_words(klass: Klass, path: str, body: Any, words: str) -> None:
    status, answer = klass.post(path, body)
    assert status == 400, answer
    assert words in answer["error"]["args"][-1]


def test_a_write_sent_again_saves_once(klass: Klass) -> None:
    body = {"args": {"item_id": "q", "rating": 3, "at": {"$t": 1_700_000_000_000}}, "once": "k-1"}
    with ThreadPoolExecutor(3) as threads:  # three copies at once, then a fourth later
        first = list(threads.map(lambda _: klass.post("api/v1/store/record", body), range(3)))
    again = klass.post("api/v1/store/record", body)
    assert [status for status, _ in first] == [200, 200, 200] and again[0] == 200
    assert len({json.dumps(answer) for _, answer in [*first, again]}) == 1
    assert klass.post("api/v1/store/reviews", {"args": {}})[1]["result"][0]["f"][0] == "q"
    assert len(klass.post("api/v1/store/reviews", {"args": {}})[1]["result"]) == 1
    other = {**body, "once": "k-2"}
    assert klass.post("api/v1/store/record", other)[0] == 200  # another key is another write
    assert len(klass.post("api/v1/store/reviews", {"args": {}})[1]["result"]) == 2


def test_no_answer_quotes_the_database_url(klass: Klass) -> None:
    TOKENS["teacher-token"] = "teacher"
    try:
        status, answer = klass.post("api/v1/store/reviews", {"args": {}}, "teacher-token")
    finally:
        del TOKENS["teacher-token"]
    assert status == 403
    text = json.dumps(answer)
    assert klass.pool.location not in text and "postgresql://" not in text
    assert "the class service as teacher" in answer["error"]["args"][-1]


def test_a_connection_the_server_dropped_is_not_lent(klass: Klass) -> None:
    assert max(klass.bob_saves(1)) < DEADLINE_S
    with klass.server.admin() if hasattr(klass.server, "admin") else _admin(klass) as admin:
        dropped = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = %s", (SERVICE,)
        ).fetchone()[0]
    assert dropped >= 1
    bob = RemoteStore.open(klass.url, "bob-token")
    for number in range(6):  # more calls than the pool has connections: none fails
        bob.record(f"after{number}", GOOD, T0 + timedelta(hours=number))


def _admin(klass: Klass) -> Any:
    import psycopg

    return psycopg.connect(klass.server.admin_url(klass.name), autocommit=True)
