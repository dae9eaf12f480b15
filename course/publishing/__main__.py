"""``python -m course.publishing slides NOTEBOOK...``: split each lesson's text cells at their headings and
write its slide layout, in place."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from course.publishing._slides import main as slides

USAGE = "usage: python -m course.publishing slides NOTEBOOK..."


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "slides":
        print(USAGE, file=sys.stderr)
        return 2
    return slides(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
