"""A learner's store on a class service, from their kernel: ``RemoteStore.open(url, token)`` is a
``scheduler.Storage`` whose every call is one HTTP request (`scheduler.service._server`), authenticated by
the token (in a JupyterHub server, ``$JUPYTERHUB_API_TOKEN``). It holds no database connection and no
database credentials.

The schedule's arithmetic (``memory``) runs here as in the other stores: the stored settings are read on
opening (or ``memory`` is given). ``snapshot()`` reads are not one transaction here: each call is one
consistent read on the server, and a due queue made while another kernel of the same learner answers may
miss that answer (the next queue has it); writes are atomic on the server as in the other stores. A
service that cannot be reached, or answers 503, is a ``StoreUnavailableError`` (the course's outbox keeps
the answer); a request that takes longer than ``timeout_s`` too.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone, tzinfo
from types import TracebackType
from typing import Any

from scheduler._errors import StoreAccessError, StoreError, StoreUnavailableError
from scheduler._live_records import LiveState
from scheduler._memory import Memory
from scheduler._merging import incoming
from scheduler._records import (
    Answer,
    CardState,
    CramReview,
    DueItems,
    LogEntry,
    Merged,
    Nudge,
    Rating,
    Review,
    Settings,
)
from scheduler._rows import check_answer, check_id, check_nudge, check_time, settings_change, stored_memory
from scheduler._time import require_aware
from scheduler.service._wire import WireError, decode, encode, error_of

__all__ = ["RemoteLiveRoom", "RemoteStore", "TokenRefusedError"]


class TokenRefusedError(StoreAccessError):
    """The class service does not take the token: none was given, the hub does not know it, or it lacks the
    service's scope. ``detail`` says which."""

    def __init__(self, path: str, detail: str) -> None:
        self.reason = "denied"
        self.detail = detail
        StoreError.__init__(
            self,
            path,
            f"the class service at {path} refused this kernel ({detail}); in JupyterHub, restart your server "
            "from the hub's home page, or ask whoever runs the class whether the service's scope is granted",
        )


