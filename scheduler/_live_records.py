"""The records of a live class session (``scheduler.postgres.LiveRoom`` keeps them in the class database; a
class service sends them to learners' kernels): the session as the class sees it, the answers to one
question, and the refusal of an answer to a question no longer open.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scheduler._errors import StoreError

__all__ = ["LiveAnswers", "LiveState", "QuestionClosedError"]


class QuestionClosedError(StoreError):
    """An answer to a question that is no longer open: revealed, moved on from, or its session ended."""

    def __init__(self, where: str, session: int, position: int) -> None:
        super().__init__(
            where,
            f"question {position} of live session {session} is closed (its answer was revealed, or the "
            "session moved on); your answer was not counted",
        )


@dataclass(frozen=True)
class LiveState:
    """A live session as the class sees it. ``position`` counts the questions asked (0: none yet);
    ``item_id`` and ``layout`` are the question asked now (None and "" before the first)."""

    session: int
    instructor: str
    title: str
    position: int
    item_id: str | None
    layout: str
    revealed: bool
    ended: bool
    started_at: datetime
    room: str

    @property
    def open(self) -> bool:
        """Whether the question asked now takes answers."""
        return self.item_id is not None and not self.revealed and not self.ended


@dataclass(frozen=True)
class LiveAnswers:
    """The answers to one question of a session: how many gave each answer, most given first (ties in the
    order first given). Whether an answer is right is for whoever knows the question to say."""

    counts: dict[str, int]

    @property
    def answered(self) -> int:
        return sum(self.counts.values())
