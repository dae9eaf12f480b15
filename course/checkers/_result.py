"""What a checker returns: :class:`CheckResult`, the verdict that the engine (``_engine``) words and the
listeners (``_listening``) hear. A module of its own, so that neither of the two imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CheckResult"]


@dataclass(frozen=True)
class CheckResult:
    """What a checker found: ``ok`` is True when every case passes; ``message`` is the sentence it printed
    (``course.checkers.mistake_in(message)``: the named mistake it names, if any)."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def _ipython_display_(self) -> None:
        """Show nothing when a notebook cell ends with a checker call: the sentence is printed already."""
