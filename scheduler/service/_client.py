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

Every answer is checked before it is used: one that cannot be read (a body cut short, a status line that is
not HTTP, text that is not UTF-8 or not JSON, JSON that is not the answer asked for, a value of another type
than the ``Storage`` call promises, a rating out of range, an error reply that describes no error, a
``whoami`` that names no learner) is a ``StoreUnavailableError`` whose detail says what was wrong: the answer
it was about is not confirmed, and the course's outbox keeps it, as for a service that cannot be reached. An
error status without an error that can be read is a ``StoreUnavailableError`` from 500 up, a ``StoreError``
below.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import secrets
import typing
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone, tzinfo
from functools import cache
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
    PredictionEvent,
    Rating,
    Review,
    Settings,
)
from scheduler._rows import (
    check_answer,
    check_id,
    check_nudge,
    check_prediction,
    check_time,
    settings_change,
    stored_memory,
)
from scheduler._storage import Storage
from scheduler._time import require_aware
from scheduler.service._wire import WireError, checked, decode, encode, error_of

__all__ = ["RemoteLiveRoom", "RemoteStore", "TokenRefusedError"]

_SNAPSHOT_KEY = re.compile(r"[A-Za-z0-9_-]{1,200}")  # what the service's route for ending one takes
_SHORT = 60  # characters of what arrived quoted in a detail


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


_WRITES = frozenset(
    {"record", "record_cram", "enroll", "merge", "nudge", "predict", "rebuild_cache", "save_settings"}
)
"""The calls that write: each carries a key of its own, so that one sent again saves once."""


