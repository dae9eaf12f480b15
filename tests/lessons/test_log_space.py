"""course.log_space against torch: logsumexp and log_softmax agree on ordinary, large, very negative and
masked scores, along any axis."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course.attention import softmax
from course.log_space import log_softmax, logsumexp


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_both_agree_with_torch_on_random_scores(axis: int) -> None:
    x = np.random.default_rng(0).normal(scale=4.0, size=(3, 4, 5))
    t = torch.from_numpy(x)
    np.testing.assert_allclose(logsumexp(x, axis=axis), torch.logsumexp(t, dim=axis).numpy(), rtol=1e-12)
    np.testing.assert_allclose(log_softmax(x, axis=axis), torch.log_softmax(t, dim=axis).numpy(), atol=1e-12)


@pytest.mark.parametrize("shift", [1000.0, -1000.0, 1e6])
def test_large_and_very_negative_scores_stay_finite(shift: float) -> None:
    x = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]]) + shift  # (2, 3)
    expected = torch.logsumexp(torch.from_numpy(x), dim=-1).numpy()
    assert np.isfinite(logsumexp(x)).all()
    np.testing.assert_allclose(logsumexp(x), expected, rtol=1e-12)
    np.testing.assert_allclose(logsumexp(x) - shift, logsumexp(x - shift), atol=1e-9)


def test_log_softmax_keeps_weights_that_underflow() -> None:
    x = np.array([0.0, -800.0])  # the second weight, exp(-800), is below float64's smallest number
    with np.errstate(divide="ignore"):
        assert np.isneginf(np.log(softmax(x))[1])
    np.testing.assert_allclose(log_softmax(x), torch.log_softmax(torch.from_numpy(x), dim=-1).numpy())
    assert log_softmax(x)[1] == pytest.approx(-800.0)


def test_it_is_a_smooth_maximum() -> None:
    x = np.random.default_rng(1).normal(size=(10, 6))
    lse = logsumexp(x)  # (10,)
    assert np.all(x.max(axis=-1) <= lse) and np.all(lse <= x.max(axis=-1) + np.log(6))
    np.testing.assert_allclose(np.exp(log_softmax(x)).sum(axis=-1), 1.0)
    np.testing.assert_allclose(np.exp(log_softmax(x)), softmax(x), atol=1e-15)


def test_an_all_masked_slice_gives_minus_infinity_like_torch() -> None:
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    expected = torch.logsumexp(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_array_equal(logsumexp(x), expected)
    assert logsumexp(x).shape == (2,)


def test_the_shapes() -> None:
    x = np.zeros((2, 3, 4))
    assert logsumexp(x).shape == (2, 3) and logsumexp(x, axis=0).shape == (3, 4)
    assert log_softmax(x).shape == (2, 3, 4)
    np.testing.assert_allclose(logsumexp(x), np.log(4.0))


def test_an_empty_slice_and_an_all_masked_one_need_no_maximum(recwarn: pytest.WarningsRecorder) -> None:
    empty = np.zeros((2, 0))  # two rows of no scores: the log of an empty sum
    np.testing.assert_array_equal(logsumexp(empty), torch.logsumexp(torch.from_numpy(empty), dim=-1).numpy())
    assert log_softmax(empty).shape == (2, 0)
    assert logsumexp(np.zeros((0, 3))).shape == (0,)
    masked = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])  # softmax gives row 0 zero weights: log -inf
    np.testing.assert_array_equal(log_softmax(masked), [[-np.inf, -np.inf], [0.0, -np.inf]])
    np.testing.assert_array_equal(np.exp(log_softmax(masked)), softmax(masked))
    assert [str(w.message) for w in recwarn] == []  # no "invalid value encountered in subtract"
