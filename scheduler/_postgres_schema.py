"""The classroom database's schema: one schema ``course`` holding every learner's rows, versioned like the
SQLite file (``course.course_schema`` holds the number of migrations applied), with row-level security.

Every data table has ``learner TEXT COLLATE "C" NOT NULL DEFAULT current_user``: a learner is the database
role the connection logs in as (compared as a role name is: byte by byte). Members of ``course_learner``
read and write their own rows only; members of ``course_instructor`` read every row and write none; both
policies are enforced by the server (``FORCE ROW LEVEL SECURITY``: the tables' owner too; a superuser is
never held by them). Times are integer milliseconds since the Unix epoch (UTC), ratings 1..4, states coded
as in the SQLite store. ``seq`` orders a learner's log (``merge`` renumbers it).
"""

from __future__ import annotations

__all__ = [
    "APPLICATION",
    "DATA_TABLES",
    "INSTRUCTOR_ROLE",
    "LEARNER_ROLE",
    "LIVE_COLUMNS",
    "MIGRATIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TABLE_COLUMNS",
    "access_statements",
]

SCHEMA = "course"
APPLICATION = "attention-course"  # course_schema.application: tells our database from another
LEARNER_ROLE = "course_learner"
INSTRUCTOR_ROLE = "course_instructor"

