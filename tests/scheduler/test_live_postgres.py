"""Live class sessions in the classroom database (`scheduler.postgres.LiveRoom`): an instructor runs a
session, learners answer from their own connections, the server enforces who may do what. Against the real
PostgreSQL of the ``postgres_server`` fixture; each test gets its own database."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password

from scheduler import StoreError

psycopg = pytest.importorskip("psycopg")
postgres = pytest.importorskip("scheduler.postgres")


class Class:
    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.name = server.create_database()
        self.admin_url = server.admin_url(self.name)
        postgres.install(self.admin_url)
        for name in ("ana", "ben", "cy"):
            postgres.add_learner(self.admin_url, name, password=learner_password(name))
        for name in ("teacher", "other_teacher"):
            postgres.add_instructor(self.admin_url, name, password=learner_password(name))

    def url(self, role: str) -> str:
        return self.server.learner_url(self.name, role)

    def room(self, role: str) -> Any:
        return postgres.LiveRoom.open(self.url(role))


@pytest.fixture
def klass(postgres_server: PostgresServer) -> Class:
    return Class(postgres_server)


def test_a_session_from_start_to_end(klass: Class) -> None:
    with klass.room("teacher") as teacher, klass.room("ana") as ana, klass.room("ben") as ben:
        assert ana.state() is None  # nothing running yet
        started = teacher.start("Lessons 01-02", T0)
        assert (started.position, started.item_id, started.open, started.instructor) == (
            0,
            None,
            False,
            "teacher",
        )
        asked = teacher.ask(started.session, "q1", T0 + timedelta(seconds=5), layout="2,0,1")
        seen = ana.state()
        assert seen == asked
        assert (seen.position, seen.item_id, seen.layout, seen.open) == (1, "q1", "2,0,1", True)
        ana.answer(seen, "0", T0 + timedelta(seconds=9))
        ana.answer(seen, "2", T0 + timedelta(seconds=10))  # changed before the reveal: one answer
        ben.answer(seen, "2", T0 + timedelta(seconds=11))
        assert ana.my_answer(seen.session, 1) == "2"
        tally = teacher.answers(seen.session, 1)
        assert (tally.answered, tally.counts) == (2, {"2": 2})
        assert ana.answers(seen.session, 1).answered == 1  # a learner sees only their own answer
        revealed = teacher.reveal(seen.session, T0 + timedelta(seconds=20))
        assert (revealed.revealed, revealed.open) == (True, False)
        with pytest.raises(postgres.QuestionClosedError) as closed:
            ben.answer(seen, "1", T0 + timedelta(seconds=21))
        assert str(closed.value).endswith(
            f"question 1 of live session {seen.session} is closed (its answer was revealed, or the session "
            "moved on); your answer was not counted"
        )
        assert isinstance(closed.value, StoreError)
        second = teacher.ask(seen.session, "q2", T0 + timedelta(seconds=30))
        assert (second.position, second.revealed) == (2, False)
        ben.answer(second, "7", T0 + timedelta(seconds=35))
        with pytest.raises(postgres.QuestionClosedError):
            ana.answer(seen, "2", T0 + timedelta(seconds=36))  # the first question is closed now
        ended = teacher.end(seen.session, T0 + timedelta(seconds=60))
        assert ended.ended and ana.state() is None
        results = teacher.results(seen.session)
        assert [(p, item, a.counts) for p, item, a in results] == [(1, "q1", {"2": 2}), (2, "q2", {"7": 1})]
        with pytest.raises(postgres.QuestionClosedError):
            teacher.ask(seen.session, "q3", T0 + timedelta(seconds=61))


def test_counts_are_ordered_most_given_first(klass: Class) -> None:
    with klass.room("teacher") as teacher:
        state = teacher.ask(teacher.start("s", T0).session, "q", T0)
        for name, answer in (("ana", "1"), ("ben", "0"), ("cy", "0")):
            with klass.room(name) as room:
                room.answer(state, answer, T0 + timedelta(seconds=len(name)))
        assert teacher.answers(state.session, 1).counts == {"0": 2, "1": 1}


def test_an_instructor_starting_again_ends_their_session_still_running(klass: Class) -> None:
    with klass.room("teacher") as teacher, klass.room("other_teacher") as other, klass.room("ana") as ana:
        theirs = other.start("theirs", T0)
        lost = teacher.ask(teacher.start("before a kernel restart", T0).session, "q", T0)
        again = teacher.start("after it", T0 + timedelta(minutes=3))
        assert teacher.state(lost.session).ended and not again.ended
        assert not other.state(theirs.session).ended  # another instructor's session goes on
        assert ana.state(room="teacher") == again
        with pytest.raises(postgres.QuestionClosedError):
            ana.answer(lost, "0", T0 + timedelta(minutes=4))


def test_each_room_runs_one_session_and_learners_follow_the_room_they_join(klass: Class) -> None:
    """Issue 21, item 7: two instructors teaching at once do not collide; a Start moves only its room."""
    with klass.room("teacher") as teacher, klass.room("other_teacher") as other, klass.room("cy") as cy:
        first = teacher.start("morning", T0)
        assert (first.room, cy.state()) == ("teacher", first)  # one session running: it is the one
        second = other.start("afternoon", T0 + timedelta(hours=4))  # in other_teacher's room
        assert cy.open_sessions() == [second, first]  # by room
        with pytest.raises(ValueError) as several:
            cy.state()
        assert str(several.value) == (
            "2 live sessions are running, in rooms 'other_teacher', 'teacher': name the room"
        )
        assert cy.state(room="teacher") == first and cy.state(room="other_teacher") == second
        with pytest.raises(postgres.RoomBusyError) as busy:
            other.start("mine now", T0 + timedelta(hours=5), room="teacher")
        assert str(busy.value) == (
            f"room 'teacher' has a live session running (session {first.session}, started by teacher); "
            "choose another room, or ask teacher to end theirs"
        )
        assert cy.state(room="teacher") == first and not other.state(second.session).ended  # unchanged
        hall = teacher.start("in the hall", T0 + timedelta(hours=6), room="Lecture hall B")
        assert hall.room == "Lecture hall B" and teacher.state(first.session).ended  # one session each
        assert cy.state(room="teacher") is None and cy.state(room="Lecture hall B") == hall
        other.end(second.session, T0 + timedelta(hours=7))
        assert cy.state() == hall and cy.state(room="other_teacher") is None
        assert cy.state(second.session) == other.state(second.session)
        for room in ("", "x" * 64, "tab\there"):
            with pytest.raises(ValueError, match="a room is named by 1 to 63 characters"):
                teacher.start("s", T0, room=room)


def test_the_server_enforces_who_runs_and_who_answers(klass: Class) -> None:
    with klass.room("teacher") as teacher, klass.room("ana") as ana, klass.room("other_teacher") as other:
        state = teacher.ask(teacher.start("s", T0).session, "q", T0)
        with pytest.raises(postgres.AccessDeniedError):
            ana.start("mine", T0)  # a learner starts nothing
        with pytest.raises(
            postgres.AccessDeniedError, match=f"live session {state.session} is run by teacher"
        ):
            other.reveal(state.session, T0)  # another instructor runs nothing of teacher's
        with pytest.raises(postgres.AccessDeniedError):
            teacher.answer(state, "0", T0)  # an instructor does not answer
        ana.answer(state, "0", T0)
    with psycopg.connect(klass.url("ana"), autocommit=True) as raw:
        # straight SQL, past the Python checks: the server's policies hold
        for statement in (
            "UPDATE course.live_session SET revealed_at = 1",
            "UPDATE course.live_answer SET item_id = 'other' WHERE learner = 'ana'",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                raw.execute(statement)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            raw.execute(
                "INSERT INTO course.live_answer (session_id, position, item_id, learner, answer, "
                f"answered_at) VALUES ({state.session}, 1, 'q', 'ben', '1', 0)"
            )  # answering for ben
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            raw.execute(
                "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) "
                f"VALUES ({state.session}, 7, 'other', '1', 0)"
            )  # a question not asked
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute("DELETE FROM course.live_answer")  # no learner deletes a live answer
    with psycopg.connect(klass.url("ben"), autocommit=True) as raw:
        assert raw.execute("SELECT count(*) FROM course.live_answer").fetchone() == (0,)  # ana's is not ben's
        assert raw.execute("UPDATE course.live_answer SET answer = 'x'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute("DELETE FROM course.live_answer")


def test_nothing_but_an_answer_is_kept_as_a_live_answer(klass: Class) -> None:
    """Issue 21, item 9: a learner's free text never reaches the projector; the server refuses it too."""
    with klass.room("teacher") as teacher, klass.room("ana") as ana:
        state = teacher.ask(teacher.start("s", T0).session, "q", T0)
        for answer in ("0", "12", "-0.125", "1e-05", "6.02e+23"):
            ana.answer(state, answer, T0)
        for answer in ("", "hello", "4 h", "1/8", "0x1F", " 3", "1" * 33, "inf", "1.5E3"):
            with pytest.raises(ValueError) as refused:
                ana.answer(state, answer, T0)
            assert str(refused.value) == (
                "answer must be an option's index or a number (digits, a sign, a point, an exponent; at most "
                f"32 characters), got {answer!r}"
            )
        assert teacher.answers(state.session, 1).counts == {"6.02e+23": 1}
    with psycopg.connect(klass.url("ben"), autocommit=True) as raw:
        raw.execute("INSERT INTO course.live_member (room, joined_at) VALUES ('teacher', 0)")  # joined
        for text in ("Vote for me!", "<b>1</b>", "1" * 33):
            with pytest.raises(
                psycopg.errors.CheckViolation, match='violates check constraint "live_answer_is_an_answer"'
            ):
                raw.execute(
                    "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) "
                    "VALUES (%s, 1, 'q', %s, 0)",
                    (state.session, text),
                )


