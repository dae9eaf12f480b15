"""The class service over HTTP (``scheduler.service``): a request's learner is whoever its token belongs to,
and nothing else in it can name another; what it refuses, in which words. Its store contract is in
test_store_contract.py (the "http" backend); JupyterHub's own tokens are tried in tests/classroom/test_hub.py.

Against a real PostgreSQL; the service runs in a thread of this process, tokens from a table.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password
from service_server import ServiceThread, StaticTokens
from store_helpers import GOOD

from scheduler import Nudge, PredictionEvent, StoreAccessError, StoreUnavailableError

postgres = pytest.importorskip("scheduler.postgres")
service_module = pytest.importorskip("scheduler.service._server")
from scheduler.service import RemoteStore, TokenRefusedError  # noqa: E402

SERVICE = "class_service"
TOKENS = {"alice-token": "alice", "bob-token": "bob", "teacher-token": "teacher"}


@pytest.fixture
def service(postgres_server: PostgresServer) -> Iterator[ServiceThread]:
    name = postgres_server.create_database()
    admin = postgres_server.admin_url(name)
    postgres.install(admin)
    for learner in ("alice", "bob"):
        postgres.add_learner(admin, learner)
    postgres.add_instructor(admin, "teacher")
    postgres.add_service(admin, SERVICE, password=learner_password(SERVICE))
    pool = postgres.ClassPool.open(postgres_server.url(SERVICE, learner_password(SERVICE), name), max_size=2)
    running = ServiceThread(service_module.ClassService(pool, StaticTokens(TOKENS))).start()
    try:
        yield running
    finally:
        running.stop()
        pool.close()


def post(url: str, body: Any, token: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"token {token}"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_each_token_reaches_its_own_learners_rows_only(service: ServiceThread) -> None:
    alice, bob = RemoteStore.open(service.url, "alice-token"), RemoteStore.open(service.url, "bob-token")
    assert (alice.learner, bob.learner) == ("alice", "bob")
    alice.record("a1", GOOD, T0)
    alice.nudge(Nudge("a2", T0, T0 + timedelta(days=1), "a mistake"))
    bob.record("b1", GOOD, T0)
    assert [r.item_id for r in alice.reviews()] == ["a1"] and [r.item_id for r in bob.reviews()] == ["b1"]
    assert [n.item_id for n in alice.nudges()] == ["a2"] and bob.nudges() == []
    kept = alice.predict(PredictionEvent("a3", T0, "[1, 2]", True))
    assert alice.predictions() == [kept] and bob.predictions() == []
    assert bob.merge([], [], {}, predictions=[kept]).predictions == 1
    assert [p.right for p in bob.predictions(T0, T0 + timedelta(milliseconds=1))] == [True]
    with alice.snapshot():
        assert list(alice.cards()) == ["a1"]


@pytest.mark.parametrize("token", [None, "", "someone-elses-guess"])
def test_without_a_token_it_knows_nothing_is_read_or_written(
    service: ServiceThread, token: str | None
) -> None:
    status, body = post(service.url + "api/v1/store/reviews", {"args": {}}, token)
    assert status == 401 and body["error"]["kinds"][:2] == ["NoTokenError", "StoreAccessError"]
    with pytest.raises(TokenRefusedError) as refused:
        RemoteStore.open(service.url, token or "")
    assert str(refused.value).startswith(f"the class service at {service.url} refused this kernel (")


def test_no_request_can_name_another_learner(service: ServiceThread) -> None:
    RemoteStore.open(service.url, "bob-token").record("b1", GOOD, T0)
    url = service.url + "api/v1/store/reviews"
    for args in ({"learner": "bob"}, {"item_id": "b1", "learner": "bob"}, {"role": "bob"}):
        status, body = post(url, {"args": args}, "alice-token")
        assert status == 400, args
        assert body["error"]["args"][0].startswith("the request cannot be read: reviews takes item_id")
    assert post(url, {"args": {"item_id": "b1"}}, "alice-token") == (200, {"result": []})


def test_a_snapshot_is_its_learners_only(service: ServiceThread) -> None:
    status, body = post(service.url + "api/v1/snapshot", {}, "alice-token")
    assert status == 200
    key = body["snapshot"]
    status, body = post(service.url + "api/v1/store/reviews", {"args": {}, "snapshot": key}, "bob-token")
    assert status == 400 and body["error"]["args"] == [
        "that snapshot is not open (it ended, or was open too long)"
    ]
    status, body = post(
        service.url + "api/v1/store/record",
        {"args": {"item_id": "x", "rating": 3, "at": {"$t": 0}}, "snapshot": key},
        "alice-token",
    )
    assert status == 400 and body["error"]["type"] == "RuntimeError"
    assert post(service.url + f"api/v1/snapshot/{key}/end", {}, "alice-token")[0] == 200


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("api/v1/store/drop_table", {"args": {}}, 404, "no call named 'drop_table'"),
        ("api/v1/store/reviews", b"{not json", 400, "the request cannot be read: "),
        (
            "api/v1/store/record",
            {"args": {"item_id": {"$r": "Popen", "f": []}}},
            400,
            "unknown record 'Popen'",
        ),
        ("api/v1/store/record", {"args": {"item_id": "q", "rating": 9, "at": {"$t": 0}}}, 400, "rating must"),
    ],
)
def test_what_it_cannot_read_is_refused_in_words(
    service: ServiceThread, path: str, body: Any, status: int, words: str
) -> None:
    got, answer = post(service.url + path, body, "alice-token")
    assert got == status
    assert words in answer["error"]["args"][0]


def test_an_instructor_token_is_not_served_as_a_learner(service: ServiceThread) -> None:
    with pytest.raises(StoreAccessError, match="'teacher' is not a learner of this class"):
        RemoteStore.open(service.url, "teacher-token")


def test_a_service_that_does_not_answer_is_unavailable(service: ServiceThread) -> None:
    store = RemoteStore.open(service.url, "alice-token", timeout_s=2)
    service.stop()
    with pytest.raises(StoreUnavailableError, match="the class service did not answer"):
        store.record("a1", GOOD, T0)
