"""Named mistakes: the typical mistakes that an exercise's checker names and a code card practises.

Each :class:`Mistake` has a name (what a code card lists in its ``mistakes`` field), the words of the
sentences that name it (the checkers' own constants, so the two never drift apart: the words of a lesson
exercise's checker, which brings the card back, and those of the code card's own checker, when they differ)
and a short label (what the projector and ``stats`` show). `mistake_in` finds the mistake a checker's
sentence names: a checker's result gives it as ``mistake_in(result.message)``. When a lesson's exercise names
one, the code cards that list it come back the next day (`course.widgets` listens: `listen`); every mistake
here is named by the checker of an exercise that a lesson's notebook calls
(``tests/lessons/test_named_mistakes.py`` shows a wrong answer for each).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from course.checkers._attention import SCALED_AFTER
from course.checkers._cost import NO_ACC_RESCALE, NO_SUM_RESCALE
from course.checkers._kv_cache import NEW_OFF_BY_ONE, NEW_TOP_LEFT
from course.checkers._layer_norm import LN_NO_MEAN, LN_NO_SQRT
from course.checkers._masks import (
    DECODING_BLOCKED_TRUE,
    DECODING_OFF_BY_ONE,
    DECODING_TOP_LEFT,
    DECODING_TRANSPOSED,
    PADDING_ONE_TOO_MANY,
    PREFIX_TRANSPOSED,
)
from course.checkers._self_attention import PE_FROM_ONE
from course.checkers._softmax import SOFTMAX_UNNORMALISED, STABLE_HINT
from course.checkers._uses import ENCODER_QUERIES_WORDS, PADDING_OFF_BY_ONE_WORDS

__all__ = ["MISTAKES", "Mistake", "mistake_in"]


@dataclass(frozen=True)
class Mistake:
    """A typical mistake: its ``name``, the ``words`` a checker's sentence holds when it names it (any one
    of them), and a short ``label`` for a list of mistakes."""

    name: str
    words: tuple[str, ...]
    label: str


_ALL = (
    Mistake(
        "softmax-not-normalised", (SOFTMAX_UNNORMALISED,), "softmax: exponentials not divided by their sum"
    ),
    Mistake("softmax-overflow", (STABLE_HINT,), "softmax: the row's maximum not subtracted before exp"),
    Mistake("attention-unscaled", ("it matches attention without scaling",), "attention: scores not scaled"),
    Mistake("attention-scaled-by-d-k", ("scaling by 1/d_k",), "attention: scaled by 1/d_k, not 1/√d_k"),
    Mistake("attention-scaled-after-softmax", (SCALED_AFTER,), "attention: scaled after the softmax"),
    Mistake("positions-from-one", (PE_FROM_ONE,), "positions counted from 1, not 0"),
    Mistake(
        "padding-mask-off-by-one",
        (PADDING_OFF_BY_ONE_WORDS, PADDING_ONE_TOO_MANY),
        "padding mask: one position too many",
    ),
    Mistake(
        "causal-top-left",
        (NEW_TOP_LEFT, DECODING_TOP_LEFT),
        "causal mask: aligned top-left, not bottom-right",
    ),
    Mistake("causal-off-by-one", (NEW_OFF_BY_ONE, DECODING_OFF_BY_ONE), "causal mask: one key off"),
    Mistake("causal-transposed", (PREFIX_TRANSPOSED, DECODING_TRANSPOSED), "causal mask: transposed"),
    Mistake("causal-inverted", (DECODING_BLOCKED_TRUE,), "causal mask: True where blocked"),
    Mistake(
        "cross-queries-from-encoder", (ENCODER_QUERIES_WORDS,), "cross-attention: queries from the encoder"
    ),
    Mistake("layer-norm-no-mean", (LN_NO_MEAN,), "LayerNorm: the mean not subtracted"),
    Mistake("layer-norm-no-sqrt", (LN_NO_SQRT,), "LayerNorm: divided by the variance"),
    Mistake("online-sum-not-rescaled", (NO_SUM_RESCALE,), "online softmax: running sum not rescaled"),
    Mistake("online-output-not-rescaled", (NO_ACC_RESCALE,), "online softmax: output not rescaled"),
)

MISTAKES: Mapping[str, Mistake] = MappingProxyType({mistake.name: mistake for mistake in _ALL})
"""The named mistakes by name, in the order `mistake_in` tries them (read-only)."""


def mistake_in(sentence: str) -> Mistake | None:
    """The first named mistake whose words ``sentence`` holds (a checker's ✗ sentence), or None."""
    if not sentence.startswith("✗"):
        return None
    return next((mistake for mistake in _ALL if any(words in sentence for words in mistake.words)), None)
