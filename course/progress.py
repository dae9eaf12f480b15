"""Where a learner's progress lives, and the glue between the question bank and the scheduler.

The progress file is chosen, most specific first, by: the ``--db`` option of ``python -m course``, the
``COURSE_DB`` environment variable, then ``progress.sqlite3`` in the per-user data directory
(``platformdirs.user_data_dir("attention-course")``). ``--db`` and ``COURSE_DB`` must name a file: one that
names a folder is a `ProgressPathError` (a ``scheduler.StoreError``), so it is reported like any other problem
with the progress file.

Nothing is created until there is something to save: opening the store creates no file, the first answer (or
enrolment) does. The per-user data directory is created then if needed; a folder named by ``--db``,
``COURSE_DB`` or a widget's ``store`` is never created: if it does not exist, opening reports it
(`ProgressFolderError`), before any question is asked, so a mistyped path is noticed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs

from scheduler import StoreError

if TYPE_CHECKING:
    from course.bank import Bank
    from scheduler import Item, Limits, Store

__all__ = [
    "APP_NAME",
    "DB_FILE_NAME",
    "ENV_VAR",
    "Outlook",
    "ProgressFolderError",
    "ProgressPathError",
    "db_path",
    "default_path",
    "items",
    "local_tz",
    "open_store",
    "outlook",
    "path_source",
    "require_file",
    "require_folder",
]

APP_NAME = "attention-course"
DB_FILE_NAME = "progress.sqlite3"
ENV_VAR = "COURSE_DB"


class ProgressPathError(StoreError):
    """The progress file was named by a path that is a folder (``named_by``: "--db", "COURSE_DB", ...)."""

    def __init__(self, path: str | os.PathLike[str], named_by: str) -> None:
        self.named_by = named_by
        example = Path(path) / DB_FILE_NAME
        message = f"{named_by} must name a file, e.g. {example} ({os.fspath(path)} is a folder)"
        self._setup(path, message, named_by)


class ProgressFolderError(StoreError):
    """The folder of a progress file named by ``named_by`` ("--db", "COURSE_DB", "store") does not exist."""

    def __init__(self, path: str | os.PathLike[str], named_by: str) -> None:
        self.named_by = named_by
        folder = Path(path).parent
        message = (
            f"{named_by} names {os.fspath(path)}, but its folder {folder} does not exist: create the folder, "
            f"or correct {named_by}"
        )
        self._setup(path, message, named_by)


def require_file(path: Path, named_by: str) -> Path:
    """`path`, unless it is an existing folder: then `ProgressPathError` saying that `named_by` must name a
    file. (A path that cannot be looked at is returned: opening it reports why.)"""
    if os.path.isdir(path):
        raise ProgressPathError(path, named_by)
    return path


def db_path(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """The progress file: `cli_value` (``--db``), else ``$COURSE_DB``, else the per-user default.

    `ProgressPathError` when ``--db`` or ``$COURSE_DB`` names a folder.
    """
    if cli_value is not None and str(cli_value) != "":
        return require_file(Path(cli_value).expanduser(), "--db")
    env = os.environ.get(ENV_VAR, "")
    if env:
        return require_file(Path(env).expanduser(), ENV_VAR)
    return default_path()


def default_path() -> Path:
    """The per-user progress file, used when neither ``--db`` nor ``COURSE_DB`` names one."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / DB_FILE_NAME


def path_source(cli_value: str | os.PathLike[str] | None = None) -> str:
    """Who names `db_path(cli_value)`: ``--db``, ``COURSE_DB`` or ``the default location``."""
    if cli_value is not None and str(cli_value) != "":
        return "--db"
    return ENV_VAR if os.environ.get(ENV_VAR, "") else "the default location"


def require_folder(path: Path, named_by: str) -> Path:
    """`path`, unless its folder is missing and `path` is not `default_path()` (whose folders are created
    with the file): then `ProgressFolderError`. (A folder that cannot be looked at: opening says why.)"""
    if path == default_path():
        return path
    try:
        os.stat(path.parent)
    except FileNotFoundError:
        raise ProgressFolderError(path, named_by) from None
    except OSError:
        pass
    return path


def open_store(
    path: str | os.PathLike[str] | None = None, *, create: bool = True, named_by: str | None = None
) -> Store:
    """Open the progress store at `path` (default: `db_path()`); `named_by` says who named `path`, for
    messages (default: ``--db`` for a `path` given, else ``COURSE_DB`` or the default location).

    Opening creates nothing. With ``create=True`` a missing file is created by the first write (with the
    per-user data directory if that is where it goes); with ``create=False`` a missing file raises
    ``scheduler.StoreNotFoundError``. A missing folder other than the per-user data directory is a
    `ProgressFolderError`, either way. Every problem is a ``scheduler.StoreError``.
    """
    from scheduler import Store

    chosen = db_path(path)
    return Store.open(require_folder(chosen, named_by or path_source(path)), create=create, defer_create=True)


@dataclass(frozen=True)
class Outlook:
    """What a review started at some time would find.

    ``due_now``: the questions it would serve (due ones, then new ones); ``held_due`` and ``held_new``: the
    due and new questions that today's limits hold back until tomorrow; ``next_due``: the earliest due time
    after that time (None when no question is scheduled after it).
    """

    due_now: int
    held_due: int
    held_new: int
    next_due: datetime | None

    def held_text(self) -> str | None:
        """``10 due and 3 new questions wait``, ``1 new question waits``; None when nothing is held back."""
        parts = [f"{n} {kind}" for n, kind in ((self.held_due, "due"), (self.held_new, "new")) if n]
        if not parts:
            return None
        one = self.held_due + self.held_new == 1
        return f"{' and '.join(parts)} {'question waits' if one else 'questions wait'}"


def outlook(store: Store, items: Sequence[Item], at: datetime, tz: tzinfo, limits: Limits) -> Outlook:
    """The `Outlook` at `at` for `items`, read from one snapshot of `store`."""
    from scheduler import Session

    ids = {item.id for item in items}
    with store.snapshot():
        session = Session(store, items, at, tz, limits)
        cards = {item_id: card for item_id, card in store.cards().items() if item_id in ids}
        decks = set(store.enrolled())
    due = sum(card.due <= at for card in cards.values())
    unseen = len({item.id for item in items if item.deck in decks and item.id not in cards})
    later = [card.due for card in cards.values() if card.due > at]
    return Outlook(
        due_now=session.remaining,
        held_due=max(0, due - session.due_count),
        held_new=max(0, unseen - session.new_count),
        next_due=min(later, default=None),
    )


def local_tz() -> tzinfo:
    """The system's local time zone, DST rules included where the system names one (``$TZ`` or
    ``/etc/localtime``); otherwise the current fixed UTC offset."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        zone = _zone(name)
        if zone is not None:
            return zone
    localtime = Path("/etc/localtime")
    if not name and localtime.exists():
        resolved = str(localtime.resolve())
        if "zoneinfo/" in resolved:
            zone = _zone(resolved.split("zoneinfo/", 1)[1])
            if zone is not None:
                return zone
        try:
            with localtime.open("rb") as handle:
                return ZoneInfo.from_file(handle, key="localtime")
        except (OSError, ValueError):
            pass
    fallback = datetime.now().astimezone().tzinfo
    assert fallback is not None
    return fallback


def _zone(key: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def items(bank: Bank | None = None) -> list[Item]:
    """The questions of `bank` (default: the shipped bank) as scheduler items, deck = lesson."""
    from course.bank import load_bank

    return (bank if bank is not None else load_bank()).items()
