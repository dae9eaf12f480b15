"""What every store promises (``scheduler.Storage``), run against each implementation in ``BACKENDS``.

A backend is opened on a location (a path) and says how to bring that location into each failure state; a
second store (e.g. a classroom server) is added by appending its ``Backend`` to ``BACKENDS``. What is
specific to SQLite (messages, files left untouched, WAL, migrations) stays in the other ``test_store_*``
files.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fixed_clock import T0, UTC
from postgres_server import PostgresServer, database_for, learner_for, learner_password
from store_helpers import (
    AGAIN,
    EASY,
    GOOD,
    HARD,
    assert_schedule_is_the_log_replayed,
    hold_lock,
    make_newer,
    steps_memory,
    steps_store,
)

from scheduler import (
    Answer,
    DueItems,
    Item,
    Limits,
    LogEntry,
    Merged,
    Nudge,
    PredictionEvent,
    Rating,
    Review,
    Settings,
    State,
    Storage,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    StoreVersionError,
    due_queue,
)
from scheduler._memory import DEFAULT_PARAMETERS

if TYPE_CHECKING:
    import psycopg


@dataclass(frozen=True)
class Backend:
    """One store implementation and how to put its location into each state the contract tests."""

    name: str
    open: Callable[[Path, bool], Storage]  # (location, create): a handle; several may be open at once
    corrupt: Callable[[Path], None]  # make the location unreadable
    make_newer: Callable[[Path], None]  # make an existing store look written by a newer version
    hold_lock: Callable[[Path], AbstractContextManager[None]]  # another writer holds the store meanwhile


def _sqlite_open(path: Path, create: bool) -> Storage:
    """fsrs's same-day steps, fuzz off: the contract covers every state of a card (learning, relearning)."""
    return steps_store(path, create=create, busy_timeout_ms=200)


def _sqlite_corrupt(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + b"\x10\x00")


# PostgreSQL: a location's folder is a database (made and installed on the first open that may create), its
# file name a learner (a login role in course_learner): the test server is the session's ``postgres_server``.
_POSTGRES: list[PostgresServer] = []


def _postgres_open(path: Path, create: bool) -> Storage:
    from scheduler.postgres import PostgresStore, add_learner, install

    server = _POSTGRES[-1]
    database, learner = database_for(path), learner_for(path)
    server.ensure_role(learner)
    if create:
        if not server.has_database(database):
            server.create_database(database)
        install(server.admin_url(database))
        add_learner(server.admin_url(database), learner)
    return PostgresStore.open(
        server.learner_url(database, learner), learner=learner, memory=steps_memory(), lock_timeout_ms=300
    )


# A class service's pool per database (its role: SERVICE), shared by every learner's store; closed at the end.
SERVICE = "course_service_test"
_POOLS: dict[str, Any] = {}


def _service_open(path: Path, create: bool) -> Storage:
    """A learner's store on a class service's pool: every call borrowed a connection, run as the learner."""
    from scheduler.postgres import ClassPool, PostgresStore, add_learner, add_service, install

    server = _POSTGRES[-1]
    database, learner = database_for(path), learner_for(path)
    server.ensure_role(learner)
    if create:
        if not server.has_database(database):
            server.create_database(database)
        install(server.admin_url(database))
        add_learner(server.admin_url(database), learner)
        add_service(server.admin_url(database), SERVICE, learner_password(SERVICE))
    if database not in _POOLS:
        _POOLS[database] = ClassPool.open(server.learner_url(database, SERVICE), min_size=1, max_size=3)
    return PostgresStore.serving(_POOLS[database], learner, memory=steps_memory(), lock_timeout_ms=300)


# The class service over HTTP, one per database (its pool as above), each learner's token known to it.
_SERVICES: dict[str, Any] = {}
_TOKENS: dict[str, str] = {}


