"""A class service: learners' kernels reach the class database through it, over HTTP, and hold no database
connection or credentials; the service holds a small pool of connections (``scheduler.postgres.ClassPool``)
and runs each call as the learner its JupyterHub token belongs to (``SET LOCAL ROLE``: the database's
row-level security still holds every call to one learner's rows).

In the learner's kernel: ``RemoteStore.open(url, token)``, a ``scheduler.Storage``. On the server:
``ClassService(pool, HubTokens())``, run as a hub-managed service by ``python -m scheduler.service``.
Needs psycopg and psycopg_pool on the server, tornado and jupyterhub where it runs under a hub; the client
needs only the standard library.
"""

from __future__ import annotations

from scheduler.service._client import RemoteLiveRoom, RemoteStore, TokenRefusedError

__all__ = ["RemoteLiveRoom", "RemoteStore", "TokenRefusedError"]
