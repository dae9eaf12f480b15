"""The classroom database's schema: one schema ``course`` holding every learner's rows, versioned like the
SQLite file (``course.course_schema`` holds the number of migrations applied), with row-level security.

Every data table has ``learner TEXT COLLATE "C" NOT NULL DEFAULT current_user``: a learner is the database
role the connection logs in as (compared as a role name is: byte by byte). Members of ``course_learner``
read and write their own rows only; members of ``course_instructor`` read every row and write none; both
policies are enforced by the server (``FORCE ROW LEVEL SECURITY``: the tables' owner too; a superuser is
never held by them). No row belongs to a group role (a CHECK on every table: a member acting as the group,
``SET ROLE course_learner``, can write nothing). Times are integer milliseconds since the Unix epoch (UTC),
ratings 1..4, states coded as in the SQLite store. ``seq`` orders a learner's log (``merge`` rewrites its
tail in place).

Learners hold SELECT and INSERT on their tables and UPDATE on named columns only: never a table-wide UPDATE,
DELETE or TRUNCATE, which would let them ``LOCK TABLE`` a table against the whole class. Each learner's
writes are serialized by their own row of ``write_lock`` (locked by an upsert; row-level security hides it,
and the lock, from everyone else). A live session belongs to a room: at most one session runs in a room.

Version 6 bounds what one learner can fill and keeps rooms in the database. Every row a learner adds to the
tables of `COUNTED_TABLES` is counted in ``row_count`` (by statement-level triggers over the statement's
transition table: one upsert per statement, whatever its size, in a SECURITY DEFINER function of the
installing role's); a statement that takes a learner over ``class_limit.learner_rows`` (`LEARNER_ROW_LIMIT`
unless the administrator set another: ``install(admin_url, row_limit=...)``) is refused (SQLSTATE
`ROW_LIMIT_SQLSTATE`) and nothing of it is kept. A live answer is accepted only in a room the learner joined
(``live_member``, not ``removed``): a learner joins a room by adding their own row; an instructor sees who
joined and removes one (``removed``, which learners cannot change: their answers in the room's running session
are deleted, and they cannot answer there or join again).

Version 7 adds ``prediction_log``: the guesses a learner committed before an outcome was shown
(``PredictionEvent``; ``"right"`` NULL when skipped, quoted: RIGHT is a keyword), a log of their own as
``nudge_log`` is (the learner's own rows, no group's, counted towards the row limit), which changes no card.
A learner only adds to it: SELECT and INSERT, no column to UPDATE.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler._bounds import MAX_PREDICTION_ANSWER, MAX_REASON

__all__ = [
    "ANSWER_PATTERN",
    "APPLICATION",
    "COUNTED_TABLES",
    "DATA_TABLES",
    "GROUPS",
    "INSTRUCTOR_ROLE",
    "LEARNER_ROLE",
    "LEARNER_ROW_LIMIT",
    "LIVE_COLUMNS",
    "MAX_ANSWER",
    "MIGRATIONS",
    "MINE",
    "ROW_LIMIT_SQLSTATE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SERVICE_ROLE",
    "TABLE_COLUMNS",
    "Policy",
    "grant_statements",
    "policies",
]

SCHEMA = "course"
APPLICATION = "attention-course"  # course_schema.application: tells our database from another
LEARNER_ROLE = "course_learner"
INSTRUCTOR_ROLE = "course_instructor"

GROUPS = (LEARNER_ROLE, INSTRUCTOR_ROLE)
SERVICE_ROLE = "course_service"
"""The group of the class services' login roles: a member of every learner's role (so that a service may
``SET ROLE`` to a learner, for one transaction), NOINHERIT (so that it holds none of their privileges
itself); its members read the schema's version and nothing else as themselves."""
_LEARNER = 'learner TEXT COLLATE "C" NOT NULL DEFAULT current_user'
_A_GROUP = f"IN ('{LEARNER_ROLE}', '{INSTRUCTOR_ROLE}')"
_NOT_A_GROUP = f"NOT {_A_GROUP}"
# A live answer as recorded: a choice question's option index, or a number (what `course.classroom` sends:
# digits, a sign, a point, an exponent). Nothing else a learner types is kept, or reaches the projector.
ANSWER_PATTERN = r"^-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$"
MAX_ANSWER = 32
LEARNER_ROW_LIMIT = 200_000
"""The rows one learner may keep, all `COUNTED_TABLES` together, unless the class's administrator sets
another (``install(admin_url, row_limit=n)``, kept by later installs; or ``UPDATE course.class_limit SET
learner_rows = n``). A heavy year of study is tens of thousands of answers: 200,000 leaves room for several,
and bounds what one learner's rows cost the instructor's report."""
ROW_LIMIT_SQLSTATE = "CL001"  # what the server refuses a statement over the limit with (a class of our own)
# The tables counted from version 6 on (its migration counts their rows and puts its triggers on them).
_COUNTED_IN_6 = ("review_log", "cram_log", "nudge_log", "cards", "decks", "settings", "live_member")
COUNTED_TABLES = (
    "review_log",
    "cram_log",
    "nudge_log",
    "prediction_log",
    "cards",
    "decks",
    "settings",
    "live_member",
)
"""The tables whose rows count towards a learner's limit: every table a learner adds rows to at will. Not
``live_answer`` (one row per question an instructor asked, at most) nor ``write_lock`` (one row)."""
_OWNED = {  # table: the column naming its owner
    "review_log": "learner",
    "cram_log": "learner",
    "cards": "learner",
    "decks": "learner",
    "settings": "learner",
    "live_answer": "learner",
}


