"""A class service for the tests: ``ClassService`` on a free port of 127.0.0.1, its tornado loop in a thread
of the test process, tokens known from a table (``StaticTokens``: the tests of the real JupyterHub's
tokens are in tests/classroom/test_hub.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from browser.lab import free_port


class StaticTokens:
    """Who each token belongs to, from a table (the caller's own: a token added later is known)."""

    def __init__(self, owners: Mapping[str, str]) -> None:
        self.owners = owners

    async def __call__(self, token: str) -> str | None:
        return self.owners.get(token)


class ServiceThread:
    """``service`` (a ``ClassService``) served at ``url`` until `stop`."""

    def __init__(self, service: Any, prefix: str = "/services/course/", port: int | None = None) -> None:
        self.service = service
        self.port = free_port() if port is None else port
        self.url = f"http://127.0.0.1:{self.port}{prefix}"
        self._prefix = prefix
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="class-service", daemon=True)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        server = self.service.listen(self.port, "127.0.0.1", self._prefix)
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.stop()
            loop.close()

    def start(self) -> ServiceThread:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving (once; stopping again does nothing)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        self.service.close()
