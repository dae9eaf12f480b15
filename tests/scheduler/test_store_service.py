"""A class service's pool (``ClassPool``) and the learners' stores on it (``PostgresStore.serving``): every
transaction runs as one learner (``SET LOCAL ROLE``), so the server's row-level security keeps each to their
own rows, and the server connections stay as few as the pool's size. Its contract is in
test_store_contract.py (the "service" backend); here, what only the service has: whom it may act for, that
nothing of a learner stays on a connection, and that a class shares a few connections.

Against a real PostgreSQL (the session's ``postgres_server``); each test gets its own database.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password
from store_helpers import GOOD

from scheduler import Nudge, PredictionEvent, StoreAccessError

psycopg = pytest.importorskip("psycopg")
postgres = pytest.importorskip("scheduler.postgres")

SERVICE = "class_service"


class Klass:
    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.name = server.create_database()
        self.admin_url = server.admin_url(self.name)
        postgres.install(self.admin_url)
        for learner in ("alice", "bob"):
            postgres.add_learner(self.admin_url, learner, password=learner_password(learner))
        postgres.add_instructor(self.admin_url, "teacher", password=learner_password("teacher"))
        postgres.add_service(self.admin_url, SERVICE, password=learner_password(SERVICE))

    def url(self, role: str) -> str:
        return self.server.url(role, learner_password(role), self.name)

    def connect(self, role: str) -> Any:
        return psycopg.connect(self.url(role), autocommit=True)


@pytest.fixture
def klass(postgres_server: PostgresServer) -> Klass:
    return Klass(postgres_server)


@pytest.fixture
def pool(klass: Klass) -> Iterator[Any]:
    with postgres.ClassPool.open(klass.url(SERVICE), min_size=1, max_size=3) as opened:
        yield opened


def test_each_learners_calls_see_only_their_rows(klass: Klass, pool: Any) -> None:
    alice, bob = postgres.PostgresStore.serving(pool, "alice"), postgres.PostgresStore.serving(pool, "bob")
    alice.record("a1", GOOD, T0)
    alice.nudge(Nudge("a2", T0, T0 + timedelta(days=1), "alice's mistake"))
    bob.record("b1", GOOD, T0)
    assert [r.item_id for r in alice.reviews()] == ["a1"] and [r.item_id for r in bob.reviews()] == ["b1"]
    assert list(alice.cards()) == ["a1"] and list(bob.cards()) == ["b1"]
    assert [n.item_id for n in alice.nudges()] == ["a2"] and bob.nudges() == []
    kept = alice.predict(PredictionEvent("a3", T0, "[1, 2]", False))
    assert bob.merge([], [], {}, predictions=[kept]).predictions == 1  # bob's own, as alice's is not his
    assert alice.predictions() == [kept] and bob.predictions() == [kept]
    assert alice.merge([], [], {}, predictions=[kept]).predictions == 0
    with klass.connect("teacher") as teacher:  # what the server holds: whose each row is
        rows = teacher.execute("SELECT learner, item_id FROM course.review_log ORDER BY 1").fetchall()
    assert rows == [("alice", "a1"), ("bob", "b1")]


@pytest.mark.parametrize("role", ["teacher", "course_instructor", "course_learner", "postgres", "nobody"])
def test_the_service_acts_for_learners_only(pool: Any, role: str) -> None:
    with pytest.raises(StoreAccessError) as raised:
        postgres.PostgresStore.serving(pool, role)
    assert str(raised.value).startswith(f"{pool.location} as {role} refused this access (")


def test_as_itself_the_service_reads_no_row_and_keeps_no_learner_on_a_connection(
    klass: Klass, pool: Any
) -> None:
    alice = postgres.PostgresStore.serving(pool, "alice")
    alice.record("a1", GOOD, T0)
    with pytest.raises(ValueError):
        alice.record("", GOOD, T0)  # refused before the server: no transaction left open
    for _ in range(3):  # every connection of the pool, as it was lent back
        with pool.connection() as connection:
            assert connection.execute("SELECT current_user, session_user").fetchone() == (SERVICE, SERVICE)
            assert connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table"):
                connection.execute("SELECT * FROM course.review_log")
    with klass.connect(SERVICE) as service:
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match='permission denied to set role "teacher"'
        ):
            service.execute("SET ROLE teacher")
        service.execute("SET ROLE alice")  # what the service is for: a learner, for a transaction
        assert service.execute("SELECT count(*) FROM course.review_log").fetchone() == (1,)


def test_a_learner_given_more_than_a_learner_has_is_not_served(klass: Klass, pool: Any) -> None:
    mallory = f"mallory_{klass.name}"  # roles are the cluster's: a name of this test's own
    postgres.add_learner(klass.admin_url, mallory)
    postgres.PostgresStore.serving(pool, mallory).close()
    with psycopg.connect(klass.admin_url, autocommit=True) as admin:
        admin.execute(
            f"GRANT course_instructor TO {mallory}"
        )  # by hand: they would read every learner's rows
    with pytest.raises(StoreAccessError, match=f"'{mallory}' is not a learner of this class"):
        postgres.PostgresStore.serving(pool, mallory)


def test_a_learner_cannot_act_as_another_nor_as_the_service(klass: Klass) -> None:
    with klass.connect("bob") as bob:
        for role in ("alice", SERVICE, "course_service"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied to set role"):
                bob.execute(f'SET ROLE "{role}"')


def test_a_role_that_is_no_service_cannot_open_a_pool(klass: Klass) -> None:
    with pytest.raises(StoreAccessError, match=r"this role is not a class service \(not in course_service\)"):
        postgres.ClassPool.open(klass.url("alice"))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("alice", "cannot make 'alice' a service: the role exists and is"),
        ("course_service", "cannot make 'course_service' a service: it is the course's group of services"),
        ("course_learner", "cannot make 'course_learner' a service: it is the course's group of learners"),
    ],
)
def test_add_service_refuses_roles_that_are_not_services(klass: Klass, name: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        postgres.add_service(klass.admin_url, name)
    assert str(raised.value).startswith(message)


def test_a_learner_added_after_the_service_is_served_too(klass: Klass, pool: Any) -> None:
    postgres.add_learner(klass.admin_url, "carol", password=learner_password("carol"))
    postgres.add_learner(klass.admin_url, "carol")  # again: still a learner of the course, still served
    carol = postgres.PostgresStore.serving(pool, "carol")
    carol.record("c1", GOOD, T0)
    assert [r.item_id for r in carol.reviews()] == ["c1"]


def test_forty_learners_answering_at_once_share_three_connections(klass: Klass, pool: Any) -> None:
    names = [f"learner{k:02d}" for k in range(40)]
    for name in names:
        postgres.add_learner(klass.admin_url, name)  # no password: a learner of the service logs in nowhere
    stores = {name: postgres.PostgresStore.serving(pool, name) for name in names}
    failures: list[BaseException] = []

    def answer(name: str) -> None:
        try:
            for k in range(5):
                stores[name].record(f"q{k}", GOOD, T0 + timedelta(minutes=k))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=answer, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert {name: len(store.reviews()) for name, store in stores.items()} == dict.fromkeys(names, 5)
    assert pool.peak <= 3 and pool.stats()["pool_max"] == 3
    with psycopg.connect(klass.admin_url, autocommit=True) as admin:
        (connections,) = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (SERVICE,)
        ).fetchone()
    assert 1 <= connections <= 3