def _unforced(tables: tuple[str, ...], *statements: str) -> tuple[str, ...]:
    """``statements`` run with row-level security not forced on ``tables`` (so that the tables' owner, who
    is held by the policies otherwise, sees and changes every row), forced again after."""
    return (
        *(f"ALTER TABLE course.{table} NO FORCE ROW LEVEL SECURITY" for table in tables),
        *statements,
        *(f"ALTER TABLE course.{table} FORCE ROW LEVEL SECURITY" for table in tables),
    )


# The functions of version 6, each SECURITY DEFINER (run as its owner, the role that installed: learners
# cannot write the counts or delete an answer themselves) with the search path pinned.
_DEFINER = "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
# After each statement adding rows: their learners' counts, in one upsert; over the class's limit, refused.
_COUNT_ADDED = f"""CREATE FUNCTION course.count_added() RETURNS trigger {_DEFINER} AS $$
DECLARE
    most BIGINT := (SELECT l.learner_rows FROM course.class_limit l);
    who TEXT;
    total BIGINT;
BEGIN
    WITH counted AS (
        INSERT INTO course.row_count AS c (learner, kept)
        SELECT a.learner, count(*) FROM added a GROUP BY a.learner
        ON CONFLICT (learner) DO UPDATE SET kept = c.kept + excluded.kept
        RETURNING c.learner, c.kept
    )
    SELECT n.learner, n.kept INTO who, total FROM counted n WHERE n.kept > most ORDER BY n.learner LIMIT 1;
    IF who IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '{ROW_LIMIT_SQLSTATE}', DETAIL = most::text,
            MESSAGE = format('%s would keep %s rows in the class database, over the class''s limit of %s',
                             who, total, most),
            HINT = 'nothing of this statement was kept; the administrator can raise the limit';
    END IF;
    RETURN NULL;
END
$$"""
# After each statement deleting rows (an administrator's, or a removal's): their learners' counts.
_COUNT_GONE = f"""CREATE FUNCTION course.count_gone() RETURNS trigger {_DEFINER} AS $$
BEGIN
    UPDATE course.row_count c SET kept = c.kept - g.n
    FROM (SELECT o.learner, count(*) AS n FROM gone o GROUP BY o.learner) g WHERE c.learner = g.learner;
    RETURN NULL;
END
$$"""
# A learner removed from a room: their answers in the room's running session deleted (those the learner
# holds a lock on are skipped, not waited for: the projector does not count a removed learner's answers).
_MEMBER_REMOVED = f"""CREATE FUNCTION course.member_removed() RETURNS trigger {_DEFINER} AS $$
BEGIN
    DELETE FROM course.live_answer a WHERE a.ctid = ANY (ARRAY(
        SELECT b.ctid FROM course.live_answer b JOIN course.live_session s ON s.id = b.session_id
        WHERE s.room = NEW.room AND s.ended_at IS NULL AND b.learner = NEW.learner
        FOR UPDATE OF b SKIP LOCKED));
    RETURN NULL;
END
$$"""


