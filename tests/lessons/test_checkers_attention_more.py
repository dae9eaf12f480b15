"""Lesson 02's find-the-bug checker: the repaired function passes, the colleague's function unchanged is told
that the bug remains (not where), and each typical wrong repair of ``d_k = len(q[0])``, written as a learner
would write it, gets its exact sentence."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from course.attention import softmax
from course.checkers import check_fixed_attention

Array = NDArray[Any]

WIDTH_FIX = "; d_k is the width of the queries and keys, the last axis: q.shape[-1]."
CASE_1 = "✗ fixed_attention, case 1 of 3 (no batch axes: 5 queries, 6 keys, d_k = 4, d_v = 7): "
BUG_LEFT = (  # the colleague's function, unchanged: the sentence says that the bug remains, not where
    "weights[0, 0, 0, 0] is 0.281619, expected 0.264772; it gives what the colleague's function gives: the "
    "bug remains."
)
CASE_2 = "✗ fixed_attention, case 2 of 3 (batch axes (B, h) = (2, 3): 5 queries, 6 keys, d_k = 4, d_v = 7): "


def repaired(width: Callable[[Array, Array, Array], int]) -> Callable[[Array, Array, Array], Any]:
    """The lesson's attention function with ``d_k = width(q, k, v)`` as the repaired line."""

    def fixed_attention(q: Array, k: Array, v: Array) -> tuple[Array, Array]:
        d_k = width(q, k, v)
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)  # (..., T_q, T_k)
        weights = softmax(scores, axis=-1)  # (..., T_q, T_k)
        return weights @ v, weights

    return fixed_attention


def test_the_right_repair_passes(capsys: pytest.CaptureFixture[str]) -> None:
    result = check_fixed_attention(repaired(lambda q, k, v: q.shape[-1]))
    assert result.ok
    assert capsys.readouterr().out == "✓ fixed_attention: all 3 cases pass.\n"


def test_reading_d_k_from_the_keys_passes_too() -> None:
    assert check_fixed_attention(repaired(lambda q, k, v: k.shape[-1]))


@pytest.mark.parametrize(
    ("width", "sentence"),
    [
        pytest.param(
            lambda q, k, v: len(q[0]),
            CASE_2 + BUG_LEFT,
            id="bug-left",
        ),
        pytest.param(
            lambda q, k, v: q.shape[1],
            CASE_2 + BUG_LEFT,
            id="shape-1",
        ),
        pytest.param(
            lambda q, k, v: q.shape[-2],
            CASE_1 + "weights[0, 0] is 0.0624758, expected 0.0545195; it matches d_k = len(q) or d_k = "
            "q.shape[-2], the number of queries (the same here)" + WIDTH_FIX,
            id="queries",
        ),
        pytest.param(
            lambda q, k, v: len(q),
            CASE_1 + "weights[0, 0] is 0.0624758, expected 0.0545195; it matches d_k = len(q) or d_k = "
            "q.shape[-2], the number of queries (the same here)" + WIDTH_FIX,
            id="len-q",
        ),
        pytest.param(
            lambda q, k, v: k.shape[-2],
            CASE_1
            + "weights[0, 0] is 0.0689074, expected 0.0545195; it matches d_k = k.shape[-2], the number "
            "of keys" + WIDTH_FIX,
            id="keys",
        ),
        pytest.param(
            lambda q, k, v: v.shape[-1],
            CASE_1
            + "weights[0, 0] is 0.0742447, expected 0.0545195; it matches d_k = v.shape[-1], the width "
            "of the values" + WIDTH_FIX,
            id="values",
        ),
        pytest.param(
            lambda q, k, v: 1,
            CASE_1
            + "weights[0, 0] is 0.0127038, expected 0.0545195; it matches attention without scaling"
            + WIDTH_FIX,
            id="no-scale",
        ),
        pytest.param(
            lambda q, k, v: q.shape[-1] ** 2,
            CASE_1 + "weights[0, 0] is 0.100185, expected 0.0545195; it matches scaling by 1/d_k" + WIDTH_FIX,
            id="root-dropped",
        ),
    ],
)
def test_each_wrong_repair_is_named(
    width: Callable[[Array, Array, Array], int], sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = check_fixed_attention(repaired(width))
    assert not result.ok
    assert result.message == sentence
    assert capsys.readouterr().out == sentence + "\n"


def test_returning_the_weights_is_named() -> None:
    def weights_only(q: Array, k: Array, v: Array) -> Array:
        return repaired(lambda q, k, v: q.shape[-1])(q, k, v)[1]  # type: ignore[no-any-return]

    result = check_fixed_attention(weights_only)
    assert result.message.startswith(CASE_1 + "the output has shape (5, 6), expected (5, 7)")
    assert result.message.endswith(
        "these are the attention weights; return the output, weights @ v, or (output, weights)."
    )


def test_the_stub_is_not_written_yet() -> None:
    def stub(q: Array, k: Array, v: Array) -> Array:
        raise NotImplementedError

    assert check_fixed_attention(stub).message.startswith("· fixed_attention: not written yet.")
