"""Where a widget's (or a terminal session's) progress database is, and how long the widget keeps it open.

One policy for the three widgets, implemented here only (`StoreSource.hold`, `StoreSource.release`, and
`StoreSource.lease` for a session of one step): a widget holds the database open only while one of its
sessions runs, from the session's first use of it to the session's end (its summary, a restart, or a problem
that ends it), never while the kernel idles after a summary. A review's session holds it from its start, a
practice's from its first answer (so nothing is created before that answer is saved); the quiz needs nothing
between answers, so each of its steps (a right answer's intervals, a save, the summary) is a session of one
step that opens and closes it.

A class database (a ``postgresql://`` URL in ``COURSE_DB``, or a store given whose location is one) comes
with an outbox (`course.progress`): what cannot be saved while the server is unreachable is kept there, and
sent whenever a session takes the database (`hold`) or before the next answer is saved (`send_pending`). The
outbox is the learner's in that class, however the URL is spelled (the role and the database it logs in to);
files of the naming before are taken into it first, and nothing is sent to a store that logs in as another.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from course.progress._location import (
    LEARNER_VARS,
    SERVER_SCHEMES,
    SERVICE_SCHEMES,
    db_path,
    learner_url,
    open_store,
    path_source,
    require_file,
    require_folder,
    server_url,
)
from course.progress._outbox import OUTBOX_ERRORS, Kept, Outbox, Owner, legacy_paths, outbox_path
from scheduler import Storage, Store, StoreError, StoreUnavailableError

__all__ = ["PROBLEMS", "StoreLike", "StoreSource"]

StoreLike = Storage | str | os.PathLike[str] | None

# What the database problems caught where the learner acts: the store's own, and OS errors met on the way.
PROBLEMS = (StoreError, OSError)


class StoreSource:
    """Where the progress database is: an open store (a `Store`, a class database's ``PostgresStore``: used as
    is, never closed here) or a path.

    A path is opened when a session first needs it (`hold`) and closed when the session ends (`release`); a
    session of one step uses `lease`. The sessions (`scheduler.Session`, `scheduler.CramSession`) keep a
    reference to the store between answers, so it must stay open from a session's start to its end, and no
    longer: the next session opens it again, and sees what other kernels wrote meanwhile.

    A path that names a folder (``COURSE_DB`` or `store`), or a file in a folder that does not exist (only the
    per-user default folder is created, with the file), is not an error here: it is raised, as a
    ``StoreError`` naming the path, where the database is used, so that the widget shows it.

    `outbox` is the class database's outbox (None for a progress file); `outbox_folder` says where its file
    goes (default: ``$COURSE_OUTBOX``, else beside the per-user progress file).
    """

    def __init__(self, store: StoreLike, *, outbox_folder: str | os.PathLike[str] | None = None) -> None:
        self.store: Storage | None = None
        self._url = server_url() if store is None else None  # COURSE_DB naming a class database
        self._path: Path | None = None
        self._problem: StoreError | None = None
        self._named_by = "store"
        self._held: Storage | None = None
        self._outbox_folder = outbox_folder
        self._outbox: Outbox | None = None
        self._adopted = False
        self._sent = 0
        if isinstance(store, Store):
            self.store = store
            self._path = Path(store.path)
            return
        if store is not None and not isinstance(store, (str, os.PathLike)):
            self.store = store  # another Storage, e.g. a class database's PostgresStore
            return
        if self._url is not None:
            return
        if store is None:
            self._named_by = path_source()
        try:
            path = db_path() if store is None else require_file(Path(store).expanduser(), "store")
            self._path = require_folder(path, self._named_by)
        except StoreError as err:
            self._problem = err

    @property
    def path(self) -> Path:
        """The database file; the `StoreError` found when it was chosen, if any."""
        if self._problem is not None:
            raise self._problem
        assert self._path is not None
        return self._path

    @property
    def outbox(self) -> Outbox | None:
        """Where answers wait while the class database cannot be reached; None for a progress file (and for a
        URL that cannot be read: opening it says why)."""
        if self._outbox is None:
            owner = self._owner()
            if owner is not None:
                self._outbox = Outbox(outbox_path(owner, self._outbox_folder), owner)
        return self._outbox

    def _owner(self) -> Owner | None:
        """The learner and the class database whose answers the outbox keeps: the store's, or those the URL
        logs in to (`scheduler.postgres.login`, by libpq's defaults); None for a progress file."""
        location = self._server_location()
        if location is None:
            return None
        if location.startswith(SERVICE_SCHEMES):  # the learner the hub says, of the service at that URL
            learner = getattr(self.store, "learner", "") or next(
                (os.environ[name] for name in LEARNER_VARS if os.environ.get(name)), ""
            )
            return Owner(learner, location.partition(" as ")[0]) if learner else None
        from scheduler.postgres import login  # psycopg: only for a class database

        learner, database = getattr(self.store, "learner", None), getattr(self.store, "database", None)
        if isinstance(learner, str) and learner and isinstance(database, str) and database:
            return Owner(learner, database)
        try:
            return Owner(*login(location if self._url is None else learner_url(self._url)))
        except StoreError:  # a URL that cannot be read
            return None

    def _adopt(self, outbox: Outbox) -> None:
        """Take the files of the naming before that hold this learner's answers into `outbox` (once)."""
        location = self._server_location()
        if self._adopted or location is None or outbox.owner is None or location.startswith(SERVICE_SCHEMES):
            return
        user = location.partition("://")[2].partition("@")[0] or os.environ.get("PGUSER", "")
        for path in legacy_paths(location, user, outbox.owner.learner, self._outbox_folder):
            outbox.adopt(path)
        self._adopted = True

    def _server_location(self) -> str | None:
        """The class database's location as its store says it (no password), or None for a progress file."""
        if self.store is not None:
            location = self.store.location
            return location if location.startswith((*SERVER_SCHEMES, *SERVICE_SCHEMES)) else None
        if self._url is None:
            return None
        if self._url.startswith(SERVICE_SCHEMES):
            return self._url
        from scheduler.postgres import describe  # psycopg: only for a class database

        try:
            return describe(learner_url(self._url))  # who `open_store` logs in as
        except StoreError:  # a URL that cannot be read: `describe`'s words for one
            return describe(self._url)

    @property
    def held(self) -> Storage | None:
        """The database the running session holds; None between sessions."""
        return self._held

    def exists(self) -> bool:
        """Whether the file exists. True when that cannot be told (a folder on the way may not be searched):
        opening it then says why."""
        if self.store is not None or self._url is not None:
            return True
        try:
            self.path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError:
            return True
        return True

    def hold(self, *, create: bool) -> Storage:
        """The database for the running session, kept until `release`: the one held already, or the given
        `Store`, or the file opened now. Opening creates no file (with ``create``, the first write does;
        without it, a missing file is a `StoreNotFoundError`). Raises `StoreError`."""
        if self._held is None:
            self._held = self.store
            if self._held is None and self._url is not None:
                self._held = open_store(self._url, create=create)
            if self._held is None:
                self._held = open_store(self.path, create=create, named_by=self._named_by)
            if self.outbox is not None:
                try:
                    self.send_pending()
                except (*OUTBOX_ERRORS, OSError):  # the outbox file itself: say so
                    self.release()
                    raise
                except StoreError:  # not sent: they wait for the next chance
                    pass
        return self._held

    def send_pending(self) -> int:
        """Send the answers waiting in the outbox to the database held; how many (also added to what
        `take_sent` says). Raises the `StoreError` met: they wait then, as before."""
        outbox, held = self.outbox, self._held
        if outbox is None or held is None:
            return 0
        self._adopt(outbox)
        learner = getattr(held, "learner", None)  # the role the store logs in as: the answers must be theirs
        sent = outbox.send(held, learner if isinstance(learner, str) and learner else None)
        self._sent += sent
        return sent

    def take_sent(self) -> int:
        """How many kept answers were sent since the last call."""
        sent, self._sent = self._sent, 0
        return sent

    def keep(self, kept: Kept) -> None:
        """Keep an answer in the outbox (a class database only). OSError if it cannot be written."""
        assert self.outbox is not None
        self.outbox.keep(kept)

    def waiting(self) -> int:
        """How many answers wait in the outbox (0 for a progress file). `StoreError`, OSError: unreadable."""
        outbox = self.outbox
        if outbox is None:
            return 0
        self._adopt(outbox)
        return len(outbox.pending())

    def release(self) -> None:
        """End the running session's hold: close the database if it was opened here. Does nothing when none
        is held."""
        held, self._held = self._held, None
        if held is not None and held is not self.store:
            held.close()

    def check_writable(self) -> None:
        """Raise the `StoreError` (or OSError) that would stop an answer being saved now: a read-only or full
        file, a lock, an instructor's account. Writes nothing, creates no file. A class database that cannot
        be reached is not such a problem: its outbox keeps the answers then."""
        try:
            if self._held is not None:
                self._held.check_writable()
                return
            with self.lease(create=True) as store:
                store.check_writable()
        except StoreUnavailableError:
            if self.outbox is None:
                raise

    @contextlib.contextmanager
    def lease(self, *, create: bool) -> Iterator[Storage]:
        """The database held for one `with` block (a session of one step), released at its end."""
        store = self.hold(create=create)
        try:
            yield store
        finally:
            self.release()
