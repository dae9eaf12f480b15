"""Fixtures shared by the widget tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixed_clock import Clock


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


@pytest.fixture
def clock() -> Clock:
    return Clock()
