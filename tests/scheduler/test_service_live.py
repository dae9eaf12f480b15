"""The live review through the class service: learners look at the session and answer through it
(`RemoteLiveRoom`), as the owner of their token; the instructor runs the session with a `LiveRoom` of their
own and counts every answer; a learner sees their own answer only, and an answer to a closed question is
refused in the words the database's refusal has. The service shares one look at a session among the class
for `LIVE_SECONDS`.

Against a real PostgreSQL; the service runs in a thread of this process, tokens from a table.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password
from service_server import ServiceThread, StaticTokens

postgres = pytest.importorskip("scheduler.postgres")
service_module = pytest.importorskip("scheduler.service._server")
from scheduler.service import RemoteLiveRoom  # noqa: E402

SERVICE = "class_service"
LEARNERS = ("ana", "ben", "cy")


class Klass:
    def __init__(self, server: PostgresServer) -> None:
        self.name = server.create_database()
        admin = server.admin_url(self.name)
        postgres.install(admin)
        for learner in LEARNERS:
            postgres.add_learner(admin, learner)
        postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
        postgres.add_service(admin, SERVICE, password=learner_password(SERVICE))
        self.teacher_url = server.learner_url(self.name, "teacher")
        self.pool = postgres.ClassPool.open(server.url(SERVICE, learner_password(SERVICE), self.name))
        tokens = StaticTokens({f"{learner}-token": learner for learner in LEARNERS})
        self.thread = ServiceThread(service_module.ClassService(self.pool, tokens)).start()


@pytest.fixture
def klass(postgres_server: PostgresServer) -> Iterator[Klass]:
    made = Klass(postgres_server)
    try:
        yield made
    finally:
        made.thread.stop()
        made.pool.close()


def test_learners_answer_a_live_question_through_the_service(klass: Klass) -> None:
    rooms = {learner: RemoteLiveRoom.open(klass.thread.url, f"{learner}-token") for learner in LEARNERS}
    with postgres.LiveRoom.open(klass.teacher_url) as teacher:
        session = teacher.start("Lesson 01", T0)
        asked = teacher.ask(session.session, "01-q", T0 + timedelta(seconds=5))
        time.sleep(service_module.LIVE_SECONDS)  # the service's look at the session, taken before, has aged
        seen = {learner: room.state(room="teacher") for learner, room in rooms.items()}
        assert all(state == asked for state in seen.values())
        for learner, answer in zip(LEARNERS, ("0", "2", "2"), strict=True):
            rooms[learner].answer(asked, answer, T0 + timedelta(seconds=9))
        rooms["ana"].answer(asked, "1", T0 + timedelta(seconds=10))  # changed her mind: one answer each
        assert teacher.answers(session.session, 1).counts == {"2": 2, "1": 1}
        assert rooms["ana"].my_answer(session.session, 1) == "1"
        assert rooms["ben"].my_answer(session.session, 1) == "2"  # each their own
        assert [state.room for state in rooms["cy"].open_sessions()] == ["teacher"]
        teacher.reveal(session.session, T0 + timedelta(seconds=20))
        with pytest.raises(postgres.QuestionClosedError, match=r"question 1 of live session \d+ is closed"):
            rooms["cy"].answer(asked, "0", T0 + timedelta(seconds=21))
        assert teacher.answers(session.session, 1).answered == 3


def test_the_class_shares_one_look_at_a_session(klass: Klass) -> None:
    rooms = [RemoteLiveRoom.open(klass.thread.url, f"{learner}-token") for learner in LEARNERS]
    with postgres.LiveRoom.open(klass.teacher_url) as teacher:
        teacher.start("Lesson 01", T0)
        time.sleep(service_module.LIVE_SECONDS)
        service = klass.thread.service
        before = service.looks_read
        for _ in range(5):
            for room in rooms:
                assert room.state(room="teacher") is not None
        assert service.looks_read - before == 1  # fifteen looks, one read of the database
