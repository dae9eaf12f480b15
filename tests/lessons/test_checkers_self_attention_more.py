"""Lesson 03's rotary-embedding checker: the reference passes, and each typical mistake, written as a learner
would write it, gets its exact sentence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from course.checkers import check_rotary
from course.checkers._self_attention import (
    ROTARY_HALF_EXPONENT,
    ROTARY_HALVES,
    ROTARY_POSITIONS_IGNORED,
    ROTARY_SINE_SIGN,
    ROTARY_UNSCALED,
)
from course.positions import apply_rotary

Array = NDArray[Any]


def learner(bug: str = "") -> Any:
    """A learner's rotary embedding, right or with one mistake."""

    def fn(x: Array, positions: Array) -> Array:
        d = x.shape[-1]
        pos = np.arange(x.shape[-2]) if bug == "ignored" else positions
        freq = np.ones(d // 2) if bug == "unscaled" else 1 / 10000 ** (np.arange(0, d, 2) / d)
        angle = pos[:, None] * freq  # (T, d // 2)
        cos, sin = np.cos(angle), np.sin(angle)
        if bug == "halves":
            a, b = x[..., : d // 2], x[..., d // 2 :]
            return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.zeros_like(x)
        if bug == "sign":
            out[..., 0::2] = a * cos + b * sin
            out[..., 1::2] = -a * sin + b * cos
        else:
            out[..., 0::2] = a * cos - b * sin
            out[..., 1::2] = a * sin + b * cos
        return out

    return fn


def test_the_reference_and_a_learners_right_solution_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_rotary(apply_rotary)
    assert check_rotary(learner())
    assert capsys.readouterr().out.count("✓ rotary embedding: all 4 cases pass.") == 2


@pytest.mark.parametrize(
    ("bug", "sentence"),
    [
        ("halves", ROTARY_HALVES),
        ("sign", ROTARY_SINE_SIGN),
        ("unscaled", ROTARY_UNSCALED),
        ("ignored", ROTARY_POSITIONS_IGNORED),
    ],
)
def test_each_rotary_mistake_is_named(bug: str, sentence: str) -> None:
    result = check_rotary(learner(bug))
    assert not result
    assert result.message.startswith("✗ rotary embedding, case 1 of 4 (T = 4, d = 8, positions 5 to 8): ")
    assert result.message.endswith(f"; {sentence}.")


def test_the_workbook_stub_is_reported_as_not_written(capsys: pytest.CaptureFixture[str]) -> None:
    def stub(x: Array, positions: Array) -> Array:
        raise NotImplementedError

    result = check_rotary(stub)
    assert not result
    assert result.message.startswith("· rotary embedding: not written yet.")


def test_the_exponent_i_over_d_is_named() -> None:
    def half_exponent(x: Array, positions: Array) -> Array:
        d = x.shape[-1]
        angle = positions[:, None] / 10000 ** (np.arange(d // 2) / d)  # i/d instead of 2i/d
        out = np.empty(x.shape)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    assert check_rotary(half_exponent).message == (
        "✗ rotary embedding, case 1 of 4 (T = 4, d = 8, positions 5 to 8): output[0, 2] is -0.226729, "
        "expected -0.880449; it matches the frequency 1/10000^(i/d) for pair i; pair i turns at "
        "1/10000^(2i/d), with 2i the pair's first column."
    )
    assert ROTARY_HALF_EXPONENT in check_rotary(half_exponent).message
