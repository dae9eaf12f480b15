"""The class service's `HubTokens` fails closed (issue 35): without the scope a learner's token must carry it
refuses to start, rather than accept any user's token, and a hub reply it cannot read is a refusal, never a
KeyError. JupyterHub's own HubAuth, with the hub's reply stubbed (the real hub: test_hub_service.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from functools import cache
from typing import Any

import pytest

pytest.importorskip("jupyterhub")

from scheduler.service._hub import HubTokens, NoScopeError

SCOPE = "access:services!service=course"
HUB_VARIABLES = ("JUPYTERHUB_SERVICE_NAME", "JUPYTERHUB_OAUTH_ACCESS_SCOPES", "JUPYTERHUB_OAUTH_SCOPES")
NO_SCOPE = (
    "the class service does not know its JupyterHub scope, so it cannot tell a token for it from any other "
    "user's: run it as a hub-managed service (JupyterHub then sets JUPYTERHUB_SERVICE_NAME), or set "
    "JUPYTERHUB_SERVICE_NAME to its name in the hub's services, or JUPYTERHUB_OAUTH_ACCESS_SCOPES"
)


@cache
def hubs() -> tuple[Any, Any]:
    """JupyterHub's HubAuth whose hub answers every token with `reply`, and one that counts the tokens it is
    asked about and knows one; built on first use (importing HubAuth adds a second to each worker's start)."""
    from jupyterhub.services.auth import HubAuth

    class Hub(HubAuth):
        reply: Any = None

        async def user_for_token(
            self, token: str, use_cache: bool = True, session_id: str = "", *, sync: bool = True
        ) -> Any:
            return self.reply

    class CountingHub(Hub):
        asked: list[str]

        async def user_for_token(
            self, token: str, use_cache: bool = True, session_id: str = "", *, sync: bool = True
        ) -> Any:
            self.asked.append(token)
            if token == "down":
                raise ConnectionError("the hub is restarting")
            return {"kind": "user", "name": "ada", "scopes": [SCOPE]} if token == "ada-token" else None

    return Hub, CountingHub


def tokens_for(reply: Any, monkeypatch: pytest.MonkeyPatch) -> HubTokens:
    monkeypatch.setenv("JUPYTERHUB_SERVICE_NAME", "course")
    hub = hubs()[0](api_token="unused", api_url="http://127.0.0.1:1/hub/api")
    hub.reply = reply
    return HubTokens(hub)


def test_without_its_scope_the_service_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in HUB_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(NoScopeError) as refused:
        HubTokens(hubs()[0](api_token="unused", api_url="http://127.0.0.1:1/hub/api"))
    assert str(refused.value) == NO_SCOPE


def test_the_command_says_so_before_it_connects_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {key: value for key, value in os.environ.items() if key not in HUB_VARIABLES}
    # a database nobody listens on: the command must stop before it tries it
    command = [sys.executable, "-m", "scheduler.service", "--db", "postgresql://svc@127.0.0.1:1/nowhere"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"python -m scheduler.service: {NO_SCOPE}\n",
    )


@pytest.mark.parametrize(
    ("reply", "name"),
    [
        ({"kind": "user", "name": "alice", "scopes": [SCOPE]}, "alice"),
        (
            {"name": "alice", "scopes": [SCOPE, "self"]},
            "alice",
        ),  # kind missing: a user, as the hub's older replies
        ({"kind": "user", "name": "alice", "scopes": ["self"]}, None),  # without the service's scope
        ({"kind": "service", "name": "course", "scopes": [SCOPE]}, None),  # a service's token
        ({"kind": "user", "name": "alice"}, None),  # no scopes: was a KeyError
        ({"kind": "user", "name": "alice", "scopes": None}, None),
        ({"kind": "user", "name": "alice", "scopes": [SCOPE, 7]}, None),
        ({"kind": "user", "scopes": [SCOPE]}, None),  # no name
        ({"kind": "user", "name": "", "scopes": [SCOPE]}, None),
        ({"kind": "user", "name": 5, "scopes": [SCOPE]}, None),
        (None, None),  # unknown or revoked
        ([], None),
        ("alice", None),
    ],
)
def test_a_reply_is_a_name_only_when_it_is_a_users_with_the_scope(
    monkeypatch: pytest.MonkeyPatch, reply: Any, name: str | None
) -> None:
    assert asyncio.run(tokens_for(reply, monkeypatch)("token")) == name


def test_an_unknown_token_costs_one_hub_request_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_SERVICE_NAME", "course")
    hub = hubs()[1](api_token="unused", api_url="http://127.0.0.1:1/hub/api")
    hub.asked = []
    tokens = HubTokens(hub)

    async def ask() -> list[str | None]:
        return [await tokens(token) for token in ("junk", "junk", "junk", "ada-token", "down", "down")]

    assert asyncio.run(ask()) == [None, None, None, "ada", None, None]
    # the refused token asked once; a hub that cannot be asked is asked again (its refusal not remembered)
    assert hub.asked == ["junk", "ada-token", "down", "down"]
    assert tokens.asked == 4