_LEARNER = 'learner TEXT COLLATE "C" NOT NULL DEFAULT current_user'

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE course.review_log (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            {_LEARNER},
            seq BIGINT NOT NULL,
            item_id TEXT NOT NULL,
            rating SMALLINT NOT NULL CHECK (rating BETWEEN 1 AND 4),
            reviewed_at BIGINT NOT NULL,
            duration_ms BIGINT,
            due BIGINT NOT NULL,
            state_before SMALLINT NOT NULL CHECK (state_before BETWEEN 0 AND 3),
            UNIQUE (learner, seq)
        )""",
        "CREATE INDEX review_log_by_item ON course.review_log (learner, item_id, seq)",
        "CREATE INDEX review_log_by_time ON course.review_log (learner, reviewed_at)",
        f"""CREATE TABLE course.cram_log (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            {_LEARNER},
            seq BIGINT NOT NULL,
            item_id TEXT NOT NULL,
            rating SMALLINT NOT NULL CHECK (rating BETWEEN 1 AND 4),
            reviewed_at BIGINT NOT NULL,
            duration_ms BIGINT,
            UNIQUE (learner, seq)
        )""",
        f"""CREATE TABLE course.cards (
            {_LEARNER},
            item_id TEXT NOT NULL,
            state SMALLINT NOT NULL CHECK (state BETWEEN 1 AND 3),
            step INTEGER,
            stability DOUBLE PRECISION,
            difficulty DOUBLE PRECISION,
            due BIGINT NOT NULL,
            last_review BIGINT,
            reps INTEGER NOT NULL,
            lapses INTEGER NOT NULL,
            log_seq BIGINT NOT NULL,
            PRIMARY KEY (learner, item_id)
        )""",
        "CREATE INDEX cards_by_due ON course.cards (learner, due)",
        f"""CREATE TABLE course.decks (
            {_LEARNER},
            deck TEXT NOT NULL,
            enrolled_at BIGINT NOT NULL,
            PRIMARY KEY (learner, deck)
        )""",
        *(
            statement
            for table in ("review_log", "cram_log", "cards", "decks")
            for statement in (
                f"ALTER TABLE course.{table} ENABLE ROW LEVEL SECURITY",
                f"ALTER TABLE course.{table} FORCE ROW LEVEL SECURITY",
            )
        ),
    ),
    (
        f"""CREATE TABLE course.settings (
            {_LEARNER},
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            set_at BIGINT NOT NULL,
            PRIMARY KEY (learner, name)
        )""",
        "ALTER TABLE course.settings ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE course.settings FORCE ROW LEVEL SECURITY",
    ),
    (
        # Live class sessions: an instructor asks one item at a time; learners answer it until it is revealed.
        # Apart from the review logs: a live answer changes nobody's schedule.
        """CREATE TABLE course.live_session (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            instructor TEXT COLLATE "C" NOT NULL DEFAULT current_user,
            title TEXT NOT NULL,
            started_at BIGINT NOT NULL,
            ended_at BIGINT,
            position INTEGER NOT NULL DEFAULT 0 CHECK (position >= 0),
            item_id TEXT,
            layout TEXT NOT NULL DEFAULT '',
            asked_at BIGINT,
            revealed_at BIGINT
        )""",
        "CREATE INDEX live_session_open ON course.live_session (started_at) WHERE ended_at IS NULL",
        f"""CREATE TABLE course.live_answer (
            session_id BIGINT NOT NULL REFERENCES course.live_session (id),
            position INTEGER NOT NULL CHECK (position > 0),
            item_id TEXT NOT NULL,
            {_LEARNER},
            answer TEXT NOT NULL CHECK (length(answer) BETWEEN 1 AND 200),
            answered_at BIGINT NOT NULL,
            PRIMARY KEY (session_id, position, learner)
        )""",
        *(
            statement
            for table in ("live_session", "live_answer")
            for statement in (
                f"ALTER TABLE course.{table} ENABLE ROW LEVEL SECURITY",
                f"ALTER TABLE course.{table} FORCE ROW LEVEL SECURITY",
            )
        ),
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)

# The columns each table must have for this code to use it (checked on opening).
TABLE_COLUMNS = {
    "review_log": "learner, seq, item_id, rating, reviewed_at, duration_ms, due, state_before",
    "cram_log": "learner, seq, item_id, rating, reviewed_at, duration_ms",
    "cards": "learner, item_id, state, step, stability, difficulty, due, last_review, reps, lapses, log_seq",
    "decks": "learner, deck, enrolled_at",
    "settings": "learner, name, value, set_at",
}
DATA_TABLES = tuple(TABLE_COLUMNS)
LIVE_COLUMNS = {
    "live_session": (
        "id, instructor, title, started_at, ended_at, position, item_id, layout, asked_at, revealed_at"
    ),
    "live_answer": "session_id, position, item_id, learner, answer, answered_at",
}
# A learner may answer only the question a live session asks now, before it is revealed or the session ends.
_OPEN_QUESTION = (
    "EXISTS (SELECT 1 FROM course.live_session s WHERE s.id = session_id "
    "AND s.position = live_answer.position AND s.item_id = live_answer.item_id "
    "AND s.revealed_at IS NULL AND s.ended_at IS NULL)"
)


def access_statements(version: int) -> list[str]:
    """The grants and policies for the tables of schema ``version`` (run after every install: idempotent).

    Learners: USAGE on the schema, SELECT/INSERT/UPDATE/DELETE on the data tables (no TRUNCATE, no DDL),
    SELECT on the version; their policy ``learner = current_user`` for reading and writing. Instructors:
    SELECT on everything, a policy letting them read every row."""
    tables = [table for table in DATA_TABLES if version >= 2 or table != "settings"]
    statements = [
        f"REVOKE ALL ON SCHEMA {SCHEMA} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {SCHEMA} TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
        f"GRANT SELECT ON {SCHEMA}.course_schema TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
    ]
    for table in tables:
        name = f"{SCHEMA}.{table}"
        statements += [
            f"REVOKE ALL ON {name} FROM PUBLIC",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON {name} TO {LEARNER_ROLE}",
            f"GRANT SELECT ON {name} TO {INSTRUCTOR_ROLE}",
            f"DROP POLICY IF EXISTS learner_own_rows ON {name}",
            f"CREATE POLICY learner_own_rows ON {name} FOR ALL TO {LEARNER_ROLE} "
            "USING (learner = current_user::text) WITH CHECK (learner = current_user::text)",
            f"DROP POLICY IF EXISTS instructor_reads_all ON {name}",
            f"CREATE POLICY instructor_reads_all ON {name} FOR SELECT TO {INSTRUCTOR_ROLE} USING (true)",
        ]
    if version >= 3:
        statements += _live_statements()
    return statements


def _live_statements() -> list[str]:
    """Live sessions: everyone in the class reads the sessions; an instructor starts and runs their own. A
    learner reads and writes their own answers, to the open question only; an instructor reads them all."""
    session, answer = f"{SCHEMA}.live_session", f"{SCHEMA}.live_answer"
    mine = "learner = current_user::text"
    return [
        f"REVOKE ALL ON {session}, {answer} FROM PUBLIC",
        f"GRANT SELECT ON {session} TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
        "GRANT INSERT (title, started_at), "
        f"UPDATE (ended_at, position, item_id, layout, asked_at, revealed_at) ON {session} "
        f"TO {INSTRUCTOR_ROLE}",
        f"GRANT SELECT, INSERT, UPDATE ON {answer} TO {LEARNER_ROLE}",
        f"GRANT SELECT ON {answer} TO {INSTRUCTOR_ROLE}",
        *(f"DROP POLICY IF EXISTS {policy} ON {table}" for policy, table in _LIVE_POLICIES),
        f"CREATE POLICY class_reads ON {session} FOR SELECT TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE} "
        "USING (true)",
        f"CREATE POLICY instructor_starts ON {session} FOR INSERT TO {INSTRUCTOR_ROLE} "
        "WITH CHECK (instructor = current_user::text)",
        f"CREATE POLICY instructor_runs ON {session} FOR UPDATE TO {INSTRUCTOR_ROLE} "
        "USING (instructor = current_user::text) WITH CHECK (instructor = current_user::text)",
        f"CREATE POLICY learner_reads_own ON {answer} FOR SELECT TO {LEARNER_ROLE} USING ({mine})",
        f"CREATE POLICY learner_answers ON {answer} FOR INSERT TO {LEARNER_ROLE} "
        f"WITH CHECK ({mine} AND {_OPEN_QUESTION})",
        f"CREATE POLICY learner_changes ON {answer} FOR UPDATE TO {LEARNER_ROLE} USING ({mine}) "
        f"WITH CHECK ({mine} AND {_OPEN_QUESTION})",
        f"CREATE POLICY instructor_reads_all ON {answer} FOR SELECT TO {INSTRUCTOR_ROLE} USING (true)",
    ]


_LIVE_POLICIES = (
    ("class_reads", "course.live_session"),
    ("instructor_starts", "course.live_session"),
    ("instructor_runs", "course.live_session"),
    ("learner_reads_own", "course.live_answer"),
    ("learner_answers", "course.live_answer"),
    ("learner_changes", "course.live_answer"),
    ("instructor_reads_all", "course.live_answer"),
)