def test_a_code_cards_answers_are_numbers_the_server_keeps_and_tallies(klass: Class) -> None:
    """Issue 24, item 5: a code card's live answer is "0" (passed), a named mistake's place ("1", "2", ...)
    or "-1" (another mistake): numbers the server's check takes as they are; no code fits in one."""
    with (
        klass.room("teacher") as teacher,
        klass.room("ana") as ana,
        klass.room("ben") as ben,
        klass.room("cy") as cy,
    ):
        state = teacher.ask(teacher.start("s", T0).session, "05-code-causal-mask", T0)
        ana.answer(state, "0", T0 + timedelta(seconds=1))
        ben.answer(state, "-1", T0 + timedelta(seconds=2))
        cy.answer(state, "3", T0 + timedelta(seconds=3))
        ben.answer(state, "3", T0 + timedelta(seconds=4))  # ben ran his code again: another mistake now
        assert teacher.answers(state.session, 1).counts == {"3": 2, "0": 1}
        assert ben.my_answer(state.session, 1) == "3"
        with pytest.raises(ValueError, match="answer must be an option's index or a number"):
            ana.answer(state, "def causal_mask(t, s): ...", T0)
        assert [(p, item, answers.counts) for p, item, answers in teacher.results(state.session)] == [
            (1, "05-code-causal-mask", {"3": 2, "0": 1})
        ]


