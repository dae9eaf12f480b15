"""What is particular to the PostgreSQL store (its contract is in test_store_contract.py): installing and
migrating the schema, the roles, row-level security enforced by the server, and a server that goes away.

Runs against a real PostgreSQL started by the session's ``postgres_server`` fixture (password
authentication, a unix socket only); each test gets its own database. Skipped without PostgreSQL's binaries,
except on CI.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from fixed_clock import T0, UTC
from postgres_server import ADVICE, PostgresServer, learner_password, require_postgres
from store_helpers import AGAIN, EASY, GOOD, assert_schedule_is_the_log_replayed, child_env, steps_memory

from scheduler import (
    Nudge,
    PredictionEvent,
    Settings,
    StoreAccessError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
    StoreUnavailableError,
    StoreVersionError,
)
from scheduler._bounds import MAX_PREDICTION_ANSWER
from scheduler._time import from_ms, to_ms
from scheduler.postgres._schema import MIGRATIONS

psycopg = pytest.importorskip("psycopg")
postgres = pytest.importorskip("scheduler.postgres")


@dataclass
class Database:
    server: PostgresServer
    name: str

    @property
    def admin_url(self) -> str:
        return self.server.admin_url(self.name)

    def url(self, role: str, password: str | None = None) -> str:
        return self.server.url(role, learner_password(role) if password is None else password, self.name)

    def add_learner(self, name: str) -> None:
        postgres.add_learner(self.admin_url, name, password=learner_password(name))

    def open(self, role: str, **options: Any) -> Any:
        return postgres.PostgresStore.open(self.url(role), memory=steps_memory(), **options)

    def admin(self) -> psycopg.Connection:  # type: ignore[type-arg]
        return psycopg.connect(self.admin_url, autocommit=True)

    def connect(self, role: str) -> psycopg.Connection:  # type: ignore[type-arg]
        return psycopg.connect(self.url(role), autocommit=True)


@pytest.fixture
def empty(postgres_server: PostgresServer) -> Database:
    """A new database with nothing installed."""
    return Database(postgres_server, postgres_server.create_database())


@pytest.fixture
def class_db(empty: Database) -> Database:
    """A new database with the course installed, learners ``alice`` and ``bob``, instructor ``teacher``."""
    postgres.install(empty.admin_url)
    empty.add_learner("alice")
    empty.add_learner("bob")
    postgres.add_instructor(empty.admin_url, "teacher", password=learner_password("teacher"))
    return empty


def _policies(database: Database) -> list[tuple[str, str, str]]:
    with database.admin() as admin:
        return admin.execute(
            "SELECT tablename, policyname, cmd FROM pg_policies WHERE schemaname = 'course' ORDER BY 1, 2"
        ).fetchall()


def test_installing_twice_changes_nothing(class_db: Database) -> None:
    with class_db.open("alice") as store:
        first = store.record("q", GOOD, T0)
    policies = _policies(class_db)
    assert postgres.install(class_db.admin_url) == postgres.SCHEMA_VERSION == 7
    class_db.add_learner("alice")  # adding a learner again: also nothing new
    assert _policies(class_db) == policies
    assert {(table, name) for table, name, _ in policies} == {
        (table, name)
        for table in (
            "cards",
            "cram_log",
            "decks",
            "nudge_log",
            "prediction_log",
            "review_log",
            "settings",
            "write_lock",
        )
        for name in ("instructor_reads_all", "learner_own_rows")
    } | {
        ("live_answer", "functions_remove"),
        ("live_answer", "instructor_reads_all"),
        ("live_answer", "learner_answers"),
        ("live_answer", "learner_changes"),
        ("live_answer", "learner_reads_own"),
        ("live_member", "instructor_reads_all"),
        ("live_member", "instructor_removes"),
        ("live_member", "learner_joins"),
        ("live_member", "learner_reads_own"),
        ("live_session", "class_reads"),
        ("live_session", "functions_read"),
        ("live_session", "instructor_runs"),
        ("live_session", "instructor_starts"),
        ("row_count", "instructor_reads_all"),
        ("row_count", "learner_reads_own"),
    }
    with class_db.admin() as admin:
        forced = admin.execute(
            "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
            "WHERE relnamespace = 'course'::regnamespace AND relkind = 'r' ORDER BY 1"
        ).fetchall()
    assert forced == [
        ("cards", True, True),
        ("class_limit", False, False),
        ("course_schema", False, False),
        ("cram_log", True, True),
        ("decks", True, True),
        ("live_answer", True, True),
        ("live_member", True, True),
        ("live_session", True, True),
        ("nudge_log", True, True),
        ("prediction_log", True, True),
        ("review_log", True, True),
        ("row_count", True, False),  # not forced: the counting function, its owner's, sees every count
        ("settings", True, True),
        ("write_lock", True, True),
    ]
    assert postgres.schema_version(class_db.admin_url) == 7
    with class_db.open("alice") as store:
        assert store.reviews() == [first]


def test_migrations_are_applied_in_order_and_versioned(empty: Database) -> None:
    assert postgres.schema_version(empty.admin_url) is None
    assert postgres.install(empty.admin_url, migrations=MIGRATIONS[:1]) == 1
    empty.add_learner("alice")
    with pytest.raises(postgres.SchemaTooOldError, match=r"older schema \(1; this version uses 7\)") as info:
        empty.open("alice")
    assert isinstance(info.value, StoreError)
    assert postgres.install(empty.admin_url) == 7
    with empty.open("alice") as store:
        store.save_settings(Settings(0.85), T0)  # the second migration's table
        assert store.settings() == Settings(0.85)


def test_a_version_6_database_gains_the_prediction_log_keeping_every_row_and_count(empty: Database) -> None:
    """Version 7 adds course.prediction_log: the learners' own rows (row-level security forced), counted
    towards the row limit; what was there stays, counts included."""
    assert postgres.install(empty.admin_url, migrations=MIGRATIONS[:6]) == 6
    for learner in ("alice", "bob"):
        empty.add_learner(learner)
    with empty.connect("alice") as alice:
        alice.execute(
            "INSERT INTO course.review_log (seq, item_id, rating, reviewed_at, due, state_before) "
            "VALUES (1, 'q', 3, 1000, 90000000, 0)"
        )
        alice.execute(
            "INSERT INTO course.nudge_log (item_id, nudged_at, due, reason) VALUES ('q', 1000, 2000, 'why')"
        )
        assert alice.execute("SELECT to_regclass('course.prediction_log')").fetchone() == (None,)
    with pytest.raises(postgres.SchemaTooOldError, match=r"older schema \(6; this version uses 7\)"):
        empty.open("alice")
    with empty.admin() as admin:
        before = {
            table: admin.execute(f"SELECT * FROM course.{table} ORDER BY 1").fetchall()
            for table in ("review_log", "nudge_log", "row_count")
        }
    assert before["row_count"] == [("alice", 2)]
    assert postgres.install(empty.admin_url) == postgres.SCHEMA_VERSION == 7
    with empty.admin() as admin:
        assert {
            table: admin.execute(f"SELECT * FROM course.{table} ORDER BY 1").fetchall() for table in before
        } == before
    with empty.open("alice") as alice:
        assert [review.item_id for review in alice.reviews()] == ["q"]
        assert alice.nudges() == [Nudge("q", from_ms(1000), from_ms(2000), "why")]
        kept = alice.predict(PredictionEvent("q", T0, "[1, 2]", True))
        assert (
            alice.merge([], [], {}, predictions=[kept, PredictionEvent("r", T0, "", None)]).predictions == 1
        )
    with empty.open("bob") as bob:
        assert bob.predictions() == []
    with empty.admin() as admin:
        assert admin.execute("SELECT learner, kept FROM course.row_count").fetchall() == [("alice", 4)]
        rows = admin.execute(
            'SELECT learner, item_id, predicted_at, answer, "right" FROM course.prediction_log ORDER BY id'
        ).fetchall()
    assert rows == [("alice", "q", to_ms(T0), "[1, 2]", True), ("alice", "r", to_ms(T0), "", None)]
    with empty.admin() as admin, pytest.raises(psycopg.errors.CheckViolation, match="prediction_log"):
        admin.execute(
            "INSERT INTO course.prediction_log (learner, item_id, predicted_at, answer) "
            f"VALUES ('alice', 'q', 0, repeat('x', {MAX_PREDICTION_ANSWER + 1}))"
        )


def test_a_database_without_the_course_is_not_found_with_a_hint(empty: Database) -> None:
    empty.server.ensure_role("alice")
    for create in (True, False):
        with pytest.raises(StoreNotFoundError, match=r"install\(admin_url\)") as info:
            empty.open("alice", create=create)
        assert "pw-alice" not in str(info.value)  # the password is never shown
    with pytest.raises(StoreNotFoundError, match="no progress database at"):
        postgres.PostgresStore.open(empty.server.url("alice", learner_password("alice"), "no_such_db"))


def test_a_newer_schema_is_refused_by_learners_and_by_install(class_db: Database) -> None:
    with class_db.admin() as admin:
        admin.execute("UPDATE course.course_schema SET version = 8")
    with pytest.raises(StoreVersionError, match=r"schema 8, this version knows up to 7"):
        class_db.open("alice")
    with pytest.raises(StoreVersionError):
        postgres.install(class_db.admin_url)


def test_a_course_schema_that_is_not_ours_is_corrupt_and_left_alone(empty: Database) -> None:
    with empty.admin() as admin:
        admin.execute("CREATE SCHEMA course")
        admin.execute("CREATE TABLE course.review_log (x int)")
    with pytest.raises(StoreCorruptError, match="another program"):
        postgres.install(empty.admin_url)
    with empty.admin() as admin:
        assert admin.execute("SELECT to_regclass('course.course_schema')").fetchone() == (None,)


def test_a_missing_table_is_corrupt(class_db: Database) -> None:
    with class_db.admin() as admin:
        admin.execute("DROP TABLE course.cards")
    with pytest.raises(StoreCorruptError, match=r'relation "course\.cards" does not exist'):
        class_db.open("alice")


def test_the_learner_is_the_role_logged_in(class_db: Database) -> None:
    with class_db.open("alice", learner="alice") as store:
        assert store.learner == "alice"
    with pytest.raises(StoreAccessError, match="logs in as 'alice', not as the learner 'bob'"):
        class_db.open("alice", learner="bob")
    with pytest.raises(StoreAccessError, match="password authentication failed"):
        postgres.PostgresStore.open(class_db.url("alice", password="wrong"))


_LEARNER_TABLES = ("review_log", "cram_log", "cards", "decks", "settings", "nudge_log", "prediction_log")


def _fill(database: Database, learner: str, item: str) -> None:
    with database.open(learner) as store:
        store.record(item, GOOD, T0)
        store.record(item, AGAIN, T0 + timedelta(minutes=10))
        store.record_cram(item, EASY, T0)
        store.nudge(Nudge(item, T0, T0 + timedelta(days=1), f"a mistake of {learner}"))
        store.predict(PredictionEvent(item, T0, f"a guess of {learner}", False))
        store.enroll(f"deck-{learner}", T0)
        store.save_settings(Settings(0.8), T0)


def _rows(database: Database) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, read as the admin (a superuser: not held by the policies)."""
    with database.admin() as admin:
        return {
            table: admin.execute(f"SELECT * FROM course.{table} ORDER BY 1, 2, 3").fetchall()
            for table in (
                "review_log",
                "cram_log",
                "cards",
                "decks",
                "settings",
                "nudge_log",
                "prediction_log",
            )
        }


