"""What a learner's kernel makes of a class service's answers it cannot use (`scheduler.service._client`):
every one is a ``StoreError`` with a sentence, never a raw error, and every value returned is of the type the
``Storage`` protocol promises. Those that leave an answer unconfirmed (a body cut short by a proxy, a junk
status line, text that is not UTF-8 or not JSON, a value of the wrong shape or type, a service error that
describes no error) are a ``StoreUnavailableError``: the course's outbox keeps the answer and sends it again.

Against a small fake service (``http.server`` in a thread) that answers each path with the bytes given.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fixed_clock import T0

from course.progress._keeping import Keeper
from course.progress._source import StoreSource
from scheduler import CardState, LogEntry, Memory, Rating, Review, Settings, StoreError, StoreUnavailableError
from scheduler._live_records import LiveState
from scheduler.service import RemoteLiveRoom, RemoteStore
from scheduler.service._wire import encode

Reply = Callable[[http.server.BaseHTTPRequestHandler], None]


def answer(payload: Any, status: int = 200, reason: str = "") -> Reply:
    """An HTTP answer of ``payload`` (JSON unless bytes), its length given."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()

    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(status, reason or None)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return send


def raw(data: bytes) -> Reply:
    """Exactly ``data`` on the connection, then it is closed."""

    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.wfile.write(data)
        handler.close_connection = True

    return send


@dataclass
class FakeService:
    """Answers each path (after ``/api/v1/``) with its reply; whoami and settings answer as a service does."""

    url: str
    replies: dict[str, Reply] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)


def _handler(fake: FakeService) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _serve(self) -> None:
            fake.bodies.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            path = self.path.partition("/api/v1/")[2]
            fake.asked.append(path)
            reply = fake.replies.get(path)
            if reply is None:
                defaults = {"whoami": {"learner": "ada"}, "store/settings": {"result": encode(Settings())}}
                reply = answer(defaults.get(path, {"result": None}))
            reply(self)

        do_GET = do_POST = _serve

    return Handler


@pytest.fixture
def fake() -> Iterator[FakeService]:
    service = FakeService("")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(service))
    service.url = f"http://127.0.0.1:{server.server_address[1]}/services/course/"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def opened(fake: FakeService) -> RemoteStore:
    return RemoteStore.open(fake.url, "ada-token", memory=Memory(), timeout_s=5)


CARD = CardState("q", "review", None, 3.2, 5.1, T0 + timedelta(days=3), T0, 2, 0)
REVIEW = Review("q", Rating.GOOD, T0, 1200, T0 + timedelta(days=3))
STATE = LiveState(7, "teacher", "Week 3", 1, "q", "plain", False, False, T0, "room-1")


def _with_field(value: Any, index: int, replaced: Any) -> dict[str, Any]:
    data: dict[str, Any] = encode(value)
    data["f"][index] = replaced
    return data


def test_well_formed_answers_are_returned_as_promised(fake: FakeService) -> None:
    fake.replies["store/cards"] = answer({"result": encode({"q": CARD})})
    fake.replies["store/record"] = answer({"result": encode(REVIEW)})
    store = RemoteStore.open(fake.url, "ada-token", timeout_s=5)  # whoami, then the settings
    assert (store.learner, store.location) == ("ada", f"{fake.url} as ada")
    assert store.cards() == {"q": CARD}
    assert store.record("q", Rating.GOOD, T0, 1200) == REVIEW
    store.enroll("deck", T0)  # its answer None, as promised
    assert fake.asked == ["whoami", "store/settings", "store/cards", "store/record", "store/enroll"]


