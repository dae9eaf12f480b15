"""Class reviews: how many in the room got each question right, apart from any learner's schedule.

A class review is what `course.widgets.class_review` runs on the projector: questions asked to a room of
``room`` people, and for each one the count who got it right. Class reviews live in their own SQLite file
(`class_reviews_path`: ``--sessions``, else ``$COURSE_SESSIONS``, else ``class-sessions.sqlite3`` beside the
per-user progress file; the older spelling kept so that nothing a class has recorded is lost), never in a
progress file: a class's answers change nobody's review schedule.

`class_review_lines` says what a class review shows at its end and ``python -m course session-report``
prints: the questions ranked by miss rate, and the lesson sections to revisit, with links to them.

A file that is not a class-session file (corrupt, another program's, or from a newer course) is reported as a
`ClassReviewLogError` naming it, and left as it is; a file locked by another program is waited for, then
reported.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from course.bank import Bank, Question
from course.lessons import LESSONS
from course.progress import default_path

__all__ = [
    "ENV_VAR",
    "FILE_NAME",
    "REVISIT_AT",
    "ClassReview",
    "ClassReviewLog",
    "ClassReviewLogError",
    "Missed",
    "Tally",
    "class_review_lines",
    "class_reviews_path",
    "ranked",
    "section_link",
    "to_revisit",
]

ENV_VAR = "COURSE_SESSIONS"
PROGRESS_VAR = "COURSE_DB"  # the progress file (`course.progress`), or a class database's URL
FILE_NAME = "class-sessions.sqlite3"
REVISIT_AT = 0.5  # a question missed by at least half the room sends the room back to its section
_VERSION = 1
_SCHEMA = """
CREATE TABLE session (id INTEGER PRIMARY KEY, started TEXT NOT NULL, room INTEGER NOT NULL CHECK (room > 0),
                      lessons TEXT NOT NULL);
CREATE TABLE tally (session INTEGER NOT NULL REFERENCES session (id), question TEXT NOT NULL,
                    position INTEGER NOT NULL, right INTEGER NOT NULL CHECK (right >= 0), at TEXT NOT NULL,
                    PRIMARY KEY (session, question));
"""


class ClassReviewLogError(Exception):
    """A class-session file that cannot be used; `path` names it. The file is left as it is."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)


