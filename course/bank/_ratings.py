"""The four ratings as the learner sees them, shared by the terminal and the widgets.

Keyed by the rating's number (1 to 4), so `scheduler.Rating` values (an IntEnum) index them too and importing
this module does not import the scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["HARD_MEANS", "MEANINGS", "NAMES"]

NAMES: Mapping[int, str] = MappingProxyType({1: "Again", 2: "Hard", 3: "Good", 4: "Easy"})
"""Rating -> the name on its button."""

MEANINGS: Mapping[int, str] = MappingProxyType(
    {
        1: "you did not remember it",
        2: "you remembered it, with effort",
        3: "you remembered it",
        4: "you remembered it at once, without effort",
    }
)
"""Rating -> what choosing it says about the answer."""

HARD_MEANS = "Hard = remembered, with effort"
"""The reminder that Hard still counts as remembered, where the ratings are offered in few words."""
