"""``python -m course``: see `course.terminal`."""

from course.terminal import main

if __name__ == "__main__":
    raise SystemExit(main())