def test_a_learner_sees_and_changes_only_their_own_rows_through_the_store(class_db: Database) -> None:
    _fill(class_db, "bob", "b1")
    with class_db.open("alice") as alice:
        assert (alice.reviews(), alice.cards(), alice.cram_reviews(), alice.enrolled()) == ([], {}, [], {})
        assert alice.settings() == Settings() and alice.answers() == [] and alice.review_counts() == {}
        assert alice.predictions() == [] and alice.nudges() == []
        before = _rows(class_db)
        alice.record("a1", GOOD, T0)
        alice.predict(PredictionEvent("b1", T0, "alice's guess", True))  # an item of the same id: hers
        alice.merge([], [], {}, predictions=[PredictionEvent("b1", T0, "a guess of bob", False)])
        assert alice.predictions() == [
            PredictionEvent("b1", T0, "alice's guess", True),
            PredictionEvent("b1", T0, "a guess of bob", False),  # bob's, present, is not alice's
        ]
        alice.rebuild_cache()
        alice.save_settings(Settings(0.9), T0)
        alice.merge([], [], {"deck-bob": T0 - timedelta(days=1)})  # a deck of the same name: alice's own
        assert alice.enrolled() == {"deck-bob": T0 - timedelta(days=1)}
    after = _rows(class_db)
    for table, rows in before.items():
        assert [row for row in after[table] if "bob" in row] == rows  # bob's rows as they were
    with class_db.open("bob") as bob:
        assert [review.item_id for review in bob.reviews()] == ["b1", "b1"]
        assert bob.enrolled() == {"deck-bob": T0} and bob.settings() == Settings(0.8)
        assert bob.predictions() == [PredictionEvent("b1", T0, "a guess of bob", False)]


