"""Typical mistakes of lessons 01 to 05 that the checkers once reported without a word about the mistake (a
bare wrong value, a NaN, a shape or an exception): each, written as a learner would write it, gets its exact
sentence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course.attention import softmax
from course.checkers import (
    check_attention,
    check_masked_attention,
    check_padding_mask,
    check_positional_encoding,
    check_softmax,
)

# --- lesson 01


def softmax_unnormalised(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def softmax_without_exp(x):
    return x / x.sum(axis=-1, keepdims=True)


# --- lesson 02


def attention_scaled_after(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2)) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def masked_scaled_after(q, k, v, mask):
    scores = np.where(mask, q @ np.swapaxes(k, -1, -2), -np.inf)
    weights = softmax(scores) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def masked_inverted_naive(q, k, v, mask):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    scores = np.where(mask, -np.inf, scores)  # True taken as "blocked"
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # a row with every key blocked: NaN
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights


# --- lesson 03


def _sin_cos(angle):
    pe = np.empty((angle.shape[0], 2 * angle.shape[1]))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def positional_multiplied(t, d_model):
    return _sin_cos(np.arange(t)[:, None] * 10000 ** (np.arange(0, d_model, 2) / d_model))


def positional_from_one(t, d_model):
    return _sin_cos(np.arange(1, t + 1)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model))


# --- lesson 05


def padding_transposed(lengths, t):
    return np.arange(t)[:, None] < np.asarray(lengths)[None, :]  # (t, B)


MISTAKES = [
    pytest.param(
        check_softmax,
        softmax_unnormalised,
        (
            "✗ softmax, case 1 of 8 (a vector of 3 scores): output[0] is 0.135335, expected 0.0900306; the "
            "exponentials are not divided by their sum; divide each row by its own sum, so that it sums to "
            "1."
        ),
        id="softmax_unnormalised",
    ),
    pytest.param(
        check_softmax,
        softmax_without_exp,
        (
            "✗ softmax, case 1 of 8 (a vector of 3 scores): output[0] is 0.166667, expected 0.0900306; the "
            "scores are divided by their sum without exp; exponentiate them first (after subtracting the "
            "row's maximum), then divide by the sum of the exponentials."
        ),
        id="softmax_without_exp",
    ),
    pytest.param(
        check_attention,
        attention_scaled_after,
        (
            "✗ attention, case 1 of 6 (3 positions, d_k = 4): the weights of query 0 sum to 0.5, expected "
            "1; it matches dividing the weights by √d_k after the softmax; scale the scores before it."
        ),
        id="attention_scaled_after",
    ),
    pytest.param(
        check_masked_attention,
        masked_scaled_after,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): the weights of query 0 sum to 0.5, "
            "expected 1; it matches dividing the weights by √d_k after the softmax; scale the scores "
            "before it."
        ),
        id="masked_scaled_after",
    ),
    pytest.param(
        check_masked_attention,
        masked_inverted_naive,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): output[3, 0] is nan, expected 1.17117; "
            "it matches the mask inverted; here True means the query may attend to the key."
        ),
        id="masked_inverted_naive",
    ),
    pytest.param(
        check_positional_encoding,
        positional_multiplied,
        (
            "✗ positional encoding, case 1 of 3 (t = 4, d_model = 6): output[1, 2] is 0.432083, expected "
            "0.0463992; it matches multiplying the position by 10000^(2i/d_model); divide it: the angle is "
            "pos / 10000^(2i/d_model)."
        ),
        id="positional_multiplied",
    ),
    pytest.param(
        check_positional_encoding,
        positional_from_one,
        (
            "✗ positional encoding, case 1 of 3 (t = 4, d_model = 6): output[0, 0] is 0.841471, expected "
            "0; it matches positions counted from 1; the first position is 0, whose row holds sin 0 = 0 "
            "and cos 0 = 1 in every pair."
        ),
        id="positional_from_one",
    ),
    pytest.param(
        check_padding_mask,
        padding_transposed,
        (
            "✗ padding mask, case 1 of 3 (lengths 2 and 4, t = 4): the output has shape (4, 2), expected "
            "(2, 4); the mask is transposed: it has one row per sequence and one column per position, (B, "
            "t), True where j < lengths[b]."
        ),
        id="padding_transposed",
    ),
]


@pytest.mark.parametrize(("checker", "solution", "message"), MISTAKES)
def test_each_typical_mistake_gets_its_own_sentence(checker, solution, message, capsys):
    result = checker(solution)
    assert not result
    assert result.message == message
    assert capsys.readouterr().out == message + "\n"  # one line, no traceback
