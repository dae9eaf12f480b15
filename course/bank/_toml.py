"""TOML parsing: the standard library's ``tomllib`` on Python 3.11+, its backport ``tomli`` on 3.10.

Both parse nested arrays and inline tables by recursion, so a document nested a few hundred levels deep stops
them with a RecursionError and its long traceback; and their time and memory grow with the square of the
number of parts of a dotted key (``a.b.c…``), so a key of 100,000 parts exhausts the memory. Here a document
nested more than `MAX_DEPTH` levels, in brackets or in the parts of one key, is refused before it is parsed,
by a scan linear in its length, and every document that cannot be parsed raises :class:`TOMLDecodeError`
with a one-line message: the parser's own, or "nested too deeply (more than 100 levels)".
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any

if sys.version_info >= (3, 11):
    import tomllib as _parser
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as _parser

__all__ = ["MAX_DEPTH", "TOMLDecodeError", "load", "loads", "nesting_depth"]

MAX_DEPTH = 100

# The tokens that matter for nesting: strings and comments (skipped whole, so brackets and dots inside them do
# not count), brackets, and the characters that end a dotted key. Every alternative that starts always matches
# (an unterminated string runs to the end of its line, or of the text for a multi-line one), so no start is
# scanned twice and the scan is linear.
_TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'  # multi-line basic string
    r"|'''.*?(?:'''|\Z)"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\[^\n])*(?:"|$)'  # basic string
    r"|'[^'\n]*(?:'|$)"  # literal string
    r"|#[^\n]*"  # comment
    r"|[\[\]{}.,=\n]",
    re.DOTALL | re.MULTILINE,
)
_OPENING, _CLOSING, _KEY_ENDS = "[{", "]}", ",=\n[]{}"


class TOMLDecodeError(ValueError):
    """The text is not valid TOML, or is nested too deeply to parse; ``str()`` is one line saying which."""


def nesting_depth(text: str) -> int:
    """The deepest nesting in `text`: of brackets (arrays, inline tables, table headers) outside strings and
    comments, or of the parts of one dotted key (``a.b.c`` has 3). Linear in the length of `text`; meant for
    a bound, not exact for text that is not TOML."""
    deepest = brackets = dots = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == ".":
            dots += 1
            deepest = max(deepest, dots + 1)
            continue
        if token in _KEY_ENDS:
            dots = 0
        if token in _OPENING:
            brackets += 1
            deepest = max(deepest, brackets)
        elif token in _CLOSING:
            brackets = max(brackets - 1, 0)
    return deepest


def loads(text: str) -> dict[str, Any]:
    """Parse a TOML document from a string."""
    if nesting_depth(text) > MAX_DEPTH:
        raise TOMLDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        document: dict[str, Any] = _parser.loads(text)
        return document
    except _parser.TOMLDecodeError as err:
        raise TOMLDecodeError(str(err)) from None
    except RecursionError:  # not reached below MAX_DEPTH unless the caller's stack is nearly full
        raise TOMLDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)") from None


def load(file: IO[bytes]) -> dict[str, Any]:
    """Parse a TOML document from a binary file object (UTF-8)."""
    return loads(file.read().decode("utf-8"))