def test_live_answers_change_no_schedule(klass: Class) -> None:
    with klass.room("teacher") as teacher, klass.room("ana") as ana:
        state = teacher.ask(teacher.start("s", T0).session, "q", T0)
        ana.answer(state, "0", T0)
    with postgres.PostgresStore.open(klass.url("ana")) as store:
        assert (store.reviews(), store.cards(), store.cram_reviews()) == ([], {}, [])


def test_an_older_schema_is_refused(postgres_server: PostgresServer) -> None:
    from scheduler.postgres._schema import MIGRATIONS

    name = postgres_server.create_database()
    admin = postgres_server.admin_url(name)
    postgres.install(admin, migrations=MIGRATIONS[:2])
    postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
    with pytest.raises(postgres.SchemaTooOldError, match=r"older schema \(2; this version uses 7\)"):
        postgres.LiveRoom.open(postgres_server.learner_url(name, "teacher"))
    assert postgres.install(admin) == 7
    with postgres.LiveRoom.open(postgres_server.learner_url(name, "teacher")) as room:
        assert room.state() is None


def test_the_lock_timeout_is_no_session_state(klass: Class) -> None:
    """Under a pooler in transaction mode nothing may outlive a transaction: the lock timeout is SET LOCAL."""
    with postgres.PostgresStore.open(klass.url("ana"), lock_timeout_ms=1234) as store:
        store.enroll("01", T0)
        connection = store._connection  # what the store's own connection carries
        assert connection is not None
        assert connection.execute("SHOW lock_timeout").fetchone() == ("0",)


def test_the_connect_timeout_is_the_urls_or_the_environments_else_ten_seconds() -> None:
    """It is also each call's deadline (and ``tcp_user_timeout``); every connection is autocommit, prepares
    no statement (PgBouncer in transaction mode) and has TCP keepalives, unless the URL sets its own."""
    from scheduler.postgres._connection import connect_options, timeout_of

    url = "postgresql://ana@db.example/course"
    base = {"autocommit": True, "prepare_threshold": None}
    keepalives = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
    bounded = {**keepalives, "tcp_user_timeout": 10000}
    assert connect_options(url, {}) == {**base, "connect_timeout": 10, **bounded}
    assert connect_options(url, {"PGCONNECT_TIMEOUT": "5"}) == {  # libpq reads it
        **base,
        **keepalives,
        "tcp_user_timeout": 5000,
    }
    assert connect_options(url + "?connect_timeout=3&keepalives_idle=5&tcp_user_timeout=0", {}) == {
        **base,
        "keepalives": 1,
        "keepalives_interval": 10,
        "keepalives_count": 3,
    }
    assert (timeout_of(url, {}), timeout_of(url, {"PGCONNECT_TIMEOUT": "4"})) == (10, 4)
    assert timeout_of(url + "?connect_timeout=3", {"PGCONNECT_TIMEOUT": "4"}) == 3
    assert timeout_of(url + "?connect_timeout=0", {}) == 10  # libpq's "no timeout": no deadline is none here
