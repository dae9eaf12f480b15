"""A learner who attacks the class database from their own account, in raw SQL as a learner's psycopg
connection sends it (issue 21's audit), against the real PostgreSQL of the ``postgres_server`` fixture:
they cannot freeze the class, stop another learner saving, run code as anyone else, take over a role, act as
a group, or see what docs/classroom.md says they may not. Each test fails on a database installed by the
code before these defences, and passes now. Live rooms (item 7) are in test_live_postgres.py and
widgets/test_live.py.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from fixed_clock import T0
from postgres_server import ADMIN, PostgresServer, learner_password
from store_helpers import GOOD, steps_memory

from scheduler import LogEntry, Rating, Settings, StoreLockedError
from scheduler._time import from_ms

psycopg = pytest.importorskip("psycopg")
postgres = pytest.importorskip("scheduler.postgres")

T = TypeVar("T")
TABLES = (
    "review_log",
    "cram_log",
    "cards",
    "decks",
    "settings",
    "write_lock",
    "nudge_log",
    "prediction_log",
    "live_session",
    "live_answer",
)
STRONG_MODES = ("ROW SHARE", "SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE")


@dataclass
class Klass:
    """A class database: learners alice and bob, instructor teacher."""

    server: PostgresServer
    name: str

    @property
    def admin_url(self) -> str:
        return self.server.admin_url(self.name)

    def url(self, role: str, password: str | None = None) -> str:
        return self.server.url(role, learner_password(role) if password is None else password, self.name)

    def admin(self) -> Any:
        return psycopg.connect(self.admin_url, autocommit=True)

    def connect(self, role: str) -> Any:
        return psycopg.connect(self.url(role), autocommit=True)

    def store(self, role: str, **options: Any) -> Any:
        return postgres.PostgresStore.open(self.url(role), memory=steps_memory(), **options)


def make_class(server: PostgresServer, before_install: Callable[[Any], None] | None = None) -> Klass:
    klass = Klass(server, server.create_database())
    if before_install is not None:
        with klass.admin() as admin:
            before_install(admin)
    postgres.install(klass.admin_url)
    for name in ("alice", "bob"):
        postgres.add_learner(klass.admin_url, name, password=learner_password(name))
    postgres.add_instructor(klass.admin_url, "teacher", password=learner_password("teacher"))
    return klass


@pytest.fixture
def klass(postgres_server: PostgresServer) -> Klass:
    return make_class(postgres_server)


def finishes(call: Callable[[], T], release: Callable[[], None], within_s: float = 15) -> T:
    """``call()``'s result, run in a thread; if it is still waiting after ``within_s``, ``release()`` (so
    that the thread ends) and fail: the call was blocked by what the test holds."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", call()))
        except BaseException as exc:  # re-raised in the test's thread
            outcome.append(("error", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within_s)
    if thread.is_alive():
        release()
        thread.join(30)
        pytest.fail(f"blocked for more than {within_s} s by another role's lock")
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value  # type: ignore[no-any-return]


def _fill(klass: Klass, role: str) -> None:
    with klass.store(role) as store:
        store.record(f"{role}-q", GOOD, T0)
        store.record_cram(f"{role}-q", GOOD, T0)
        store.enroll("01", T0)
        store.save_settings(Settings(0.85), T0)


# 1. Freezing everyone.


def test_a_learner_can_lock_no_table_against_the_class(klass: Klass) -> None:
    _fill(klass, "alice")
    for role in ("teacher", "alice"):  # nor can an instructor
        with klass.connect(role) as connection:
            for table in TABLES:
                for mode in (*STRONG_MODES, "ACCESS EXCLUSIVE"):
                    with pytest.raises(
                        psycopg.errors.InsufficientPrivilege, match=rf"^permission denied for table {table}$"
                    ):
                        connection.execute(f"BEGIN; LOCK TABLE course.{table} IN {mode} MODE")
                    connection.execute("ROLLBACK")
    with klass.connect("alice") as alice:
        for privilege in ("UPDATE", "DELETE", "TRUNCATE"):
            held = alice.execute(
                "SELECT string_agg(relname, ', ' ORDER BY relname) FROM pg_class WHERE relkind = 'r' "
                "AND relnamespace = 'course'::regnamespace AND has_table_privilege('alice', oid, %s)",
                (privilege,),
            ).fetchone()
            assert held == (None,), privilege  # column grants only: no table-wide UPDATE, no DELETE
        # everything alice may still hold, held at once: ROW EXCLUSIVE everywhere, her rows FOR UPDATE
        alice.execute("BEGIN")
        for table in (
            "review_log",
            "cram_log",
            "cards",
            "decks",
            "settings",
            "write_lock",
            "nudge_log",
            "live_answer",
        ):
            alice.execute(f"LOCK TABLE course.{table} IN ROW EXCLUSIVE MODE")
            alice.execute(f"SELECT * FROM course.{table} FOR UPDATE")
        alice.execute(
            "LOCK TABLE course.prediction_log IN ROW EXCLUSIVE MODE"
        )  # no column to update: no FOR UPDATE
        alice.execute("LOCK TABLE course.live_session, course.course_schema IN ACCESS SHARE MODE")
        release = lambda: alice.execute("ROLLBACK")  # noqa: E731

        def bobs_day() -> list[Any]:
            with klass.store("bob", lock_timeout_ms=2000) as bob:
                bob.record("b", GOOD, T0)
                bob.merge([LogEntry("b0", Rating.GOOD, T0 - timedelta(days=1), None)], [], {"01": T0})
                bob.save_settings(Settings(0.8), T0)
                return bob.reviews()

        assert [review.item_id for review in finishes(bobs_day, release)] == ["b0", "b"]
        records = finishes(lambda: postgres.class_records(klass.url("teacher")), release)
        assert sorted(records.answers) == ["alice", "bob"]
        alice.execute("ROLLBACK")


def test_reads_give_up_on_a_held_lock_instead_of_waiting_forever(klass: Klass) -> None:
    """Only an administrator can hold a lock that blocks reads (a migration does); a reader, the class
    report and a live look then wait at most their lock timeout (a StoreLockedError), never indefinitely."""
    _fill(klass, "alice")
    with klass.store("alice", lock_timeout_ms=300) as store, klass.admin() as admin:
        admin.execute("BEGIN")
        admin.execute("LOCK TABLE course.review_log, course.live_session IN ACCESS EXCLUSIVE MODE")
        release = lambda: admin.execute("ROLLBACK")  # noqa: E731
        reads = [
            store.reviews,
            lambda: postgres.class_records(klass.url("teacher"), lock_timeout_ms=300),
            lambda: postgres.LiveRoom.open(klass.url("alice"), lock_timeout_ms=300).close(),
        ]
        for read in reads:
            with pytest.raises(StoreLockedError, match=r"is locked by another program \(waited 0\.3 s\)"):
                finishes(read, release)
        admin.execute("ROLLBACK")
        assert [review.item_id for review in store.reviews()] == ["alice-q"]


def test_install_gives_up_on_a_learners_open_transaction_and_freezes_nobody(klass: Klass) -> None:
    """Installing again waits for no learner: its locks time out (it says so) rather than queue the class
    behind a learner's open transaction."""
    _fill(klass, "bob")
    with klass.connect("alice") as alice:
        alice.execute("BEGIN")
        alice.execute("SELECT * FROM course.review_log")  # and left open
        release = lambda: alice.execute("ROLLBACK")  # noqa: E731
        assert finishes(lambda: postgres.install(klass.admin_url), release) == (postgres.SCHEMA_VERSION)
        with klass.store("bob") as bob:
            assert len(finishes(bob.reviews, release)) == 1
        alice.execute("ROLLBACK")


# 2. Stopping another learner's saves.


ADVISORY_CALLS = (
    "pg_advisory_lock(1)",
    "pg_advisory_lock_shared(1)",
    "pg_try_advisory_lock(1)",
    "pg_try_advisory_lock_shared(1, 2)",
    "pg_advisory_xact_lock(1)",
    "pg_advisory_xact_lock_shared(1, 2)",
    "pg_try_advisory_xact_lock(1)",
    "pg_try_advisory_xact_lock_shared(1)",
)


def test_no_learner_can_fill_the_servers_lock_table_with_advisory_locks(klass: Klass) -> None:
    # issue 35: SELECT count(pg_advisory_lock(k)) FROM generate_series(1, 12000) k, as a learner, made every
    # new connection fail ("out of shared memory") while her session lived
    with klass.connect("alice") as alice:
        for call in ADVISORY_CALLS:
            name = call.split("(")[0]
            with pytest.raises(
                psycopg.errors.InsufficientPrivilege, match=f"permission denied for function {name}$"
            ):
                alice.execute(f"SELECT {call}")
    with klass.admin() as admin:  # the superuser who installed keeps them
        assert admin.execute("SELECT pg_try_advisory_lock(1)").fetchone() == (True,)


def test_a_learner_has_a_few_connections_and_no_more(klass: Klass) -> None:
    # issue 35: a learner role had no connection limit, and 94 connections of hers left none for anyone else
    limit = postgres.LEARNER_CONNECTION_LIMIT
    held = [klass.connect("alice") for _ in range(limit)]
    try:
        with pytest.raises(psycopg.OperationalError, match='too many connections for role "alice"'):
            klass.connect("alice")
        with klass.store("bob") as bob:  # another learner still saves
            bob.record("b", GOOD, T0)
        with klass.connect("teacher") as teacher:
            assert teacher.execute("SELECT 1").fetchone() == (1,)
    finally:
        for connection in held:
            connection.close()


def test_install_limits_the_learners_added_before_the_limit_and_keeps_a_chosen_one(klass: Klass) -> None:
    with klass.admin() as admin:
        admin.execute("ALTER ROLE alice CONNECTION LIMIT -1")
        admin.execute("ALTER ROLE bob CONNECTION LIMIT 3")
    postgres.install(klass.admin_url)
    postgres.add_learner(klass.admin_url, "cy", password="pw-cy")
    with klass.admin() as admin:
        limits = admin.execute(
            "SELECT rolname, rolconnlimit FROM pg_roles WHERE rolname IN ('alice', 'bob', 'cy', 'teacher') "
            "ORDER BY 1"
        ).fetchall()
    assert limits == [("alice", 8), ("bob", 3), ("cy", 8), ("teacher", -1)]


def test_no_learner_can_stop_another_learners_saves(klass: Klass) -> None:
    _fill(klass, "bob")
    _fill(klass, "alice")
    with klass.connect("alice") as alice:
        # what the store serialized a learner's writes with before, an advisory lock, no learner may take now
        # (issue 35: thousands of them filled the server's shared lock table)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="pg_advisory_lock"):
            alice.execute("SELECT pg_advisory_lock(x'41744373'::int, hashtext('bob'))")
        # what serializes them now: each learner's own row of write_lock, which nobody else sees or locks
        alice.execute("BEGIN")
        assert alice.execute("SELECT learner FROM course.write_lock FOR UPDATE").fetchall() == [("alice",)]
        release = lambda: alice.execute("ROLLBACK")  # noqa: E731
        with klass.store("bob", lock_timeout_ms=300) as bob:
            finishes(lambda: bob.record("b", GOOD, T0 + timedelta(minutes=1)), release)
            assert len(bob.reviews()) == 2
        alice.execute("ROLLBACK")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            alice.execute("INSERT INTO course.write_lock (learner) VALUES ('bob')")  # bob's row is bob's


# 3. Code planted for others to run.


def test_code_a_learner_plants_in_a_writable_public_schema_is_never_run(
    postgres_server: PostgresServer,
) -> None:
    # public writable by every role: PostgreSQL 13 and 14's default
    klass = make_class(
        postgres_server, lambda admin: admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    )
    with (
        klass.connect("alice") as alice,
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for schema public"),
    ):
        alice.execute("CREATE TABLE public.stolen (who text)")  # install took it away
    with klass.admin() as admin:
        admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")  # and an administrator gave it back
    with klass.connect("alice") as alice:
        alice.execute("CREATE TABLE public.stolen (who text, what text)")
        alice.execute("GRANT INSERT ON public.stolen TO PUBLIC")
        trojans = {  # each a better match than pg_catalog's for a call the code before made
            "hashtext(name)": "integer",
            "to_regnamespace(name)": "regnamespace",
            "to_regclass(name)": "regclass",
            "set_config(name, name, boolean)": "text",
            "has_table_privilege(name, name)": "boolean",
        }
        for signature, returns in trojans.items():
            alice.execute(
                f"CREATE FUNCTION public.{signature} RETURNS {returns} LANGUAGE sql AS "
                f"$$ INSERT INTO public.stolen VALUES (current_user, '{signature}') "
                f"RETURNING NULL::{returns} $$"
            )
    with klass.store("bob") as bob:
        bob.record("b", GOOD, T0)
        bob.check_writable()
        bob.save_settings(Settings(0.8), T0)
        bob.merge([LogEntry("b0", Rating.GOOD, T0 - timedelta(days=1), None)], [], {"01": T0})
        with bob.snapshot():
            assert len(bob.reviews()) == 2
    assert postgres.schema_version(klass.url("bob")) == postgres.SCHEMA_VERSION
    with (
        postgres.LiveRoom.open(klass.url("teacher")) as teacher,
        postgres.LiveRoom.open(klass.url("bob")) as b,
    ):
        asked = teacher.ask(teacher.start("s", T0).session, "q", T0)
        b.answer(asked, "1", T0)
        assert teacher.answers(asked.session, 1).counts == {"1": 1}
    postgres.class_records(klass.url("teacher"))
    postgres.install(klass.admin_url)
    postgres.add_learner(klass.admin_url, "cy", password="pw-cy")
    with klass.admin() as admin:
        assert admin.execute("SELECT who, what FROM public.stolen").fetchall() == []


# 4. Taking over roles.


def _role(klass: Klass, name: str) -> tuple[Any, ...]:
    with klass.admin() as admin:
        row = admin.execute(
            "SELECT r.*, ARRAY(SELECT roleid::regrole::text FROM pg_auth_members WHERE member = r.oid "
            "ORDER BY 1) FROM pg_authid r WHERE rolname = %s",
            (name,),
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_adding_a_learner_or_instructor_never_takes_over_a_role_that_is_not_its_own(klass: Klass) -> None:
    with klass.admin() as admin:
        admin.execute("CREATE ROLE root_too SUPERUSER CREATEDB CREATEROLE REPLICATION BYPASSRLS LOGIN")
        admin.execute("CREATE ROLE root_only SUPERUSER LOGIN PASSWORD 'root-secret'")
        admin.execute("CREATE ROLE maker CREATEDB CREATEROLE LOGIN")
        admin.execute("CREATE ROLE staff NOLOGIN")
        admin.execute("GRANT staff TO maker")
        admin.execute("CREATE ROLE stranger LOGIN")
        admin.execute("CREATE ROLE clerk LOGIN IN ROLE staff, course_learner")
    every_privilege = (
        "a superuser, allowed to create roles, allowed to create databases, a replication role, exempt from "
        "row-level security"
    )
    refusals = [
        ("learner", "root_too", f"the role exists and is {every_privilege}, not in course_learner"),
        ("instructor", "root_only", "the role exists and is a superuser, not in course_instructor"),
        (
            "learner",
            "maker",
            "the role exists and is allowed to create roles, allowed to create databases, a member of staff, "
            "not in course_learner",
        ),
        (
            "learner",
            "staff",
            "the role exists and is a group (of clerk, maker), not a login role, not in course_learner",
        ),
        ("learner", "stranger", "the role exists and is not in course_learner"),
        ("learner", "clerk", "the role exists and is a member of staff"),
        ("learner", "teacher", "the role exists and is a member of course_instructor, not in course_learner"),
        (
            "instructor",
            "alice",
            "the role exists and is a member of course_learner, not in course_instructor",
        ),
        ("learner", "course_learner", "it is the course's group of learners"),
        ("learner", "course_instructor", "it is the course's group of instructors"),
        ("instructor", "course_instructor", "it is the course's group of instructors"),
        ("instructor", "course_learner", "it is the course's group of learners"),
    ]
    for kind, name, why in refusals:
        before = _role(klass, name)
        add = postgres.add_learner if kind == "learner" else postgres.add_instructor
        article = "a" if kind == "learner" else "an"
        with pytest.raises(ValueError) as refused:
            add(klass.admin_url, name, password="taken-over")
        assert str(refused.value) == (
            f"cannot make {name!r} {article} {kind}: {why}; add_{kind} changes no role but its own {kind}s "
            f"(login roles in course_{kind} alone, with no other privilege)"
        ), name
        assert _role(klass, name) == before, name  # not one attribute, password or membership changed
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(klass.url("course_instructor", "taken-over"))
    # its own learner: a new password is set, nothing else
    postgres.add_learner(klass.admin_url, "alice", password="new-secret")
    with psycopg.connect(klass.url("alice", "new-secret")) as alice:
        assert alice.execute("SELECT current_user").fetchone() == ("alice",)
    postgres.add_instructor(klass.admin_url, "teacher")  # again, no password: nothing changes
    with klass.connect("teacher") as teacher:
        assert teacher.execute("SELECT current_user").fetchone() == ("teacher",)


# 5. Names PostgreSQL would cut.


def test_role_names_over_63_bytes_are_refused_wherever_they_enter(klass: Klass) -> None:
    ascii64, cjk66 = "a" * 64, "学" * 22  # 64 bytes; 66 bytes in 22 characters (cut to 21)
    for name, cut in ((ascii64, "a" * 63), (cjk66, "学" * 21)):
        size = len(name.encode())
        problem = (
            f"the name {name!r} is {size} bytes in UTF-8, over PostgreSQL's 63 for a role name (it would "
            f"be cut to {cut!r})"
        )
        for add in (postgres.add_learner, postgres.add_instructor):
            with pytest.raises(ValueError) as refused:
                add(klass.admin_url, name, password="pw")
            assert str(refused.value) == f"{problem}; choose a shorter name"
        with pytest.raises(postgres.AccessDeniedError) as denied:
            postgres.with_learner("postgresql://db.example/course", name)
        assert str(denied.value) == (
            f"{postgres.describe('postgresql://db.example/course')} refused this access ({problem}; no "
            "learner of the class has it); ask whoever runs the class database to check your role"
        )
        with pytest.raises(postgres.AccessDeniedError, match="over PostgreSQL's 63 for a role name"):
            postgres.PostgresStore.open(klass.url("alice"), learner=name)
        with pytest.raises(postgres.AccessDeniedError, match="over PostgreSQL's 63 for a role name"):
            postgres.PostgresStore.open(klass.url(name))
    with klass.admin() as admin:
        assert admin.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'aaa%'").fetchone() == (0,)
    longest = "b" * 60 + "学"  # 63 bytes: kept whole
    postgres.add_learner(klass.admin_url, longest, password="pw-long")
    with postgres.PostgresStore.open(klass.url(longest, "pw-long"), learner=longest) as store:
        assert store.learner == longest


# 6. Acting as a group.


def test_acting_as_a_group_role_achieves_nothing(klass: Klass) -> None:
    with postgres.LiveRoom.open(klass.url("teacher")) as teacher:
        asked = teacher.ask(teacher.start("s", T0).session, "q", T0)
    inserts = {
        "review_log": "INSERT INTO course.review_log (seq, item_id, rating, reviewed_at, due, state_before) "
        "VALUES (1, 'q', 3, 0, 0, 0)",
        "cram_log": "INSERT INTO course.cram_log (seq, item_id, rating, reviewed_at) VALUES (1, 'q', 3, 0)",
        "cards": "INSERT INTO course.cards (item_id, state, due, reps, lapses, log_seq) "
        "VALUES ('q', 2, 0, 1, 0, 1)",
        "decks": "INSERT INTO course.decks (deck, enrolled_at) VALUES ('01', 0)",
        "settings": "INSERT INTO course.settings (name, value, set_at) VALUES ('x', '1', 0)",
        "write_lock": "INSERT INTO course.write_lock DEFAULT VALUES",
        "live_member": "INSERT INTO course.live_member (room, joined_at) VALUES ('teacher', 0)",
    }
    answer = (
        "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) "
        f"VALUES ({asked.session}, 1, 'q', '1', 0)"
    )
    with klass.connect("alice") as alice:
        alice.execute("SET ROLE course_learner")  # PostgreSQL 15: membership alone allows it
        for table, statement in inserts.items():
            with pytest.raises(
                psycopg.errors.CheckViolation,
                match=rf'^new row for relation "{table}" violates check constraint "{table}_not_a_group"',
            ):
                alice.execute(statement)
        # a live answer only in a room joined: no member is a group (live_member_not_a_group)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security policy"):
            alice.execute(answer)
    with klass.connect("teacher") as teacher:
        teacher.execute("SET ROLE course_instructor")
        with pytest.raises(
            psycopg.errors.CheckViolation,
            match=r'^new row for relation "live_session" violates check constraint "live_session_not_a_gro',
        ):
            teacher.execute("INSERT INTO course.live_session (title, started_at) VALUES ('mine', 0)")
    assert sorted(postgres.class_records(klass.url("teacher")).answers) == []
    with klass.admin() as admin:
        groups = admin.execute(
            "SELECT rolname, rolcanlogin, rolinherit FROM pg_roles "
            "WHERE rolname IN ('course_learner', 'course_instructor') ORDER BY 1"
        ).fetchall()
    assert groups == [("course_instructor", False, False), ("course_learner", False, False)]


def test_install_repairs_a_group_made_a_login_role(klass: Klass) -> None:
    with klass.admin() as admin:  # what add_learner(admin, "course_instructor", ...) used to do
        admin.execute("ALTER ROLE course_instructor LOGIN PASSWORD 'pw-course_instructor'")
    postgres.install(klass.admin_url)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        klass.connect("course_instructor")


# 9. What a learner sees of the class.


def test_a_learner_sees_of_the_class_only_what_docs_classroom_md_says(klass: Klass) -> None:
    with klass.connect("alice") as alice:
        for query in (
            "SELECT usename FROM pg_stat_activity",
            "SELECT pg_stat_get_backend_userid(s) FROM pg_stat_get_backend_idset() s",
            "SELECT n_live_tup FROM pg_stat_user_tables",
            "SELECT n_tup_ins FROM pg_stat_xact_user_tables",
            "SELECT pg_stat_get_live_tuples('course.review_log'::regclass)",
            "SELECT pid, relation FROM pg_locks",
            "SELECT * FROM pg_lock_status()",
            "SELECT pg_blocking_pids(pg_backend_pid())",
            "SELECT lo_create(0)",
            "SELECT lo_creat(-1)",
            "SELECT lo_from_bytea(0, 'x')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=r"^permission denied for "):
                alice.execute(query)
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match=r"^permission denied to create temporary"
        ):
            alice.execute("CREATE TEMP TABLE hoard (x text)")
        # what PostgreSQL shows every role, and no grant hides (docs/classroom.md says so): the roles' names
        names = {name for (name,) in alice.execute("SELECT rolname FROM pg_roles")}
        assert {"alice", "bob", "teacher"} <= names


OWNER = (
    "class_owner"  # a managed PostgreSQL's administrator: may create roles, owns the database, no superuser
)


def owned_database(server: PostgresServer) -> tuple[str, str]:
    """A new database that `OWNER` owns, and `OWNER`'s URL for it."""
    with psycopg.connect(server.admin_url(), autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (OWNER,)).fetchone() is None:
            admin.execute(f"CREATE ROLE {OWNER} LOGIN CREATEROLE PASSWORD 'pw-{OWNER}'")
        name = server.create_database()
        admin.execute(f"ALTER DATABASE {name} OWNER TO {OWNER}")
    return name, server.url(OWNER, f"pw-{OWNER}", name)


def test_an_install_that_cannot_take_those_away_says_so(postgres_server: PostgresServer) -> None:
    """A managed PostgreSQL's administrator is no superuser: install does what it can and warns."""
    name, url = owned_database(postgres_server)
    with psycopg.connect(postgres_server.admin_url(name), autocommit=True) as admin:
        admin.execute(f"ALTER SCHEMA public OWNER TO {ADMIN}")  # as on PostgreSQL 13 and 14
        admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert postgres.install(url) == postgres.SCHEMA_VERSION
    where = postgres.describe(url)
    assert [str(warning.message) for warning in caught if issubclass(warning.category, UserWarning)] == [
        f"{where}: every role may still create objects in schema public (its owner, {ADMIN}, can stop "
        "that: REVOKE CREATE ON SCHEMA public FROM PUBLIC); the course's own statements are never misled "
        "by them",
        f"{where}: learners may still see who is online, the tables' activity counts and the locks held, "
        "create large objects and take advisory locks (enough of them fill the server's lock table): only a "
        "superuser can take that away (run install once as one; see docs/classroom.md)",
    ]
    postgres.add_learner(url, "dee", password="pw-dee")
    with postgres.PostgresStore.open(postgres_server.url("dee", "pw-dee", name)) as store:
        store.record("q", GOOD, T0)  # a class installed so works all the same
        assert len(store.reviews()) == 1


# The migration that brings all this to a class database of before (version 3, with its rows).


@pytest.mark.filterwarnings("ignore:.*only a superuser can take that away")
def test_a_version_3_class_database_migrates_with_every_learners_rows(
    postgres_server: PostgresServer,
) -> None:
    name, owner_url = owned_database(postgres_server)  # its owner migrates it: held by the policies too
    from scheduler.postgres._schema import MIGRATIONS

    assert postgres.install(owner_url, migrations=MIGRATIONS[:3]) == 3
    klass = Klass(postgres_server, name)
    for learner in ("alice", "bob"):
        postgres.add_learner(owner_url, learner, password=learner_password(learner))
    for teacher in ("teacher", "other_teacher"):
        postgres.add_instructor(owner_url, teacher, password=learner_password(teacher))
    review = "INSERT INTO course.review_log (seq, item_id, rating, reviewed_at, due, state_before) VALUES "
    with klass.connect("alice") as alice, klass.connect("teacher") as teacher:
        alice.execute(review + "(1, 'q1', 3, 1000, 90000000, 0), (2, 'q2', 1, 2000, 60000, 0)")
        alice.execute(
            "INSERT INTO course.cram_log (seq, item_id, rating, reviewed_at) VALUES (1, 'q1', 4, 1500)"
        )
        alice.execute("INSERT INTO course.decks (deck, enrolled_at) VALUES ('01', 500)")
        alice.execute(
            "INSERT INTO course.settings (name, value, set_at) VALUES ('desired_retention', '0.85', 1)"
        )
        stale = teacher.execute(
            "INSERT INTO course.live_session (title, started_at) VALUES ('left running', 10) RETURNING id"
        ).fetchone()
        session = teacher.execute(
            "INSERT INTO course.live_session (title, started_at) VALUES ('now', 20) RETURNING id"
        ).fetchone()
        teacher.execute("UPDATE course.live_session SET position = 1, item_id = 'q1' WHERE id = %s", session)
        alice.execute(
            "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) "
            "VALUES (%s, 1, 'q1', '4 h', 30)",
            session,
        )
        alice.execute("SET ROLE course_learner")  # a pseudo-learner's rows, which version 4 forbids
        alice.execute(review + "(1, 'q1', 3, 1000, 90000000, 0)")
        alice.execute("RESET ROLE")
        teacher.execute("SET ROLE course_instructor")
        teacher.execute("INSERT INTO course.live_session (title, started_at) VALUES ('as the group', 40)")
    with klass.admin() as admin:
        before = {
            table: admin.execute(
                f"SELECT * FROM course.{table} WHERE learner = 'alice' ORDER BY 1, 2"
            ).fetchall()
            for table in ("review_log", "cram_log", "decks", "settings", "live_answer")
        }
    assert postgres.install(owner_url) == postgres.SCHEMA_VERSION == 7
    with klass.admin() as admin:
        after = {
            table: admin.execute(
                f"SELECT * FROM course.{table} WHERE learner = 'alice' ORDER BY 1, 2"
            ).fetchall()
            for table in before
        }
        assert after == before  # every row of alice's, the free text of before included, as it was
        assert admin.execute(
            "SELECT count(*) FROM course.review_log WHERE learner <> 'alice'"
        ).fetchone() == (0,)
        sessions = admin.execute(
            "SELECT id, instructor, room, ended_at FROM course.live_session ORDER BY id"
        ).fetchall()
    assert sessions == [  # in their instructor's room; one running per room; the group's gone
        (stale[0], "teacher", "teacher", 10),
        (session[0], "teacher", "teacher", None),
    ]
    with klass.store("alice") as store:
        assert [review.item_id for review in store.reviews()] == ["q1", "q2"]
        assert store.settings() == Settings(0.85)
        store.record("q3", GOOD, T0)
        store.merge([LogEntry("q0", Rating.GOOD, from_ms(1), None)], [], {})
        assert [review.item_id for review in store.reviews()] == ["q0", "q1", "q2", "q3"]
    with postgres.LiveRoom.open(klass.url("alice")) as room:
        assert room.state() == room.state(session[0]) and room.state().room == "teacher"
    with klass.connect("alice") as alice, pytest.raises(psycopg.errors.InsufficientPrivilege):
        alice.execute("BEGIN; LOCK TABLE course.review_log IN EXCLUSIVE MODE")