def test_the_server_refuses_a_learner_anothers_rows_in_raw_sql(class_db: Database) -> None:
    _fill(class_db, "bob", "b1")
    _fill(class_db, "alice", "a1")
    before = _rows(class_db)
    with class_db.connect("alice") as alice:
        for table in _LEARNER_TABLES:
            assert alice.execute(f"SELECT count(*) FROM course.{table} WHERE learner = 'bob'").fetchone() == (
                0,
            )
            assert {row[0] for row in alice.execute(f"SELECT learner FROM course.{table}")} == {"alice"}
            for statement in (  # no learner deletes a row, or changes whose it is (issue 21: no LOCK either)
                f"UPDATE course.{table} SET learner = learner WHERE learner = 'bob'",
                f"DELETE FROM course.{table} WHERE learner = 'bob'",
            ):
                with pytest.raises(
                    psycopg.errors.InsufficientPrivilege, match=f"^permission denied for table {table}$"
                ):
                    alice.execute(statement)
        assert alice.execute("UPDATE course.decks SET enrolled_at = 1 WHERE learner = 'bob'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            alice.execute("INSERT INTO course.decks (learner, deck, enrolled_at) VALUES ('bob', 'x', 0)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            alice.execute(
                "INSERT INTO course.nudge_log (learner, item_id, nudged_at, due, reason) "
                "VALUES ('bob', 'b1', 0, 0, 'brought back by alice')"
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            alice.execute(
                'INSERT INTO course.prediction_log (learner, item_id, predicted_at, answer, "right") '
                "VALUES ('bob', 'b1', 0, 'guessed by alice', true)"
            )
        for statement in (  # a prediction is only ever added: not changed, not locked, by its learner either
            "UPDATE course.prediction_log SET answer = 'x' WHERE learner = 'alice'",
            'UPDATE course.prediction_log SET "right" = true',
            "SELECT * FROM course.prediction_log FOR UPDATE",
        ):
            with pytest.raises(
                psycopg.errors.InsufficientPrivilege, match=r"^permission denied for table prediction_log$"
            ):
                alice.execute(statement)
        for statement in (
            "TRUNCATE course.review_log",
            "DROP TABLE course.review_log",
            "ALTER TABLE course.review_log DISABLE ROW LEVEL SECURITY",
            "DROP POLICY learner_own_rows ON course.review_log",
            "CREATE TABLE course.mine (x int)",
            "UPDATE course.course_schema SET version = 1",
            "SET ROLE bob",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                alice.execute(statement)
    assert _rows(class_db) == before


def test_the_instructor_reads_every_learner_and_writes_nothing(class_db: Database) -> None:
    _fill(class_db, "bob", "b1")
    _fill(class_db, "alice", "a1")
    with class_db.connect("teacher") as teacher:
        counts = teacher.execute(
            "SELECT learner, count(*) FROM course.review_log GROUP BY learner ORDER BY learner"
        ).fetchall()
        assert counts == [("alice", 2), ("bob", 2)]
        for table in ("cram_log", "cards", "decks", "settings", "nudge_log", "prediction_log"):
            learners = teacher.execute(f"SELECT DISTINCT learner FROM course.{table} ORDER BY 1").fetchall()
            assert learners == [("alice",), ("bob",)]
        for statement in (
            "INSERT INTO course.decks (deck, enrolled_at) VALUES ('x', 0)",
            "INSERT INTO course.prediction_log (item_id, predicted_at, answer) VALUES ('x', 0, '')",
            "UPDATE course.review_log SET rating = 1",
            "DELETE FROM course.cards",
            "TRUNCATE course.cram_log",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                teacher.execute(statement)
    with postgres.PostgresStore.open(class_db.url("teacher"), memory=steps_memory()) as store:
        assert store.reviews() == []  # a store is the logged-in role's own: the teacher has none
        with pytest.raises(StoreAccessError, match="permission denied"):
            store.record("q", GOOD, T0)


def test_a_server_gone_mid_session_is_unavailable_and_a_later_open_works(class_db: Database) -> None:
    server = class_db.server
    store = class_db.open("alice")
    try:
        first = store.record("q", GOOD, T0)
        server.stop()
        try:
            with pytest.raises(StoreUnavailableError, match="cannot be reached") as info:
                store.record("q", GOOD, T0 + timedelta(minutes=1))
            assert isinstance(info.value, StoreError) and "pw-alice" not in str(info.value)
            with pytest.raises(StoreUnavailableError, match="cannot be reached"):
                store.reviews()  # reconnecting: refused while the server is down
            with pytest.raises(StoreUnavailableError):
                class_db.open("alice")
        finally:
            server.start()
        with class_db.open("alice") as again:
            assert again.reviews() == [first]
        assert store.reviews() == [first]  # the old handle reconnects too
        store.record("q", GOOD, T0 + timedelta(minutes=1))
        assert len(store.reviews()) == 2
    finally:
        store.close()


_WRITER = """
import sys
from datetime import datetime, timedelta, timezone
from scheduler import Rating
from scheduler.postgres import PostgresStore

url, worker = sys.argv[1], int(sys.argv[2])
start = datetime(2025, 3, 10, tzinfo=timezone.utc) + timedelta(days=1000 * worker)
with PostgresStore.open(url) as store:
    for index in range(25):
        at = start + timedelta(minutes=index)
        store.record(f"q{index % 5}", Rating(1 + (index + worker) % 4), at, worker)
"""


def test_writers_in_several_processes_lose_nothing(class_db: Database) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, class_db.url("alice"), str(worker)], env=child_env())
        for worker in range(4)
    ]
    assert [writer.wait(timeout=60) for writer in writers] == [0, 0, 0, 0]
    with postgres.PostgresStore.open(class_db.url("alice")) as store:  # the writers' Memory()
        reviews = store.reviews()
        assert len(reviews) == 100
        assert Counter(review.duration_ms for review in reviews) == {0: 25, 1: 25, 2: 25, 3: 25}
        assert store.review_counts() == {f"q{index}": 20 for index in range(5)}
        assert_schedule_is_the_log_replayed(store)
    with class_db.admin() as admin:
        seqs = admin.execute(
            "SELECT seq FROM course.review_log WHERE learner = 'alice' ORDER BY seq"
        ).fetchall()
    assert [seq for (seq,) in seqs] == list(range(1, 101))


@pytest.mark.parametrize("ci", ["", "1"])
def test_missing_postgres_skips_locally_and_fails_on_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    import postgres_server

    monkeypatch.setattr(postgres_server, "find_binaries", lambda: None)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome) as raised:
        require_postgres({"CI": ci})
    assert raised.value.msg == ADVICE