# (the call, its path, the reply, the detail of the StoreUnavailableError it is)
UNREADABLE: list[tuple[str, str, Reply, str]] = [
    (
        "cards",
        "store/cards",
        raw(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"result": '),
        "the class service's answer to cards was cut short (11 of 100 bytes came)",
    ),
    (
        "cards",
        "store/cards",
        raw(b"SPAM 200 lol\r\n\r\n"),
        "the class service's answer to cards is not an HTTP answer (BadStatusLine: 'SPAM 200 lol\\r\\n')",
    ),
    (
        "cards",
        "store/cards",
        answer(b'{"result": "\xff\xfe"}'),
        "the class service's answer to cards is not UTF-8 text",
    ),
    (
        "cards",
        "store/cards",
        answer(b"<html>502 from the proxy</html>"),
        "the class service's answer to cards is not JSON ('<html>502 from the proxy</html>')",
    ),
    (
        "cards",
        "store/cards",
        answer(b"[" * 100_000 + b"]" * 100_000),
        "the class service's answer to cards nests too deeply to be read",
    ),
    (
        "cards",
        "store/cards",
        answer({"answer": {}}),
        "the class service's answer to cards has no result ({'answer': {}})",
    ),
    ("cards", "store/cards", answer([1, 2]), "the class service's answer to cards has no result ([1, 2])"),
    (
        "reviews",
        "store/reviews",
        answer({"result": {}}),
        "the class service's answer to reviews is not a list[Review]: it is a dict",
    ),
    (
        "record",
        "store/record",
        answer({"result": _with_field(REVIEW, 1, {"$e": "Rating", "v": 9})}),
        "the class service's answer to record cannot be read: 9 is not a Rating",
    ),
    (
        "record",
        "store/record",
        answer({"result": _with_field(REVIEW, 1, {"$e": "Rating", "v": True})}),
        "the class service's answer to record cannot be read: True is not a Rating",
    ),
    (
        "record",
        "store/record",
        answer({"result": encode(CARD)}),
        "the class service's answer to record is not a Review: it is a CardState",
    ),
    (
        "due_times",
        "store/due_times",
        answer({"result": {"q": "2024-01-01T00:00:00Z"}}),
        "the class service's answer to due_times is not a dict[str, datetime]: ['q'] is a str "
        "('2024-01-01T00:00:00Z'), not a datetime",
    ),
    (
        "cards",
        "store/cards",
        answer({"result": {"q": _with_field(CARD, 7, "3")}}),
        "the class service's answer to cards cannot be read: a CardState whose reps is a str ('3'), not an "
        "int",
    ),
    (
        "cards",
        "store/cards",
        answer({"result": {"q": _with_field(CARD, 1, "haunted")}}),
        "the class service's answer to cards cannot be read: a CardState whose state is a str ('haunted'), "
        "not one of 'learning', 'review', 'relearning'",
    ),
    (
        "card",
        "store/card",
        answer({"result": _with_field(CARD, 5, None)}),
        "the class service's answer to card cannot be read: a CardState whose due is None, not a datetime",
    ),
    (
        "review_counts",
        "store/review_counts",
        answer({"result": {"q": True}}),
        "the class service's answer to review_counts is not a dict[str, int]: ['q'] is a bool (True), not "
        "an int",
    ),
    (
        "review_counts",
        "store/review_counts",
        answer({"result": {"q": 2**64}}),
        "the class service's answer to review_counts cannot be read: an integer outside signed 64 bits",
    ),
    (
        "enrolled",
        "store/enrolled",
        answer({"result": {"deck": {"$t": 10**17}}}),
        "the class service's answer to enrolled cannot be read: a time outside the years 1 to 9999",
    ),
    (
        "cards",
        "store/cards",
        answer({"result": json.loads("[" * 65 + "]" * 65)}),
        "the class service's answer to cards cannot be read: a value nested deeper than 64 levels",
    ),
    (
        "enroll",
        "store/enroll",
        answer({"result": "enrolled"}),
        "the class service's answer to enroll is not None: it is a str ('enrolled')",
    ),
    (
        "cards",
        "store/cards",
        answer(b"<html>Bad Gateway</html>", 502),
        "the class service answered 502 (Bad Gateway) without an error this kernel can read",
    ),
    (
        "cards",
        "store/cards",
        answer({"error": "boom"}, 500),
        "the class service answered 500 (Internal Server Error) with an error this kernel cannot read: the "
        "error is a str ('boom'), not an object",
    ),
    (
        "cards",
        "store/cards",
        answer({"error": {"kinds": ["StoreError"], "args": [], "attributes": {"path": "db"}}}, 500),
        "the class service answered 500 (Internal Server Error) with an error this kernel cannot read: a "
        "StoreError without its message",
    ),
    (
        "cards",
        "store/cards",
        answer(
            {"error": {"kinds": ["StoreUnavailableError"], "args": ["gone"], "attributes": {"path": "db"}}},
            503,
        ),
        "the class service answered 503 (Service Unavailable) with an error this kernel cannot read: a "
        "StoreUnavailableError without its detail (a str)",
    ),
    (
        "cards",
        "store/cards",
        answer({"error": {"type": "SystemExit", "kinds": ["SystemExit"], "args": ["bye"]}}, 500),
        "the class service answered 500 (Internal Server Error) with an error of a kind unknown here "
        "(SystemExit: bye)",
    ),
]


def _call(store: RemoteStore, name: str) -> Any:
    calls: dict[str, Callable[[], Any]] = {
        "cards": store.cards,
        "card": lambda: store.card("q"),
        "reviews": store.reviews,
        "record": lambda: store.record("q", Rating.GOOD, T0, 1200),
        "due_times": store.due_times,
        "review_counts": store.review_counts,
        "enrolled": store.enrolled,
        "enroll": lambda: store.enroll("deck", T0),
    }
    return calls[name]()


@pytest.mark.parametrize(
    ("call", "path", "reply", "detail"), UNREADABLE, ids=[detail[35:80] for *_, detail in UNREADABLE]
)
def test_an_answer_that_cannot_be_used_is_unavailable_in_words(
    fake: FakeService, call: str, path: str, reply: Reply, detail: str
) -> None:
    store = opened(fake)
    fake.replies[path] = reply
    with pytest.raises(StoreUnavailableError) as raised:
        _call(store, call)
    assert type(raised.value) is StoreUnavailableError
    assert raised.value.detail == detail
    assert str(raised.value) == (
        f"{fake.url} cannot be reached ({detail}); nothing was lost that was saved before. Try again in a "
        "moment, or ask whoever runs the class database whether the server is up"
    )


@pytest.mark.parametrize(
    "payload", [{"learner": None}, {"learner": 5}, {"learner": ""}, {"learner": "ada\n"}, {}, ["ada"], None]
)
def test_a_whoami_that_names_no_learner_opens_no_store(fake: FakeService, payload: Any) -> None:
    fake.replies["whoami"] = answer(payload)
    with pytest.raises(StoreUnavailableError) as raised:
        RemoteStore.open(fake.url, "ada-token", timeout_s=5)
    assert raised.value.detail == f"the class service's answer to whoami names no learner ({payload!r})"
    assert fake.asked == ["whoami"]  # nothing asked as learner "None"


@pytest.mark.parametrize("payload", [{"snapshot": None}, {"snapshot": "../../store/record"}, {}])
def test_a_snapshot_that_names_none_is_unavailable(fake: FakeService, payload: Any) -> None:
    store = opened(fake)
    fake.replies["snapshot"] = answer(payload)
    with pytest.raises(StoreUnavailableError) as raised, store.snapshot():
        pass
    assert raised.value.detail == f"the class service's answer to snapshot names no snapshot ({payload!r})"


def test_a_refusal_without_an_error_it_can_read_is_a_store_error(fake: FakeService) -> None:
    store = opened(fake)
    fake.replies["store/cards"] = answer(b"<html>Not Found</html>", 404)
    with pytest.raises(StoreError) as raised:
        store.cards()
    assert type(raised.value) is StoreError  # below 500: not the service's passing trouble
    assert str(raised.value) == (
        f"the class service at {fake.url} answered 404 (Not Found) without an error this kernel can read"
    )


def test_an_error_it_can_read_is_raised_as_sent(fake: FakeService) -> None:
    store = opened(fake)
    error = {"kinds": ["ValueError"], "args": ["desired_retention must be at most 0.97, got 0.99"]}
    fake.replies["store/save_settings"] = answer({"error": error}, 400)
    with pytest.raises(ValueError, match=r"^desired_retention must be at most 0\.97, got 0\.99$"):
        store.save_settings(Settings(desired_retention=0.9), T0)


# (the live call, the reply's result, the detail)
LIVE: list[tuple[str, Any, str]] = [
    ("state", encode(STATE), ""),
    (
        "state",
        _with_field(STATE, 0, "7"),
        "the class service's answer to live state cannot be read: a LiveState whose session is a str ('7'), "
        "not an int",
    ),
    (
        "state",
        _with_field(STATE, 6, "no"),
        "the class service's answer to live state cannot be read: a LiveState whose revealed is a str "
        "('no'), not a bool",
    ),
    (
        "state",
        [encode(STATE)],
        "the class service's answer to live state is not a LiveState or None: it is a list",
    ),
    ("open_sessions", [encode(STATE)], ""),
    (
        "open_sessions",
        {"7": encode(STATE)},
        "the class service's answer to live open_sessions is not a list[LiveState]: it is a dict",
    ),
    ("my_answer", "b", ""),
    (
        "my_answer",
        5,
        "the class service's answer to live my_answer is not a str or None: it is an int (5)",
    ),
    ("answer", None, ""),
    ("answer", "ok", "the class service's answer to live answer is not None: it is a str ('ok')"),
]


@pytest.mark.parametrize(
    ("call", "result", "detail"), LIVE, ids=[f"{call}-{i}" for i, (call, *_) in enumerate(LIVE)]
)
def test_the_live_rooms_answers_are_checked_too(
    fake: FakeService, call: str, result: Any, detail: str
) -> None:
    room = RemoteLiveRoom.open(fake.url, "ada-token", timeout_s=5)
    fake.replies[f"live/{call}"] = answer({"result": result})
    calls: dict[str, Callable[[], Any]] = {
        "state": lambda: room.state(7),
        "open_sessions": room.open_sessions,
        "my_answer": lambda: room.my_answer(7, 1),
        "answer": lambda: room.answer(STATE, "b", T0),
    }
    if not detail:
        expected = {"state": STATE, "open_sessions": [STATE], "my_answer": "b", "answer": None}[call]
        assert calls[call]() == expected
        return
    with pytest.raises(StoreUnavailableError) as raised:
        calls[call]()
    assert raised.value.detail == detail


def test_a_live_answer_cut_short_is_unavailable(fake: FakeService) -> None:
    room = RemoteLiveRoom.open(fake.url, "ada-token", timeout_s=5)
    fake.replies["live/answer"] = raw(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{")
    with pytest.raises(StoreUnavailableError) as raised:
        room.answer(STATE, "b", T0)
    assert (
        raised.value.detail == "the class service's answer to live answer was cut short (1 of 40 bytes came)"
    )


def test_an_answer_whose_confirmation_cannot_be_read_waits_in_the_outbox(
    fake: FakeService, tmp_path: Path
) -> None:
    source = StoreSource(opened(fake), outbox_folder=tmp_path)
    keeper = Keeper(source, create=False)
    fake.replies["store/record"] = raw(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"result": ')
    review = keeper.record("q", Rating.GOOD, T0, 1200)
    assert (review.item_id, review.rating, review.reviewed_at) == ("q", Rating.GOOD, T0)  # worked out here
    kept = keeper.take_kept()
    assert isinstance(kept, StoreUnavailableError)
    assert kept.detail == "the class service's answer to record was cut short (11 of 100 bytes came)"
    assert source.outbox is not None and [k.entry for k in source.outbox.pending()] == [
        LogEntry("q", Rating.GOOD, T0, 1200)
    ]


def test_a_write_cut_off_is_sent_once_more_with_the_same_key(fake: FakeService) -> None:
    store = opened(fake)
    replies = iter([raw(b""), answer({"result": encode(REVIEW)})])  # the first connection drops unanswered
    fake.replies["store/record"] = lambda handler: next(replies)(handler)
    before = len(fake.bodies)
    assert store.record("q", Rating.GOOD, T0, 1200) == REVIEW
    sent = [json.loads(body) for body in fake.bodies[before:]]
    assert fake.asked[-2:] == ["store/record", "store/record"]
    assert len(sent) == 2 and sent[0] == sent[1] and len(sent[0]["once"]) == 22  # the service saves it once
    assert store.card("q") is None  # a read carries no key
    assert "once" not in json.loads(fake.bodies[-1])