class RemoteStore:
    """A learner's progress on a class service at ``url`` (ending with ``/``), as the owner of ``token``."""

    def __init__(self, url: str, token: str, memory: Memory, timeout_s: float) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self._token = token
        self.memory = memory
        self.timeout_s = timeout_s
        self.location = self.url
        self.learner = ""
        self._closed = False
        self._snapshot: str | None = None  # the open snapshot's id
        self._depth = 0

    @classmethod
    def open(
        cls,
        url: str,
        token: str,
        *,
        memory: Memory | None = None,
        timeout_s: float = 10.0,
        tz: tzinfo = timezone.utc,
    ) -> RemoteStore:
        """Ask the service whose ``token`` it is and read the learner's settings (unless ``memory`` is
        given): a StoreAccessError for a token it does not know, StoreUnavailableError when it cannot be
        reached. ``tz``: the learner's time zone, in which FSRS counts their days (the service's merges
        count them in the class's zone, its ``--timezone``)."""
        if not isinstance(token, str) or not token:
            raise TokenRefusedError(url, "no token was given (in a JupyterHub server: $JUPYTERHUB_API_TOKEN)")
        store = cls(url, token, memory or Memory(tz=tz), float(timeout_s))
        store.learner = str(store._request("GET", "api/v1/whoami")["learner"])
        store.location = f"{store.url} as {store.learner}"
        if memory is None:
            store.memory = stored_memory(store.memory, store.settings(), store.location)
        return store

    # -- transport ------------------------------------------------------------------------------------------
    def _request(self, verb: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        if self._closed:
            raise RuntimeError("the store is closed")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=verb,
            headers={"Authorization": f"token {self._token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise self._refused(exc) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreUnavailableError(self.url, f"the class service did not answer: {reason}") from None
        except json.JSONDecodeError:
            raise StoreUnavailableError(self.url, "the class service's answer cannot be read") from None
        return payload

    def _refused(self, error: urllib.error.HTTPError) -> BaseException:
        try:
            payload = json.loads(error.read())
        except (ValueError, OSError):
            payload = None
        if error.code == 401:
            return TokenRefusedError(self.url, "it does not know this token, or the token lacks its scope")
        if error.code in (502, 503, 504) and not (isinstance(payload, dict) and "error" in payload):
            return StoreUnavailableError(self.url, f"the class service answered {error.code}")
        if not isinstance(payload, dict) or "error" not in payload:
            return StoreError(self.url, f"the class service answered {error.code} {error.reason}")
        return error_of(payload["error"])

    def _call(self, method: str, **args: Any) -> Any:
        body: dict[str, Any] = {"args": encode(args)}
        if self._snapshot is not None:
            body["snapshot"] = self._snapshot
        payload = self._request("POST", f"api/v1/store/{method}", body)
        try:
            return decode(payload["result"])
        except (KeyError, TypeError, WireError):
            raise StoreUnavailableError(self.url, "the class service's answer cannot be read") from None

    # -- Storage --------------------------------------------------------------------------------------------
    def check_writable(self) -> None:
        self._call("check_writable")

    @contextmanager
    def snapshot(self) -> Iterator[RemoteStore]:
        """Every read inside the block sees one state of the learner's rows (a snapshot the service holds
        open, at most `SNAPSHOT_SECONDS`); blocks nest; writing inside is refused."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        key = str(self._request("POST", "api/v1/snapshot", {})["snapshot"])
        self._snapshot, self._depth = key, 1
        try:
            yield self
        finally:
            self._snapshot, self._depth = None, 0
            with contextlib.suppress(StoreError):  # else the service ends it itself in a moment
                self._request("POST", f"api/v1/snapshot/{key}/end", {})

    def _writing(self) -> None:
        if self._depth:
            raise RuntimeError("cannot write inside RemoteStore.snapshot(); write after the block ends")

    def record(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> Review:
        self._writing()
        rating, at = check_answer(item_id, rating, at, duration_ms)  # refused here, before any request
        review: Review = self._call(
            "record", item_id=item_id, rating=int(rating), at=at, duration_ms=duration_ms
        )
        return review

    def record_cram(self, item_id: str, rating: Rating, at: datetime, duration_ms: int | None = None) -> None:
        self._writing()
        rating, at = check_answer(item_id, rating, at, duration_ms)
        self._call("record_cram", item_id=item_id, rating=int(rating), at=at, duration_ms=duration_ms)

    def enroll(self, deck: str, at: datetime) -> None:
        self._writing()
        check_id(deck, "deck")
        self._call("enroll", deck=deck, at=check_time(at, "at"))

    def merge(
        self,
        answers: Sequence[LogEntry],
        practice: Sequence[LogEntry],
        decks: Mapping[str, datetime],
        nudges: Sequence[Nudge] = (),
    ) -> Merged:
        self._writing()
        incoming(answers, practice, decks)  # every entry checked here, as the stores do
        nudges = [check_nudge(nudge) for nudge in nudges]
        merged: Merged = self._call(
            "merge", answers=list(answers), practice=list(practice), decks=dict(decks), nudges=list(nudges)
        )
        return merged

    def nudge(self, nudge: Nudge) -> Nudge:
        self._writing()
        kept: Nudge = self._call("nudge", nudge=check_nudge(nudge))
        return kept

    def nudges(self, start: datetime | None = None, end: datetime | None = None) -> list[Nudge]:
        return list(self._call("nudges", start=_aware(start, "start"), end=_aware(end, "end")))

    def enrolled(self) -> dict[str, datetime]:
        return dict(self._call("enrolled"))

    def card(self, item_id: str) -> CardState | None:
        card: CardState | None = self._call("card", item_id=item_id)
        return card

    def cards(self) -> dict[str, CardState]:
        return dict(self._call("cards"))

    def reviews(self, item_id: str | None = None) -> list[Review]:
        return list(self._call("reviews", item_id=item_id))

    def cram_reviews(self) -> list[CramReview]:
        return list(self._call("cram_reviews"))

    def rebuild_cache(self) -> None:
        self._writing()
        self._call("rebuild_cache")

    def due_times(self) -> dict[str, datetime]:
        return dict(self._call("due_times"))

    def due_by(self, until: datetime) -> DueItems:
        due: DueItems = self._call("due_by", until=require_aware(until, "until"))
        return due

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        return list(self._call("answers", start=_aware(start, "start"), end=_aware(end, "end")))

    def review_counts(self) -> dict[str, int]:
        return dict(self._call("review_counts"))

    def settings(self) -> Settings:
        settings: Settings = self._call("settings")
        return settings

    def save_settings(self, settings: Settings, at: datetime) -> None:
        self._writing()
        memory, _ = settings_change(self.memory, settings, at)  # refused here first, as the stores do
        self._call("save_settings", settings=settings, at=at)
        self.memory = memory

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteStore({self.location!r})"


def _aware(at: datetime | None, name: str) -> datetime | None:
    return None if at is None else require_aware(at, name)


class RemoteLiveRoom:
    """The live room as a learner sees it, through the class service: the calls a learner's ``live()``
    widget makes of a ``scheduler.postgres.LiveRoom`` (look at a session, answer the question asked, see
    their own answer), each one HTTP request. An instructor runs the session with a ``LiveRoom`` of their
    own (the service acts for learners only)."""

    def __init__(self, transport: RemoteStore) -> None:
        self._transport = transport
        self.user = transport.learner
        self.location = transport.location

    @classmethod
    def open(cls, url: str, token: str, *, timeout_s: float = 10.0) -> RemoteLiveRoom:
        return cls(RemoteStore.open(url, token, memory=Memory(), timeout_s=timeout_s))

    def _live(self, method: str, **args: Any) -> Any:
        payload = self._transport._request("POST", f"api/v1/live/{method}", {"args": encode(args)})
        try:
            return decode(payload["result"])
        except (KeyError, TypeError, WireError):
            raise StoreUnavailableError(
                self._transport.url, "the class service's answer cannot be read"
            ) from None

    def state(self, session: int | None = None, *, room: str | None = None) -> LiveState | None:
        state: LiveState | None = self._live("state", session=session, room=room)
        return state

    def open_sessions(self) -> list[LiveState]:
        return list(self._live("open_sessions"))

    def answer(self, state: LiveState, answer: str, at: datetime) -> None:
        self._live("answer", state=state, answer=answer, at=require_aware(at, "at"))

    def my_answer(self, session: int, position: int) -> str | None:
        mine: str | None = self._live("my_answer", session=session, position=position)
        return mine

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> RemoteLiveRoom:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
