"""Who a token belongs to, as JupyterHub says: ``HubTokens`` asks the hub's API once per token (its answer
kept for a minute by ``jupyterhub.services.auth.HubAuth``) and accepts users only, with the scope of this
service (``access:services!service=NAME``: JupyterHub gives a hub-managed service's environment that
name; a learner's server token carries the scope when the hub's config grants it, docs/classroom.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from typing import Any

__all__ = ["REFUSED_SECONDS", "HubTokens", "NoScopeError"]

REFUSED_SECONDS = 60.0
"""How long a token the hub refused stays refused without asking the hub again (issue 35: each unknown
token cost a hub request)."""
_MAX_REFUSED = 10_000  # refused tokens remembered (by their hash)
_ASKING = 8  # requests to the hub at once


class NoScopeError(ValueError):
    """The service does not know the scope a learner's token must carry: it refuses to start rather than
    accept every user's token (issue 35: it failed open)."""

    def __init__(self) -> None:
        super().__init__(
            "the class service does not know its JupyterHub scope, so it cannot tell a token for it from any "
            "other user's: run it as a hub-managed service (JupyterHub then sets JUPYTERHUB_SERVICE_NAME), "
            "or set JUPYTERHUB_SERVICE_NAME to its name in the hub's services, or "
            "JUPYTERHUB_OAUTH_ACCESS_SCOPES"
        )


class HubTokens:
    """``await tokens(token)``: the user name of a JupyterHub user's token with this service's scope, or
    None (a service's token, a token without the scope, an unknown or revoked one, and any reply of the hub
    it cannot read). NoScopeError, at once, when the service's scope is unknown: it fails closed."""

    def __init__(self, hub_auth: Any = None) -> None:
        if hub_auth is None:
            from jupyterhub.services.auth import HubAuth  # the hub's own client: only where a hub runs

            hub_auth = HubAuth(cache_max_age=60)
        if not hub_auth.access_scopes:
            raise NoScopeError()
        self.hub_auth = hub_auth
        self._refused: OrderedDict[bytes, float] = OrderedDict()  # a token's hash: when the hub refused it
        self._asking = asyncio.Semaphore(_ASKING)
        self.asked = 0  # requests made to the hub

    async def __call__(self, token: str) -> str | None:
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        now = time.monotonic()
        refused_at = self._refused.get(digest)
        if refused_at is not None and now - refused_at < REFUSED_SECONDS:
            return None
        async with self._asking:
            self.asked += 1
            try:
                model = await self.hub_auth.user_for_token(token, sync=False)
            except Exception:
                return None  # a hub that cannot be asked is a refusal, not remembered: it may answer soon
            name = self._name(model)
        if name is None:
            self._refused[digest] = time.monotonic()
            self._refused.move_to_end(digest)
            while len(self._refused) > _MAX_REFUSED:
                self._refused.popitem(last=False)
        else:
            self._refused.pop(digest, None)
        return name

    def _name(self, model: Any) -> str | None:
        if not isinstance(model, dict) or model.get("kind", "user") != "user":
            return None
        name, scopes = model.get("name"), model.get("scopes")
        if not isinstance(name, str) or not name or not isinstance(scopes, list):
            return None  # a reply without a name or scopes is a refusal, never a KeyError
        if not all(isinstance(scope, str) for scope in scopes):
            return None
        if not self.hub_auth.check_scopes(self.hub_auth.access_scopes, model):
            return None
        return name
