"""A learner who tries to deny the class from their own account, in raw SQL as a learner's psycopg connection
sends it (issue 35), against the real PostgreSQL of the ``postgres_server`` fixture: they cannot fill the
database with rows without bound (a million rows of hers made the instructor's report take 15 s), and cannot
answer in a room they did not join, or were removed from, nor change anyone's counts or memberships. Each
test fails on a database of schema version 5, and passes now.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password
from store_helpers import GOOD, steps_memory

from scheduler import LogEntry, Nudge, PredictionEvent, Rating, Settings, StoreAccessError, StoreError
from scheduler._time import from_ms

psycopg = pytest.importorskip("psycopg")
postgres = pytest.importorskip("scheduler.postgres")

LIMIT = 1000  # the test class's row limit (install's row_limit): the real default is 200,000
REVIEW = "INSERT INTO course.review_log (seq, item_id, rating, reviewed_at, due, state_before) "


class Klass:
    """A class database: learners ada and bob, instructors teacher and other_teacher."""

    def __init__(self, server: PostgresServer, **install: Any) -> None:
        self.server = server
        self.name = server.create_database()
        self.admin_url = server.admin_url(self.name)
        postgres.install(self.admin_url, **install)
        for name in ("ada", "bob"):
            postgres.add_learner(self.admin_url, name, password=learner_password(name))
        for name in ("teacher", "other_teacher"):
            postgres.add_instructor(self.admin_url, name, password=learner_password(name))

    def url(self, role: str) -> str:
        return self.server.learner_url(self.name, role)

    def connect(self, role: str) -> Any:
        return psycopg.connect(self.url(role), autocommit=True)

    def admin(self) -> Any:
        return psycopg.connect(self.admin_url, autocommit=True)

    def store(self, role: str) -> Any:
        return postgres.PostgresStore.open(self.url(role), memory=steps_memory())

    def room(self, role: str) -> Any:
        return postgres.LiveRoom.open(self.url(role))

    def counts(self) -> dict[str, int]:
        with self.admin() as admin:
            return dict(admin.execute("SELECT learner, kept FROM course.row_count ORDER BY 1").fetchall())


@pytest.fixture
def klass(postgres_server: PostgresServer) -> Klass:
    return Klass(postgres_server, row_limit=LIMIT)


def _over(who: str, total: int, limit: int = LIMIT) -> str:
    return f"^{who} would keep {total} rows in the class database, over the class's limit of {limit}\n"


# 1. Rows without bound.


def test_the_row_limit_refuses_adas_rows_past_it_and_bobs_saves_go_on(klass: Klass) -> None:
    # the audit's million rows in one statement, scaled to this class's limit of 1,000 (the same count, once
    # per statement; the million itself took 21 s of the server's work to refuse, docs/classroom.md)
    with klass.connect("ada") as ada:
        with pytest.raises(psycopg.Error, match=_over("ada", 10_000)) as refused:
            ada.execute(REVIEW + "SELECT g, 'q', 3, g, g, 0 FROM generate_series(1, 10000) g")
        assert refused.value.sqlstate == "CL001"
        assert ada.execute("SELECT count(*) FROM course.review_log").fetchone() == (0,)  # none of it kept
        ada.execute(REVIEW + f"SELECT g, 'q', 3, g, g, 0 FROM generate_series(1, {LIMIT - 2}) g")
    with klass.store("ada") as store:
        store.record("q", GOOD, T0)  # her last two rows: the answer and its card
    with klass.store("ada") as store:
        with pytest.raises(postgres.RowLimitError) as over:
            store.record("q", GOOD, T0 + timedelta(days=1))
        assert isinstance(over.value, StoreError) and over.value.limit == LIMIT
        assert str(over.value) == (
            f"{store.location} keeps no more of this learner's rows: they have reached the class's limit of "
            "1,000 rows (answers, practice answers, nudges, predictions, cards, decks, settings and rooms "
            "joined, all together), and nothing of this was saved; whoever runs the class database can raise "
            "the limit, with scheduler.postgres.install(admin_url, row_limit=...)"
        )
        for write in (
            lambda: store.record_cram("q", GOOD, T0),
            lambda: store.enroll("01", T0),
            lambda: store.nudge(Nudge("q", T0, T0 + timedelta(days=1), "a mistake")),
            lambda: store.predict(PredictionEvent("q", T0, "1", True)),
            lambda: store.merge([], [], {}, predictions=[PredictionEvent("q", T0, "", None)]),
            lambda: store.save_settings(Settings(0.8), T0),
            lambda: store.merge([LogEntry("q0", Rating.GOOD, T0 - timedelta(days=1), None)], [], {}),
        ):
            with pytest.raises(postgres.RowLimitError):
                write()
    with klass.connect("ada") as ada:
        for table, statement in {
            "cram_log": "INSERT INTO course.cram_log (seq, item_id, rating, reviewed_at) "
            "VALUES (1, 'q', 3, 0)",
            "cards": "INSERT INTO course.cards (item_id, state, due, reps, lapses, log_seq) "
            "VALUES ('x', 2, 0, 1, 0, 1)",
            "decks": "INSERT INTO course.decks (deck, enrolled_at) VALUES ('02', 0)",
            "settings": "INSERT INTO course.settings (name, value, set_at) VALUES ('x', '1', 0)",
            "nudge_log": "INSERT INTO course.nudge_log (item_id, nudged_at, due, reason) "
            "VALUES ('q', 0, 0, 'r')",
            "prediction_log": 'INSERT INTO course.prediction_log (item_id, predicted_at, answer, "right") '
            "VALUES ('q', 0, '1', true)",
            "live_member": "INSERT INTO course.live_member (room, joined_at) VALUES ('r1', 0)",
        }.items():
            with pytest.raises(psycopg.Error, match=_over("ada", LIMIT + 1)):
                ada.execute(statement)
            kept = ada.execute(f"SELECT count(*) FROM course.{table}").fetchone()
            assert kept == ((1,) if table == "cards" else (0,)), table  # the card of her last answer
    assert klass.counts() == {"ada": LIMIT}
    with klass.store("bob") as bob:  # another learner saves as ever, and merges a bulk import
        bob.record("b", GOOD, T0)
        merged = bob.merge(
            [LogEntry(f"b{k}", Rating.GOOD, T0 - timedelta(hours=k + 1), None) for k in range(400)],
            [],
            {"01": T0},
        )
        assert merged.answers == 400 and len(bob.reviews()) == 401
    assert klass.counts() == {"ada": LIMIT, "bob": 401 + 401 + 1}  # answers, cards, a deck
    with postgres.LiveRoom.open(klass.url("teacher")) as teacher:
        assert teacher.state() is None  # the instructor is not counted, and reads on
    records = postgres.class_records(klass.url("teacher"))
    assert sorted(records.answers) == ["ada", "bob"]


def test_the_administrator_raises_the_limit_and_deleting_rows_frees_them(klass: Klass) -> None:
    with klass.connect("ada") as ada:
        ada.execute(REVIEW + f"SELECT g, 'q', 3, g, g, 0 FROM generate_series(1, {LIMIT}) g")
        with pytest.raises(psycopg.Error, match=_over("ada", LIMIT + 1)):
            ada.execute(REVIEW + "VALUES (0, 'q', 3, 0, 0, 0)")
    postgres.install(klass.admin_url, row_limit=LIMIT + 10)
    postgres.install(klass.admin_url)  # without row_limit: the class's limit is kept
    with klass.admin() as admin:
        assert admin.execute("SELECT learner_rows FROM course.class_limit").fetchone() == (LIMIT + 10,)
    with klass.connect("ada") as ada:
        ada.execute(REVIEW + "SELECT g, 'q', 3, g, g, 0 FROM generate_series(-9, 0) g")
        with pytest.raises(psycopg.Error, match=_over("ada", LIMIT + 11, LIMIT + 10)):
            ada.execute(REVIEW + "VALUES (-10, 'q', 3, 0, 0, 0)")
    with klass.admin() as admin:
        admin.execute("DELETE FROM course.review_log WHERE learner = 'ada' AND seq > 500")
    assert klass.counts() == {"ada": 510}
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match=r"^row_limit must be a positive int of rows, got "):
            postgres.install(klass.admin_url, row_limit=bad)
    from scheduler.postgres._schema import MIGRATIONS

    with pytest.raises(ValueError, match=r"^schema version 5 has no row limit \(it came with version 6\)$"):
        postgres.install(klass.admin_url, migrations=MIGRATIONS[:5], row_limit=10)


def test_a_class_has_the_documented_limit_unless_its_administrator_sets_another(
    postgres_server: PostgresServer,
) -> None:
    klass = Klass(postgres_server)
    assert postgres.LEARNER_ROW_LIMIT == 200_000
    with klass.admin() as admin:
        assert admin.execute("SELECT learner_rows FROM course.class_limit").fetchone() == (200_000,)


def test_no_learner_can_change_the_counts_the_limit_or_run_the_counting(klass: Klass) -> None:
    with klass.store("bob") as bob:
        bob.record("b", GOOD, T0)
    with klass.connect("ada") as ada:
        ada.execute(REVIEW + "VALUES (1, 'q', 3, 0, 0, 0)")
        assert ada.execute("SELECT learner, kept FROM course.row_count").fetchall() == [("ada", 1)]  # hers
        for statement in (
            "UPDATE course.row_count SET kept = 0",
            "DELETE FROM course.row_count",
            "INSERT INTO course.row_count (learner, kept) VALUES ('ada', -1000000)",
            "TRUNCATE course.row_count",
            "UPDATE course.class_limit SET learner_rows = 100000000",
            "DELETE FROM course.class_limit",
            "ALTER TABLE course.review_log DISABLE TRIGGER count_added",
            "DROP TRIGGER count_added ON course.review_log",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                ada.execute(statement)
        for function in ("count_added", "count_gone", "member_removed"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for function"):
                ada.execute(f"SELECT course.{function}()")
        for mode in ("SHARE", "EXCLUSIVE", "ACCESS EXCLUSIVE"):
            for table in ("row_count", "class_limit", "live_member"):
                with pytest.raises(
                    psycopg.errors.InsufficientPrivilege, match=f"permission denied for table {table}"
                ):
                    ada.execute(f"BEGIN; LOCK TABLE course.{table} IN {mode} MODE")
                ada.execute("ROLLBACK")
    assert klass.counts() == {"ada": 1, "bob": 2}


def test_the_counts_of_the_rows_already_there_are_made_by_the_upgrade(
    postgres_server: PostgresServer,
) -> None:
    from scheduler.postgres._schema import MIGRATIONS

    name = postgres_server.create_database()
    admin_url = postgres_server.admin_url(name)
    assert postgres.install(admin_url, migrations=MIGRATIONS[:5]) == 5
    for learner in ("ada", "bob"):
        postgres.add_learner(admin_url, learner, password=learner_password(learner))
    postgres.add_instructor(admin_url, "teacher", password=learner_password("teacher"))
    url = lambda role: postgres_server.learner_url(name, role)  # noqa: E731
    with (
        psycopg.connect(url("ada"), autocommit=True) as ada,
        psycopg.connect(url("teacher"), autocommit=True) as t,
    ):
        ada.execute(REVIEW + "SELECT g, 'q', 3, g, g, 0 FROM generate_series(1, 30) g")
        ada.execute("INSERT INTO course.decks (deck, enrolled_at) VALUES ('01', 0), ('02', 0)")
        session = t.execute(
            "INSERT INTO course.live_session (title, started_at) VALUES ('s', 0) RETURNING id"
        ).fetchone()
        t.execute("UPDATE course.live_session SET position = 1, item_id = 'q' WHERE id = %s", session)
        ada.execute(
            "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) "
            "VALUES (%s, 1, 'q', '1', 5)",
            session,
        )
    assert postgres.install(admin_url, row_limit=33) == postgres.SCHEMA_VERSION == 7
    with psycopg.connect(admin_url, autocommit=True) as admin:
        counts = admin.execute("SELECT learner, kept FROM course.row_count ORDER BY 1").fetchall()
        members = admin.execute("SELECT room, learner, joined_at, removed FROM course.live_member").fetchall()
    assert members == [("teacher", "ada", 5, False)]  # who answered in a room has joined it
    assert counts == [("ada", 33)]  # 30 answers, 2 decks, 1 room
    with pytest.raises(postgres.RowLimitError), postgres.PostgresStore.open(url("ada")) as store:
        store.enroll("03", T0)
    with postgres.PostgresStore.open(url("bob"), memory=steps_memory()) as store:
        store.record("b", GOOD, T0)


# 2. Rooms kept by the database.


def _asked(klass: Klass, room: str | None = None) -> Any:
    with klass.room("teacher") as teacher:
        return teacher.ask(teacher.start("s", T0, room=room).session, "q", T0)


ANSWER = "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) VALUES "


def test_a_learner_answers_only_in_a_room_she_joined(klass: Klass) -> None:
    asked = _asked(klass, "hall")
    with klass.connect("ada") as ada:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security policy"):
            ada.execute(ANSWER + "(%s, 1, 'q', '1', 0)", (asked.session,))
        ada.execute("INSERT INTO course.live_member (room, joined_at) VALUES ('elsewhere', 0)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security policy"):
            ada.execute(ANSWER + "(%s, 1, 'q', '1', 0)", (asked.session,))  # another room's membership
        ada.execute("INSERT INTO course.live_member (room, joined_at) VALUES ('hall', 1)")
        ada.execute(ANSWER + "(%s, 1, 'q', '1', 2)", (asked.session,))
    with klass.room("bob") as bob:
        bob.join("hall", T0)
        bob.join("hall", T0 + timedelta(minutes=1))  # again: nothing changes
        bob.answer(asked, "2", T0)
    with klass.room("teacher") as teacher:
        assert teacher.answers(asked.session, 1).counts == {"1": 1, "2": 1}
        assert teacher.members("hall") == [
            postgres.RoomMember("ada", from_ms(1), False),
            postgres.RoomMember("bob", T0, False),
        ]
        with pytest.raises(StoreAccessError):
            teacher.join("hall", T0)  # an instructor is no member


def test_answering_joins_the_room_so_that_every_flow_keeps_working(klass: Klass) -> None:
    asked = _asked(klass)
    with klass.room("ada") as ada:
        ada.answer(asked, "1", T0)
        assert ada.members("teacher") == [postgres.RoomMember("ada", T0, False)]  # a learner sees herself


def test_a_removed_learner_can_neither_answer_nor_rejoin_and_her_answers_go(klass: Klass) -> None:
    asked = _asked(klass, "hall")
    with klass.room("ada") as ada, klass.room("bob") as bob:
        ada.answer(asked, "1", T0)
        bob.answer(asked, "2", T0)
    with klass.room("teacher") as teacher:
        teacher.remove("hall", "ada")
        teacher.remove("hall", "ada")  # again: nothing more
        assert teacher.answers(asked.session, 1).counts == {"2": 1}
        assert [member.removed for member in teacher.members("hall")] == [True, False]
        with pytest.raises(ValueError, match=r"^'cy' has not joined room 'hall'$"):
            teacher.remove("hall", "cy")
    with klass.admin() as admin:
        assert admin.execute("SELECT learner FROM course.live_answer").fetchall() == [("bob",)]  # deleted
    with klass.room("ada") as ada:
        for attempt in (lambda: ada.join("hall", T0), lambda: ada.answer(asked, "1", T0)):
            with pytest.raises(postgres.RemovedFromRoomError) as removed:
                attempt()
            assert isinstance(removed.value, StoreAccessError)
            assert str(removed.value) == (
                f"{ada.location}: an instructor removed you from room 'hall', so you can neither join it "
                "again nor answer there; ask your instructor"
            )
    with klass.connect("ada") as ada:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security policy"):
            ada.execute(ANSWER + "(%s, 1, 'q', '1', 0)", (asked.session,))
        # rejoining changes nothing: her row stays removed, and she cannot add another or change it
        ada.execute(
            "INSERT INTO course.live_member (room, joined_at) VALUES ('hall', 9) ON CONFLICT DO NOTHING"
        )
        for statement in (
            "UPDATE course.live_member SET removed = false",
            "DELETE FROM course.live_member",
            "INSERT INTO course.live_member (room, joined_at, removed) VALUES ('hall2', 0, false)",
            "INSERT INTO course.live_member (room, learner, joined_at) VALUES ('hall3', 'ada', 0)",
            "SELECT * FROM course.live_member FOR UPDATE",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                ada.execute(statement)
        assert ada.execute("SELECT room, removed FROM course.live_member").fetchall() == [("hall", True)]


def test_no_learner_can_change_or_see_anyones_membership(klass: Klass) -> None:
    asked = _asked(klass, "hall")
    with klass.room("bob") as bob:
        bob.join("hall", T0)
    with klass.connect("ada") as ada:
        assert ada.execute("SELECT * FROM course.live_member").fetchall() == []  # bob's is not hers to see
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            ada.execute("UPDATE course.live_member SET removed = true WHERE learner = 'bob'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            ada.execute("INSERT INTO course.live_member (room, learner, joined_at) VALUES ('hall', 'bob', 0)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security policy"):
            ada.execute(ANSWER + "(%s, 1, 'q', '1', 0)", (asked.session,))  # bob's membership is not hers
    with klass.connect("teacher") as teacher:  # an instructor removes, and adds no member
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            teacher.execute(
                "INSERT INTO course.live_member (room, learner, joined_at) VALUES ('hall', 'ada', 0)"
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            teacher.execute("UPDATE course.live_member SET learner = 'ada'")
    with klass.room("bob") as bob:
        bob.answer(asked, "1", T0)
