"""Typical mistakes of lessons 00 to 05 that the checkers once reported without a word about the mistake (a
bare wrong value, a NaN, a shape or an exception): each, written as a learner would write it, gets its exact
sentence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course.attention import softmax
from course.checkers import (
    check_attend_one,
    check_attention,
    check_contextualize,
    check_dot,
    check_masked_attention,
    check_padding_mask,
    check_permutation_test,
    check_positional_encoding,
    check_self_attention,
    check_softmax,
    check_softmax_temperature,
    check_weighted_average,
)

# --- lesson 00


def dot_outer(u, v):
    return np.outer(u, v)


def dot_product_of_sums(u, v):
    return np.sum(u) * np.sum(v)


def weighted_average_broadcast(vectors, weights):
    return (vectors * weights).sum(axis=0)  # (n, d) * (n,): the weights meet the features


def weighted_average_not_summed(vectors, weights):
    return weights[:, None] * vectors


def weighted_average_axis_1(vectors, weights):
    return (weights[:, None] * vectors).sum(axis=1)


def weighted_average_divided(vectors, weights):
    return (weights[:, None] * vectors).sum(axis=0) / len(weights)


def weighted_average_transposed(vectors, weights):
    return vectors @ weights if vectors.shape[0] == vectors.shape[1] else weights @ vectors


# --- lesson 01


def softmax_unnormalised(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def softmax_without_exp(x):
    return x / x.sum(axis=-1, keepdims=True)


def temperature_after(x, temperature):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) / temperature


def contextualize_scaled(query, vectors):
    return softmax(vectors @ query / np.sqrt(len(query))) @ vectors


# --- lesson 02


def attend_one_scaled_after(q, K, V):
    scores = np.array([np.sum(q * k) for k in K])
    return (softmax(scores) / math.sqrt(len(q))) @ V


def attend_one_sqrt_keys(q, K, V):
    scores = np.array([np.sum(q * k) for k in K]) / math.sqrt(len(K))
    return softmax(scores) @ V


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


def _attend(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]))
    return weights @ v, weights


def self_attention_unprojected_values(x, w_q, w_k, w_v):
    return _attend(x @ w_q, x @ w_k, x)


def self_attention_keys_as_values(x, w_q, w_k, w_v):
    return _attend(x @ w_q, x @ w_k, x @ w_k)


def self_attention_unprojected_scores(x, w_q, w_k, w_v):
    weights = softmax(x @ np.swapaxes(x, -1, -2) / math.sqrt(w_q.shape[-1]))
    return weights @ (x @ w_v), weights


def _sin_cos(angle):
    pe = np.empty((angle.shape[0], 2 * angle.shape[1]))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def positional_multiplied(t, d_model):
    return _sin_cos(np.arange(t)[:, None] * 10000 ** (np.arange(0, d_model, 2) / d_model))


def positional_from_one(t, d_model):
    return _sin_cos(np.arange(1, t + 1)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model))


def permutation_sorted(layer, x, perm):
    return np.allclose(np.sort(layer(x[perm]), axis=0), np.sort(layer(x), axis=0))


def permutation_sums(layer, x, perm):
    return np.allclose(layer(x[perm]).sum(axis=0), layer(x).sum(axis=0))


def permutation_same_shape(layer, x, perm):
    return layer(x[perm]).shape == layer(x)[perm].shape


# --- lesson 05


def padding_transposed(lengths, t):
    return np.arange(t)[:, None] < np.asarray(lengths)[None, :]  # (t, B)


MISTAKES = [
    pytest.param(
        check_dot,
        dot_outer,
        (
            "✗ dot, case 1 of 4 (u = [1, 2, 3], v = [4, 5, 6]): the output has shape (3, 3), expected a "
            "single number, shape (); it is the outer product, every u[i] * v[j]; the dot product "
            "multiplies matching components only, u[i] * v[i], and adds them up."
        ),
        id="dot_outer",
    ),
    pytest.param(
        check_dot,
        dot_product_of_sums,
        (
            "✗ dot, case 1 of 4 (u = [1, 2, 3], v = [4, 5, 6]): the output is 90, expected 32; it "
            "multiplies the two sums; multiply matching components first, then add the products."
        ),
        id="dot_product_of_sums",
    ),
    pytest.param(
        check_weighted_average,
        weighted_average_broadcast,
        (
            "✗ weighted_average, case 1 of 4 (3 vectors of size 2): your function raised ValueError: "
            "operands could not be broadcast together with shapes (3,2) (3,) (weights has one number per "
            "vector, shape (n,): write weights @ vectors, or give weights an axis, weights[:, None] * "
            "vectors, and sum over axis 0)."
        ),
        id="weighted_average_broadcast",
    ),
    pytest.param(
        check_weighted_average,
        weighted_average_not_summed,
        (
            "✗ weighted_average, case 1 of 4 (3 vectors of size 2): the output has shape (3, 2), expected "
            "(2,); it multiplies each vector by its weight but does not add them up: sum over axis 0, "
            "across the vectors."
        ),
        id="weighted_average_not_summed",
    ),
    pytest.param(
        check_weighted_average,
        weighted_average_axis_1,
        (
            "✗ weighted_average, case 1 of 4 (3 vectors of size 2): the output has shape (3,), expected "
            "(2,); it sums over axis 1, within each vector; sum over axis 0, across the vectors."
        ),
        id="weighted_average_axis_1",
    ),
    pytest.param(
        check_weighted_average,
        weighted_average_divided,
        (
            "✗ weighted_average, case 1 of 4 (3 vectors of size 2): output[0] is 0.25, expected 0.75; it "
            "divides by the number of vectors; the weights already sum to 1, so the weighted sum is the "
            "average."
        ),
        id="weighted_average_divided",
    ),
    pytest.param(
        check_weighted_average,
        weighted_average_transposed,
        (
            "✗ weighted_average, case 2 of 4 (all weight on the second vector): output[0] is 2, expected "
            "3; it is vectors @ weights, which mixes the features within each vector; weights @ vectors "
            "adds up weights[i] * vectors[i]."
        ),
        id="weighted_average_transposed",
    ),
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
        check_softmax_temperature,
        temperature_after,
        (
            "✗ softmax with temperature, case 1 of 5 ([1, 2, 3] at temperature 0.5): output[0] is "
            "0.180061, expected 0.0158762; the weights were divided by the temperature after the softmax; "
            "divide the scores before it."
        ),
        id="temperature_after",
    ),
    pytest.param(
        check_contextualize,
        contextualize_scaled,
        (
            "✗ contextualize, case 1 of 5 (3 vectors of size 2): output[0] is 0.802224, expected 0.844638; "
            "the scores are divided by √d; this exercise uses the plain dot products (the scaling comes in "
            "lesson 02)."
        ),
        id="contextualize_scaled",
    ),
    pytest.param(
        check_attend_one,
        attend_one_scaled_after,
        (
            "✗ attend_one, case 1 of 4 (T_k = 4 keys, d_k = 3, d_v = 2): output[0] is 0.58555, expected "
            "1.05552; it matches dividing the weights by √d_k after the softmax; scale the scores before "
            "it."
        ),
        id="attend_one_scaled_after",
    ),
    pytest.param(
        check_attend_one,
        attend_one_sqrt_keys,
        (
            "✗ attend_one, case 1 of 4 (T_k = 4 keys, d_k = 3, d_v = 2): output[0] is 1.0622, expected "
            "1.05552; it matches scaling by 1/√T_k, the number of keys; scale the scores by 1/√d_k."
        ),
        id="attend_one_sqrt_keys",
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
        check_self_attention,
        self_attention_unprojected_values,
        (
            "✗ self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = d_v = 3): the output has shape (4, "
            "6), expected (4, 3); it matches using x itself as the values; project them too, V = x @ w_v."
        ),
        id="self_attention_unprojected_values",
    ),
    pytest.param(
        check_self_attention,
        self_attention_keys_as_values,
        (
            "✗ self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = d_v = 3): output[0, 0] is -0.587027, "
            "expected 0.538326; it matches projecting the values with W_K; V = x @ w_v."
        ),
        id="self_attention_keys_as_values",
    ),
    pytest.param(
        check_self_attention,
        self_attention_unprojected_scores,
        (
            "✗ self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = d_v = 3): weights[0, 0] is 0.451933, "
            "expected 0.090673; it matches scoring x against itself without W_Q and W_K; the scores "
            "compare Q = x @ w_q with K = x @ w_k."
        ),
        id="self_attention_unprojected_scores",
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
        check_permutation_test,
        permutation_sorted,
        (
            "✗ permutation test, case 4 of 4 (a running sum over positions, and positions reversed): your "
            "function returned True, expected False; reversing the positions keeps the same rows, in "
            "another order, so sums, sorted values or shapes cannot tell; compare layer(x[perm]) with "
            "layer(x)[perm] row by row, with np.allclose."
        ),
        id="permutation_sorted",
    ),
    pytest.param(
        check_permutation_test,
        permutation_sums,
        (
            "✗ permutation test, case 4 of 4 (a running sum over positions, and positions reversed): your "
            "function returned True, expected False; reversing the positions keeps the same rows, in "
            "another order, so sums, sorted values or shapes cannot tell; compare layer(x[perm]) with "
            "layer(x)[perm] row by row, with np.allclose."
        ),
        id="permutation_sums",
    ),
    pytest.param(
        check_permutation_test,
        permutation_same_shape,
        (
            "✗ permutation test, case 3 of 4 (self-attention after adding positions): your function "
            "returned True, expected False; layer(x[perm]) and layer(x)[perm] differ here; compare them "
            "with np.allclose."
        ),
        id="permutation_same_shape",
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
