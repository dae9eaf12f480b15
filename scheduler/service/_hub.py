"""Who a token belongs to, as JupyterHub says: ``HubTokens`` asks the hub's API once per token (its answer
kept for a minute by ``jupyterhub.services.auth.HubAuth``) and accepts users only, with the scope of this
service (``access:services!service=NAME``: JupyterHub gives a hub-managed service's environment that
name; a learner's server token carries the scope when the hub's config grants it, docs/classroom.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["HubTokens"]


class HubTokens:
    """``await tokens(token)``: the user name of a JupyterHub user's token with this service's scope, or
    None (a service's token, a token without the scope, an unknown or revoked one)."""

    def __init__(self, hub_auth: Any = None) -> None:
        if hub_auth is None:
            from jupyterhub.services.auth import HubAuth  # the hub's own client: only where a hub runs

            hub_auth = HubAuth(cache_max_age=60)
        self.hub_auth = hub_auth

    async def __call__(self, token: str) -> str | None:
        model = await self.hub_auth.user_for_token(token, sync=False)
        if not model or model.get("kind", "user") != "user" or not isinstance(model.get("name"), str):
            return None
        scopes = self.hub_auth.access_scopes
        if scopes and not self.hub_auth.check_scopes(scopes, model):
            return None
        name: str = model["name"]
        return name
