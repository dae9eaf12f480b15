"""The class service's HTTP side: each request, authenticated by a token, runs one ``Storage`` call as the
learner the token belongs to, on the service's shared pool (``PostgresStore.serving``).

``POST {prefix}api/v1/store/{method}`` with ``{"args": {...}}`` (the call's keyword arguments, `_wire` values)
answers ``{"result": ...}``, or ``{"error": ...}`` with 400 (arguments refused: ValueError, TypeError), 401
(no token, or one the authenticator does not know), 403 (the store refused the learner), 404 (no such method),
409 (locked), 503 (the database could not be reached: the learner's side keeps the answer and sends it later)
or 500. ``GET {prefix}api/v1/whoami`` says whose token it is (and checks the schema again). ``POST
{prefix}api/v1/snapshot`` opens a snapshot (its reads carry ``"snapshot": id``; ``.../snapshot/{id}/end`` ends
it; one left open ends after `SNAPSHOT_SECONDS`). ``POST {prefix}api/v1/live/{method}`` is a learner's side of
a live session (`LIVE_METHODS`), a look at a session shared by the class for `LIVE_SECONDS`. The learner is
whoever the token says: nothing in a request names a learner, so no request can reach another's rows. The
calls run in a thread pool (psycopg is blocking); a learner's store is made once and kept.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import timezone, tzinfo
from typing import Any

import tornado.web

from scheduler._errors import (
    StoreAccessError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
)
from scheduler._memory import Memory
from scheduler.postgres import ClassPool, LiveRoom, PostgresStore
from scheduler.service._wire import WireError, decode, encode, error_value

__all__ = ["METHODS", "Authenticate", "ClassService"]

Authenticate = Callable[[str], Awaitable["str | None"]]
"""Who a token belongs to (a learner's name), or None: ``HubTokens`` asks JupyterHub."""

# The Storage calls a learner may make, with the arguments each takes.
METHODS: Mapping[str, tuple[str, ...]] = {
    "check_writable": (),
    "record": ("item_id", "rating", "at", "duration_ms"),
    "record_cram": ("item_id", "rating", "at", "duration_ms"),
    "enroll": ("deck", "at"),
    "merge": ("answers", "practice", "decks", "nudges"),
    "nudge": ("nudge",),
    "nudges": ("start", "end"),
    "enrolled": (),
    "card": ("item_id",),
    "cards": (),
    "reviews": ("item_id",),
    "cram_reviews": (),
    "rebuild_cache": (),
    "due_times": (),
    "due_by": ("until",),
    "answers": ("start", "end"),
    "review_counts": (),
    "settings": (),
    "save_settings": ("settings", "at"),
}
READS = frozenset(
    {
        "enrolled",
        "card",
        "cards",
        "reviews",
        "cram_reviews",
        "due_times",
        "due_by",
        "answers",
        "review_counts",
        "settings",
        "nudges",
    }
)
"""The calls a snapshot may make: reads only, as in the stores."""
SNAPSHOT_SECONDS = 30.0
"""How long a snapshot may stay open (a kernel that died inside one lets go of its connection then)."""
LIVE_METHODS: Mapping[str, tuple[str, ...]] = {
    "state": ("session", "room"),
    "open_sessions": (),
    "answer": ("state", "answer", "at"),
    "my_answer": ("session", "position"),
}
"""The live room's calls a learner may make: look at the session, answer the question asked, see their own
answer."""
LIVE_SECONDS = 0.5
"""How long the service keeps what a session looks like (``state``, ``open_sessions``: the same for the whole
class) before reading it again: a lecture hall polling once a second costs the database two reads a second."""
_STATUS = ((StoreUnavailableError, 503), (StoreLockedError, 409), (StoreAccessError, 403), (StoreError, 500))
_MAX_STORES = 20_000  # learners' stores kept made (each a few hundred bytes)


class _Snapshot:
    """One open snapshot: a store of its own and the one thread its reads run on (the store's snapshot is
    held by that thread, from `begin` to `end`)."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="course-snapshot")
        self.stack = ExitStack()
        self.opened_at = time.monotonic()

    def begin(self) -> None:
        self.thread.submit(self.stack.enter_context, self.store.snapshot()).result()

    async def read(self, method: str, args: Mapping[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.thread, lambda: getattr(self.store, method)(**args))

    def end(self) -> None:
        try:
            self.thread.submit(self.stack.close).result()
        finally:
            self.thread.shutdown(wait=False)
            self.store.close()


class ClassService:
    """The service: a ``ClassPool``, who tokens belong to (``authenticate``), and the thread pool the calls
    run in (``workers``, default the pool's size). ``memory`` is the base of every learner's schedule (None:
    the defaults, with each learner's stored settings); ``tz`` the class's time zone, in which FSRS counts
    the learners' days when the service merges their answers (unused when ``memory`` is given)."""

    def __init__(
        self,
        pool: ClassPool,
        authenticate: Authenticate,
        *,
        workers: int | None = None,
        memory: Memory | None = None,
        lock_timeout_ms: int = 5000,
        tz: tzinfo = timezone.utc,
    ) -> None:
        self.pool = pool
        self.tz = tz
        self.authenticate = authenticate
        self.memory = memory
        self.lock_timeout_ms = lock_timeout_ms
        self._snapshots: dict[tuple[str, str], _Snapshot] = {}
        self._looks: dict[tuple[str, str], tuple[float, Any]] = {}  # (call, its arguments): (when, result)
        self.looks_read = 0  # the looks at a session read from the database (not shared)
        self._executor = ThreadPoolExecutor(max_workers=workers or pool.max_size, thread_name_prefix="course")
        self._stores: OrderedDict[str, PostgresStore] = OrderedDict()
        self._lock = threading.Lock()
        self.calls = 0

    def application(self, prefix: str = "/") -> tornado.web.Application:
        """The tornado application, its routes under ``prefix`` (a hub-managed service's
        ``$JUPYTERHUB_SERVICE_PREFIX``)."""
        base = prefix if prefix.endswith("/") else prefix + "/"
        return tornado.web.Application(
            [
                (f"{base}api/v1/store/([a-z_]+)", _StoreHandler, {"service": self}),
                (f"{base}api/v1/live/([a-z_]+)", _LiveHandler, {"service": self}),
                (f"{base}api/v1/snapshot", _SnapshotHandler, {"service": self}),
                (f"{base}api/v1/snapshot/([A-Za-z0-9_-]+)/end", _SnapshotEndHandler, {"service": self}),
                (f"{base}api/v1/whoami", _WhoHandler, {"service": self}),
            ]
        )

    def store(self, learner: str) -> PostgresStore:
        """The learner's store on the pool, made on their first call and kept."""
        with self._lock:
            store = self._stores.get(learner)
            if store is not None:
                self._stores.move_to_end(learner)
                return store
        made = self._made(learner)
        with self._lock:
            self._stores[learner] = made
            while len(self._stores) > _MAX_STORES:
                self._stores.popitem(last=False)[1].close()
        return made

    def _made(self, learner: str) -> PostgresStore:
        return PostgresStore.serving(
            self.pool, learner, memory=self.memory, lock_timeout_ms=self.lock_timeout_ms, tz=self.tz
        )

    async def begin_snapshot(self, learner: str) -> str:
        """Open a snapshot for the learner (its reads see one state of their rows); its id."""
        self._expire()
        loop = asyncio.get_running_loop()

        def opened() -> _Snapshot:
            snapshot = _Snapshot(self._made(learner))
            snapshot.begin()
            return snapshot

        snapshot = await loop.run_in_executor(self._executor, opened)
        key = secrets.token_urlsafe(16)
        self._snapshots[(learner, key)] = snapshot
        return key

    def snapshot(self, learner: str, key: str) -> _Snapshot | None:
        """The learner's open snapshot of that id (another learner's id finds nothing)."""
        return self._snapshots.get((learner, key))

    async def end_snapshot(self, learner: str, key: str) -> None:
        snapshot = self._snapshots.pop((learner, key), None)
        if snapshot is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, snapshot.end)

    def _expire(self) -> None:
        """End the snapshots open for longer than `SNAPSHOT_SECONDS`."""
        now = time.monotonic()
        for key, snapshot in list(self._snapshots.items()):
            if now - snapshot.opened_at > SNAPSHOT_SECONDS:
                self._snapshots.pop(key, None)
                self._executor.submit(snapshot.end)

    def look(self, learner: str, method: str, args: Mapping[str, Any]) -> Any:
        """One call of the learner's live room (in a worker thread); a look at the session shared by the class
        for `LIVE_SECONDS` (the sessions are the same for every learner: the database lets each read them)."""
        shared = method in ("state", "open_sessions")
        key = (method, json.dumps(encode(dict(args)), sort_keys=True))
        if shared:
            seen = self._looks.get(key)
            if seen is not None and time.monotonic() - seen[0] < LIVE_SECONDS:
                return seen[1]
        self.store(learner)  # a learner of the class (checked once), as for their store
        result = getattr(LiveRoom.serving(self.pool, learner), method)(**args)
        if shared:
            self.looks_read += 1
            now = time.monotonic()
            for stale in [k for k, (when, _) in self._looks.items() if now - when >= LIVE_SECONDS]:
                self._looks.pop(stale, None)  # ended sessions' looks do not pile up
            self._looks[key] = (now, result)
        return result

    async def run_live(self, learner: str, method: str, args: Mapping[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.look, learner, method, args)

    def call(self, learner: str, method: str, args: Mapping[str, Any]) -> Any:
        """One call of the learner's store (in a worker thread)."""
        store = self.store(learner)
        self.calls += 1
        return getattr(store, method)(**args)

    async def run(self, learner: str, method: str, args: Mapping[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.call, learner, method, args)

    async def opening(self, learner: str) -> None:
        """A learner's kernel opens its store: their store made (or found), the schema checked again."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, lambda: self.store(learner).check_schema())

    def close(self) -> None:
        for snapshot in self._snapshots.values():
            snapshot.end()
        self._snapshots.clear()
        self._executor.shutdown(wait=True)
        with self._lock:
            while self._stores:
                self._stores.popitem()[1].close()


class _Refusal(Exception):
    """A request refused before any call: its status and the error the answer carries."""

    def __init__(self, status: int, error: BaseException) -> None:
        super().__init__(str(error))
        self.status = status
        self.error = error


class _Handler(tornado.web.RequestHandler):
    def initialize(self, service: ClassService) -> None:
        self.service = service

    def check_xsrf_cookie(self) -> None:
        """A token in a header, never a cookie: nothing a browser sends by itself is taken."""

    def answer(self, status: int, body: Mapping[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))

    async def learner(self) -> str | None:
        """Whose token the request carries (``Authorization: token …`` or ``Bearer …``), or None."""
        header = self.request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() not in ("token", "bearer") or not token.strip():
            return None
        return await self.service.authenticate(token.strip())

    async def serve(self, work: Callable[[str], Awaitable[Mapping[str, Any]]]) -> None:
        """Answer with what ``work`` gives for the token's learner, or the refusal, in its status."""
        learner = await self.learner()
        if learner is None:
            error = StoreAccessError(self.request.path, "open", "no valid JupyterHub token was sent")
            self.answer(401, {"error": error_value(error)})
            return
        try:
            body = await work(learner)
        except _Refusal as refusal:
            self.answer(refusal.status, {"error": error_value(refusal.error)})
        except (ValueError, TypeError) as exc:
            self.answer(400, {"error": error_value(exc)})
        except StoreError as exc:
            status = next(code for kind, code in _STATUS if isinstance(exc, kind))
            self.answer(status, {"error": error_value(exc)})
        else:
            self.answer(200, body)

    def body(self, method: str, allowed: tuple[str, ...] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The request's JSON and the call's arguments, when ``method`` is a call (``allowed``: its
        arguments) and they are its; a refusal otherwise."""
        if allowed is None:
            raise _Refusal(404, ValueError(f"no call named {method!r}"))
        try:
            body = json.loads(self.request.body or b"{}")
            args = decode(body.get("args", {})) if isinstance(body, dict) else None
            if not isinstance(args, dict) or not set(args) <= set(allowed):
                raise WireError(f"{method} takes {', '.join(allowed) or 'no arguments'}")
        except (ValueError, WireError) as exc:
            raise _Refusal(400, ValueError(f"the request cannot be read: {exc}")) from None
        return body, args


class _WhoHandler(_Handler):
    async def get(self) -> None:
        """Whose token it is, the schema checked (a kernel opening its store asks this first)."""

        async def who(learner: str) -> Mapping[str, Any]:
            await self.service.opening(learner)
            return {"learner": learner}

        await self.serve(who)


class _StoreHandler(_Handler):
    async def post(self, method: str) -> None:
        async def call(learner: str) -> Mapping[str, Any]:
            body, args = self.body(method, METHODS.get(method))
            key = body.get("snapshot")
            if key is None:
                return {"result": encode(await self.service.run(learner, method, args))}
            snapshot = self.service.snapshot(learner, str(key))
            if snapshot is None:
                raise _Refusal(400, ValueError("that snapshot is not open (it ended, or was open too long)"))
            if method not in READS:
                raise _Refusal(
                    400, RuntimeError("cannot write inside a snapshot; write after the block ends")
                )
            return {"result": encode(await snapshot.read(method, args))}

        await self.serve(call)


class _LiveHandler(_Handler):
    async def post(self, method: str) -> None:
        async def call(learner: str) -> Mapping[str, Any]:
            _, args = self.body(method, LIVE_METHODS.get(method))
            return {"result": encode(await self.service.run_live(learner, method, args))}

        await self.serve(call)


class _SnapshotHandler(_Handler):
    async def post(self) -> None:
        async def begin(learner: str) -> Mapping[str, Any]:
            return {"snapshot": await self.service.begin_snapshot(learner)}

        await self.serve(begin)


class _SnapshotEndHandler(_Handler):
    async def post(self, key: str) -> None:
        async def end(learner: str) -> Mapping[str, Any]:
            await self.service.end_snapshot(learner, key)
            return {"ended": key}

        await self.serve(end)