class _CutOff(StoreUnavailableError):
    """The connection dropped before the service's answer came: a write is sent once more, with its key."""


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
        reached or its answer names no learner (no store is opened for a learner "None"). ``tz``: the
        learner's time zone, in which FSRS counts their days (the service's merges count them in the class's
        zone, its ``--timezone``)."""
        if not isinstance(token, str) or not token:
            raise TokenRefusedError(url, "no token was given (in a JupyterHub server: $JUPYTERHUB_API_TOKEN)")
        store = cls(url, token, memory or Memory(tz=tz), float(timeout_s))
        store.learner = store._whoami()
        store.location = f"{store.url} as {store.learner}"
        if memory is None:
            store.memory = stored_memory(store.memory, store.settings(), store.location)
        return store

    # -- transport ------------------------------------------------------------------------------------------
    def _request(self, verb: str, path: str, body: Mapping[str, Any] | None = None, *, what: str) -> Any:
        """The JSON the service answers (``what``: the answer, as a detail names it); a `StoreError` for
        every answer that is not one."""
        try:
            return self._send(verb, path, body, what=what)
        except _CutOff as cut:
            raise StoreUnavailableError(self.url, cut.detail) from None

    def _send(self, verb: str, path: str, body: Mapping[str, Any] | None = None, *, what: str) -> Any:
        """`_request`, a connection that dropped before the answer came a `_CutOff`."""
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
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise self._refused(exc, what) from None
        except http.client.IncompleteRead as exc:
            raise _CutOff(self.url, f"{what} was cut short ({_cut(exc)})") from None
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
            raise _CutOff(self.url, f"the class service did not answer: {exc}") from None
        except http.client.HTTPException as exc:  # a junk status line, a header line too long, ...
            raise self._unreadable(f"{what} is not an HTTP answer ({_said(exc)})") from None
        except (urllib.error.URLError, OSError) as exc:  # OSError: the connection lost, a timeout
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (ConnectionResetError, BrokenPipeError)):
                raise _CutOff(self.url, f"the class service did not answer: {reason}") from None
            raise self._unreadable(f"the class service did not answer: {reason}") from None
        return self._json(raw, what)

    def _json(self, raw: bytes, what: str) -> Any:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._unreadable(f"{what} is not UTF-8 text") from None
        try:
            return json.loads(text)
        except RecursionError:
            raise self._unreadable(f"{what} nests too deeply to be read") from None
        except ValueError:
            raise self._unreadable(f"{what} is not JSON ({_quote(text)})") from None

    def _unreadable(self, detail: str) -> StoreUnavailableError:
        return StoreUnavailableError(self.url, detail)

    def _refused(self, error: urllib.error.HTTPError, what: str) -> BaseException:
        """The error an error status stands for: the one its body describes, else a sentence of its own."""
        if error.code == 401:
            return TokenRefusedError(self.url, "it does not know this token, or the token lacks its scope")
        status = f"{error.code} ({str(error.reason)[:_SHORT]})"
        try:
            raw = error.read()
        except (OSError, http.client.HTTPException):
            raw = b""
        try:
            payload = self._json(raw, what)
        except StoreError:
            payload = None

        def problem(detail: str) -> StoreError:
            if error.code >= 500:  # the service's own trouble: the answer is kept and sent again
                return StoreUnavailableError(self.url, f"the class service answered {status} {detail}")
            return StoreError(self.url, f"the class service at {self.url} answered {status} {detail}")

        if not isinstance(payload, dict) or "error" not in payload:
            return problem("without an error this kernel can read")
        try:
            return error_of(payload["error"], unknown=lambda sentence: problem(f"with {sentence}"))
        except WireError as exc:
            return problem(f"with an error this kernel cannot read: {exc}")

    def _call(self, method: str, **args: Any) -> Any:
        """The result of the ``Storage`` call ``method``, checked against the type the protocol promises."""
        body: dict[str, Any] = {"args": encode(args)}
        if self._snapshot is not None:
            body["snapshot"] = self._snapshot
        what = f"the class service's answer to {method}"
        if method not in _WRITES:
            payload = self._request("POST", f"api/v1/store/{method}", body, what=what)
            return self._result(payload, _promised(method), what)
        body["once"] = secrets.token_urlsafe(16)  # sent again, the write is saved once (the service's key)
        try:
            payload = self._send("POST", f"api/v1/store/{method}", body, what=what)
        except _CutOff:  # the connection dropped before the answer came: once more, with the same key
            payload = self._request("POST", f"api/v1/store/{method}", body, what=what)
        return self._result(payload, _promised(method), what)

    def _result(self, payload: Any, hint: Any, what: str) -> Any:
        if not isinstance(payload, dict) or "result" not in payload:
            raise self._unreadable(f"{what} has no result ({_quote(payload)})")
        try:
            value = decode(payload["result"])
        except WireError as exc:
            raise self._unreadable(f"{what} cannot be read: {exc}") from None
        try:
            return checked(value, hint, what)
        except WireError as exc:
            raise self._unreadable(str(exc)) from None

    def _whoami(self) -> str:
        """Whose the token is, as the service says: a name, never None or empty."""
        what = "the class service's answer to whoami"
        payload = self._request("GET", "api/v1/whoami", what=what)
        learner = payload.get("learner") if isinstance(payload, dict) else None
        if not isinstance(learner, str) or not learner or not learner.isprintable():
            raise self._unreadable(f"{what} names no learner ({_quote(payload)})")
        return learner

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
        what = "the class service's answer to snapshot"
        payload = self._request("POST", "api/v1/snapshot", {}, what=what)
        key = payload.get("snapshot") if isinstance(payload, dict) else None
        if not isinstance(key, str) or not _SNAPSHOT_KEY.fullmatch(key):
            raise self._unreadable(f"{what} names no snapshot ({_quote(payload)})")
        self._snapshot, self._depth = key, 1
        try:
            yield self
        finally:
            self._snapshot, self._depth = None, 0
            with contextlib.suppress(StoreError):  # else the service ends it itself in a moment
                self._request(
                    "POST", f"api/v1/snapshot/{key}/end", {}, what="the class service's answer to end"
                )

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
        predictions: Sequence[PredictionEvent] = (),
    ) -> Merged:
        self._writing()
        incoming(answers, practice, decks)  # every entry checked here, as the stores do
        nudges = [check_nudge(nudge) for nudge in nudges]
        predictions = [check_prediction(prediction) for prediction in predictions]
        merged: Merged = self._call(
            "merge",
            answers=list(answers),
            practice=list(practice),
            decks=dict(decks),
            nudges=list(nudges),
            predictions=list(predictions),
        )
        return merged

    def nudge(self, nudge: Nudge) -> Nudge:
        self._writing()
        kept: Nudge = self._call("nudge", nudge=check_nudge(nudge))
        return kept

    def nudges(self, start: datetime | None = None, end: datetime | None = None) -> list[Nudge]:
        nudges: list[Nudge] = self._call("nudges", start=_aware(start, "start"), end=_aware(end, "end"))
        return nudges

    def predict(self, prediction: PredictionEvent) -> PredictionEvent:
        self._writing()
        kept: PredictionEvent = self._call("predict", prediction=check_prediction(prediction))
        return kept

    def predictions(
        self, start: datetime | None = None, end: datetime | None = None
    ) -> list[PredictionEvent]:
        found: list[PredictionEvent] = self._call(
            "predictions", start=_aware(start, "start"), end=_aware(end, "end")
        )
        return found

    def enrolled(self) -> dict[str, datetime]:
        enrolled: dict[str, datetime] = self._call("enrolled")
        return enrolled

    def card(self, item_id: str) -> CardState | None:
        card: CardState | None = self._call("card", item_id=item_id)
        return card

    def cards(self) -> dict[str, CardState]:
        cards: dict[str, CardState] = self._call("cards")
        return cards

    def reviews(self, item_id: str | None = None) -> list[Review]:
        reviews: list[Review] = self._call("reviews", item_id=item_id)
        return reviews

    def cram_reviews(self) -> list[CramReview]:
        reviews: list[CramReview] = self._call("cram_reviews")
        return reviews

    def rebuild_cache(self) -> None:
        self._writing()
        self._call("rebuild_cache")

    def due_times(self) -> dict[str, datetime]:
        due: dict[str, datetime] = self._call("due_times")
        return due

    def due_by(self, until: datetime) -> DueItems:
        due: DueItems = self._call("due_by", until=require_aware(until, "until"))
        return due

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        answers: list[Answer] = self._call("answers", start=_aware(start, "start"), end=_aware(end, "end"))
        return answers

    def review_counts(self) -> dict[str, int]:
        counts: dict[str, int] = self._call("review_counts")
        return counts

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


@cache
def _promised(method: str) -> Any:
    """What the ``Storage`` protocol says ``method`` returns (a type hint)."""
    return typing.get_type_hints(getattr(Storage, method))["return"]


def _cut(error: http.client.IncompleteRead) -> str:
    came = len(error.partial)
    return f"{came} bytes came" if error.expected is None else f"{came} of {came + error.expected} bytes came"


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {_quote(error.args[0])}" if error.args else type(error).__name__


def _quote(value: Any) -> str:
    """``value``'s repr, cut to a few words."""
    text = repr(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."


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

    def _live(self, method: str, hint: Any, **args: Any) -> Any:
        """The result of the live room's call ``method``, checked against ``hint``."""
        what = f"the class service's answer to live {method}"
        payload = self._transport._request("POST", f"api/v1/live/{method}", {"args": encode(args)}, what=what)
        return self._transport._result(payload, hint, what)

    def state(self, session: int | None = None, *, room: str | None = None) -> LiveState | None:
        state: LiveState | None = self._live("state", LiveState | None, session=session, room=room)
        return state

    def open_sessions(self) -> list[LiveState]:
        states: list[LiveState] = self._live("open_sessions", list[LiveState])
        return states

    def answer(self, state: LiveState, answer: str, at: datetime) -> None:
        self._live("answer", None, state=state, answer=answer, at=require_aware(at, "at"))

    def my_answer(self, session: int, position: int) -> str | None:
        mine: str | None = self._live("my_answer", str | None, session=session, position=position)
        return mine

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> RemoteLiveRoom:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
