"""Where a learner's progress lives, and the glue between the question bank and the scheduler.

The progress file is chosen, most specific first, by: the ``--db`` option of ``python -m course``, the
``COURSE_DB`` environment variable, then ``progress.sqlite3`` in the per-user data directory
(``platformdirs.user_data_dir("attention-course")``).
"""

from __future__ import annotations

import os
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs

if TYPE_CHECKING:
    from course.bank import Bank
    from scheduler import Item, Store

__all__ = ["APP_NAME", "DB_FILE_NAME", "ENV_VAR", "db_path", "items", "local_tz", "open_store"]

APP_NAME = "attention-course"
DB_FILE_NAME = "progress.sqlite3"
ENV_VAR = "COURSE_DB"


def db_path(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """The progress file: `cli_value` (``--db``), else ``$COURSE_DB``, else the per-user default."""
    if cli_value is not None and str(cli_value) != "":
        return Path(cli_value).expanduser()
    env = os.environ.get(ENV_VAR, "")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / DB_FILE_NAME


def open_store(path: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
    """Open the progress store at `path` (default: `db_path()`).

    With ``create=True`` a missing file (and its folder) is created; with ``create=False`` a missing file
    raises ``scheduler.StoreNotFoundError`` and nothing is written.
    """
    from scheduler import Store

    target = db_path(path)
    if create:
        target.parent.mkdir(parents=True, exist_ok=True)
    return Store.open(target, create=create)


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