def _counting(table: str) -> tuple[str, str]:
    """The triggers counting ``table``'s rows towards their learners' limit (version 6 on)."""
    return (
        f"CREATE TRIGGER count_added AFTER INSERT ON course.{table} REFERENCING NEW TABLE AS added "
        "FOR EACH STATEMENT EXECUTE FUNCTION course.count_added()",
        f"CREATE TRIGGER count_gone AFTER DELETE ON course.{table} REFERENCING OLD TABLE AS gone "
        "FOR EACH STATEMENT EXECUTE FUNCTION course.count_gone()",
    )


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
    (
        # Each learner's writes take their own row of write_lock (an advisory lock, which any role may take,
        # let one learner stop another's saves).
        f"""CREATE TABLE course.write_lock (
            {_LEARNER} PRIMARY KEY CONSTRAINT write_lock_not_a_group CHECK (learner {_NOT_A_GROUP}),
            writes BIGINT NOT NULL DEFAULT 0
        )""",
        "ALTER TABLE course.write_lock ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE course.write_lock FORCE ROW LEVEL SECURITY",
        # Live sessions belong to rooms: a learner follows one room, not the latest session started. The
        # sessions already there are in their instructor's room; at most one runs in a room.
        'ALTER TABLE course.live_session ADD COLUMN room TEXT COLLATE "C"',
        *_unforced(
            ("live_session", *_OWNED),
            # Rows a group role owns were written by a member acting as the group (SET ROLE): nobody's.
            "DELETE FROM course.live_answer WHERE session_id IN "
            f"(SELECT id FROM course.live_session WHERE instructor {_A_GROUP})",
            f"DELETE FROM course.live_session WHERE instructor {_A_GROUP}",
            *(f"DELETE FROM course.{table} WHERE {column} {_A_GROUP}" for table, column in _OWNED.items()),
            "UPDATE course.live_session SET room = instructor",
            "UPDATE course.live_session s SET ended_at = s.started_at WHERE s.ended_at IS NULL AND EXISTS "
            "(SELECT 1 FROM course.live_session t WHERE t.room = s.room AND t.ended_at IS NULL "
            "AND (t.started_at, t.id) > (s.started_at, s.id))",
        ),
        "ALTER TABLE course.live_session ALTER COLUMN room SET NOT NULL, "
        "ALTER COLUMN room SET DEFAULT current_user, "
        f"ADD CONSTRAINT live_session_not_a_group CHECK (instructor {_NOT_A_GROUP}), "
        "ADD CONSTRAINT live_session_room CHECK (char_length(room) BETWEEN 1 AND 63 "
        "AND room !~ '[[:cntrl:]]') NOT VALID",
        "CREATE UNIQUE INDEX live_session_one_per_room ON course.live_session (room) WHERE ended_at IS NULL",
        *(
            f"ALTER TABLE course.{table} ADD CONSTRAINT {table}_not_a_group CHECK ({column} {_NOT_A_GROUP})"
            for table, column in _OWNED.items()
        ),
        # answers kept from before stay as they were (NOT VALID); every new one is an answer
        "ALTER TABLE course.live_answer ADD CONSTRAINT live_answer_is_an_answer CHECK "
        f"(answer ~ '{ANSWER_PATTERN}' AND length(answer) <= {MAX_ANSWER}) NOT VALID",
    ),
    (
        # Nudges: requests to see an item again by a time (what brought it back: a named mistake); a log
        # of their own, which changes no card.
        f"""CREATE TABLE course.nudge_log (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            {_LEARNER} CONSTRAINT nudge_log_not_a_group CHECK (learner {_NOT_A_GROUP}),
            item_id TEXT NOT NULL,
            nudged_at BIGINT NOT NULL,
            due BIGINT NOT NULL,
            reason TEXT NOT NULL CHECK (char_length(reason) BETWEEN 1 AND {MAX_REASON})
        )""",
        "CREATE INDEX nudge_log_by_item ON course.nudge_log (learner, item_id, nudged_at)",
        "ALTER TABLE course.nudge_log ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE course.nudge_log FORCE ROW LEVEL SECURITY",
    ),
    (
        # The class's limits (one row), each learner's count of rows, and who joined which room.
        """CREATE TABLE course.class_limit (
            one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
            learner_rows BIGINT NOT NULL CHECK (learner_rows > 0)
        )""",
        f"INSERT INTO course.class_limit (learner_rows) VALUES ({LEARNER_ROW_LIMIT})",
        # row-level security enabled, not forced: the owner's counting function sees every learner's row
        f"""CREATE TABLE course.row_count (
            {_LEARNER} PRIMARY KEY CONSTRAINT row_count_not_a_group CHECK (learner {_NOT_A_GROUP}),
            kept BIGINT NOT NULL DEFAULT 0
        )""",
        "ALTER TABLE course.row_count ENABLE ROW LEVEL SECURITY",
        f"""CREATE TABLE course.live_member (
            room TEXT COLLATE "C" NOT NULL CONSTRAINT live_member_room
                CHECK (char_length(room) BETWEEN 1 AND 63 AND room !~ '[[:cntrl:]]'),
            {_LEARNER} CONSTRAINT live_member_not_a_group CHECK (learner {_NOT_A_GROUP}),
            joined_at BIGINT NOT NULL,
            removed BOOLEAN NOT NULL DEFAULT false,
            PRIMARY KEY (room, learner)
        )""",
        *_unforced(
            ("live_session", "live_answer", *(table for table in _COUNTED_IN_6 if table != "live_member")),
            # whoever answered in a room before has joined it
            "INSERT INTO course.live_member (room, learner, joined_at) "
            "SELECT s.room, a.learner, min(a.answered_at) FROM course.live_answer a "
            "JOIN course.live_session s ON s.id = a.session_id "
            "WHERE char_length(s.room) BETWEEN 1 AND 63 AND s.room !~ '[[:cntrl:]]' "
            "GROUP BY s.room, a.learner",
            "INSERT INTO course.row_count (learner, kept) SELECT learner, count(*) FROM ("
            + " UNION ALL ".join(f"SELECT learner FROM course.{table}" for table in _COUNTED_IN_6)
            + ") AS counted GROUP BY learner",
        ),
        "ALTER TABLE course.live_member ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE course.live_member FORCE ROW LEVEL SECURITY",
        _COUNT_ADDED,
        _COUNT_GONE,
        _MEMBER_REMOVED,
        *(
            f"REVOKE ALL ON FUNCTION course.{name}() FROM PUBLIC"
            for name in ("count_added", "count_gone", "member_removed")
        ),
        *(statement for table in _COUNTED_IN_6 for statement in _counting(table)),
        "CREATE TRIGGER member_removed AFTER UPDATE OF removed ON course.live_member FOR EACH ROW "
        "WHEN (NEW.removed AND NOT OLD.removed) EXECUTE FUNCTION course.member_removed()",
    ),
    (
        # Predictions: guesses committed before an outcome was shown (what a cell will print), right or not
        # (NULL: skipped); a log of their own, which changes no card. Empty when made: nothing to count yet.
        f"""CREATE TABLE course.prediction_log (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            {_LEARNER} CONSTRAINT prediction_log_not_a_group CHECK (learner {_NOT_A_GROUP}),
            item_id TEXT NOT NULL,
            predicted_at BIGINT NOT NULL,
            answer TEXT NOT NULL CHECK (char_length(answer) <= {MAX_PREDICTION_ANSWER}),
            "right" BOOLEAN
        )""",
        "CREATE INDEX prediction_log_by_item ON course.prediction_log (learner, item_id, predicted_at)",
        "ALTER TABLE course.prediction_log ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE course.prediction_log FORCE ROW LEVEL SECURITY",
        *_counting("prediction_log"),
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
    "write_lock": "learner, writes",
    "nudge_log": "learner, item_id, nudged_at, due, reason",
    "prediction_log": 'learner, item_id, predicted_at, answer, "right"',
}
DATA_TABLES = tuple(TABLE_COLUMNS)
# the version a table came with (the others: 1)
_SINCE = {"settings": 2, "write_lock": 4, "nudge_log": 5, "prediction_log": 7}
# What a learner may change of a row of theirs, column by column: no table-wide UPDATE (nor DELETE).
_UPDATABLE = {
    "review_log": "item_id, rating, reviewed_at, duration_ms, due, state_before",
    "cram_log": "item_id, rating, reviewed_at, duration_ms",
    "cards": "state, step, stability, difficulty, due, last_review, reps, lapses, log_seq",
    "decks": "enrolled_at",
    "settings": "value, set_at",
    "write_lock": "writes",
    "nudge_log": "due",
    # prediction_log: none (only added to)
}
LIVE_COLUMNS = {
    "live_session": (
        "id, instructor, room, title, started_at, ended_at, position, item_id, layout, asked_at, revealed_at"
    ),
    "live_answer": "session_id, position, item_id, learner, answer, answered_at",
    "live_member": "room, learner, joined_at, removed",
}
# A learner may answer only the question a live session asks now, before it is revealed or the session ends.
_OPEN_QUESTION = (
    "EXISTS (SELECT 1 FROM course.live_session s WHERE s.id = session_id "
    "AND s.position = live_answer.position AND s.item_id = live_answer.item_id "
    "AND s.revealed_at IS NULL AND s.ended_at IS NULL)"
)
MINE = "learner = current_user::text"  # a learner's own rows (the policies say so; every query does too)
_MINE = MINE
# Version 6: a learner answers only in a room they joined and were not removed from.
_JOINED = (
    "EXISTS (SELECT 1 FROM course.live_member m JOIN course.live_session s ON s.room = m.room "
    "WHERE s.id = live_answer.session_id AND m.learner = current_user::text AND NOT m.removed)"
)
# The role the version-6 functions run as (their owner, the role that installed): it reads the sessions and
# deletes a removed learner's answers (`_MEMBER_REMOVED`), which row-level security forced on the tables
# would hide from it too.
_THE_FUNCTIONS_OWNER = (
    "current_user::text = pg_catalog.pg_get_userbyid((SELECT p.proowner FROM pg_catalog.pg_proc p "
    "WHERE p.oid = 'course.member_removed()'::pg_catalog.regprocedure))::text"
)


