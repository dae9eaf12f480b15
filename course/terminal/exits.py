"""The exit statuses of ``python -m course`` (listed in `course.terminal.cli`)."""

from __future__ import annotations

__all__ = [
    "EXIT_BANK",
    "EXIT_BROKEN_PIPE",
    "EXIT_HANGUP",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_STORE",
    "EXIT_TERMINATED",
    "EXIT_TOO_FEW_REVIEWS",
    "EXIT_USAGE",
]

EXIT_OK = 0
EXIT_BANK = 1  # the question bank is invalid (or, with check --strict, has lint warnings)
EXIT_STORE = 2  # the progress file cannot be used
EXIT_USAGE = 2  # bad arguments, or the workbook cannot be written
EXIT_TOO_FEW_REVIEWS = 3  # optimize: too few reviews to fit the parameters to yet (nothing changed)
EXIT_HANGUP = 128 + 1  # SIGHUP: the terminal was closed
EXIT_INTERRUPTED = 128 + 2  # SIGINT: Ctrl-C
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE: the output was closed early
EXIT_TERMINATED = 128 + 15  # SIGTERM
