"""Lesson 04's grouped-query checker: the reference passes, and each typical mistake, written as a learner
would write it, gets its exact sentence."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from course.checkers import check_grouped_query
from course.checkers._heads import GQA_AVERAGED, GQA_D_MODEL_SCALE, GQA_NOT_CAUGHT, GQA_TILED
from course.grouped import grouped_query_attention

Array = NDArray[Any]
TITLE = "grouped-query attention"


def learner(bug: str = "") -> Any:
    """A learner's grouped-query attention, right or with one mistake."""

    def fn(x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array, n_heads: int, n_kv_heads: int) -> Any:
        if bug != "no check" and n_heads % n_kv_heads != 0:
            raise ValueError(f"n_kv_heads ({n_kv_heads}) must divide n_heads ({n_heads})")
        b, t, d_model = x.shape
        d_head = d_model // n_heads
        q = (x @ w_q).reshape(b, t, n_heads, d_head).transpose(0, 2, 1, 3)  # (B, h, T, d_head)
        k = (x @ w_k).reshape(b, t, n_kv_heads, d_head).transpose(0, 2, 1, 3)  # (B, h_kv, T, d_head)
        v = (x @ w_v).reshape(b, t, n_kv_heads, d_head).transpose(0, 2, 1, 3)
        group = n_heads // n_kv_heads
        if bug == "tile":
            k, v = np.tile(k, (1, group, 1, 1)), np.tile(v, (1, group, 1, 1))
        elif bug == "average":
            k, v = k.mean(axis=1, keepdims=True), v.mean(axis=1, keepdims=True)
        else:
            k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scale = math.sqrt(d_model if bug == "d_model" else d_head)
        scores = q @ k.swapaxes(-1, -2) / scale  # (B, h, T, T)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        heads = weights @ v  # (B, h, T, d_head)
        return heads.transpose(0, 2, 1, 3).reshape(b, t, d_model) @ w_o, weights

    return fn


def test_the_reference_and_a_learners_right_solution_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_grouped_query(grouped_query_attention)
    assert check_grouped_query(learner())
    assert check_grouped_query(lambda *args: learner()(*args)[0])  # the output alone is accepted too
    assert capsys.readouterr().out == f"✓ {TITLE}: all 7 cases pass.\n" * 3


@pytest.mark.parametrize(
    ("bug", "case", "words"),
    [
        ("tile", "1 of 7 (4 query heads, 2 key/value heads, T = 3, d_model = 8)", GQA_TILED),
        ("d_model", "1 of 7 (4 query heads, 2 key/value heads, T = 3, d_model = 8)", GQA_D_MODEL_SCALE),
        ("average", "1 of 7 (4 query heads, 2 key/value heads, T = 3, d_model = 8)", GQA_AVERAGED),
    ],
)
def test_each_typical_mistake_gets_its_sentence(bug: str, case: str, words: str) -> None:
    result = check_grouped_query(learner(bug))
    assert not result
    assert result.message.startswith(f"✗ {TITLE}, case {case}: ")
    assert result.message.endswith(f"; {words}.")


def test_a_kv_head_count_that_does_not_divide_must_be_refused() -> None:
    result = check_grouped_query(learner("no check"))  # numpy fails later, in a matmul
    assert result.message.startswith(f"✗ {TITLE}, case 7 of 7 (4 key/value heads for 6 query heads): ")
    assert "your function raised ValueError: operands could not be broadcast" in result.message
    assert result.message.endswith(f"; {GQA_NOT_CAUGHT}.")

    def rounding(x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array, n_heads: int, n_kv: int) -> Any:
        """Maps query head i to key/value head i * n_kv // n_heads: silently wrong groups when uneven."""
        if n_heads % n_kv == 0:
            return grouped_query_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv)
        return np.zeros(x.shape)

    result = check_grouped_query(rounding)
    assert result.message == (
        f"✗ {TITLE}, case 7 of 7 (4 key/value heads for 6 query heads): n_kv_heads = 4 does not divide "
        f"n_heads = 6, yet your function returned a result; {GQA_NOT_CAUGHT}."
    )


def test_an_assert_is_not_a_value_error() -> None:
    def asserting(x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array, n_heads: int, n_kv: int) -> Any:
        assert n_heads % n_kv == 0
        return grouped_query_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv)

    result = check_grouped_query(asserting)  # pytest's assert rewriting adds words after the type
    assert result.message.startswith(
        f"✗ {TITLE}, case 7 of 7 (4 key/value heads for 6 query heads): your function raised AssertionError"
    )
    assert result.message.endswith(f"; {GQA_NOT_CAUGHT}.")

    def refusing(x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array, n_heads: int, n_kv: int) -> Any:
        if n_heads % n_kv:
            raise ValueError("the query heads do not split evenly into groups")
        return grouped_query_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv)

    assert check_grouped_query(refusing)


def test_the_stub_is_reported_as_not_written() -> None:
    def stub(*args: Any) -> Any:
        raise NotImplementedError

    result = check_grouped_query(stub)
    assert result.message.startswith("· grouped-query attention: not written yet.")


def test_not_implemented_for_uneven_groups_is_a_sentence_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def uneven_not_implemented(
        x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array, n_heads: int, n_kv: int
    ) -> Any:
        if n_heads % n_kv:
            raise NotImplementedError("uneven groups")
        return grouped_query_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv)

    result = check_grouped_query(uneven_not_implemented)
    message = (
        f"✗ {TITLE}, case 7 of 7 (4 key/value heads for 6 query heads): your function raised "
        "NotImplementedError: uneven groups; check `n_heads % n_kv_heads` first and raise a ValueError "
        "saying that n_kv_heads must divide n_heads."
    )
    assert result.message == message
    assert capsys.readouterr().out == message + "\n"
