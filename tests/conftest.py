"""Fixtures shared by the tests (plain helpers are in fixed_clock.py and store_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixed_clock import Clock
from store_helpers import exact_store

from scheduler import Store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    """An open store at ``db``, fuzz off so due dates are exact."""
    with exact_store(db) as opened:
        yield opened