def test_its_errors_are_store_errors_that_survive_pickling() -> None:
    import pickle

    errors = [
        StoreUnavailableError("postgresql://alice@/c", "server closed the connection"),
        postgres.AccessDeniedError("postgresql://alice@/c", "permission denied for table cards"),
        postgres.NotInstalledError("postgresql://alice@/c", "no schema course"),
        postgres.SchemaTooOldError("postgresql://alice@/c", 1, 2),
    ]
    for error in errors:
        copy = pickle.loads(pickle.dumps(error))
        assert isinstance(copy, StoreError) and type(copy) is type(error)
        assert (str(copy), vars(copy)) == (str(error), vars(error))
    assert isinstance(errors[1], StoreAccessError) and errors[1].reason == "denied"
    assert isinstance(errors[2], StoreNotFoundError)


def test_the_class_store_counts_the_learners_days_in_the_zone_it_was_opened_in(class_db: Database) -> None:
    from zoneinfo import ZoneInfo

    from scheduler import LogEntry, Memory

    paris = ZoneInfo("Europe/Paris")
    at = datetime(2025, 1, 6, 21, 0, tzinfo=UTC)  # 22:00 in Paris
    later = datetime(2025, 1, 7, 3, 30, tzinfo=UTC)  # 04:30 in Paris: the next day
    expected = Memory(tz=paris).review(Memory(tz=paris).review(None, "q", AGAIN, at), "q", GOOD, later)
    with postgres.PostgresStore.open(class_db.url("alice"), tz=paris) as alice:
        assert alice.memory.tz is paris
        alice.record("q", AGAIN, at)
        alice.record("q", GOOD, later)
        assert alice.card("q") == expected
    with postgres.PostgresStore.open(class_db.url("bob"), tz=paris) as bob:
        bob.merge([LogEntry("q", AGAIN, at, None), LogEntry("q", GOOD, later, None)], [], {})
        assert bob.card("q") == expected
    with postgres.PostgresStore.open(class_db.url("bob")) as bob:  # in UTC, 03:30 is still the 6th's day
        assert bob.memory.replay("q", bob.reviews()).stability != expected.stability
