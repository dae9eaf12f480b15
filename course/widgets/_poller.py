"""A widget's background check: call a function every few seconds on a daemon thread until stopped.

The live widgets follow a session another kernel runs, so they look at the class database every second or so;
ipywidgets sends the changes a thread makes to the browser as it does a click's. Tests pass ``every=None``
and call the widget's ``refresh`` themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Poller"]


class Poller:
    """Calls `check` every `every` seconds, for at most `limit` seconds, until `stop` (or `check` returns
    False). An exception in `check` stops nothing: `check` is expected to show its own problems."""

    def __init__(self, check: Callable[[], bool], every: float, limit: float = 4 * 3600) -> None:
        self._check = check
        self._every = every
        self._rounds = max(1, int(limit / every))
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="course-live-poll", daemon=True)

    def start(self) -> Poller:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait until the checks have ended (at most `timeout` seconds)."""
        self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._stopped.is_set()

    def _run(self) -> None:
        for _ in range(self._rounds):
            if self._stopped.wait(self._every):
                return
            try:
                if not self._check():
                    return
            except Exception:  # the check shows its own problems; a bug must not end the loop
                continue
