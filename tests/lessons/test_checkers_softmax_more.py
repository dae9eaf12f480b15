"""Lesson 01's transfer exercise, a stable log-sum-exp: the reference and a learner's right solution pass, and
each typical mistake, written as a learner would write it, gets its exact sentence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from course.checkers import check_logsumexp
from course.checkers._softmax import (
    LSE_AXIS,
    LSE_KEEPDIMS,
    LSE_MAX_ONLY,
    LSE_NO_ADD_BACK,
    LSE_NO_LOG,
    LSE_STABLE_HINT,
    LSE_WHOLE_ARRAY,
)
from course.log_space import logsumexp

Array = NDArray[Any]


def learner(bug: str = "") -> Any:
    """A learner's log-sum-exp along the last axis, right or with one mistake."""

    def fn(x: Array) -> Array:
        axis = 0 if bug == "axis" else -1
        if bug == "no max":
            m = np.zeros_like(x.max(axis=axis, keepdims=True))
        elif bug == "global max":
            m = x.max()
        elif bug == "m without keepdims":
            m = x.max(axis=axis)
        else:
            m = x.max(axis=axis, keepdims=True)
        total = np.exp(x - m).sum(axis=axis, keepdims=True)
        if bug == "no add back":
            result = np.log(total)
        elif bug == "no log":
            result = m + total
        else:
            result = m + np.log(total)
        return result if bug == "keepdims" else np.squeeze(result, axis=axis)

    return fn


def stub(x: Array) -> Array:
    raise NotImplementedError


def test_the_reference_and_a_learners_right_solution_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_logsumexp(logsumexp)
    assert check_logsumexp(learner())
    assert check_logsumexp(lambda x: np.log(np.sum(np.exp(x - x.max(-1, keepdims=True)), -1)) + x.max(-1))
    assert capsys.readouterr().out == "✓ log-sum-exp: all 8 cases pass.\n" * 3


FIRST = "✗ log-sum-exp, case 1 of 8 (a vector of 3 scores): "


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        ("no add back", f"{FIRST}the output is 0.407606, expected 3.40761; {LSE_NO_ADD_BACK}."),
        ("no log", f"{FIRST}the output is 4.50321, expected 3.40761; {LSE_NO_LOG}."),
        (
            "keepdims",
            f"{FIRST}the output has shape (1,), expected a single number, shape (); {LSE_KEEPDIMS}.",
        ),
        (
            "axis",
            "✗ log-sum-exp, case 2 of 8 (2 rows of 4 scores): the output has shape (4,), expected (2,); "
            f"{LSE_AXIS}.",
        ),
        (
            "no max",
            "✗ log-sum-exp, case 6 of 8 (large scores, 1000 to 1002): output[0] is inf, expected 1002.41 "
            f"({LSE_STABLE_HINT}).",
        ),
        (
            "global max",
            "✗ log-sum-exp, case 8 of 8 (rows on very different scales): output[1] is -inf, "
            f"expected -997.592 ({LSE_STABLE_HINT}).",
        ),
        (
            "m without keepdims",
            "✗ log-sum-exp, case 2 of 8 (2 rows of 4 scores): your function raised ValueError: operands "
            "could not be broadcast together with shapes (2,4) (2,) (x has several rows here: take each "
            "row's maximum with axis=-1, keepdims=True, so that it broadcasts against x).",
        ),
    ],
)
def test_each_typical_mistake_gets_its_sentence(bug: str, message: str) -> None:
    result = check_logsumexp(learner(bug))
    assert not result and result.message == message


def test_the_axis_mistake_is_named_where_the_shape_is_right() -> None:
    """On a square matrix, logsumexp along axis 0 has the right shape and only wrong values."""
    wrong_axis = learner("axis")
    right = learner()
    result = check_logsumexp(
        lambda x: right(x) if x.shape[0] != x.shape[-1] or x.ndim != 2 else wrong_axis(x)
    )
    assert not result and result.message.startswith(
        "✗ log-sum-exp, case 3 of 8 (a 3 x 3 matrix): output[0] is "
    )
    assert result.message.endswith(f"; {LSE_AXIS}.")


def test_the_stub_is_not_written_yet() -> None:
    result = check_logsumexp(stub)
    assert not result and result.message.startswith("· log-sum-exp: not written yet.")


def test_a_sum_over_the_whole_array_and_the_maximum_alone_are_named() -> None:
    def whole_array(x: Array) -> Array:
        m = x.max(axis=-1, keepdims=True)
        return (m + np.log(np.exp(x - m).sum()))[..., 0]  # .sum() without an axis

    def maximum_alone(x: Array) -> Array:
        return x.max(axis=-1)

    assert check_logsumexp(whole_array).message == (
        "✗ log-sum-exp, case 2 of 8 (2 rows of 4 scores): output[0] is 2.28097, expected 1.70456; the sum "
        "runs over the whole array; sum each row, along the last axis (axis=-1)."
    )
    assert check_logsumexp(maximum_alone).message == (
        "✗ log-sum-exp, case 1 of 8 (a vector of 3 scores): the output is 3, expected 3.40761; "
        f"{LSE_MAX_ONLY}."
    )
    assert LSE_WHOLE_ARRAY in check_logsumexp(whole_array).message