def class_reviews_path(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """The class-session file: `cli_value` (``--sessions``), else ``$COURSE_SESSIONS``, else beside the
    progress file (the one ``$COURSE_DB`` names, else the per-user one)."""
    if cli_value is not None and str(cli_value) != "":
        return Path(cli_value).expanduser()
    env = os.environ.get(ENV_VAR, "")
    if env:
        return Path(env).expanduser()
    progress = os.environ.get(PROGRESS_VAR, "")
    if progress and "://" not in progress:  # a progress file named (not a class database's URL): beside it
        return Path(progress).expanduser().parent / FILE_NAME
    return default_path().parent / FILE_NAME


@dataclass(frozen=True)
class Tally:
    """How many of the room got question `question_id` right, recorded `at`."""

    question_id: str
    right: int
    room: int
    at: datetime

    @property
    def miss_rate(self) -> float:
        return 1.0 - self.right / self.room


@dataclass(frozen=True)
class ClassReview:
    """One class review: when it started, the room's size, the lessons asked from, the tallies in the order
    the questions were asked."""

    id: int
    started: datetime
    room: int
    lessons: tuple[str, ...]
    tallies: tuple[Tally, ...]


class ClassReviewLog:
    """The class-session file, open. Use `ClassReviewLog.open`; close it (or use ``with``)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, create: bool = True, timeout: float = 5.0
    ) -> ClassReviewLog:
        """Open (with ``create``, create) the file at `path`; `ClassReviewLogError` when it cannot be used.
        `timeout`: how many seconds to wait for a file that another program has locked."""
        where = Path(path)
        if not create and not where.exists():
            raise ClassReviewLogError(where, "no class session has been recorded here yet")
        if create:
            where.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = sqlite3.connect(where, timeout=timeout, isolation_level=None)
        except sqlite3.Error as err:
            raise ClassReviewLogError(where, f"cannot be opened ({err})") from None
        try:
            _prepare(connection, where)
        except BaseException:
            connection.close()
            raise
        return cls(where, connection)

    def start(self, lessons: Sequence[str], room: int, at: datetime) -> int:
        """A new session of `room` people on `lessons`, started `at`; returns its id."""
        if room < 1:
            raise ValueError(f"room must be at least 1 person, got {room}")
        with self._write():
            cursor = self._db.execute(
                "INSERT INTO session (started, room, lessons) VALUES (?, ?, ?)",
                (_iso(at), room, " ".join(lessons)),
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def record(self, session: int, question_id: str, right: int, at: datetime) -> Tally:
        """Record that `right` people got `question_id` right (again: the new count replaces the old)."""
        room = self._room(session)
        if not 0 <= right <= room:
            raise ValueError(f"right must be from 0 to the room's {room}, got {right}")
        with self._write():
            self._db.execute(
                "INSERT INTO tally (session, question, position, right, at) VALUES (?, ?, "
                "(SELECT COUNT(*) FROM tally WHERE session = ?), ?, ?) "
                "ON CONFLICT (session, question) DO UPDATE SET right = excluded.right, at = excluded.at",
                (session, question_id, session, right, _iso(at)),
            )
        return Tally(question_id, right, room, at)

    def sessions(self, last: int | None = None) -> list[ClassReview]:
        """Every session, oldest first (with `last`, only the last ones)."""
        rows = self._read("SELECT id, started, room, lessons FROM session ORDER BY id")
        if last is not None:
            rows = rows[-last:] if last > 0 else []
        return [self._session(*row) for row in rows]

    def _session(self, id_: int, started: str, room: int, lessons: str) -> ClassReview:
        tallies = self._read(
            "SELECT question, right, at FROM tally WHERE session = ? ORDER BY position", (id_,)
        )
        return ClassReview(
            id_,
            _time(started),
            room,
            tuple(lessons.split()),
            tuple(Tally(q, right, room, _time(at)) for q, right, at in tallies),
        )

    def _room(self, session: int) -> int:
        rows = self._read("SELECT room FROM session WHERE id = ?", (session,))
        if not rows:
            raise ValueError(f"no class session {session} in {self.path}")
        return int(rows[0][0])

    def _read(self, sql: str, parameters: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self._db.execute(sql, parameters))
        except sqlite3.Error as err:
            raise ClassReviewLogError(self.path, f"cannot be read ({err})") from None

    def _write(self) -> _Transaction:
        return _Transaction(self._db, self.path)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ClassReviewLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on an error), with SQLite's errors reported."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db, self._path = db, path

    def __enter__(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as err:
            raise ClassReviewLogError(self._path, f"cannot be written ({err})") from None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            try:
                self._db.execute("COMMIT")
                return
            except sqlite3.Error as err:
                self._db.execute("ROLLBACK")
                raise ClassReviewLogError(self._path, f"cannot be written ({err})") from None
        self._db.execute("ROLLBACK")
        if isinstance(error, sqlite3.Error):
            raise ClassReviewLogError(self._path, f"cannot be written ({error})") from None


def _prepare(db: sqlite3.Connection, path: Path) -> None:
    """Create the schema in an empty file; refuse a file that is not a class-session file of this version."""
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.OperationalError as err:  # locked, or cannot be read
        raise ClassReviewLogError(path, f"cannot be read ({err})") from None
    except sqlite3.DatabaseError as err:  # not an SQLite file at all
        raise ClassReviewLogError(
            path, f"is not a class-session file ({err}); it was left as it is"
        ) from None
    if version > _VERSION:
        raise ClassReviewLogError(
            path, f"was written by a newer course (format {version}; this course reads {_VERSION}): upgrade"
        )
    if tables == {"session", "tally"} and version == _VERSION:
        return
    if tables:
        raise ClassReviewLogError(path, "is not a class-session file (other tables); it was left as it is")
    try:
        db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {_VERSION}; COMMIT;")
    except sqlite3.Error as err:
        raise ClassReviewLogError(path, f"cannot be written ({err})") from None


def _iso(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("times must be timezone-aware")
    return at.astimezone(timezone.utc).isoformat()


def _time(text: object) -> datetime:
    return datetime.fromisoformat(str(text))


# -- the report --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Missed:
    """A question of a session with the room's count: ``miss_rate`` is the share who did not get it right."""

    question: Question
    right: int
    room: int

    @property
    def miss_rate(self) -> float:
        return 1.0 - self.right / self.room


def ranked(session: ClassReview, bank: Bank) -> list[Missed]:
    """The session's questions, most missed first (ties in the order asked); questions no longer in the bank
    (retired) are left out."""
    asked = [(bank.find(t.question_id), t) for t in session.tallies]  # a live session asks predictions too
    rows = [Missed(question, t.right, t.room) for question, t in asked if question is not None]
    return sorted(rows, key=lambda row: -row.miss_rate)  # sorted() is stable: ties keep the order asked


def to_revisit(rows: Iterable[Missed], at: float = REVISIT_AT) -> list[tuple[str, str]]:
    """The (lesson, section) of each question missed by at least `at` of the room, most missed first, once."""
    seen: dict[tuple[str, str], None] = {}
    for row in rows:
        if row.miss_rate >= at:
            seen.setdefault((row.question.lesson, row.question.section), None)
    return list(seen)


def section_link(lesson: str, section: str) -> str:
    """A link to `section` of `lesson`'s notebook, as JupyterLab anchors headings (spaces become hyphens)."""
    return f"{LESSONS[lesson][1]}#{section.replace(' ', '-')}"


def class_review_lines(session: ClassReview, bank: Bank) -> list[str]:
    """What a session's end shows: the questions ranked by miss rate, and the sections to revisit."""
    rows = ranked(session, bank)
    when = session.started.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lessons = ", ".join(session.lessons)
    head = f"Class review {session.id}, {when}: room of {session.room}, lessons {lessons}."
    if not rows:
        return [head, "No question was counted."]
    lines = [head, f"{len(rows)} question{'s' if len(rows) != 1 else ''} counted, most missed first:"]
    for row in rows:
        lines.append(
            f"  {row.miss_rate:4.0%} missed ({row.right} of {row.room} right)  {row.question.id}  "
            f"(lesson {row.question.lesson}, {row.question.section})"
        )
    revisit = to_revisit(rows)
    if not revisit:
        lines.append(
            f"Nothing to revisit: every question was answered right by more than {1 - REVISIT_AT:.0%}."
        )
        return lines
    lines.append(f"Revisit (missed by {REVISIT_AT:.0%} or more):")
    for lesson, section in revisit:
        lines.append(f"  lesson {lesson}, section {section}: {section_link(lesson, section)}")
    return lines
