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
from datetime import datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs

from course.bank import Bank, load_bank
from scheduler import Item, Storage, Store, StoreError, StoreVersionError

__all__ = [
    "APP_NAME",
    "DB_FILE_NAME",
    "ENV_VAR",
    "SERVER_SCHEMES",
    "ProgressFolderError",
    "ProgressPathError",
    "db_path",
    "default_path",
    "items",
    "learner_url",
    "local_tz",
    "open_server",
    "open_store",
    "path_source",
    "require_file",
    "require_folder",
    "server_url",
]

APP_NAME = "attention-course"
DB_FILE_NAME = "progress.sqlite3"
ENV_VAR = "COURSE_DB"
UPGRADE = "upgrade the course to open it (git pull, then pip install -r requirements.txt)"


class _NamedPathError(StoreError):
    """A problem with the progress file `path` as named by ``named_by`` ("--db", "COURSE_DB", "store")."""

    def __init__(self, path: str | os.PathLike[str], named_by: str, message: str) -> None:
        super().__init__(path, message)
        self.named_by = named_by


class ProgressPathError(_NamedPathError):
    """The progress file was named by a path that is a folder (``named_by``: "--db", "COURSE_DB", ...)."""

    def __init__(self, path: str | os.PathLike[str], named_by: str) -> None:
        example = Path(path) / DB_FILE_NAME
        message = f"{named_by} must name a file, e.g. {example} ({os.fspath(path)} is a folder)"
        super().__init__(path, named_by, message)


class ProgressFolderError(_NamedPathError):
    """The folder of a progress file named by ``named_by`` ("--db", "COURSE_DB", "store") does not exist."""

    def __init__(self, path: str | os.PathLike[str], named_by: str) -> None:
        folder = Path(path).parent
        message = (
            f"{named_by} names {os.fspath(path)}, but its folder {folder} does not exist: create the folder, "
            f"or correct {named_by}"
        )
        super().__init__(path, named_by, message)


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


SERVER_SCHEMES = ("postgresql://", "postgres://")
SERVICE_SCHEMES = ("http://", "https://")  # a class service (`scheduler.service`) in front of the database
TOKEN_VAR = "JUPYTERHUB_API_TOKEN"  # what a JupyterHub server's kernels hold: the class service takes it
LEARNER_VARS = ("COURSE_LEARNER", "JUPYTERHUB_USER")


def server_url(cli_value: str | os.PathLike[str] | None = None) -> str | None:
    """The class database's URL when ``--db`` (`cli_value`), else ``$COURSE_DB``, names one
    (``postgresql://...``, or a class service's ``https://.../services/course/``); None for a progress
    file."""
    value = os.fspath(cli_value) if cli_value is not None and os.fspath(cli_value) != "" else None
    value = value if value is not None else os.environ.get(ENV_VAR, "")
    return value if value.startswith((*SERVER_SCHEMES, *SERVICE_SCHEMES)) else None


def learner_url(url: str) -> str:
    """The class database's `url` as the learner logs in: the role the URL names; a URL without one takes
    ``$PGUSER`` (libpq reads it itself), else ``$COURSE_LEARNER``, else ``$JUPYTERHUB_USER`` (the hub's user
    name). A URL that cannot be read is returned as it is: opening it says why (never quoting it). A class
    service's URL names nobody: the service knows the learner by their token."""
    if os.environ.get("PGUSER") or url.startswith(SERVICE_SCHEMES):
        return url
    from scheduler.postgres import MalformedURLError, with_learner  # psycopg: only for a class database

    named = [os.environ[name] for name in LEARNER_VARS if os.environ.get(name)]
    try:
        return with_learner(url, named[0] if named else None)
    except MalformedURLError:
        return url


def open_server(url: str) -> Storage:
    """The learner's store in the class database at `url`, logging in as `learner_url` says; through a
    class service (an ``https://`` URL), as the owner of ``$JUPYTERHUB_API_TOKEN``. Every problem is a
    ``scheduler.StoreError``."""
    if url.startswith(SERVICE_SCHEMES):
        from scheduler.service import RemoteStore

        return RemoteStore.open(url, os.environ.get(TOKEN_VAR, ""), tz=local_tz())
    from scheduler.postgres import PostgresStore  # psycopg: only for a class database

    return PostgresStore.open(learner_url(url), tz=local_tz())


def open_store(
    path: str | os.PathLike[str] | None = None, *, create: bool = True, named_by: str | None = None
) -> Storage:
    """Open the progress store at `path` (default: `db_path()`); `named_by` says who named `path`, for
    messages (default: ``--db`` for a `path` given, else ``COURSE_DB`` or the default location).

    Opening creates nothing. With ``create=True`` a missing file is created by the first write (with the
    per-user data directory if that is where it goes); with ``create=False`` a missing file raises
    ``scheduler.StoreNotFoundError``. A missing folder other than the per-user data directory is a
    `ProgressFolderError`, either way. Every problem is a ``scheduler.StoreError``. When `path` (or, without
    it, ``COURSE_DB``) is a class database's URL, the learner's store there (`open_server`).
    """
    url = server_url(path)
    if url is not None:
        return open_server(url)
    chosen = require_folder(db_path(path), named_by or path_source(path))
    try:
        return Store.open(chosen, create=create, defer_create=True, tz=local_tz())
    except StoreVersionError as err:  # the scheduler cannot say what to upgrade: the course can
        raise StoreVersionError(err.path, err.found, err.known, UPGRADE) from None


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
    return (bank if bank is not None else load_bank()).items()