def _http_open(path: Path, create: bool) -> Storage:
    """A learner's store in their kernel: HTTP calls to a class service, which runs each as the learner."""
    from service_server import ServiceThread, StaticTokens

    from scheduler.service import RemoteStore
    from scheduler.service._server import ClassService

    database, learner = database_for(path), learner_for(path)
    _service_open(path, create).close()  # the database, the learner and the service's pool, as above
    if database not in _SERVICES:
        service = ClassService(
            _POOLS[database],
            StaticTokens(_TOKENS),
            memory=steps_memory(),
            lock_timeout_ms=300,
            snapshots=1,  # a pool of 3 holds none by default: the contract's snapshot sees one state
        )
        _SERVICES[database] = ServiceThread(service).start()
    _TOKENS[f"token-{learner}"] = learner
    return RemoteStore.open(_SERVICES[database].url, f"token-{learner}", memory=steps_memory(), timeout_s=5)


def _postgres_admin(path: Path) -> psycopg.Connection[Any]:
    import psycopg

    return psycopg.connect(_POSTGRES[-1].admin_url(database_for(path)), autocommit=True)


def _postgres_corrupt(path: Path) -> None:
    """An installed database whose version row is another program's."""
    _postgres_open(path, True).close()
    with _postgres_admin(path) as admin:
        admin.execute("UPDATE course.course_schema SET application = 'something else', version = 7")


def _service_corrupt(path: Path) -> None:
    """As `_postgres_corrupt`, the service's role made first (so that its pool's refusal is the schema's, not
    a login that fails because no earlier test made the role)."""
    from scheduler.postgres import add_service, install

    server = _POSTGRES[-1]
    if not server.has_database(database_for(path)):
        server.create_database(database_for(path))
    install(server.admin_url(database_for(path)))
    add_service(server.admin_url(database_for(path)), SERVICE, learner_password(SERVICE))
    _postgres_corrupt(path)


def _postgres_make_newer(path: Path) -> None:
    with _postgres_admin(path) as admin:
        admin.execute("UPDATE course.course_schema SET version = version + 1")


@contextmanager
def _postgres_hold_lock(path: Path) -> Iterator[None]:
    """Another session holds every table against writers (readers go on)."""
    with _postgres_admin(path) as admin, admin.transaction():
        admin.execute(
            "LOCK TABLE course.review_log, course.cram_log, course.cards, course.decks, course.settings "
            "IN EXCLUSIVE MODE"
        )
        yield


BACKENDS = [
    Backend("sqlite", _sqlite_open, _sqlite_corrupt, make_newer, hold_lock),
    Backend("postgres", _postgres_open, _postgres_corrupt, _postgres_make_newer, _postgres_hold_lock),
    Backend("service", _service_open, _service_corrupt, _postgres_make_newer, _postgres_hold_lock),
    Backend("http", _http_open, _service_corrupt, _postgres_make_newer, _postgres_hold_lock),
]
ON_POSTGRES = ("postgres", "service", "http")  # the backends on the throw-away PostgreSQL server


@pytest.fixture(
    params=[
        pytest.param(
            backend, id=backend.name, marks=pytest.mark.postgres if backend.name in ON_POSTGRES else ()
        )
        for backend in BACKENDS
    ]
)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param.name in ON_POSTGRES:
        pytest.importorskip("psycopg", reason="the PostgreSQL store needs psycopg (requirements.txt)")
        _POSTGRES.append(request.getfixturevalue("postgres_server"))
        try:
            yield request.param
        finally:
            _POSTGRES.pop()
            while _SERVICES:
                _SERVICES.popitem()[1].stop()
            _TOKENS.clear()
            while _POOLS:
                _POOLS.popitem()[1].close()
    else:
        yield request.param


