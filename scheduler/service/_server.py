"""The class service's HTTP side: each request, authenticated by a token, runs one ``Storage`` call as the
learner the token belongs to, on the service's shared pool (``PostgresStore.serving``).

``POST {prefix}api/v1/store/{method}`` with ``{"args": {...}}`` (the call's keyword arguments, `_wire` values)
answers ``{"result": ...}``, or ``{"error": ...}`` with 400 (arguments refused: ValueError, TypeError, what
cannot be read), 401 (no token, or one the authenticator does not know), 403 (the store refused the learner,
or their rows are at the class's limit), 404 (no such method), 409 (locked), 413 (a body over the limit), 429
(more of the learner's calls at once than their share), 503 (the database could not be reached: the learner's
side keeps the answer and sends it later) or 500. ``GET {prefix}api/v1/whoami`` says whose token it is (and
checks the schema again). ``POST {prefix}api/v1/snapshot`` opens a snapshot (its reads carry ``"snapshot":
id``; ``.../snapshot/{id}/end`` ends it; one left open ends by itself after `SNAPSHOT_SECONDS`). ``POST
{prefix}api/v1/live/{method}`` is a learner's side of a live session (`LIVE_METHODS`), a look at a session
shared by the class for `LIVE_SECONDS`. A write may carry ``"once": key``: sent again with its key, it saves
once (`_once`). The learner is whoever the token says: nothing in a request names a learner, so no request
can reach another's rows. The calls run in a thread pool (psycopg is blocking), each learner's at most their
share (`_share`); a learner's store is made once and kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import timezone, tzinfo
from typing import Any, TypeVar

import tornado.httpserver
import tornado.web

from scheduler._errors import (
    StoreAccessError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
)
from scheduler._memory import Memory
from scheduler.postgres import ClassPool, LiveRoom, PostgresStore, RowLimitError
from scheduler.service._once import Once, check_key
from scheduler.service._share import BusyError, ClassShare, Turn
from scheduler.service._snapshots import Snapshots
from scheduler.service._wire import WireError, decode, encode, error_value

__all__ = ["BODY_LIMIT", "METHODS", "Authenticate", "ClassService"]

_log = logging.getLogger("scheduler.service")
_T = TypeVar("_T")

Authenticate = Callable[[str], Awaitable["str | None"]]
"""Who a token belongs to (a learner's name), or None: ``HubTokens`` asks JupyterHub."""

# The Storage calls a learner may make, with the arguments each takes.
METHODS: Mapping[str, tuple[str, ...]] = {
    "check_writable": (),
    "record": ("item_id", "rating", "at", "duration_ms"),
    "record_cram": ("item_id", "rating", "at", "duration_ms"),
    "enroll": ("deck", "at"),
    "merge": ("answers", "practice", "decks", "nudges", "predictions"),
    "nudge": ("nudge",),
    "nudges": ("start", "end"),
    "predict": ("prediction",),
    "predictions": ("start", "end"),
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
        "predictions",
    }
)
"""The calls a snapshot may make: reads only, as in the stores."""
SNAPSHOT_SECONDS = 30.0
"""How long a snapshot may stay open: it ends by itself then (a kernel that died inside one lets go of its
connection)."""
WRITES = frozenset(METHODS) - READS - {"check_writable"}
"""The calls that write: each may carry a key (``"once"``), and one sent again with its key saves once."""
BODY_LIMIT = 8 * 1024 * 1024
"""The largest request body taken, in bytes (a merge of 50,000 answers is about 5 MB): a larger one is
refused before it is read (413)."""
CLIENT_SECONDS = 30.0
"""How long a client may take to send a request's headers, or its body: then its connection is closed."""
PER_LEARNER_WAITING = 8
"""How many more of one learner's calls wait their turn, beyond those running (`ClassShare`)."""
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
_STATUS = (
    (BusyError, 429),
    (StoreUnavailableError, 503),
    (StoreLockedError, 409),
    (StoreAccessError, 403),
    (RowLimitError, 403),
    (StoreError, 500),
)
SERVICE_WHERE = "the class service"
"""How the service names itself, and its database, in what it answers (never its database's URL)."""
_MAX_STORES = 20_000  # learners' stores kept made (each a few hundred bytes)