_EVERYONE = f"{LEARNER_ROLE}, {INSTRUCTOR_ROLE}, {SERVICE_ROLE}"


def grant_statements(version: int) -> list[str]:
    """The grants on the tables of schema ``version`` (run by every install: idempotent; they take no lock
    that a learner's open transaction holds).

    Learners: USAGE on the schema, SELECT and INSERT on their tables and UPDATE on named columns (no
    table-wide UPDATE, no DELETE, no TRUNCATE: none of the lock modes that stop others reading or writing),
    SELECT on the version. Instructors: SELECT on everything; on live sessions, INSERT and UPDATE of named
    columns. Version 6: everyone in the class reads the limit and the counts (a learner their own); a learner
    joins rooms (INSERT of the room and the time: never ``removed``); an instructor changes ``removed``.
    Version 7: a learner reads and adds their own predictions, and changes none."""
    statements = [
        f"REVOKE ALL ON SCHEMA {SCHEMA} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {SCHEMA} TO {_EVERYONE}",
        f"REVOKE ALL ON {SCHEMA}.course_schema FROM PUBLIC, {_EVERYONE}",
        f"GRANT SELECT ON {SCHEMA}.course_schema TO {_EVERYONE}",
    ]
    for table in DATA_TABLES:
        if version < _SINCE.get(table, 1):
            continue
        name = f"{SCHEMA}.{table}"
        updatable = f", UPDATE ({_UPDATABLE[table]})" if table in _UPDATABLE else ""
        statements += [
            f"REVOKE ALL ON {name} FROM PUBLIC, {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
            f"GRANT SELECT, INSERT{updatable} ON {name} TO {LEARNER_ROLE}",
            f"GRANT SELECT ON {name} TO {INSTRUCTOR_ROLE}",
        ]
    if version >= 3:
        session, answer = f"{SCHEMA}.live_session", f"{SCHEMA}.live_answer"
        started = "title, started_at, room" if version >= 4 else "title, started_at"
        statements += [
            f"REVOKE ALL ON {session}, {answer} FROM PUBLIC, {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
            f"GRANT SELECT ON {session} TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
            f"GRANT INSERT ({started}), "
            f"UPDATE (ended_at, position, item_id, layout, asked_at, revealed_at) ON {session} "
            f"TO {INSTRUCTOR_ROLE}",
            f"GRANT SELECT, INSERT, UPDATE (answer, answered_at) ON {answer} TO {LEARNER_ROLE}",
            f"GRANT SELECT ON {answer} TO {INSTRUCTOR_ROLE}",
        ]
    if version >= 6:
        limit, count, member = f"{SCHEMA}.class_limit", f"{SCHEMA}.row_count", f"{SCHEMA}.live_member"
        statements += [
            f"REVOKE ALL ON {limit}, {count}, {member} FROM PUBLIC, {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
            f"GRANT SELECT ON {limit}, {count} TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE}",
            f"GRANT SELECT, INSERT (room, joined_at) ON {member} TO {LEARNER_ROLE}",
            f"GRANT SELECT, UPDATE (removed) ON {member} TO {INSTRUCTOR_ROLE}",
        ]
    return statements


