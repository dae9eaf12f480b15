"""Lesson 05's decoding-mask checker: the reference (and torch's causal_lower_right) passes, and each typical
mistake, written as a learner would write it, gets its exact sentence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right, causal_upper_left

from course.attention import causal_mask
from course.checkers import check_decoding_mask
from course.checkers._masks import (
    DECODING_BLOCKED_TRUE,
    DECODING_OFF_BY_ONE,
    DECODING_TOP_LEFT,
    DECODING_TRANSPOSED,
)


def learner(bug: str = "") -> Any:
    """A learner's bottom-right causal mask, right or with one mistake."""

    def fn(t_q: int, t_k: int) -> Any:
        i = np.arange(t_q)[:, None]  # (t_q, 1)
        j = np.arange(t_k)[None, :]  # (1, t_k)
        offset = t_k - t_q
        if bug == "top-left":
            return j <= i
        if bug == "off by one":
            return j < i + offset
        if bug == "transposed":
            return np.arange(t_k)[:, None] <= np.arange(t_q)[None, :] + offset  # (t_k, t_q)
        if bug == "blocked":
            return j > i + offset
        return j <= i + offset

    return fn


def torch_lower_right(t_q: int, t_k: int) -> Any:
    """torch's own bottom-right causal mask, materialized as a (t_q, t_k) boolean tensor."""
    return causal_lower_right(t_q, t_k)._materialize()


def test_the_reference_torch_and_a_learners_right_solution_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_decoding_mask(causal_mask)
    assert check_decoding_mask(torch_lower_right)
    assert check_decoding_mask(learner())
    assert capsys.readouterr().out.count("✓ decoding mask: all 4 cases pass.") == 3


@pytest.mark.parametrize(("t_q", "t_k"), [(2, 5), (1, 4), (3, 3), (4, 7)])
def test_the_reference_is_what_sdpa_needs_for_the_newest_queries(t_q: int, t_k: int) -> None:
    rng = np.random.default_rng(t_q * 10 + t_k)
    q, k, v = (torch.from_numpy(rng.standard_normal((t_k, 4))) for _ in range(3))
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)[t_k - t_q :]  # the last t_q rows
    mask = torch.from_numpy(causal_mask(t_q, t_k))
    assert torch.equal(mask, torch_lower_right(t_q, t_k))
    newest = F.scaled_dot_product_attention(q[t_k - t_q :], k, v, attn_mask=mask)
    assert (newest - full).abs().max() <= 1e-12


@pytest.mark.parametrize(
    ("bug", "sentence"),
    [
        (
            "top-left",
            "query 0 (sequence position 3) is blocked from key 1, which it may see (mask[0, 1] "
            "should be True); " + DECODING_TOP_LEFT,
        ),
        (
            "off by one",
            "query 0 (sequence position 3) is blocked from key 3, which it may see (mask[0, 3] "
            "should be True); " + DECODING_OFF_BY_ONE,
        ),
        ("transposed", "the output has shape (5, 2), expected (2, 5); " + DECODING_TRANSPOSED),
        (
            "blocked",
            "query 0 (sequence position 3) is blocked from key 0, which it may see (mask[0, 0] "
            "should be True); " + DECODING_BLOCKED_TRUE,
        ),
    ],
)
def test_each_decoding_mistake_is_named(bug: str, sentence: str) -> None:
    result = check_decoding_mask(learner(bug))
    assert result.message == f"✗ decoding mask, case 1 of 4 (t_q = 2, t_k = 5): {sentence}."


def test_is_causal_true_is_the_top_left_mistake() -> None:
    # what `is_causal=True` builds for a non-square mask: torch's causal_upper_left
    result = check_decoding_mask(lambda t_q, t_k: causal_upper_left(t_q, t_k)._materialize())
    assert not result and result.message.endswith(f"; {DECODING_TOP_LEFT}.")
