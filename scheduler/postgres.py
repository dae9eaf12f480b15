"""A classroom's shared progress store on PostgreSQL; needs psycopg 3 (the ``postgres`` extra:
``pip install "attention-course[postgres]"``).

An administrator installs the course's schema once and adds the class's roles::

    from scheduler import postgres
    postgres.install("postgresql://admin@db.example/course")
    postgres.add_learner("postgresql://admin@db.example/course", "alice", password="...")
    postgres.add_instructor("postgresql://admin@db.example/course", "teacher", password="...")

and each learner opens their own store, as the role they log in as::

    store = postgres.PostgresStore.open("postgresql://alice:...@db.example/course")

The server keeps every learner to their own rows (row-level security); an instructor reads them all.
A live class session (``LiveRoom``) is run by an instructor and answered by each learner from their own
connection; its answers are kept apart from the learners' schedules.
Importing ``scheduler`` does not import this module (nor psycopg).
"""

from __future__ import annotations

from scheduler._postgres import (
    AccessDeniedError,
    ClassRecords,
    NotInstalledError,
    PostgresStore,
    SchemaTooOldError,
    add_instructor,
    add_learner,
    class_records,
    describe,
    install,
    schema_version,
    with_learner,
)
from scheduler._postgres_live import LiveAnswers, LiveRoom, LiveState, QuestionClosedError
from scheduler._postgres_schema import INSTRUCTOR_ROLE, LEARNER_ROLE, SCHEMA, SCHEMA_VERSION

__all__ = [
    "INSTRUCTOR_ROLE",
    "LEARNER_ROLE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "AccessDeniedError",
    "ClassRecords",
    "LiveAnswers",
    "LiveRoom",
    "LiveState",
    "NotInstalledError",
    "PostgresStore",
    "QuestionClosedError",
    "SchemaTooOldError",
    "add_instructor",
    "add_learner",
    "class_records",
    "describe",
    "install",
    "schema_version",
    "with_learner",
]
