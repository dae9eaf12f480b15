"""A classroom's shared progress store on PostgreSQL; needs psycopg 3 (the ``postgres`` extra:
``pip install "attention-course[postgres]"``).

An administrator installs the course's schema once and adds the class's roles::

    from scheduler import postgres
    postgres.install("postgresql://admin@db.example/course")
    postgres.add_learner("postgresql://admin@db.example/course", "alice", password="...")
    postgres.add_instructor("postgresql://admin@db.example/course", "teacher", password="...")

and each learner opens their own store, as the role they log in as::

    store = postgres.PostgresStore.open("postgresql://alice:...@db.example/course")

or a class service (``add_service``) holds a small pool of connections for every learner, and runs each
learner's calls as that learner (``SET LOCAL ROLE``; row-level security holds them all the same)::

    pool = postgres.ClassPool.open("postgresql://course_svc:...@db.example/course", max_size=10)
    store = postgres.PostgresStore.serving(pool, "alice")

The server keeps every learner to their own rows (row-level security); an instructor reads them all.
No message, log line or traceback holds a password: a URL that cannot be read is a ``MalformedURLError``
that quotes none of it, and a role's password reaches the server as a SCRAM verifier only. Every call has a
deadline (the connect timeout unless ``timeout_s`` says), and every error is a ``scheduler.StoreError``.
A live class session (``LiveRoom``) is run by an instructor and answered by each learner from their own
connection, in a room they joined (an instructor sees who joined and may remove one); its answers are kept
apart from the learners' schedules. Each learner keeps at most ``LEARNER_ROW_LIMIT`` rows (the class's
administrator sets another with ``install(admin_url, row_limit=n)``): a write past it is a ``RowLimitError``.
Importing ``scheduler`` does not import this module (nor psycopg).
"""

from __future__ import annotations

from scheduler.postgres._class_records import ClassRecords, class_records
from scheduler.postgres._connection import (
    AccessDeniedError,
    MalformedURLError,
    StoreRefusedError,
    describe,
    login,
    with_learner,
)
from scheduler.postgres._live import (
    LiveAnswers,
    LiveRoom,
    LiveState,
    QuestionClosedError,
    RemovedFromRoomError,
    RoomBusyError,
    RoomMember,
)
from scheduler.postgres._pool import ClassPool
from scheduler.postgres._roles import (
    LEARNER_CONNECTION_LIMIT,
    add_instructor,
    add_learner,
    add_service,
    install,
)
from scheduler.postgres._schema import (
    INSTRUCTOR_ROLE,
    LEARNER_ROLE,
    LEARNER_ROW_LIMIT,
    SCHEMA,
    SCHEMA_VERSION,
    SERVICE_ROLE,
)
from scheduler.postgres._store import PostgresStore
from scheduler.postgres._version import NotInstalledError, RowLimitError, SchemaTooOldError, schema_version

__all__ = [
    "INSTRUCTOR_ROLE",
    "LEARNER_CONNECTION_LIMIT",
    "LEARNER_ROLE",
    "LEARNER_ROW_LIMIT",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SERVICE_ROLE",
    "AccessDeniedError",
    "ClassPool",
    "ClassRecords",
    "LiveAnswers",
    "LiveRoom",
    "LiveState",
    "MalformedURLError",
    "NotInstalledError",
    "PostgresStore",
    "QuestionClosedError",
    "RemovedFromRoomError",
    "RoomBusyError",
    "RoomMember",
    "RowLimitError",
    "SchemaTooOldError",
    "StoreRefusedError",
    "add_instructor",
    "add_learner",
    "add_service",
    "class_records",
    "describe",
    "install",
    "login",
    "schema_version",
    "with_learner",
]