@dataclass(frozen=True)
class Policy:
    """A row-level security policy: ``table``, ``name`` and the statement creating it."""

    table: str
    name: str
    create: str


def policies(version: int) -> list[Policy]:
    """The policies on the tables of schema ``version``. A learner's: their own rows, ``learner =
    current_user``, for reading and writing. An instructor's: every row, for reading. Live sessions: everyone
    in the class reads the sessions; an instructor starts and runs their own. A learner reads and writes their
    own answers, to the open question only (version 6: in a room they joined and were not removed from); an
    instructor reads them all. Version 6: a learner reads and adds their own memberships, never removed; an
    instructor reads them all and removes; everyone reads their own count (an instructor every count); the
    owner of the version-6 functions reads the sessions and the answers (to delete a removed learner's)."""
    found = []
    for table in DATA_TABLES:
        if version < _SINCE.get(table, 1):
            continue
        name = f"{SCHEMA}.{table}"
        found += [
            Policy(
                table,
                "learner_own_rows",
                f"CREATE POLICY learner_own_rows ON {name} FOR ALL TO {LEARNER_ROLE} "
                f"USING ({_MINE}) WITH CHECK ({_MINE})",
            ),
            Policy(
                table,
                "instructor_reads_all",
                f"CREATE POLICY instructor_reads_all ON {name} FOR SELECT TO {INSTRUCTOR_ROLE} USING (true)",
            ),
        ]
    if version < 3:
        return found
    session, answer = f"{SCHEMA}.live_session", f"{SCHEMA}.live_answer"
    theirs = "instructor = current_user::text"
    joined = f" AND {_JOINED}" if version >= 6 else ""
    live = [
        ("live_session", "class_reads", f"FOR SELECT TO {LEARNER_ROLE}, {INSTRUCTOR_ROLE} USING (true)"),
        ("live_session", "instructor_starts", f"FOR INSERT TO {INSTRUCTOR_ROLE} WITH CHECK ({theirs})"),
        (
            "live_session",
            "instructor_runs",
            f"FOR UPDATE TO {INSTRUCTOR_ROLE} USING ({theirs}) WITH CHECK ({theirs})",
        ),
        ("live_answer", "learner_reads_own", f"FOR SELECT TO {LEARNER_ROLE} USING ({_MINE})"),
        (
            "live_answer",
            "learner_answers",
            f"FOR INSERT TO {LEARNER_ROLE} WITH CHECK ({_MINE} AND {_OPEN_QUESTION}{joined})",
        ),
        (
            "live_answer",
            "learner_changes",
            f"FOR UPDATE TO {LEARNER_ROLE} USING ({_MINE}) WITH CHECK ({_MINE} AND {_OPEN_QUESTION}{joined})",
        ),
        ("live_answer", "instructor_reads_all", f"FOR SELECT TO {INSTRUCTOR_ROLE} USING (true)"),
    ]
    if version >= 6:
        live += [
            ("live_session", "functions_read", f"FOR SELECT TO PUBLIC USING ({_THE_FUNCTIONS_OWNER})"),
            ("live_answer", "functions_remove", f"FOR ALL TO PUBLIC USING ({_THE_FUNCTIONS_OWNER})"),
            ("live_member", "learner_reads_own", f"FOR SELECT TO {LEARNER_ROLE} USING ({_MINE})"),
            (
                "live_member",
                "learner_joins",
                f"FOR INSERT TO {LEARNER_ROLE} WITH CHECK ({_MINE} AND NOT removed)",
            ),
            ("live_member", "instructor_reads_all", f"FOR SELECT TO {INSTRUCTOR_ROLE} USING (true)"),
            (
                "live_member",
                "instructor_removes",
                f"FOR UPDATE TO {INSTRUCTOR_ROLE} USING (true) WITH CHECK (true)",
            ),
            ("row_count", "learner_reads_own", f"FOR SELECT TO {LEARNER_ROLE} USING ({_MINE})"),
            ("row_count", "instructor_reads_all", f"FOR SELECT TO {INSTRUCTOR_ROLE} USING (true)"),
        ]
    tables = {
        "live_session": session,
        "live_answer": answer,
        "live_member": f"{SCHEMA}.live_member",
        "row_count": f"{SCHEMA}.row_count",
    }
    return [
        *found,
        *(
            Policy(table, name, f"CREATE POLICY {name} ON {tables[table]} {rule}")
            for table, name, rule in live
        ),
    ]
