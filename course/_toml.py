"""TOML parsing: the standard library's ``tomllib`` on Python 3.11+, its backport ``tomli`` on 3.10."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, load, loads
else:  # pragma: no cover - exercised on Python 3.10 only
    from tomli import TOMLDecodeError, load, loads

__all__ = ["TOMLDecodeError", "load", "loads"]