@pytest.fixture
def location(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


@pytest.fixture
def store(backend: Backend, location: Path) -> Iterator[Storage]:
    opened = backend.open(location, True)
    try:
        yield opened
    finally:
        opened.close()


def test_history_is_appended_in_order_and_never_rewritten(backend: Backend, location: Path) -> None:
    with backend.open(location, True) as store:
        first = store.record("q1", GOOD, T0 + timedelta(microseconds=123456), duration_ms=4200)
        second = store.record("q2", EASY, T0)  # earlier than the first: the log keeps the order written
        third = store.record("q1", AGAIN, first.due)
        store.record_cram("q1", HARD, T0)  # practice is not history
        assert first == Review("q1", GOOD, T0 + timedelta(microseconds=123000), 4200, first.due)
        assert store.reviews() == [first, second, third]
        assert store.reviews("q1") == [first, third]
        assert store.reviews("unknown") == []
        fourth = store.record("q2", GOOD, second.due)
        assert store.reviews() == [first, second, third, fourth]  # earlier rows as they were
        assert store.review_counts() == {"q1": 2, "q2": 2}
    with backend.open(location, False) as reopened:
        assert reopened.reviews() == [first, second, third, fourth]


def test_answers_are_typed_records_in_log_order(store: Storage) -> None:
    at = T0
    for rating in (GOOD, GOOD, AGAIN, GOOD):
        at = store.record("q", rating, at).due
    store.record("r", EASY, T0 + timedelta(hours=1))
    reviews = store.reviews()
    before = [State.NEW] + [
        State(store.memory.replay("q", reviews[:index]).state) for index in range(1, 4)
    ]  # the card's state before each of q's answers, as a replay of its log says
    expected = [
        Answer(review.item_id, review.reviewed_at, review.rating, state)
        for review, state in zip(reviews, [*before, State.NEW], strict=True)
    ]
    answers = store.answers()
    assert answers == expected
    assert before == [State.NEW, State.LEARNING, State.REVIEW, State.RELEARNING]  # every state, once
    assert all(answer.reviewed_at.tzinfo is UTC for answer in answers)
    start, end = reviews[1].reviewed_at, reviews[3].reviewed_at
    assert store.answers(start, end) == [
        answer for answer in expected if start <= answer.reviewed_at < end
    ]  # half-open
    assert store.answers(end=T0 + timedelta(minutes=1)) == [expected[0]]
    assert store.answers(start=end) == [answer for answer in expected if answer.reviewed_at >= end]


def test_schedule_is_rebuilt_from_the_log(store: Storage) -> None:
    at = T0
    for rating in (GOOD, GOOD, AGAIN, GOOD, HARD):
        at = store.record("q", rating, at).due
    store.record("other", EASY, T0)
    store.record_cram("other", AGAIN, T0 + timedelta(hours=1))  # practice leaves the schedule alone
    assert_schedule_is_the_log_replayed(store)
    cards = store.cards()
    assert cards["q"].reps == 5 and cards["other"].reps == 1
    assert all(due.tzinfo is UTC for due in store.due_times().values())
    until = cards["other"].due
    assert store.due_by(until) == DueItems(
        {item_id: card.due for item_id, card in cards.items() if card.due <= until}, frozenset({"q", "other"})
    )  # inclusive
    earliest = min(card.due for card in cards.values())
    assert store.due_by(earliest - timedelta(milliseconds=1)) == DueItems({}, frozenset({"q", "other"}))
    store.rebuild_cache()
    assert store.cards() == cards
    assert store.card("q") == cards["q"] and store.card("never") is None


def test_a_merge_inserts_new_answers_by_time_and_keeps_every_row(backend: Backend, location: Path) -> None:
    hour = timedelta(hours=1)
    with backend.open(location, True) as store:
        first = store.record("q", GOOD, T0 + 2 * hour, 100)
        second = store.record("r", EASY, T0)  # earlier than the first: written out of time order
        store.record_cram("q", HARD, T0 + hour, 7)
        store.enroll("d1", T0 + hour)
        merged = store.merge(
            [LogEntry("q", GOOD, T0 + 2 * hour, 100), LogEntry("q", AGAIN, T0 + hour, None)],  # one present
            [LogEntry("q", HARD, T0 + hour, None), LogEntry("q", EASY, T0, 5)],
            {"d1": T0, "d2": T0 + hour},
        )
        assert merged == Merged(answers=1, practice=2, decks=1, skipped=1)
        log = [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.reviews()]
        assert log == [("q", AGAIN, T0 + hour, None), ("q", GOOD, T0 + 2 * hour, 100), ("r", EASY, T0, None)]
        assert store.reviews()[2] == second  # untouched item: its row as it was
        assert [answer.state_before for answer in store.answers()] == [State.NEW, State.LEARNING, State.NEW]
        assert first.due == T0 + 2 * hour + timedelta(
            minutes=10
        )  # q's GOOD was its first answer, now its second
        assert [(r.rating, r.reviewed_at) for r in store.cram_reviews()] == [
            (EASY, T0),
            (HARD, T0 + hour),
            (HARD, T0 + hour),
        ]  # a practice answer with another duration is another answer
        assert store.enrolled() == {"d1": T0, "d2": T0 + hour}  # a deck keeps its earliest date
        assert_schedule_is_the_log_replayed(store)
        assert store.merge([LogEntry("q", AGAIN, T0 + hour, None)], [], {}) == Merged(0, 0, 0, 1)
    with backend.open(location.with_name("in-order.sqlite3"), True) as in_order:
        in_order.record("q", AGAIN, T0 + hour)
        in_order.record("q", GOOD, T0 + 2 * hour, 100)
        in_order.record("r", EASY, T0)
        with backend.open(location, False) as reopened:
            assert reopened.cards() == in_order.cards()
            assert reopened.reviews("q") == in_order.reviews("q")


def test_a_nudge_is_logged_apart_and_changes_no_card(backend: Backend, location: Path) -> None:
    day = timedelta(days=1)
    with backend.open(location, True) as store:
        review = store.record("q", GOOD, T0)
        cards = store.cards()
        kept = store.nudge(Nudge("q", T0 + timedelta(hours=1, microseconds=1500), T0 + day, "a mistake"))
        store.nudge(Nudge("new", T0 + 2 * day, T0 + 3 * day, "another mistake"))
        assert kept == Nudge("q", T0 + timedelta(hours=1, milliseconds=1), T0 + day, "a mistake")
        assert store.cards() == cards and store.reviews() == [review]  # not a review
        assert [nudge.item_id for nudge in store.nudges()] == ["q", "new"]
        assert store.nudges(T0 + 2 * day) == [Nudge("new", T0 + 2 * day, T0 + 3 * day, "another mistake")]
        assert store.nudges(end=T0 + 2 * day) == [kept]  # half-open
    with backend.open(location, False) as reopened:
        assert [nudge.reason for nudge in reopened.nudges()] == ["a mistake", "another mistake"]


def test_due_by_reports_the_nudges_not_answered_since(store: Storage) -> None:
    day = timedelta(days=1)
    store.record("q", EASY, T0)
    later = store.card("q")
    assert later is not None and later.due > T0 + 3 * day
    store.nudge(Nudge("q", T0 + timedelta(hours=1), T0 + 2 * day, "a mistake"))
    store.nudge(Nudge("q", T0 + timedelta(hours=2), T0 + 3 * day, "again"))  # the earliest counts
    store.nudge(Nudge("fresh", T0, T0 + day, "a mistake"))
    store.nudge(Nudge("old", T0, T0 + day, "answered since"))
    store.record("old", EASY, T0 + timedelta(hours=1))
    assert store.due_by(T0 + 2 * day) == DueItems(
        {}, frozenset({"q", "old"}), {"q": T0 + 2 * day, "fresh": T0 + day}
    )
    assert store.due_by(T0 + day).nudged == {"fresh": T0 + day}  # due by then only
    assert store.card("q") == later  # the card's own due date stays
    store.record("q", GOOD, T0 + 2 * day)  # answered: no longer brought forward
    store.record_cram("fresh", GOOD, T0 + 2 * day)  # practice answers nothing
    assert store.due_by(T0 + 2 * day).nudged == {"fresh": T0 + day}


@pytest.mark.parametrize(
    ("nudge", "error", "message"),
    [
        (Nudge("", T0, T0, "why"), ValueError, "item_id must be a non-empty str, got ''"),
        (Nudge("q", T0, T0, ""), ValueError, "reason must be a non-empty str, got ''"),
        (
            Nudge("q", T0, T0, "two\nlines"),
            ValueError,
            "reason must be at most 200 characters on one line, got 'two\\nlines'",
        ),
        (
            Nudge("q", T0, T0, "x" * 201),
            ValueError,
            f"reason must be at most 200 characters on one line, got {'x' * 60!r}",
        ),
        (Nudge("q", T0.replace(tzinfo=None), T0, "why"), ValueError, "nudged_at must be timezone-aware"),
        ("q", TypeError, "expected a Nudge, got str"),
    ],
)
def test_a_nudge_a_store_cannot_hold_is_refused_and_nothing_is_written(
    store: Storage, nudge: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        store.nudge(nudge)
    assert str(raised.value).startswith(message)
    assert store.nudges() == []


def test_a_merge_adds_the_nudges_not_present(store: Storage) -> None:
    day = timedelta(days=1)
    kept = store.nudge(Nudge("q", T0, T0 + day, "a mistake"))
    other = Nudge("r", T0 + day, T0 + 2 * day, "a mistake")
    merged = store.merge([], [], {}, [kept, other, other])
    assert merged == Merged(0, 0, 0, 0, nudges=1)
    assert store.nudges() == [kept, other]
    assert store.merge([], [], {}, [other]).nudges == 0


def test_a_prediction_is_logged_apart_and_changes_no_card(backend: Backend, location: Path) -> None:
    hour = timedelta(hours=1)
    with backend.open(location, True) as store:
        review = store.record("q", GOOD, T0)
        cards, due = store.cards(), store.due_by(T0 + 400 * hour)
        kept = store.predict(PredictionEvent("q", T0 + timedelta(hours=1, microseconds=1500), "[1, 2]", True))
        store.predict(PredictionEvent("q", T0 + 2 * hour, "0.25", False))
        store.predict(PredictionEvent("new", T0 + 3 * hour, "", None))  # skipped
        assert kept == PredictionEvent("q", T0 + timedelta(hours=1, milliseconds=1), "[1, 2]", True)
        assert store.cards() == cards and store.reviews() == [review]  # not a review
        assert store.due_by(T0 + 400 * hour) == due and store.nudges() == []  # nor a nudge
        assert [p.answer for p in store.predictions()] == ["[1, 2]", "0.25", ""]
        assert store.predictions(T0 + 2 * hour) == [
            PredictionEvent("q", T0 + 2 * hour, "0.25", False),
            PredictionEvent("new", T0 + 3 * hour, "", None),
        ]
        assert store.predictions(end=T0 + 2 * hour) == [kept]  # half-open
        assert store.predictions(T0 + 2 * hour, T0 + 3 * hour) == [
            PredictionEvent("q", T0 + 2 * hour, "0.25", False)
        ]
    with backend.open(location, False) as reopened:
        assert [(p.item_id, p.right) for p in reopened.predictions()] == [
            ("q", True),
            ("q", False),
            ("new", None),
        ]


@pytest.mark.parametrize(
    ("prediction", "error", "message"),
    [
        (PredictionEvent("", T0, "1", True), ValueError, "item_id must be a non-empty str, got ''"),
        (
            PredictionEvent("q", T0, "two\nlines", True),
            ValueError,
            "answer must be at most 200 characters on one line, got 'two\\nlines'",
        ),
        (
            PredictionEvent("q", T0, "x" * 201, True),
            ValueError,
            f"answer must be at most 200 characters on one line, got {'x' * 60!r}",
        ),
        (
            PredictionEvent("q", T0, "a\ud800", False),
            ValueError,
            "answer must be Unicode text: it holds a lone surrogate, U+D800 (at character 2)",
        ),
        (
            PredictionEvent("q", T0, None, None),
            ValueError,
            'answer must be a str ("" when skipped), got None',
        ),  # type: ignore[arg-type]
        (PredictionEvent("q", T0, "1", 1), ValueError, "right must be True, False or None (skipped), got 1"),  # type: ignore[arg-type]
        (PredictionEvent("q", T0, "", 0), ValueError, "right must be True, False or None (skipped), got 0"),  # type: ignore[arg-type]
        (
            PredictionEvent("q", T0.replace(tzinfo=None), "1", True),
            ValueError,
            "predicted_at must be timezone-aware",
        ),
        (
            PredictionEvent("q", datetime(9000, 1, 1, tzinfo=timezone.utc), "1", True),
            ValueError,
            "predicted_at must be a time from 1970 to 8999 (UTC), got 9000-01-01T00:00:00+00:00",
        ),
        ("q", TypeError, "expected a PredictionEvent, got str"),
        (Nudge("q", T0, T0, "why"), TypeError, "expected a PredictionEvent, got Nudge"),
    ],
)
def test_a_prediction_a_store_cannot_hold_is_refused_and_nothing_is_written(
    store: Storage, prediction: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        store.predict(prediction)
    assert str(raised.value).startswith(message)
    with pytest.raises(error):  # nor merged: the whole merge is refused
        store.merge([LogEntry("q", GOOD, T0, None)], [], {}, predictions=[prediction])
    assert store.predictions() == [] and store.reviews() == []


def test_a_merge_adds_the_predictions_not_present(store: Storage) -> None:
    hour = timedelta(hours=1)
    kept = store.predict(PredictionEvent("q", T0, "1", True))
    other = PredictionEvent("q", T0 + hour, "2", False)
    skipped = PredictionEvent("r", T0 + hour, "", None)
    nudge = Nudge("q", T0, T0 + 24 * hour, "a mistake")
    # identity is every field, to the millisecond: another answer, verdict or time is another prediction
    again = PredictionEvent("q", T0 + timedelta(microseconds=999), "1", True)
    merged = store.merge(
        [LogEntry("q", GOOD, T0 + 2 * hour, None)], [], {}, [nudge], [again, other, other, skipped]
    )
    assert merged == Merged(1, 0, 0, 0, nudges=1, predictions=2)
    assert store.predictions() == [kept, other, skipped]
    assert store.merge([], [], {}, predictions=[other, skipped]).predictions == 0
    changed = [
        PredictionEvent("q", T0, "1", False),
        PredictionEvent("q", T0, "1", None),
        PredictionEvent("q", T0, "1 ", True),
        PredictionEvent("q", T0 + timedelta(milliseconds=1), "1", True),
        PredictionEvent("s", T0, "1", True),
    ]
    assert store.merge([], [], {}, predictions=changed) == Merged(0, 0, 0, 0, predictions=5)
    assert store.predictions() == [kept, other, skipped, *changed]


def test_a_nudged_item_is_served_from_its_due_time(store: Storage) -> None:
    day = timedelta(days=1)
    items = [Item("a", "d1"), Item("b", "d1"), Item("c", "d2"), Item("r", "d1")]
    store.enroll("d1", T0)
    review = store.record("r", EASY, T0)
    assert review.due > T0 + 3 * day
    store.nudge(Nudge("c", T0 + timedelta(hours=1), T0 + day, "a mistake"))  # d2 is not enrolled
    store.nudge(Nudge("r", T0 + timedelta(hours=1), T0 + day, "a mistake"))
    noon = T0 + timedelta(hours=12)
    assert [item.id for item in due_queue(store, items, noon, UTC)] == ["a", "b"]
    next_day = T0 + day + timedelta(hours=5)
    assert [item.id for item in due_queue(store, items, next_day, UTC)] == ["r", "c", "a", "b"]
    limited = due_queue(store, items, next_day, UTC, Limits(new_per_day=1))
    assert [item.id for item in limited] == ["r", "c"]  # the nudged new item first, within the limit


def test_due_items_come_earliest_first(store: Storage) -> None:
    # answered in one order, due in another: Easy pushes "a" furthest, Again keeps "c" soonest
    for item_id, rating in (("a", Rating.EASY), ("b", Rating.GOOD), ("c", Rating.AGAIN), ("d", Rating.HARD)):
        store.record(item_id, rating, T0)
    due = store.due_by(T0 + timedelta(days=400)).due
    assert list(due) == sorted(due, key=lambda item_id: (due[item_id], item_id)) == ["c", "d", "b", "a"]
    assert [due[item_id] for item_id in due] == sorted(due.values())


def test_enrolled_decks_keep_their_first_date(store: Storage) -> None:
    store.enroll("02", T0 + timedelta(days=1))
    store.enroll("01", T0)
    store.enroll("02", T0 + timedelta(days=5))
    assert store.enrolled() == {"01": T0, "02": T0 + timedelta(days=1)}


def test_a_snapshot_sees_one_state_and_refuses_writes(backend: Backend, location: Path) -> None:
    with backend.open(location, True) as mine, backend.open(location, True) as other:
        mine.record("a", GOOD, T0)
        with mine.snapshot() as snapshot:
            assert snapshot.review_counts() == {"a": 1}
            other.record("b", GOOD, T0)  # another kernel writes meanwhile
            assert snapshot.review_counts() == {"a": 1}
            assert sorted(snapshot.due_times()) == ["a"]
            with pytest.raises(RuntimeError):
                snapshot.record("c", GOOD, T0)
        assert mine.review_counts() == {"a": 1, "b": 1}


def test_no_write_is_lost_under_concurrency(backend: Backend, location: Path) -> None:
    # Two threads share one handle (Jupyter calls widget callbacks on another thread than the cell that
    # opened the store), two more each have their own (other kernels); all write the same items.
    shared = backend.open(location, True)
    handles = [shared, shared, backend.open(location, True), backend.open(location, True)]
    start = threading.Barrier(len(handles))
    failures: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            start.wait(timeout=10)
            for index in range(25):
                at = T0 + timedelta(days=worker * 1000, minutes=index)
                handles[worker].record(
                    f"q{index % 5}", Rating(1 + (index + worker) % 4), at, duration_ms=worker
                )
        except BaseException as error:  # reported below, on the test's thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(len(handles))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for handle in handles[1:]:
        handle.close()
    assert failures == []
    with backend.open(location, False) as store:
        reviews = store.reviews()
        assert len(reviews) == 100
        assert Counter(review.duration_ms for review in reviews) == {0: 25, 1: 25, 2: 25, 3: 25}
        assert store.review_counts() == {f"q{index}": 20 for index in range(5)}
        assert sum(card.reps for card in store.cards().values()) == 100
        assert_schedule_is_the_log_replayed(store)


def test_a_missing_store_is_not_found(backend: Backend, location: Path) -> None:
    with pytest.raises(StoreNotFoundError) as info:
        backend.open(location, False)
    assert isinstance(info.value, StoreError)


def test_a_corrupt_store_is_reported_as_such(backend: Backend, location: Path) -> None:
    backend.corrupt(location)
    for create in (True, False):
        with pytest.raises(StoreCorruptError) as info:
            backend.open(location, create)
        assert isinstance(info.value, StoreError)


def test_a_store_of_a_newer_version_is_refused(backend: Backend, location: Path) -> None:
    with backend.open(location, True) as store:
        store.record("q", GOOD, T0)
    backend.make_newer(location)
    with pytest.raises(StoreVersionError) as info:
        backend.open(location, False)
    assert isinstance(info.value, StoreError)


def test_a_locked_store_refuses_writes_and_still_reads(backend: Backend, location: Path) -> None:
    with backend.open(location, True) as store:
        first = store.record("q", GOOD, T0)
        with backend.hold_lock(location):
            assert store.reviews() == [first]
            with pytest.raises(StoreLockedError) as info:
                store.record("q", GOOD, T0 + timedelta(minutes=10))
            assert isinstance(info.value, StoreError)
            with pytest.raises(StoreLockedError):
                store.enroll("01", T0)
        assert store.reviews() == [first]  # the refused write left nothing
        store.record("q", GOOD, T0 + timedelta(minutes=10))  # usable again once the lock is gone
        assert len(store.reviews()) == 2


def test_settings_are_kept_and_change_the_schedule_from_the_next_answer(
    backend: Backend, location: Path
) -> None:
    with backend.open(location, True) as store:
        assert store.settings() == Settings()
        at = T0
        for rating in (GOOD, GOOD, AGAIN, GOOD):
            at = store.record("q", rating, at).due
        due = store.due_times()
        fitted = Settings(0.85, (0.3, 1.5, 2.5, 9.0, *DEFAULT_PARAMETERS[4:]), T0, 600)
        store.save_settings(fitted, at)
        assert store.settings() == fitted
        assert (store.memory.desired_retention, store.memory.parameters) == (0.85, fitted.parameters)
        assert store.due_times() == due  # the log's due dates are kept
        assert_schedule_is_the_log_replayed(store)  # with the new memory
        with pytest.raises(ValueError, match=r"^desired_retention must be at least 0\.70"):
            store.save_settings(Settings(0.5), at)
        assert store.settings() == fitted
    with backend.open(location, False) as reopened:
        assert reopened.settings() == fitted


END_OF_TIME = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
OUT_OF_BOUNDS = [  # (what is written, the ValueError's message)
    (LogEntry("q\x00r", GOOD, T0, None), "item_id must not contain U+0000 (at character 2)"),
    (
        LogEntry("q\ud800", GOOD, T0, None),
        "item_id must be Unicode text: it holds a lone surrogate, U+D800 (at character 2)",
    ),
    (LogEntry("é" * 501, GOOD, T0, None), "item_id must be at most 1000 bytes long in UTF-8 (it has 1002)"),
    (LogEntry("q", GOOD, T0, 2**63), f"duration_ms must be at most {2**63 - 1}, got {2**63}"),
    (
        LogEntry("q", GOOD, END_OF_TIME, None),
        "at must be a time from 1970 to 8999 (UTC), got 9999-12-31T23:59:59.999000+00:00",
    ),
    (
        LogEntry("q", GOOD, datetime(9000, 1, 1, tzinfo=UTC), None),
        "at must be a time from 1970 to 8999 (UTC), got 9000-01-01T00:00:00+00:00",
    ),
    (
        LogEntry("q", GOOD, datetime(1969, 12, 31, 23, 59, tzinfo=UTC), None),
        "at must be a time from 1970 to 8999 (UTC), got 1969-12-31T23:59:00+00:00",
    ),
    (
        LogEntry("q", GOOD, datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=5))), None),
        "at must be a time from 1970 to 8999 (UTC), got 0001-01-01T01:00:00+05:00",
    ),
]


