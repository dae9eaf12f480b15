"""The class service as a real JupyterHub runs it: a hub-managed service (`python -m scheduler.service`,
started by the hub, reached through the hub's proxy at ``/services/course/``), which knows a learner by their
JupyterHub token alone (`HubTokens`). A token reaches its own user's rows only; no token, a token without the
service's scope, or a service's token reaches nothing.

Tokens are made through the hub's REST API (as a hub makes each server's ``$JUPYTERHUB_API_TOKEN``), for
users the hub knows; the real PostgreSQL of the ``postgres_server`` fixture. Skipped without JupyterHub or
its proxy, except on CI.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixed_clock import T0
from hub_server import HubServer, require_hub
from postgres_server import PostgresServer, learner_password
from store_helpers import GOOD

from scheduler import StoreAccessError

postgres = pytest.importorskip("scheduler.postgres")
from scheduler.service import RemoteStore, TokenRefusedError  # noqa: E402

SERVICE = "class_service"
MAKER_TOKEN = "token-maker-secret-0123456789abcdef"
DOCUMENTED = Path(__file__).resolve().parents[2] / "docs" / "jupyterhub_config.py"
CONFIG = """
import os

os.environ.update({environment!r})
_tests_hook = c.Spawner.pre_spawn_hook
load_subconfig({documented!r})  # the configuration docs/classroom.md gives an administrator
c.Spawner.pre_spawn_hook = _tests_hook  # no server is spawned here (the documented hook: test_hub_config.py)
c.JupyterHub.services.append({{"name": "token-maker", "api_token": {maker!r}}})
c.JupyterHub.load_roles.append(
    {{"name": "token-maker", "scopes": ["tokens", "read:users"], "services": ["token-maker"]}}
)
"""


@pytest.fixture
def hub(postgres_server: PostgresServer, tmp_path: Path) -> Iterator[HubServer]:
    require_hub()
    name = postgres_server.create_database()
    admin = postgres_server.admin_url(name)
    postgres.install(admin)
    for learner in ("alice", "bob"):
        postgres.add_learner(admin, learner)
    postgres.add_service(admin, SERVICE, password=learner_password(SERVICE))
    from browser.lab import free_port

    port = free_port()
    environment = {
        "COURSE_SERVICE_DB": postgres_server.url(SERVICE, None, name),
        "COURSE_SERVICE_PASSWORD": learner_password(SERVICE),
        "COURSE_SERVICE_PORT": str(port),
        "COURSE_SERVICE_CONNECTIONS": "3",
    }
    extra = CONFIG.format(environment=environment, documented=str(DOCUMENTED), maker=MAKER_TOKEN)
    running = HubServer(tmp_path / "hub", {"alice": {}, "bob": {}}, extra_config=extra)
    running.start()
    try:
        running.wait_ready()
        wait_for_service(running)
        yield running
    finally:
        running.stop()


def call(url: str, token: str | None = None, body: object = None) -> tuple[int, object]:
    headers = {} if token is None else {"Authorization": f"token {token}"}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers=headers, method="GET" if body is None else "POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, text.decode(errors="replace")


def wait_for_service(hub: HubServer, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, _ = call(hub.url("/services/course/api/v1/whoami"))
        if status == 401:  # the service answers (and refuses a request without a token)
            return
        time.sleep(0.5)
    raise RuntimeError(f"the class service did not start:\n{hub.log_tail()}")


def user_token(hub: HubServer, user: str, scopes: list[str] | None = None) -> str:
    body: dict[str, object] = {"note": "test"} if scopes is None else {"note": "test", "scopes": scopes}
    status, made = call(hub.url(f"/hub/api/users/{user}/tokens"), MAKER_TOKEN, body)
    assert status == 201, (status, made)
    assert isinstance(made, dict)
    return str(made["token"])


def test_a_hub_token_reaches_its_own_users_rows_only(hub: HubServer) -> None:
    url = hub.url("/services/course/")
    alice = RemoteStore.open(url, user_token(hub, "alice"))
    bob = RemoteStore.open(url, user_token(hub, "bob"))
    assert (alice.learner, bob.learner) == ("alice", "bob")
    alice.record("a1", GOOD, T0)
    assert [r.item_id for r in alice.reviews()] == ["a1"]
    assert bob.reviews() == [] and bob.cards() == {}


@pytest.mark.parametrize("token", [None, "not-a-token", MAKER_TOKEN])
def test_no_token_an_unknown_one_or_a_services_reaches_nothing(hub: HubServer, token: str | None) -> None:
    status, body = call(hub.url("/services/course/api/v1/store/reviews"), token, {"args": {}})
    assert status == 401, body
    with pytest.raises(TokenRefusedError):
        RemoteStore.open(hub.url("/services/course/"), token or "")


def test_a_users_token_without_the_services_scope_reaches_nothing(hub: HubServer) -> None:
    token = user_token(hub, "alice", ["read:users:name!user=alice"])
    with pytest.raises(StoreAccessError):
        RemoteStore.open(hub.url("/services/course/"), token)
