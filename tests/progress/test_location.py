"""Where progress lives: --db, then $COURSE_DB, then the per-user data directory; opening; the local zone."""

from __future__ import annotations

import pickle
import sys
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import platformdirs
import pytest

from course.bank import load_bank
from course.progress import _location as progress
from scheduler import Item, Store, StoreAccessError, StoreError, StoreNotFoundError


def test_db_path_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_DB", str(tmp_path / "env.sqlite3"))
    assert progress.db_path(str(tmp_path / "cli.sqlite3")) == tmp_path / "cli.sqlite3"
    assert progress.db_path(tmp_path / "cli.sqlite3") == tmp_path / "cli.sqlite3"
    assert progress.db_path() == tmp_path / "env.sqlite3"
    assert progress.db_path("") == tmp_path / "env.sqlite3"  # an empty --db means "not given"
    monkeypatch.setenv("COURSE_DB", "")
    default = Path(platformdirs.user_data_dir("attention-course", appauthor=False)) / "progress.sqlite3"
    assert progress.db_path() == default
    monkeypatch.delenv("COURSE_DB")
    assert progress.db_path() == default


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME is the Linux convention")
def test_db_path_default_on_linux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COURSE_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert progress.db_path() == tmp_path / "attention-course" / "progress.sqlite3"


def test_db_path_expands_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert progress.db_path("~/mine.sqlite3") == tmp_path / "mine.sqlite3"
    monkeypatch.setenv("COURSE_DB", "~/env.sqlite3")
    assert progress.db_path() == tmp_path / "env.sqlite3"


def test_open_store_creates_the_default_folder_at_the_first_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COURSE_DB", raising=False)
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *args, **kwargs: str(tmp_path / "deep" / "er"))
    target = tmp_path / "deep" / "er" / "progress.sqlite3"
    with progress.open_store() as store:
        assert isinstance(store, Store)
        assert store.path == target
        assert list(tmp_path.iterdir()) == []  # opening creates nothing
        store.enroll("00", datetime(2025, 3, 3, tzinfo=timezone.utc))
    with progress.open_store(target, create=False) as store:
        assert list(store.enrolled()) == ["00"]


@pytest.mark.parametrize("how", ["--db", "COURSE_DB", "store"])
@pytest.mark.parametrize("create", [True, False])
def test_a_named_file_in_a_missing_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, create: bool
) -> None:
    target = tmp_path / "mistyped" / "progress.sqlite3"
    monkeypatch.setenv("COURSE_DB", str(target))
    given = {"--db": target, "COURSE_DB": None, "store": target}[how]
    with pytest.raises(progress.ProgressFolderError) as caught:
        progress.open_store(given, create=create, named_by="store" if how == "store" else None)
    assert isinstance(caught.value, StoreError)
    assert str(caught.value) == (
        f"{how} names {target}, but its folder {tmp_path / 'mistyped'} does not exist: create the folder, "
        f"or correct {how}"
    )
    assert caught.value.path == str(target)
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_open_store_without_create_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "progress.sqlite3"
    with pytest.raises(StoreNotFoundError) as caught:
        progress.open_store(target, create=False)
    assert str(caught.value) == f"no progress database at {target}"
    assert list(tmp_path.iterdir()) == []


def test_open_store_with_create_writes_nothing_until_a_write(tmp_path: Path) -> None:
    target = tmp_path / "progress.sqlite3"
    with progress.open_store(target) as store:
        assert (store.enrolled(), store.cards()) == ({}, {})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("how", ["--db", "COURSE_DB"])
def test_a_folder_named_as_the_progress_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("COURSE_DB", str(tmp_path))
    with pytest.raises(progress.ProgressPathError) as caught:
        progress.db_path(tmp_path if how == "--db" else None)
    assert isinstance(caught.value, StoreError)  # reported like any other problem with the progress file
    assert str(caught.value) == (
        f"{how} must name a file, e.g. {tmp_path / 'progress.sqlite3'} ({tmp_path} is a folder)"
    )
    assert caught.value.path == str(tmp_path)
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)
    with pytest.raises(progress.ProgressPathError):
        progress.open_store(tmp_path if how == "--db" else None)
    assert list(tmp_path.iterdir()) == []


def test_open_store_leaves_the_folder_to_the_store(tmp_path: Path) -> None:
    parent = tmp_path / "notes.txt"
    parent.write_text("a file, not a folder\n")
    target = parent / "deeper" / "progress.sqlite3"
    with pytest.raises(StoreAccessError) as caught:
        progress.open_store(target)
    assert str(caught.value) == (
        f"{target} cannot be opened ({parent} is not a folder); check that its folder exists and is writable"
    )


@pytest.mark.parametrize(
    ("tz", "key"), [("Europe/Berlin", "Europe/Berlin"), (":America/New_York", "America/New_York")]
)
def test_local_tz_follows_tz(monkeypatch: pytest.MonkeyPatch, tz: str, key: str) -> None:
    monkeypatch.setenv("TZ", tz)
    assert progress.local_tz() == ZoneInfo(key)


def test_local_tz_without_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TZ", raising=False)
    zone = progress.local_tz()
    assert zone.utcoffset(datetime(2025, 3, 3, 12)) is not None


def test_items_from_the_bank() -> None:
    bank = load_bank()
    assert progress.items() == progress.items(bank) == [Item(q.id, q.lesson) for q in bank.all()]