@pytest.mark.parametrize(("entry", "message"), OUT_OF_BOUNDS)
def test_every_write_refuses_what_the_store_cannot_hold(
    store: Storage, entry: LogEntry, message: str
) -> None:
    """Issue 20, item 19: an answer, a practice answer, a merge or an enrolment that the store (SQLite's
    INTEGER and TEXT, PostgreSQL's BIGINT and TEXT) or fsrs (a due date after the answer) cannot hold is a
    ValueError with the field's name, and nothing is written."""
    answer = (entry.item_id, entry.rating, entry.reviewed_at, entry.duration_ms)
    writes: list[Callable[[], object]] = [
        lambda: store.record(*answer),
        lambda: store.record_cram(*answer),
        lambda: store.merge([entry], [], {}),
        lambda: store.merge([], [entry], {}),
    ]
    if entry.duration_ms is None:  # an enrolment: the item's id as a deck's, its time as the deck's
        deck_message = message.replace("item_id", "deck")
        writes += [lambda: store.enroll(entry.item_id, entry.reviewed_at)]
        writes += [lambda: store.merge([], [], {entry.item_id: entry.reviewed_at})]
    else:
        deck_message = message
    for number, write in enumerate(writes):
        with pytest.raises(ValueError) as refused:
            write()
        assert str(refused.value) == (deck_message if number >= 4 else message)
    assert (store.reviews(), store.cram_reviews(), store.enrolled()) == ([], [], {})


def test_the_last_time_a_store_holds_is_held(store: Storage) -> None:
    last = datetime(8999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)  # its due date, 100 years on, too
    review = store.record("q", EASY, last)
    store.record_cram("q", GOOD, last, 2**63 - 1)
    store.enroll("é" * 500, datetime(1970, 1, 1, tzinfo=UTC))
    assert store.reviews() == [review]
    assert [r.duration_ms for r in store.cram_reviews()] == [2**63 - 1]
    assert store.enrolled() == {"é" * 500: datetime(1970, 1, 1, tzinfo=UTC)}
