"""``python -m course``: see `course.terminal.cli`."""

from course.terminal.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