class ClassService:
    """The service: a ``ClassPool``, who tokens belong to (``authenticate``), and the thread pool the calls
    run in (``workers``, default the pool's size). ``memory`` is the base of every learner's schedule (None:
    the defaults, with each learner's stored settings); ``tz`` the class's time zone, in which FSRS counts
    the learners' days when the service merges their answers (unused when ``memory`` is given).

    One learner cannot take the others' turn (issue 35): at most ``per_learner`` of a learner's calls run at
    once (default a quarter of the workers, at least 1) and `PER_LEARNER_WAITING` more wait, each at most
    the pool's timeout; at most ``snapshots`` snapshots hold a connection at once (default a quarter of the
    pool: none below 4), one per learner, each for `SNAPSHOT_SECONDS`; a body over ``body_limit`` bytes is
    refused before it is read, and a request without a known token before its body is read."""

    def __init__(
        self,
        pool: ClassPool,
        authenticate: Authenticate,
        *,
        workers: int | None = None,
        memory: Memory | None = None,
        lock_timeout_ms: int = 5000,
        tz: tzinfo = timezone.utc,
        per_learner: int | None = None,
        snapshots: int | None = None,
        body_limit: int = BODY_LIMIT,
    ) -> None:
        self.pool = pool
        self.tz = tz
        self.authenticate = authenticate
        self.memory = memory
        self.lock_timeout_ms = lock_timeout_ms
        self.workers = workers or pool.max_size
        if isinstance(body_limit, bool) or not isinstance(body_limit, int) or body_limit < 1024:
            raise ValueError(f"body_limit must be a number of bytes, at least 1024, got {body_limit!r}")
        self.body_limit = body_limit
        self.share = ClassShare(
            max(1, self.workers // 4) if per_learner is None else per_learner,
            PER_LEARNER_WAITING,
            pool.timeout_s,
        )
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="course")
        slots = pool.max_size // 4 if snapshots is None else snapshots
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 0:
            raise ValueError(f"snapshots must be a whole number, got {slots!r}")
        self.snapshots = Snapshots(
            slots, SNAPSHOT_SECONDS, self._made, lambda s: self._executor.submit(s.end)
        )
        self.once = Once()
        self._looks: dict[tuple[str, str], tuple[float, Any]] = {}  # (call, its arguments): (when, result)
        self.looks_read = 0  # the looks at a session read from the database (not shared)
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

    def listen(
        self, port: int, address: str = "127.0.0.1", prefix: str = "/"
    ) -> tornado.httpserver.HTTPServer:
        """Serve on ``address:port`` (on the running event loop): a client that takes longer than
        `CLIENT_SECONDS` to send its headers or its body is cut off, and no body over the limit is read."""
        return self.application(prefix).listen(
            port,
            address=address,
            idle_connection_timeout=CLIENT_SECONDS,
            body_timeout=CLIENT_SECONDS,
            max_body_size=self.body_limit,
            max_header_size=64 * 1024,
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

    async def in_worker(self, work: Callable[[], _T]) -> _T:
        """``work()`` in one of the service's worker threads."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    async def begin_snapshot(self, learner: str) -> str:
        """Open a snapshot for the learner (its reads see one state of their rows, when it is held:
        `Snapshots`); its id."""
        held = self.snapshots.reserve(learner)

        def opened() -> Any:
            snapshot = self.snapshots.opened(learner, held)
            try:
                snapshot.begin()
            except BaseException:
                snapshot.end()
                raise
            return snapshot

        try:
            snapshot = await self.in_worker(opened) if held else self.snapshots.opened(learner, False)
        except BaseException:
            self.snapshots.unreserve(learner)
            raise
        return self.snapshots.add(learner, snapshot)

    async def end_snapshot(self, learner: str, key: str) -> None:
        self.snapshots.end(learner, key)

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
            for stale in [k for k, (when, _) in list(self._looks.items()) if now - when >= LIVE_SECONDS]:
                self._looks.pop(stale, None)  # ended sessions' looks do not pile up
            self._looks[key] = (now, result)
        return result

    def call(self, learner: str, method: str, args: Mapping[str, Any]) -> Any:
        """One call of the learner's store (in a worker thread)."""
        store = self.store(learner)
        self.calls += 1
        return getattr(store, method)(**args)

    async def opening(self, learner: str) -> None:
        """A learner's kernel opens its store: their store made (or found), the schema checked again."""
        await self.in_worker(lambda: self.store(learner).check_schema())

    def scrubbed(self, value: Any) -> Any:
        """``value`` (an error as sent) with the database's URL replaced by `SERVICE_WHERE`."""
        if isinstance(value, str):
            return value.replace(self.pool.location, SERVICE_WHERE)
        if isinstance(value, list):
            return [self.scrubbed(item) for item in value]
        if isinstance(value, dict):
            return {key: self.scrubbed(item) for key, item in value.items()}
        return value

    def close(self) -> None:
        self.snapshots.close()
        self._executor.shutdown(wait=True)
        with self._lock:
            while self._stores:
                self._stores.popitem()[1].close()


class NoTokenError(StoreAccessError):
    """A request without a token the service knows: refused before its body is read."""

    def __init__(self) -> None:
        self.reason = "denied"
        self.detail = "no valid JupyterHub token was sent"
        StoreError.__init__(
            self,
            SERVICE_WHERE,
            "the class service takes no request without a valid JupyterHub token (a learner's server has "
            "one in $JUPYTERHUB_API_TOKEN)",
        )


class _Refusal(Exception):
    """A request refused before any call: its status and the error the answer carries."""

    def __init__(self, status: int, error: BaseException) -> None:
        super().__init__(str(error))
        self.status = status
        self.error = error


def _parsed(raw: bytes, method: str, allowed: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A request's JSON and the call's arguments, if they are ``allowed``'s (in a worker thread: a large
    body is parsed off the event loop); a 400 refusal in words otherwise."""
    try:
        body = json.loads(raw or b"{}")
        args = decode(body.get("args", {})) if isinstance(body, dict) else None
        if not isinstance(args, dict) or not set(args) <= set(allowed):
            raise WireError(f"{method} takes {', '.join(allowed) or 'no arguments'}")
    except (ValueError, WireError, RecursionError) as exc:
        reason = "it is nested too deeply" if isinstance(exc, RecursionError) else exc
        raise _Refusal(400, ValueError(f"the request cannot be read: {reason}")) from None
    return body, args


@tornado.web.stream_request_body
class _Handler(tornado.web.RequestHandler):
    """Every request: its token checked, and the learner's turn taken (`ClassShare`), before its body is
    read; the body read up to the service's limit; the call's answer made in a worker thread."""

    def initialize(self, service: ClassService) -> None:
        self.service = service
        self._chunks: list[bytes] = []
        self._turn: Turn | None = None
        self._refused = False
        self.learner_name = ""

    def check_xsrf_cookie(self) -> None:
        """A token in a header, never a cookie: nothing a browser sends by itself is taken."""

    def answer(self, status: int, body: Mapping[str, Any] | bytes) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(body if isinstance(body, bytes) else json.dumps(body))

    def refuse(self, status: int, error: BaseException) -> None:
        """Answer ``error`` in ``status`` now, and read nothing more of the request."""
        self._refused = True
        self.request.connection.set_max_body_size(0)  # type: ignore[union-attr]
        self.set_header("Connection", "close")
        self.answer(status, {"error": self.service.scrubbed(error_value(error))})

    async def learner(self) -> str | None:
        """Whose token the request carries (``Authorization: token …`` or ``Bearer …``), or None."""
        header = self.request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() not in ("token", "bearer") or not token.strip():
            return None
        return await self.service.authenticate(token.strip())

    async def prepare(self) -> None:
        learner = await self.learner()
        if learner is None:
            self.refuse(401, NoTokenError())
            return
        length = self.request.headers.get("Content-Length", "0")
        limit = self.service.body_limit
        if not length.isdigit() or int(length) > limit:
            size = f"{int(length):,} bytes" if length.isdigit() else f"a length of {length[:20]!r}"
            self.refuse(
                413,
                ValueError(
                    f"the request is too large ({size}); the class service takes at most {limit:,} bytes"
                ),
            )
            return
        try:
            self._turn = await self.service.share.turn(learner, SERVICE_WHERE)
        except BusyError as exc:
            self.refuse(429, exc)
            return
        self.learner_name = learner

    def data_received(self, chunk: bytes) -> None:
        if not self._refused:
            self._chunks.append(chunk)

    def on_finish(self) -> None:
        self._let_go()

    def on_connection_close(self) -> None:
        self._let_go()

    def _let_go(self) -> None:
        turn, self._turn = self._turn, None
        if turn is not None:
            turn.release()
        self._chunks = []

    def raw(self) -> bytes:
        chunks, self._chunks = self._chunks, []
        return b"".join(chunks)

    async def arguments(
        self, raw: bytes, method: str, allowed: tuple[str, ...] | None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The request's JSON and the call's arguments, parsed in a worker thread; a refusal for a call
        that does not exist (404) or arguments that are not its (400)."""
        if allowed is None:
            raise _Refusal(404, ValueError(f"no call named {method!r}"))
        return await self.service.in_worker(lambda: _parsed(raw, method, allowed))

    async def serve(self, work: Callable[[str], Awaitable[Mapping[str, Any] | bytes]]) -> None:
        """Answer with what ``work`` gives for the token's learner, or the refusal, in its status."""
        try:
            body = await work(self.learner_name)
        except _Refusal as refusal:
            self.answer(refusal.status, {"error": self.service.scrubbed(error_value(refusal.error))})
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            self.answer(400, {"error": self.service.scrubbed(error_value(exc))})
        except StoreError as exc:
            status = next(code for kind, code in _STATUS if isinstance(exc, kind))
            self.answer(status, {"error": self.service.scrubbed(error_value(exc))})
        except Exception:
            _log.exception("the class service failed on %s", self.request.path)
            failure = StoreError(SERVICE_WHERE, "the class service failed on this call; its log says why")
            self.answer(500, {"error": error_value(failure)})
        else:
            self.answer(200, body)


def _result(value: Any) -> bytes:
    return json.dumps({"result": encode(value)}).encode()


class _WhoHandler(_Handler):
    async def get(self) -> None:
        """Whose token it is, the schema checked (a kernel opening its store asks this first)."""

        async def who(learner: str) -> Mapping[str, Any]:
            await self.service.opening(learner)
            return {"learner": learner}

        await self.serve(who)


class _StoreHandler(_Handler):
    async def post(self, method: str) -> None:
        allowed = METHODS.get(method)
        raw = self.raw()

        async def call(learner: str) -> bytes:
            service = self.service
            body, args = await self.arguments(raw, method, allowed)
            key = body.get("snapshot")
            if key is None:
                once = check_key(body.get("once")) if method in WRITES else None
                work = lambda: _result(service.call(learner, method, args))  # noqa: E731
                return await service.once.run(learner, once, lambda: service.in_worker(work))
            snapshot = service.snapshots.get(learner, str(key))
            if snapshot is None:
                raise _Refusal(400, ValueError("that snapshot is not open (it ended, or was open too long)"))
            if method not in READS:
                raise _Refusal(
                    400, RuntimeError("cannot write inside a snapshot; write after the block ends")
                )
            if not snapshot.held:  # each read on its own (`Snapshots`)
                return await service.in_worker(lambda: _result(service.call(learner, method, args)))
            return _result(await snapshot.read(method, args))

        await self.serve(call)


class _LiveHandler(_Handler):
    async def post(self, method: str) -> None:
        allowed = LIVE_METHODS.get(method)
        raw = self.raw()

        async def call(learner: str) -> bytes:
            service = self.service
            _, args = await self.arguments(raw, method, allowed)
            return await service.in_worker(lambda: _result(service.look(learner, method, args)))

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
