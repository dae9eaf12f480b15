"""Where a widget's progress database is, and how long the widget keeps it open.

One policy for the three widgets, implemented here only (`StoreSource.hold`, `StoreSource.release`, and
`StoreSource.lease` for a session of one step): a widget holds the database open only while one of its
sessions runs, from the session's first use of it to the session's end (its summary, a restart, or a problem
that ends it), never while the kernel idles after a summary. A review's session holds it from its start, a
practice's from its first answer (so nothing is created before that answer is saved); the quiz needs nothing
between answers, so each of its steps (a right answer's intervals, a save, the summary) is a session of one
step that opens and closes it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from course.progress import db_path, open_store, path_source, require_file, require_folder, server_url
from scheduler import Storage, Store, StoreError

__all__ = ["PROBLEMS", "StoreLike", "StoreSource"]

StoreLike = Store | str | os.PathLike[str] | None

# What the database problems caught where the learner acts: the store's own, and OS errors met on the way.
PROBLEMS = (StoreError, OSError)


class StoreSource:
    """Where the progress database is: an open `Store` (used as is, never closed here) or a path.

    A path is opened when a session first needs it (`hold`) and closed when the session ends (`release`); a
    session of one step uses `lease`. The sessions (`scheduler.Session`, `scheduler.CramSession`) keep a
    reference to the store between answers, so it must stay open from a session's start to its end, and no
    longer: the next session opens it again, and sees what other kernels wrote meanwhile.

    A path that names a folder (``COURSE_DB`` or `store`), or a file in a folder that does not exist (only the
    per-user default folder is created, with the file), is not an error here: it is raised, as a
    ``StoreError`` naming the path, where the database is used, so that the widget shows it.
    """

    def __init__(self, store: StoreLike) -> None:
        self.store: Storage | None = None
        self._url = server_url() if store is None else None  # COURSE_DB naming a class database
        self._path: Path | None = None
        self._problem: StoreError | None = None
        self._named_by = "store"
        self._held: Storage | None = None
        if isinstance(store, Store):
            self.store = store
            self._path = Path(store.path)
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
        return self._held

    def release(self) -> None:
        """End the running session's hold: close the database if it was opened here. Does nothing when none
        is held."""
        held, self._held = self._held, None
        if held is not None and held is not self.store:
            held.close()

    @contextlib.contextmanager
    def lease(self, *, create: bool) -> Iterator[Storage]:
        """The database held for one `with` block (a session of one step), released at its end."""
        store = self.hold(create=create)
        try:
            yield store
        finally:
            self.release()
