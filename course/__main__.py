"""``python -m course``: see `course.cli`."""

from course.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
