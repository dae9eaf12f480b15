"""Due times as the SQLite store reads them: by item id, earliest first, each made a datetime only when read
(`DueTimes`), and brought forward by the nudges not answered since (`brought_forward`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime

from scheduler._time import from_ms

__all__ = ["DueTimes", "brought_forward"]


def brought_forward(times: dict[str, datetime], nudged: Sequence[tuple[str, int]]) -> dict[str, datetime]:
    """``times`` with each of ``nudged`` (item id, due in ms) made earlier, or added."""
    for item_id, due in nudged:
        when = from_ms(due)
        if item_id not in times or when < times[item_id]:
            times[item_id] = when
    return times


class DueTimes(Mapping[str, datetime]):
    """Due times by item id, in the order given (earliest first), each made a datetime only when read: a
    queue reads the first few hundred of thousands."""

    __slots__ = ("_ms",)

    def __init__(self, ms: dict[str, int]) -> None:
        self._ms = ms

    def __getitem__(self, item_id: str) -> datetime:
        return from_ms(self._ms[item_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ms)

    def __len__(self) -> int:
        return len(self._ms)

    def __repr__(self) -> str:
        return f"{{{', '.join(f'{item_id!r}: {self[item_id]!r}' for item_id in self)}}}"
