"""Installing the classroom database and adding its roles, as its administrator.

``install`` creates or migrates the schema (`scheduler.postgres._schema`), the groups ``course_learner`` and
``course_instructor`` (NOLOGIN, NOINHERIT, members of nothing: a learner acting as the group writes nothing,
and gains nothing granted to it), the grants and the policies; it also takes away what every role may do by
default and a learner should not (create objects in schema ``public``, temporary tables; as a superuser, also
see who is online and the tables' activity, create large objects), and warns about what it could not.
``add_learner`` and ``add_instructor`` create login roles in those groups, or set a new password for one of
their own; ``add_service`` a class service's login role in ``course_service``, the group that is a member of
every learner (a service may act as a learner for one transaction, ``SET LOCAL ROLE``, and as nobody else).
They refuse any other role of that name (a superuser, a group, a role with any other privilege or
membership) and any name PostgreSQL would cut. Every statement runs with the search path pinned and a lock
timeout (`scheduler.postgres._sql`): a learner's open transaction makes install give up, not the class wait.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from scheduler._errors import StoreCorruptError, StoreVersionError
from scheduler.postgres._connection import bulk_timeout, connected, describe, password_clause, translated
from scheduler.postgres._schema import (
    APPLICATION,
    GROUPS,
    INSTRUCTOR_ROLE,
    LEARNER_ROLE,
    MIGRATIONS,
    SCHEMA,
    SERVICE_ROLE,
    Policy,
    grant_statements,
    policies,
)
from scheduler.postgres._sql import REPORT_TIMEOUT_MS, role_name_problem, transaction
from scheduler.postgres._version import NotInstalledError, read_version

__all__ = [
    "INSTALL_LOCK_TIMEOUT_MS",
    "LEARNER_CONNECTION_LIMIT",
    "ROW_LIMIT_VERSION",
    "add_instructor",
    "add_learner",
    "add_service",
    "install",
]

ROW_LIMIT_VERSION = 6  # the schema version that brought the row limit (`install`'s ``row_limit``)
INSTALL_LOCK_TIMEOUT_MS = 3000  # how long install and add_* wait for a lock that someone else holds
# A learner's own connections at once (CONNECTION LIMIT): a kernel's store takes one, a few notebooks a few;
# without a limit one learner could take every connection slot of the server (issue 35)
LEARNER_CONNECTION_LIMIT = 8
# install's lock before its version table exists (once, before any learner): an advisory lock
_FIRST_INSTALL_LOCK = int.from_bytes(b"AtCs", "big") << 8
_ATTRIBUTES = (  # pg_roles' privileged attributes, as refusals say them
    ("rolsuper", "a superuser"),
    ("rolcreaterole", "allowed to create roles"),
    ("rolcreatedb", "allowed to create databases"),
    ("rolreplication", "a replication role"),
    ("rolbypassrls", "exempt from row-level security"),
)
# the catalog views and functions that show every role the others' sessions and the tables' activity, and
# the large-object functions that store data: PUBLIC's, given to pg_read_all_stats (a superuser's install)
_STATISTICS = r"'pg\_stat\_%'"
_LARGE_OBJECTS = "('lo_creat', 'lo_create', 'lo_from_bytea', 'lo_import')"
# who holds which lock, and who blocks whom: the class's activity, as the statistics are
_LOCK_VIEWS = "('pg_lock_status', 'pg_blocking_pids', 'pg_safe_snapshot_blocking_pids')"
# the advisory-lock functions: each lock a session takes holds a slot of the server's shared lock table, and a
# learner taking thousands filled it (every new connection then failed with "out of shared memory")
_ADVISORY = r"'pg\_%advisory%'"
_FUNCTIONS = (
    "SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace"
)


def install(
    admin_url: str,
    *,
    migrations: Sequence[Sequence[str]] = MIGRATIONS,
    lock_timeout_ms: int = INSTALL_LOCK_TIMEOUT_MS,
    row_limit: int | None = None,
) -> int:
    """Create or migrate the course's schema in the database at ``admin_url`` (a role that may create roles
    and owns that database), in one transaction, one install at a time: the groups, schema ``course``, its
    tables and indexes, row-level security (enabled and forced) with its policies, and the grants. Running it
    again does nothing new, and takes no lock a learner holds (migrating does: a lock not granted within
    ``lock_timeout_ms`` is a StoreLockedError, nothing changed, and nobody waited longer). Returns the
    schema version now installed. StoreVersionError for a database of a newer schema, StoreCorruptError for
    a ``course`` schema or a group role that is not ours. Warns (UserWarning) about what every role may
    still do that docs/classroom.md says a learner should not. ``migrations`` is for tests of migrating.

    ``row_limit``: the rows each learner may keep (`LEARNER_ROW_LIMIT` when the schema is created; None keeps
    the limit the class has). Counts of the rows already there are computed by the migration that brings
    the limit (version 6); a learner over it already may add no row until it is raised."""
    if row_limit is not None and (
        isinstance(row_limit, bool) or not isinstance(row_limit, int) or row_limit < 1
    ):
        raise ValueError(f"row_limit must be a positive int of rows, got {row_limit!r}")
    where = describe(admin_url)
    known = len(migrations)
    if row_limit is not None and known < ROW_LIMIT_VERSION:
        raise ValueError(
            f"schema version {known} has no row limit (it came with version {ROW_LIMIT_VERSION})"
        )
    with (
        connected(admin_url, where, bulk_timeout(admin_url)) as connection,
        translated(where, lock_timeout_ms),
    ):
        for attempt in range(3):
            try:
                with transaction(
                    connection, lock_timeout_ms=lock_timeout_ms, statement_timeout_ms=REPORT_TIMEOUT_MS
                ):
                    _one_at_a_time(connection)
                    for group in GROUPS:
                        _make_group(connection, where, group)
                    _make_group(connection, where, SERVICE_ROLE, may_join=LEARNER_ROLE)
                    _let_services_act_for_learners(connection)
                    version = read_version(connection, where)
                    if version is None:
                        _create_schema(connection)
                        version = 0
                    if version > known:
                        raise StoreVersionError(where, version, known)
                    for migration in migrations[version:]:
                        for statement in migration:
                            connection.execute(statement.encode())
                    if version < known:
                        connection.execute(f"UPDATE {SCHEMA}.course_schema SET version = %s", (known,))
                    if row_limit is not None:
                        connection.execute(
                            f"UPDATE {SCHEMA}.class_limit SET learner_rows = %s "
                            "WHERE learner_rows IS DISTINCT FROM %s".encode(),
                            (row_limit, row_limit),
                        )
                    for statement in grant_statements(known):
                        connection.execute(statement.encode())
                    _apply(connection, policies(known), replace=version < known)
                    _limit_learners(connection)
                    left = _take_away(connection, where)
                for warning in left:
                    warnings.warn(warning, UserWarning, stacklevel=2)
                return known
            except (pg_errors.UniqueViolation, pg_errors.DuplicateObject):  # a group made meanwhile elsewhere
                if attempt == 2:
                    raise
    raise AssertionError("unreachable")


def _limit_learners(connection: psycopg.Connection[Any]) -> None:
    """Give every learner without a connection limit `LEARNER_CONNECTION_LIMIT` (learners added before
    add_learner set one); a limit an administrator chose is kept."""
    rows = connection.execute(
        "SELECT r.rolname FROM pg_roles r JOIN pg_auth_members m ON m.member = r.oid "
        "WHERE m.roleid = to_regrole(%s) AND r.rolconnlimit = -1 ORDER BY 1",
        (LEARNER_ROLE,),
    ).fetchall()
    for (name,) in rows:
        connection.execute(
            sql.SQL("ALTER ROLE {} CONNECTION LIMIT {}").format(
                sql.Identifier(name), sql.Literal(LEARNER_CONNECTION_LIMIT)
            )
        )


def _one_at_a_time(connection: psycopg.Connection[Any]) -> None:
    """Serialize installs and role changes in this database: the version table locked against writers (a
    learner, who may only read it, cannot hold that lock up); before it exists, an advisory lock."""
    table = f"{SCHEMA}.course_schema"
    for _ in range(2):
        row = connection.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
        if row is not None and row[0]:
            connection.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE".encode())
            return
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_FIRST_INSTALL_LOCK,))


def _create_schema(connection: psycopg.Connection[Any]) -> None:
    connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(SCHEMA)))
    connection.execute(
        f"CREATE TABLE {SCHEMA}.course_schema (application TEXT NOT NULL, "
        "version INTEGER NOT NULL CHECK (version >= 0))".encode()
    )
    connection.execute(
        f"INSERT INTO {SCHEMA}.course_schema (application, version) VALUES (%s, 0)".encode(), (APPLICATION,)
    )


_FACTS = (
    "SELECT r.rolcanlogin, r.rolinherit, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, "
    "r.rolbypassrls, "
    "ARRAY(SELECT g.rolname::text FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
    "WHERE m.member = r.oid ORDER BY 1), "
    "ARRAY(SELECT u.rolname::text FROM pg_auth_members m JOIN pg_roles u ON u.oid = m.member "
    "WHERE m.roleid = r.oid {managers} ORDER BY 1) "
    "FROM pg_roles r WHERE r.rolname = %s"
)


def _facts(connection: psycopg.Connection[Any], name: str) -> dict[str, Any] | None:
    """What the role ``name`` is: its attributes, the roles it is a member of (``groups``), and its members
    (PostgreSQL 16 and later: not counting the administrators that merely manage it, as its creator does)."""
    managers = (
        "AND NOT (m.admin_option AND NOT m.inherit_option AND NOT m.set_option)"
        if connection.info.server_version >= 160000
        else ""
    )
    row = connection.execute(_FACTS.format(managers=managers).encode(), (name,)).fetchone()
    if row is None:
        return None
    keys = ("login", "inherit", *(attribute for attribute, _ in _ATTRIBUTES), "groups", "members")
    return dict(zip(keys, row, strict=True))


def _make_group(
    connection: psycopg.Connection[Any], where: str, name: str, may_join: str | None = None
) -> None:
    """The group ``name``: created NOLOGIN NOINHERIT, or made so again (an older course's ``add_learner``
    could make it a login role); StoreCorruptError for a role of that name with a privilege or a membership
    (every member could use it), but of roles in the group ``may_join`` (the service group is a member of
    every learner)."""
    facts = _facts(connection, name)
    role = sql.Identifier(name)
    if facts is None:
        connection.execute(sql.SQL("CREATE ROLE {} NOLOGIN NOINHERIT").format(role))
        return
    why = [said for attribute, said in _ATTRIBUTES if facts[attribute]]
    allowed = set() if may_join is None else set(_members(connection, may_join))
    joined = [group for group in facts["groups"] if group not in allowed]
    if joined:
        why.append(f"a member of {', '.join(joined)}")
    if why:
        raise StoreCorruptError(
            where, f"the role {name} is {', '.join(why)}: not a group this course made, and left as it is"
        )
    if facts["login"] or facts["inherit"]:
        connection.execute(sql.SQL("ALTER ROLE {} NOLOGIN NOINHERIT PASSWORD NULL").format(role))


def _members(connection: psycopg.Connection[Any], group: str) -> list[str]:
    """The roles that are members of ``group`` (directly), by name."""
    rows = connection.execute(
        "SELECT m.rolname::text FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid "
        "JOIN pg_roles m ON m.oid = a.member WHERE g.rolname = %s ORDER BY 1",
        (group,),
    ).fetchall()
    return [name for (name,) in rows]


def _act_for(connection: psycopg.Connection[Any], learner: str) -> None:
    """Make the service group a member of ``learner`` (it may SET ROLE to it; PostgreSQL 16 and later: and
    inherits nothing of it; 15's membership of a NOINHERIT group inherits nothing either)."""
    options = " WITH INHERIT FALSE, SET TRUE" if connection.info.server_version >= 160000 else ""
    connection.execute(
        sql.SQL("GRANT {} TO {}" + options).format(sql.Identifier(learner), sql.Identifier(SERVICE_ROLE))
    )


def _let_services_act_for_learners(connection: psycopg.Connection[Any]) -> None:
    """Every learner's role, the service group a member of it (learners added by an older course too)."""
    acting = set(_facts(connection, SERVICE_ROLE)["groups"])  # type: ignore[index]
    for learner in _members(connection, LEARNER_ROLE):
        if learner not in acting:
            _act_for(connection, learner)


def _apply(connection: psycopg.Connection[Any], wanted: list[Policy], *, replace: bool) -> None:
    """Create the policies missing; after a migration, replace them all (and drop those no longer wanted).
    Creating one locks its table against everyone, so an install that migrates nothing creates none that
    exists."""
    found = set(
        connection.execute(
            "SELECT tablename::text, policyname::text FROM pg_policies WHERE schemaname = %s", (SCHEMA,)
        ).fetchall()
    )
    names = {(policy.table, policy.name) for policy in wanted}
    for table, name in sorted(found - names) if replace else ():
        connection.execute(sql.SQL("DROP POLICY {} ON {}").format(sql.Identifier(name), _table(table)))
    for policy in wanted:
        if (policy.table, policy.name) in found:
            if not replace:
                continue
            connection.execute(
                sql.SQL("DROP POLICY {} ON {}").format(sql.Identifier(policy.name), _table(policy.table))
            )
        connection.execute(policy.create.encode())


def _table(name: str) -> sql.Composable:
    return sql.Identifier(SCHEMA, name)


def _take_away(connection: psycopg.Connection[Any], where: str) -> list[str]:
    """Take from PUBLIC what docs/classroom.md says a learner may not do, where this role can: creating in
    schema ``public`` (its owner can), temporary tables (the database's owner can), seeing the others'
    sessions and the tables' activity, creating large objects and taking advisory locks (a superuser can).
    What is left, said."""
    left = []
    owner, may = _owner(connection, "SELECT nspowner FROM pg_namespace WHERE nspname = 'public'")
    if may:
        connection.execute(b"REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    if _public_may(connection, "has_schema_privilege('public', 'public', 'CREATE')"):
        left.append(
            f"{where}: every role may still create objects in schema public (its owner, {owner}, can stop "
            "that: REVOKE CREATE ON SCHEMA public FROM PUBLIC); the course's own statements are never "
            "misled by them"
        )
    owner, may = _owner(connection, "SELECT datdba FROM pg_database WHERE datname = current_database()")
    if may:
        connection.execute(
            sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(
                sql.Identifier(connection.info.dbname)
            )
        )
    if _public_may(connection, "has_database_privilege('public', current_database(), 'TEMPORARY')"):
        left.append(
            f"{where}: every role may still create temporary tables in this database (its owner, {owner}, "
            "can stop that: REVOKE TEMPORARY ON DATABASE ... FROM PUBLIC)"
        )
    row = connection.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    if row is not None and row[0]:
        _take_statistics_and_large_objects(connection)
    elif _public_may(
        connection,
        "has_table_privilege('public', 'pg_catalog.pg_stat_activity', 'SELECT') "
        "OR has_function_privilege('public', 'pg_catalog.lo_create(oid)', 'EXECUTE') "
        "OR has_function_privilege('public', 'pg_catalog.pg_advisory_lock(bigint)', 'EXECUTE')",
    ):
        left.append(
            f"{where}: learners may still see who is online, the tables' activity counts and the locks "
            "held, create large objects and take advisory locks (enough of them fill the server's lock "
            "table): only a superuser can take that away (run install once as one; see docs/classroom.md)"
        )
    return left


def _owner(connection: psycopg.Connection[Any], query: str) -> tuple[str, bool]:
    """The owner of the object ``query`` names (its owner's oid), and whether this role may act as it."""
    row = connection.execute(
        f"SELECT owner::regrole::text, pg_has_role(owner, 'USAGE') FROM ({query}) AS o(owner)".encode()
    ).fetchone()
    return ("", False) if row is None else (str(row[0]), bool(row[1]))


def _public_may(connection: psycopg.Connection[Any], test: str) -> bool:
    row = connection.execute(f"SELECT {test}".encode()).fetchone()
    return bool(row is not None and row[0])


def _take_statistics_and_large_objects(connection: psycopg.Connection[Any]) -> None:
    """As a superuser, in this database only: the statistics views and functions, and the locks held
    (``pg_locks``), from PUBLIC to pg_read_all_stats (whose members, and superusers, still read them), the
    large-object constructors and the advisory-lock functions from PUBLIC."""
    views = [
        name
        for (name,) in connection.execute(
            "SELECT c.oid::regclass::text FROM pg_class c WHERE c.relnamespace = 'pg_catalog'::regnamespace "
            rf"AND c.relkind = 'v' AND (c.relname LIKE {_STATISTICS} OR c.relname LIKE 'pg\_statio\_%' "
            "OR c.relname = 'pg_locks') "
            "ORDER BY 1".encode()
        )
    ]
    functions = [
        name
        for (name,) in connection.execute(
            f"{_FUNCTIONS} AND (p.proname LIKE {_STATISTICS} OR p.proname IN {_LOCK_VIEWS}) "
            "ORDER BY 1".encode()
        )
    ]
    large = [
        name
        for (name,) in connection.execute(
            f"{_FUNCTIONS} AND (p.proname IN {_LARGE_OBJECTS} OR p.proname LIKE {_ADVISORY}) "
            "ORDER BY 1".encode()
        )
    ]
    if views:
        listed = ", ".join(views)
        connection.execute(f"REVOKE SELECT ON {listed} FROM PUBLIC".encode())
        connection.execute(f"GRANT SELECT ON {listed} TO pg_read_all_stats".encode())
    if functions:
        listed = ", ".join(functions)
        connection.execute(f"REVOKE EXECUTE ON FUNCTION {listed} FROM PUBLIC".encode())
        connection.execute(f"GRANT EXECUTE ON FUNCTION {listed} TO pg_read_all_stats".encode())
    if large:
        connection.execute(f"REVOKE EXECUTE ON FUNCTION {', '.join(large)} FROM PUBLIC".encode())


# Roles.


def _add_member(admin_url: str, name: str, password: str | None, kind: str) -> None:
    """Create the login role ``name`` in the group of ``kind`` ("learner", "instructor" or "service"), or
    set the password of one of that group's own; ValueError for any other role of that name, or a name
    PostgreSQL would cut. A learner's role gets the service group as a member (a class service may act for
    it)."""
    group = {"learner": LEARNER_ROLE, "instructor": INSTRUCTOR_ROLE, "service": SERVICE_ROLE}[kind]
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    problem = role_name_problem(name)
    if problem is not None:
        raise ValueError(f"{problem}; choose a shorter name")
    refused = (
        f"cannot make {name!r} {'an' if kind == 'instructor' else 'a'} {kind}: {{}}; add_{kind} changes no "
        f"role but its own {kind}s (login roles in {group} alone, with no other privilege)"
    )
    if name in (*GROUPS, SERVICE_ROLE):
        raise ValueError(refused.format(f"it is the course's group of {name.removeprefix('course_')}s"))
    where = describe(admin_url)
    role = sql.Identifier(name)
    with (
        connected(admin_url, where, bulk_timeout(admin_url)) as connection,
        translated(where, INSTALL_LOCK_TIMEOUT_MS),
    ):
        secret = password_clause(connection, name, password)  # a SCRAM verifier: never the password
        with transaction(connection, lock_timeout_ms=INSTALL_LOCK_TIMEOUT_MS):
            if _facts(connection, group) is None:
                raise NotInstalledError(where, f"no role {group}")
            _one_at_a_time(connection)
            facts = _facts(connection, name)
            if facts is None:
                connection.execute(
                    sql.SQL(
                        "CREATE ROLE {} LOGIN INHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                        "NOBYPASSRLS{}"
                    ).format(role, secret)
                )
            else:
                why = _not_ours(facts, group)
                if why:
                    raise ValueError(refused.format(f"the role exists and is {', '.join(why)}"))
                if password is not None:
                    connection.execute(sql.SQL("ALTER ROLE {}{}").format(role, secret))
            # PostgreSQL 16 and later: a member that cannot SET ROLE to the group (15 cannot say so; acting
            # as the group achieves nothing there: no row may belong to it)
            options = " WITH INHERIT TRUE, SET FALSE" if connection.info.server_version >= 160000 else ""
            connection.execute(sql.SQL("GRANT {} TO {}" + options).format(sql.Identifier(group), role))
            if kind == "learner":
                connection.execute(
                    sql.SQL("ALTER ROLE {} CONNECTION LIMIT {}").format(
                        role, sql.Literal(LEARNER_CONNECTION_LIMIT)
                    )
                )
            if kind == "learner" and _facts(connection, SERVICE_ROLE) is not None:
                _act_for(connection, name)


def _not_ours(facts: dict[str, Any], group: str) -> list[str]:
    """Why a role is not one of ``group``'s own (nothing: it is); the service group, a member of every
    learner (`add_learner`), is not counted as the role's member."""
    why = [said for attribute, said in _ATTRIBUTES if facts[attribute]]
    members = [m for m in facts["members"] if m != SERVICE_ROLE]
    if members:
        why.append(f"a group (of {', '.join(members)})")
    if not facts["login"]:
        why.append("not a login role")
    others = [other for other in facts["groups"] if other != group]
    if others:
        why.append(f"a member of {', '.join(others)}")
    if group not in facts["groups"]:
        why.append(f"not in {group}")
    return why


def add_learner(admin_url: str, name: str, password: str | None = None) -> None:
    """Create the login role ``name`` in ``course_learner``: a learner whose rows carry ``name``, with at
    most `LEARNER_CONNECTION_LIMIT` connections at once. For one of its learners already, set the password
    when given, and the connection limit. ValueError for any other role of that
    name (it is left as it is) and for a name over 63 bytes in UTF-8 (PostgreSQL would cut it)."""
    _add_member(admin_url, name, password, "learner")


def add_service(admin_url: str, name: str, password: str | None = None) -> None:
    """Create the login role ``name`` in ``course_service``: a class service (a program, never a person),
    which connects as itself and runs each learner's transactions as that learner (``SET LOCAL ROLE``), so
    that the server's row-level security holds every transaction to one learner's rows. It may act for
    learners only (not for an instructor, nor any other role), and holds no privilege of theirs outside such
    a transaction. Refuses as ``add_learner`` does."""
    _add_member(admin_url, name, password, "service")


def add_instructor(admin_url: str, name: str, password: str | None = None) -> None:
    """Create the login role ``name`` in ``course_instructor``: it reads every learner's rows, writes none,
    and runs live sessions. Refuses as ``add_learner`` does."""
    _add_member(admin_url, name, password, "instructor")
