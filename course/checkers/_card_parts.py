"""What the code cards' checkers share.

A code card (kind ``code`` in ``course/questions``) asks for one function of 3-15 lines, one short step of a
lesson written from memory at review time. Its checker, ``check_card_<slug>``, stands in the module of its
lesson beside the lesson's exercise checkers (``check_card_softmax`` in ``_softmax``, and so on), built from
the engine like them (cases, typical mistakes with the words that explain them). Numpy only: the runner's
namespace holds ``np`` and ``math`` and nothing of the course, so a card that needs a softmax has the learner
write it inline.

A typical mistake may have another shape than the right result (values taken from the wrong sequence, a
missing transpose): the engine names it after the wrong shape. The card for the online softmax (lesson 08,
``_cost``) returns three arrays and is checked part by part.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import NDArray

__all__ = ["Array", "Mistakes", "mask_words"]

Array = NDArray[Any]
Mistakes = tuple[tuple[NDArray[Any], str], ...]


def mask_words(index: tuple[int, ...], expected: bool, where: str) -> str:
    """A wrong entry of a (..., t_q, t_k) mask, in the words of queries and keys."""
    *batch, i, j = index
    query = f"query {i}" if not batch else f"query {i} of sequence {batch[0]}"
    if expected:
        return f"{query} is blocked from key {j}, which it may see ({where} should be True)"
    return f"{query} may attend to key {j}, which it must not see ({where} should be False)"
