"""The checkers of lessons 00 to 04's exercises: each accepts the reference and other right solutions (in
torch too), and names each typical mistake, written as a learner would write it, in one exact sentence."""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course.attention import merge_heads, self_attention, softmax
from course.checkers import (
    CheckResult,
    check_channels_first_attention,
    check_cosine_attention,
    check_head_contributions,
    check_log_product,
    check_query_gradient,
    check_relative_attention,
    check_retemper,
    check_split_qkv,
    check_standardize,
    check_top_k_softmax,
    check_value_gradient,
)

# --- lesson 00


def standardize(x):
    return (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)


def standardize_columns(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def standardize_whole_array(x):
    return (x - x.mean()) / x.std()


def standardize_by_variance(x):
    return (x - x.mean(axis=-1, keepdims=True)) / x.var(axis=-1, keepdims=True)


def standardize_sample_std(x):
    return (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True, ddof=1)


def standardize_not_centred(x):
    return x / x.std(axis=-1, keepdims=True)


def standardize_no_keepdims(x):
    return (x - x.mean(axis=-1)) / x.std(axis=-1)


def standardize_moments(x):
    mean = np.mean(x, axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) - mean**2)


def log_product(p):
    return np.log(p).sum(axis=-1)


def log_product_naive(p):
    return np.log(np.prod(p, axis=-1))


def log_product_base_10(p):
    return np.log10(p).sum(axis=-1)


def log_product_mean(p):
    return np.log(p).mean(axis=-1)


def log_product_of_sum(p):
    return np.log(p.sum(axis=-1))


def log_product_whole_array(p):
    return np.log(p).sum()


def log_product_kept_axis(p):
    return np.log(p).sum(axis=-1, keepdims=True)


# --- lesson 01


def _top_k_kept(x, k, strict=False):
    kth = np.sort(x, axis=-1)[..., -k][..., None]
    return x > kth if strict else x >= kth


def top_k_softmax(x, k):
    return softmax(np.where(_top_k_kept(x, k), x, -np.inf))


def top_k_softmax_argpartition(x, k):
    top = np.argpartition(x, -k, axis=-1)[..., -k:]
    kept = np.zeros(x.shape, dtype=bool)
    np.put_along_axis(kept, top, True, axis=-1)
    scores = np.where(kept, x, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def top_k_softmax_torch(x, k):
    t = torch.from_numpy(x)
    values, indices = t.topk(k, dim=-1)
    return torch.full_like(t, float("-inf")).scatter(-1, indices, values).softmax(dim=-1)


def top_k_not_renormalised(x, k):
    return np.where(_top_k_kept(x, k), softmax(x), 0.0)


def top_k_strict(x, k):
    return softmax(np.where(_top_k_kept(x, k, strict=True), x, -np.inf))


def top_k_smallest(x, k):
    kth = np.sort(x, axis=-1)[..., k - 1][..., None]
    return softmax(np.where(x <= kth, x, -np.inf))


def top_k_weights_only(x, k):
    return softmax(np.sort(x, axis=-1)[..., -k:])


def top_k_ignored(x, k):
    return softmax(x)


def top_k_naive(x, k):
    e = np.where(_top_k_kept(x, k), np.exp(x), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def retemper(p, temperature):
    with np.errstate(divide="ignore"):
        return softmax(np.log(p) / temperature)


def retemper_power(p, temperature):
    w = p ** (1 / temperature)
    return w / w.sum(axis=-1, keepdims=True)


def retemper_divided(p, temperature):
    w = p / temperature
    return w / w.sum(axis=-1, keepdims=True)


def retemper_as_scores(p, temperature):
    return softmax(p / temperature)


def retemper_inverted(p, temperature):
    w = p**temperature
    return w / w.sum(axis=-1, keepdims=True)


def retemper_unnormalised(p, temperature):
    return p ** (1 / temperature)


def cosine_attention(query, vectors, temperature):
    cosines = vectors @ query / (np.linalg.norm(vectors, axis=-1) * np.linalg.norm(query))
    return softmax(cosines / temperature) @ vectors


def cosine_attention_dot(query, vectors, temperature):
    return softmax(vectors @ query / temperature) @ vectors


def cosine_attention_rows_only(query, vectors, temperature):
    return softmax(vectors @ query / np.linalg.norm(vectors, axis=-1) / temperature) @ vectors


def cosine_attention_query_only(query, vectors, temperature):
    return softmax(vectors @ query / np.linalg.norm(query) / temperature) @ vectors


def cosine_attention_unit_average(query, vectors, temperature):
    units = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
    return softmax(units @ (query / np.linalg.norm(query)) / temperature) @ units


def cosine_attention_multiplied(query, vectors, temperature):
    cosines = vectors @ query / (np.linalg.norm(vectors, axis=-1) * np.linalg.norm(query))
    return softmax(cosines * temperature) @ vectors


def cosine_attention_no_temperature(query, vectors, temperature):
    cosines = vectors @ query / (np.linalg.norm(vectors, axis=-1) * np.linalg.norm(query))
    return softmax(cosines) @ vectors


def cosine_attention_naive(query, vectors, temperature):
    cosines = vectors @ query / (np.linalg.norm(vectors, axis=-1) * np.linalg.norm(query))
    e = np.exp(cosines / temperature)
    return (e / e.sum()) @ vectors


def cosine_attention_weights(query, vectors, temperature):
    cosines = vectors @ query / (np.linalg.norm(vectors, axis=-1) * np.linalg.norm(query))
    return softmax(cosines / temperature)


# --- lesson 02


def channels_first(q, k, v):
    scores = np.swapaxes(q, -1, -2) @ k / math.sqrt(q.shape[-2])
    weights = softmax(scores, axis=-1)
    return v @ np.swapaxes(weights, -1, -2), weights


def channels_first_torch(q, k, v):
    q, k, v = (torch.from_numpy(a).transpose(-1, -2) for a in (q, k, v))
    return F.scaled_dot_product_attention(q, k, v).transpose(-1, -2)


def channels_first_last_axis(q, k, v):
    scores = np.swapaxes(q, -1, -2) @ k / math.sqrt(q.shape[-1])
    return v @ np.swapaxes(softmax(scores, axis=-1), -1, -2)


def channels_first_rows_layout(q, k, v):
    scores = np.swapaxes(q, -1, -2) @ k / math.sqrt(q.shape[-2])
    return softmax(scores, axis=-1) @ np.swapaxes(v, -1, -2)


def channels_first_over_queries(q, k, v):
    scores = np.swapaxes(q, -1, -2) @ k / math.sqrt(q.shape[-2])
    return v @ np.swapaxes(softmax(scores, axis=-2), -1, -2)


def channels_first_no_transpose(q, k, v):
    scores = q @ k / math.sqrt(q.shape[-2])
    return v @ np.swapaxes(softmax(scores, axis=-1), -1, -2)


def channels_first_unscaled(q, k, v):
    scores = np.swapaxes(q, -1, -2) @ k
    return v @ np.swapaxes(softmax(scores, axis=-1), -1, -2)


def _backward(q, k, v, grad_out):
    d_k = q.shape[-1]
    p = softmax(q @ k.T / math.sqrt(d_k))
    grad_p = grad_out @ v.T
    return p, grad_p, d_k


def query_gradient(q, k, v, grad_out):
    p, grad_p, d_k = _backward(q, k, v, grad_out)
    return p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True)) @ k / math.sqrt(d_k)


def query_gradient_autograd(q, k, v, grad_out):
    q = torch.tensor(q, requires_grad=True)
    out = F.scaled_dot_product_attention(q, torch.from_numpy(k), torch.from_numpy(v))
    (out * torch.from_numpy(grad_out)).sum().backward()
    return q.grad


def query_gradient_loop(q, k, v, grad_out):
    d_k = q.shape[-1]
    result = np.zeros(q.shape)
    for i in range(len(q)):
        p = softmax(k @ q[i] / math.sqrt(d_k))
        jacobian = np.diag(p) - np.outer(p, p)
        result[i] = jacobian @ (v @ grad_out[i]) @ k / math.sqrt(d_k)
    return result


def query_gradient_no_jacobian(q, k, v, grad_out):
    _, grad_p, d_k = _backward(q, k, v, grad_out)
    return grad_p @ k / math.sqrt(d_k)


def query_gradient_diagonal_only(q, k, v, grad_out):
    p, grad_p, d_k = _backward(q, k, v, grad_out)
    return (p * grad_p) @ k / math.sqrt(d_k)


def query_gradient_unscaled(q, k, v, grad_out):
    p, grad_p, _ = _backward(q, k, v, grad_out)
    return p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True)) @ k


def query_gradient_keys(q, k, v, grad_out):
    p, grad_p, d_k = _backward(q, k, v, grad_out)
    return (p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True))).T @ q / math.sqrt(d_k)


def query_gradient_v_not_transposed(q, k, v, grad_out):
    d_k = q.shape[-1]
    p = softmax(q @ k.T / math.sqrt(d_k))
    grad_p = grad_out @ v
    return p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True)) @ k / math.sqrt(d_k)


def query_gradient_divided_by_d_k(q, k, v, grad_out):
    p, grad_p, d_k = _backward(q, k, v, grad_out)
    return p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True)) @ k / d_k


def query_gradient_queries(q, k, v, grad_out):
    p, grad_p, d_k = _backward(q, k, v, grad_out)
    grad_s = p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True))
    return grad_s @ (q if grad_s.shape[-1] == q.shape[0] else k) / math.sqrt(d_k)


# --- lesson 03


def _offsets(t):
    return np.arange(t)[None, :] - np.arange(t)[:, None]


def relative_attention(x, w_q, w_k, w_v, bias):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    t = x.shape[-2]
    weights = softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias[_offsets(t) + t - 1])
    return weights @ v, weights


def relative_attention_sign(x, w_q, w_k, w_v, bias):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    t = x.shape[-2]
    return softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias[-_offsets(t) + t - 1]) @ v


def relative_attention_no_shift(x, w_q, w_k, w_v, bias):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    t = x.shape[-2]
    return softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias[_offsets(t)]) @ v


def relative_attention_before_scaling(x, w_q, w_k, w_v, bias):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    t = x.shape[-2]
    return softmax((q @ np.swapaxes(k, -1, -2) + bias[_offsets(t) + t - 1]) / math.sqrt(q.shape[-1])) @ v


def relative_attention_ignored(x, w_q, w_k, w_v, bias):
    return self_attention(x, w_q, w_k, w_v)


def relative_attention_after_softmax(x, w_q, w_k, w_v, bias):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    t = x.shape[-2]
    weights = softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])) + bias[_offsets(t) + t - 1]
    return weights @ v, weights


def relative_attention_whole_bias(x, w_q, w_k, w_v, bias):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias) @ v


def value_gradient(x, w_q, w_k, w_v, grad_out):
    return x.T @ self_attention(x, w_q, w_k, w_v)[1].T @ grad_out


def value_gradient_autograd(x, w_q, w_k, w_v, grad_out):
    w = torch.tensor(w_v, requires_grad=True)
    xt = torch.from_numpy(x)
    y = F.scaled_dot_product_attention(xt @ torch.from_numpy(w_q), xt @ torch.from_numpy(w_k), xt @ w)
    (y * torch.from_numpy(grad_out)).sum().backward()
    return w.grad


def value_gradient_no_weights(x, w_q, w_k, w_v, grad_out):
    return x.T @ grad_out


def value_gradient_not_transposed(x, w_q, w_k, w_v, grad_out):
    return x.T @ self_attention(x, w_q, w_k, w_v)[1] @ grad_out


def value_gradient_of_v(x, w_q, w_k, w_v, grad_out):
    return self_attention(x, w_q, w_k, w_v)[1].T @ grad_out


def value_gradient_transposed(x, w_q, w_k, w_v, grad_out):
    return grad_out.T @ self_attention(x, w_q, w_k, w_v)[1] @ x


# --- lesson 04


def split_qkv(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(b, t, 3, n_heads, width // (3 * n_heads)).transpose(2, 0, 3, 1, 4)


def split_qkv_tuple(qkv, n_heads):
    b, t, width = qkv.shape
    d_model = width // 3
    return tuple(
        part.reshape(b, t, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)
        for part in np.split(qkv, 3, axis=-1)
    )


def split_qkv_torch(qkv, n_heads):
    q, k, v = torch.from_numpy(qkv).chunk(3, dim=-1)
    b, t, d_model = q.shape
    return [part.view(b, t, n_heads, d_model // n_heads).transpose(1, 2) for part in (q, k, v)]


def split_qkv_heads_first(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(b, t, n_heads, 3, width // (3 * n_heads)).transpose(3, 0, 2, 1, 4)


def split_qkv_reshape_only(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(3, b, n_heads, t, width // (3 * n_heads))


def split_qkv_positions_first(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(b, t, 3, n_heads, width // (3 * n_heads)).transpose(2, 0, 1, 3, 4)


def split_qkv_no_heads(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(b, t, 3, width // 3).transpose(2, 0, 1, 3)


def split_qkv_wide_heads(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(b, t, 3, n_heads, width // n_heads).transpose(2, 0, 3, 1, 4)


def split_qkv_not_moved(qkv, n_heads):
    b, t, width = qkv.shape
    return qkv.reshape(b, t, 3, n_heads, width // (3 * n_heads))  # the transpose forgotten


def split_qkv_parts_straight(qkv, n_heads):
    b, t, width = qkv.shape
    d_model = width // 3
    return [part.reshape(b, n_heads, t, d_model // n_heads) for part in np.split(qkv, 3, axis=-1)]


def head_contributions(heads, w_o):
    h, d_head = heads.shape[1], heads.shape[-1]
    return heads @ w_o.reshape(h, d_head, w_o.shape[-1])


def head_contributions_loop(heads, w_o):
    d_head = heads.shape[-1]
    return np.stack([heads[:, i] @ w_o[i * d_head : (i + 1) * d_head] for i in range(heads.shape[1])], axis=1)


def head_contributions_summed(heads, w_o):
    return merge_heads(heads) @ w_o


def head_contributions_averaged(heads, w_o):
    return head_contributions(heads, w_o).mean(axis=1)


def head_contributions_divided(heads, w_o):
    return head_contributions(heads, w_o) / heads.shape[1]


def head_contributions_interleaved(heads, w_o):
    h, d_head = heads.shape[1], heads.shape[-1]
    return np.einsum("bhtd,dhe->bhte", heads, w_o.reshape(d_head, h, w_o.shape[-1]))


def head_contributions_columns(heads, w_o):
    d_head = heads.shape[-1]
    return np.stack(
        [heads[:, i] @ w_o.T[i * d_head : (i + 1) * d_head] for i in range(heads.shape[1])], axis=1
    )


def head_contributions_whole_w_o(heads, w_o):
    return np.stack([heads[:, i] @ w_o for i in range(heads.shape[1])], axis=1)


RIGHT = [
    (check_standardize, standardize, "✓ standardize: all 5 cases pass."),
    (check_log_product, log_product, "✓ log of a product: all 6 cases pass."),
    (check_top_k_softmax, top_k_softmax, "✓ top-k softmax: all 6 cases pass."),
    (check_top_k_softmax, top_k_softmax_argpartition, "✓ top-k softmax: all 6 cases pass."),
    (check_top_k_softmax, top_k_softmax_torch, "✓ top-k softmax: all 6 cases pass."),
    (check_retemper, retemper, "✓ weights at a new temperature: all 6 cases pass."),
    (check_cosine_attention, cosine_attention, "✓ cosine attention: all 5 cases pass."),
    (check_channels_first_attention, channels_first, "✓ channels-first attention: all 5 cases pass."),
    (check_channels_first_attention, channels_first_torch, "✓ channels-first attention: all 5 cases pass."),
    (check_query_gradient, query_gradient, "✓ query gradient: all 4 cases pass."),
    (check_query_gradient, query_gradient_autograd, "✓ query gradient: all 4 cases pass."),
    (check_query_gradient, query_gradient_loop, "✓ query gradient: all 4 cases pass."),
    (check_relative_attention, relative_attention, "✓ relative self-attention: all 5 cases pass."),
    (check_value_gradient, value_gradient, "✓ W_V gradient: all 4 cases pass."),
    (check_value_gradient, value_gradient_autograd, "✓ W_V gradient: all 4 cases pass."),
    (check_split_qkv, split_qkv, "✓ split_qkv: all 5 cases pass."),
    (check_split_qkv, split_qkv_tuple, "✓ split_qkv: all 5 cases pass."),
    (check_split_qkv, split_qkv_torch, "✓ split_qkv: all 5 cases pass."),
    (check_head_contributions, head_contributions, "✓ head_contributions: all 5 cases pass."),
    (check_head_contributions, head_contributions_loop, "✓ head_contributions: all 5 cases pass."),
]


WRONG = [
    pytest.param(
        check_standardize,
        standardize_columns,
        (
            "✗ standardize, case 2 of 5 (3 rows of 4): output[0, 0] is -0.487713, expected -1.34164; it "
            "standardises each column (axis 0); give each row its own mean and standard deviation, taken "
            "along the last axis."
        ),
        id="standardize_columns",
    ),
    pytest.param(
        check_standardize,
        standardize_whole_array,
        (
            "✗ standardize, case 2 of 5 (3 rows of 4): output[0, 0] is -0.626188, expected -1.34164; it uses "
            "the mean and standard deviation of the whole array; give each row its own, taken along the last "
            "axis."
        ),
        id="standardize_whole_array",
    ),
    pytest.param(
        check_standardize,
        standardize_by_variance,
        (
            "✗ standardize, case 1 of 5 (the 8 numbers of section 5): output[0] is -0.75, expected -1.5; it "
            "divides by the variance; divide by the standard deviation, its square root."
        ),
        id="standardize_by_variance",
    ),
    pytest.param(
        check_standardize,
        standardize_sample_std,
        (
            "✗ standardize, case 1 of 5 (the 8 numbers of section 5): output[0] is -1.40312, expected -1.5; "
            "it divides by the sample standard deviation (ddof=1, dividing by n - 1); np.std's default "
            "divides by n, which makes each row's variance exactly 1."
        ),
        id="standardize_sample_std",
    ),
    pytest.param(
        check_standardize,
        standardize_not_centred,
        (
            "✗ standardize, case 1 of 5 (the 8 numbers of section 5): output[0] is 1, expected -1.5; it "
            "divides by the standard deviation without subtracting the mean first; subtract each row's mean, "
            "then divide."
        ),
        id="standardize_not_centred",
    ),
    pytest.param(
        check_standardize,
        standardize_no_keepdims,
        (
            "✗ standardize, case 2 of 5 (3 rows of 4): your function raised ValueError: operands could not "
            "be broadcast together with shapes (3,4) (3,) (x has several rows here: take each row's mean and "
            "standard deviation with axis=-1, keepdims=True, so that they broadcast against x)."
        ),
        id="standardize_no_keepdims",
    ),
    pytest.param(
        check_standardize,
        standardize_moments,
        (
            "✗ standardize, case 5 of 5 (rows far from 0, near 100,000,000): output[0, 0] is nan, expected "
            "-0.238838 (did the variance come from mean(x**2) - mean(x)**2? for values far from 0 the two "
            "terms are huge and nearly equal, and their difference keeps none of the variance's digits; take "
            "the mean of the squared deviations, ((x - mean)**2).mean(...), or np.std)."
        ),
        id="standardize_moments",
    ),
    pytest.param(
        check_log_product,
        log_product_naive,
        (
            "✗ log of a product, case 5 of 6 (2000 probabilities of 1/2: the product is below the smallest "
            "float): the output is -inf, expected -1386.29 (the product underflowed to 0, whose log is -inf: "
            "the log of a product is the sum of the logs, and each log is an ordinary number)."
        ),
        id="log_product_naive",
    ),
    pytest.param(
        check_log_product,
        log_product_base_10,
        (
            "✗ log of a product, case 1 of 6 (the probabilities 1/2, 1/4, 1/8): the output is -1.80618, "
            "expected -4.15888; it uses the base-10 log; use the natural log, np.log, as the course does."
        ),
        id="log_product_base_10",
    ),
    pytest.param(
        check_log_product,
        log_product_mean,
        (
            "✗ log of a product, case 1 of 6 (the probabilities 1/2, 1/4, 1/8): the output is -1.38629, "
            "expected -4.15888; it averages the logs; the log of a product is the sum of the logs, not their "
            "mean."
        ),
        id="log_product_mean",
    ),
    pytest.param(
        check_log_product,
        log_product_of_sum,
        (
            "✗ log of a product, case 1 of 6 (the probabilities 1/2, 1/4, 1/8): the output is -0.133531, "
            "expected -4.15888; it is the log of the sum of the probabilities; the log of their product is "
            "the sum of their logs."
        ),
        id="log_product_of_sum",
    ),
    pytest.param(
        check_log_product,
        log_product_whole_array,
        (
            "✗ log of a product, case 3 of 6 (2 rows of 5): the output has shape (), expected (2,); it adds "
            "up every log in the array; add up each row's logs, along the last axis, one number per row."
        ),
        id="log_product_whole_array",
    ),
    pytest.param(
        check_log_product,
        log_product_kept_axis,
        (
            "✗ log of a product, case 1 of 6 (the probabilities 1/2, 1/4, 1/8): the output has shape (1,), "
            "expected a single number, shape (); the values are right, with an extra axis of length 1."
        ),
        id="log_product_kept_axis",
    ),
    pytest.param(
        check_top_k_softmax,
        top_k_not_renormalised,
        (
            "✗ top-k softmax, case 1 of 6 (the scores [1, 3, 2, 0.5], k = 2): output[1] is 0.630796, "
            "expected 0.731059; it keeps the softmax of all the scores and sets the others to 0, so the kept "
            "weights no longer sum to 1; take the softmax of the k largest scores alone (give the others the "
            "score -inf first)."
        ),
        id="top_k_not_renormalised",
    ),
    pytest.param(
        check_top_k_softmax,
        top_k_strict,
        (
            "✗ top-k softmax, case 1 of 6 (the scores [1, 3, 2, 0.5], k = 2): output[1] is 1, expected "
            "0.731059; it keeps k - 1 scores; the k-th largest score is kept too (scores >= the k-th "
            "largest, not >)."
        ),
        id="top_k_strict",
    ),
    pytest.param(
        check_top_k_softmax,
        top_k_smallest,
        (
            "✗ top-k softmax, case 1 of 6 (the scores [1, 3, 2, 0.5], k = 2): output[0] is 0.622459, "
            "expected 0; it keeps the k smallest scores; keep the k largest of each row."
        ),
        id="top_k_smallest",
    ),
    pytest.param(
        check_top_k_softmax,
        top_k_weights_only,
        (
            "✗ top-k softmax, case 1 of 6 (the scores [1, 3, 2, 0.5], k = 2): the output has shape (2,), "
            "expected (4,); it returns the k weights alone; return one weight per score, in the scores' own "
            "places, 0 for the scores left out."
        ),
        id="top_k_weights_only",
    ),
    pytest.param(
        check_top_k_softmax,
        top_k_ignored,
        (
            "✗ top-k softmax, case 1 of 6 (the scores [1, 3, 2, 0.5], k = 2): output[0] is 0.0853689, "
            "expected 0; it is the softmax of every score; keep only the k largest scores of each row, and "
            "give the rest 0."
        ),
        id="top_k_ignored",
    ),
    pytest.param(
        check_top_k_softmax,
        top_k_naive,
        (
            "✗ top-k softmax, case 6 of 6 (large scores near 1000, k = 2): output[0, 1] is nan, expected "
            "0.880797 (did exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
        id="top_k_naive",
    ),
    pytest.param(
        check_retemper,
        retemper_power,
        (
            "✗ weights at a new temperature, case 6 of 6 (temperature 0.001): output[0, 0] is nan, expected "
            "1 (did weights ** (1 / temperature) underflow to 0 in every place? work with log(weights) "
            "instead: take the stable softmax of log(weights) / temperature)."
        ),
        id="retemper_power",
    ),
    pytest.param(
        check_retemper,
        retemper_divided,
        (
            "✗ weights at a new temperature, case 1 of 6 (the weights of [1, 2, 3] at temperature 0.5): "
            "output[0] is 0.0900306, expected 0.0158762; the weights come back unchanged, as at temperature "
            "1 (dividing them by the temperature and renormalising gives them back); the temperature divides "
            "the scores, and log(weights) are the scores up to a constant."
        ),
        id="retemper_divided",
    ),
    pytest.param(
        check_retemper,
        retemper_as_scores,
        (
            "✗ weights at a new temperature, case 1 of 6 (the weights of [1, 2, 3] at temperature 0.5): "
            "output[0] is 0.18109, expected 0.0158762; it treats the weights as scores; the scores are "
            "log(weights), up to a constant the softmax ignores."
        ),
        id="retemper_as_scores",
    ),
    pytest.param(
        check_retemper,
        retemper_inverted,
        (
            "✗ weights at a new temperature, case 1 of 6 (the weights of [1, 2, 3] at temperature 0.5): "
            "output[0] is 0.186324, expected 0.0158762; it raises the weights to the power τ; dividing the "
            "scores by τ raises each weight to the power 1/τ."
        ),
        id="retemper_inverted",
    ),
    pytest.param(
        check_retemper,
        retemper_unnormalised,
        (
            "✗ weights at a new temperature, case 1 of 6 (the weights of [1, 2, 3] at temperature 0.5): "
            "output[0] is 0.0081055, expected 0.0158762; the weights do not sum to 1 any more; divide them "
            "by their sum."
        ),
        id="retemper_unnormalised",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_dot,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): output[0] is 2, "
            "expected 1.94917; the scores are dot products; divide each by the length of the query and of "
            "the row, so that only their directions count."
        ),
        id="cosine_attention_dot",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_rows_only,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): output[0] is 1.99715, "
            "expected 1.94917; the query's length is still in the scores; divide by it too."
        ),
        id="cosine_attention_rows_only",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_query_only,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): output[0] is 1.99995, "
            "expected 1.94917; each row's length is still in its score; divide by it too."
        ),
        id="cosine_attention_query_only",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_unit_average,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): output[0] is 0.985096, "
            "expected 1.94917; it averages the rows scaled to length 1; the cosines only decide the weights, "
            "and the average is of the rows as they are."
        ),
        id="cosine_attention_unit_average",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_multiplied,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): output[0] is 1.03309, "
            "expected 1.94917; the cosines were multiplied by the temperature; divide them by it."
        ),
        id="cosine_attention_multiplied",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_no_temperature,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): output[0] is 1.29902, "
            "expected 1.94917; it is the softmax of the cosines themselves; divide them by the temperature "
            "first."
        ),
        id="cosine_attention_no_temperature",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_naive,
        (
            "✗ cosine attention, case 5 of 5 (temperature 0.001: scores near ±1000): output[0] is nan, "
            "expected 1 (did exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
        id="cosine_attention_naive",
    ),
    pytest.param(
        check_cosine_attention,
        cosine_attention_weights,
        (
            "✗ cosine attention, case 1 of 5 (3 vectors of size 2, temperature 0.1): the output has shape "
            "(3,), expected (2,); these are the weights; return the weighted average of the rows, weights @ "
            "vectors, shape (d,)."
        ),
        id="cosine_attention_weights",
    ),
    pytest.param(
        check_channels_first_attention,
        channels_first_last_axis,
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): output[0, 0] is "
            "0.695387, expected 0.643112; it matches dividing by √T_q, the length of q's last axis; in this "
            "layout d_k is the length of axis -2 of q and k, q.shape[-2]."
        ),
        id="channels_first_last_axis",
    ),
    pytest.param(
        check_channels_first_attention,
        channels_first_rows_layout,
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): the output has "
            "shape (5, 2), expected (2, 5); it is the output in the layout of the lesson, one row per query, "
            "(..., T_q, d_v); return it channels first, (..., d_v, T_q): swap its last two axes."
        ),
        id="channels_first_rows_layout",
    ),
    pytest.param(
        check_channels_first_attention,
        channels_first_over_queries,
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): output[0, 0] is "
            "1.28411, expected 0.643112; it matches a softmax over the queries (axis -2 of the scores); take "
            "it over the keys."
        ),
        id="channels_first_over_queries",
    ),
    pytest.param(
        check_channels_first_attention,
        channels_first_no_transpose,
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): your function "
            "raised ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            "signature (n?,k),(k,m?)->(n?,m?) (size 3 is different from 5) (here the features run down axis "
            "-2: the scores are qᵀ k, np.swapaxes(q, -1, -2) @ k, of shape (..., T_q, T_k))."
        ),
        id="channels_first_no_transpose",
    ),
    pytest.param(
        check_channels_first_attention,
        channels_first_unscaled,
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): output[0, 0] is "
            "0.364028, expected 0.643112; it matches attention without scaling; in this layout d_k is the "
            "length of axis -2 of q and k, q.shape[-2]."
        ),
        id="channels_first_unscaled",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_no_jacobian,
        (
            "✗ query gradient, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): output[0, 0] is -0.218567, "
            "expected 0.234541; the gradient goes around the softmax: ∂L/∂s is the softmax's Jacobian times "
            "∂L/∂p, not ∂L/∂p itself."
        ),
        id="query_gradient_no_jacobian",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_diagonal_only,
        (
            "✗ query gradient, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): output[0, 0] is 0.235925, "
            "expected 0.234541; it keeps only the diagonal of the softmax's Jacobian, p_i ∂L/∂p_i; subtract "
            "p_i Σ_j p_j ∂L/∂p_j too (the −p_i p_j entries)."
        ),
        id="query_gradient_diagonal_only",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_unscaled,
        (
            "✗ query gradient, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): output[0, 0] is 0.469082, "
            "expected 0.234541; the 1/√d_k of the scores is missing: s_ij = q_i·k_j / √d_k, so the scores "
            "change with q_i at the rate k_j / √d_k."
        ),
        id="query_gradient_unscaled",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_keys,
        (
            "✗ query gradient, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): the output has shape (3, "
            "4), expected (2, 4); this has the keys' shape: it is the gradient with respect to the keys; the "
            "queries' gradient is (∂L/∂s) k / √d_k, shape (T_q, d_k)."
        ),
        id="query_gradient_keys",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_v_not_transposed,
        (
            "✗ query gradient, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): your function raised "
            "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            "signature (n?,k),(k,m?)->(n?,m?) (size 3 is different from 2) (follow the shapes back: ∂L/∂p = "
            "grad_out @ vᵀ is (T_q, T_k), ∂L/∂s has the same shape, and ∂L/∂q = ∂L/∂s @ k / √d_k is (T_q, "
            "d_k))."
        ),
        id="query_gradient_v_not_transposed",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_divided_by_d_k,
        (
            "✗ query gradient, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): output[0, 0] is 0.11727, "
            "expected 0.234541; it divides by d_k; the scores carry the factor 1/√d_k once."
        ),
        id="query_gradient_divided_by_d_k",
    ),
    pytest.param(
        check_query_gradient,
        query_gradient_queries,
        (
            "✗ query gradient, case 2 of 4 (4 queries, 4 keys, d_k = 3, d_v = 3): output[0, 0] is "
            "-0.0297856, expected 0.173382; it multiplies by the queries; the score q_i·k_j changes with q_i "
            "at the rate of k_j, so ∂L/∂q = (∂L/∂s) k / √d_k."
        ),
        id="query_gradient_queries",
    ),
    pytest.param(
        check_relative_attention,
        relative_attention_sign,
        (
            "✗ relative self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias): "
            "output[0, 0] is -0.541634, expected -0.280448; it adds the bias of offset i - j; key j is j - i "
            "places from query i (after it when j > i), so add bias[j - i + T - 1]."
        ),
        id="relative_attention_sign",
    ),
    pytest.param(
        check_relative_attention,
        relative_attention_no_shift,
        (
            "✗ relative self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias): "
            "output[0, 0] is -0.303385, expected -0.280448; it looks up bias[j - i], and a negative index "
            "counts from the end of the table; shift the offsets by T - 1: bias[j - i + T - 1]."
        ),
        id="relative_attention_no_shift",
    ),
    pytest.param(
        check_relative_attention,
        relative_attention_before_scaling,
        (
            "✗ relative self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias): "
            "output[0, 0] is -0.311582, expected -0.280448; the bias is divided by √d_k along with the dot "
            "products; add it to the scores after the division."
        ),
        id="relative_attention_before_scaling",
    ),
    pytest.param(
        check_relative_attention,
        relative_attention_ignored,
        (
            "✗ relative self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias): "
            "weights[0, 0] is 0.0395796, expected 0.108625; it is self-attention without the bias; add "
            "bias[j - i + T - 1] to the score of query i and key j."
        ),
        id="relative_attention_ignored",
    ),
    pytest.param(
        check_relative_attention,
        relative_attention_after_softmax,
        (
            "✗ relative self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias): "
            "the weights of query 0 sum to -2.92141, expected 1; the bias is added to the weights after the "
            "softmax; add it to the scores before."
        ),
        id="relative_attention_after_softmax",
    ),
    pytest.param(
        check_relative_attention,
        relative_attention_whole_bias,
        (
            "✗ relative self-attention, case 1 of 5 (T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias): "
            "your function raised ValueError: operands could not be broadcast together with shapes (4,4) "
            "(7,) (bias has 2T - 1 entries, one per offset j - i from -(T - 1) to T - 1: build the (T, T) "
            "table of offsets by broadcasting, np.arange(T)[None, :] - np.arange(T)[:, None], and index bias "
            "with it plus T - 1)."
        ),
        id="relative_attention_whole_bias",
    ),
    pytest.param(
        check_value_gradient,
        value_gradient_no_weights,
        (
            "✗ W_V gradient, case 1 of 4 (T = 4, d_model = 5, d_k = 3, d_v = 2): output[0, 0] is 5.0266, "
            "expected 3.26769; it leaves out the attention weights: output row i is Σ_j a_ij v_j, so ∂L/∂V = "
            "Aᵀ grad_out, and ∂L/∂W_V = xᵀ (Aᵀ grad_out)."
        ),
        id="value_gradient_no_weights",
    ),
    pytest.param(
        check_value_gradient,
        value_gradient_not_transposed,
        (
            "✗ W_V gradient, case 1 of 4 (T = 4, d_model = 5, d_k = 3, d_v = 2): output[0, 0] is 1.77906, "
            "expected 3.26769; the weights are not transposed: value j reaches output i with the weight "
            "a_ij, so its gradient comes back as Σ_i a_ij grad_out_i, which is Aᵀ grad_out."
        ),
        id="value_gradient_not_transposed",
    ),
    pytest.param(
        check_value_gradient,
        value_gradient_of_v,
        (
            "✗ W_V gradient, case 1 of 4 (T = 4, d_model = 5, d_k = 3, d_v = 2): the output has shape (4, "
            "2), expected (5, 2); this is ∂L/∂V, the gradient with respect to the values; W_V gets it "
            "through V = x W_V, so multiply by xᵀ on the left."
        ),
        id="value_gradient_of_v",
    ),
    pytest.param(
        check_value_gradient,
        value_gradient_transposed,
        (
            "✗ W_V gradient, case 1 of 4 (T = 4, d_model = 5, d_k = 3, d_v = 2): the output has shape (2, "
            "5), expected (5, 2); it is transposed: ∂L/∂W_V has the shape of W_V, (d_model, d_v)."
        ),
        id="value_gradient_transposed",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_heads_first,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): output[0, 0, 1, 0, 0] is 6, "
            "expected 2; it reads each head's query, key and value side by side; the fused projection holds "
            "all the queries first, then all the keys, then all the values: reshape to (B, T, 3, h, d_head)."
        ),
        id="split_qkv_heads_first",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_reshape_only,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): output[0, 0, 0, 1, 0] is 2, "
            "expected 12; it reshapes straight to (3, B, h, T, d_head); reshape to (B, T, 3, h, d_head) "
            "first, then move the axes into place, .transpose(2, 0, 3, 1, 4)."
        ),
        id="split_qkv_reshape_only",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_positions_first,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): the output has shape (3, 1, 3, "
            "2, 2), expected (3, 1, 2, 3, 2); the positions come before the heads: each of q, k and v must "
            "be (B, h, T, d_head), with the heads before the positions."
        ),
        id="split_qkv_positions_first",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_no_heads,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): the output has shape (3, 1, 3, "
            "4), expected (3, 1, 2, 3, 2); it splits the queries, keys and values apart but not into heads; "
            "cut each into h heads of d_head features too."
        ),
        id="split_qkv_no_heads",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_wide_heads,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): your function raised ValueError: "
            "cannot reshape array of size 36 into shape (1,3,3,2,6) (qkv is 3·d_model wide, so d_head = "
            "qkv.shape[-1] // (3 * n_heads); reshape to (B, T, 3, n_heads, d_head))."
        ),
        id="split_qkv_wide_heads",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_not_moved,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): the output has shape (1, 3, 3, "
            "2, 2), expected (3, 1, 2, 3, 2); it stops at the reshape, (B, T, 3, h, d_head), without the "
            "transpose; move the axes into place, .transpose(2, 0, 3, 1, 4): q, k and v first, then the "
            "heads before the positions, (3, B, h, T, d_head)."
        ),
        id="split_qkv_not_moved",
    ),
    pytest.param(
        check_split_qkv,
        split_qkv_parts_straight,
        (
            "✗ split_qkv, case 1 of 5 (B = 1, T = 3, d_model = 4, 2 heads): output[0, 0, 0, 1, 0] is 2, "
            "expected 12; each of q, k and v is reshaped straight to (B, h, T, d_head), without the "
            "transpose, which mixes positions and features; reshape each to (B, T, h, d_head), then swap "
            "axes 1 and 2."
        ),
        id="split_qkv_parts_straight",
    ),
    pytest.param(
        check_head_contributions,
        head_contributions_summed,
        (
            "✗ head_contributions, case 1 of 5 (B = 1, 2 heads, T = 3, d_head = 2, d_model = 4): the output "
            "has shape (1, 3, 4), expected (1, 2, 3, 4); this is the layer's output, the sum of the heads' "
            "terms; return each head's term on its own, shape (B, h, T, d_model)."
        ),
        id="head_contributions_summed",
    ),
    pytest.param(
        check_head_contributions,
        head_contributions_averaged,
        (
            "✗ head_contributions, case 1 of 5 (B = 1, 2 heads, T = 3, d_head = 2, d_model = 4): the output "
            "has shape (1, 3, 4), expected (1, 2, 3, 4); this is the average of the heads' terms, summed "
            "over the heads and divided by h; return each head's term on its own, shape (B, h, T, d_model)."
        ),
        id="head_contributions_averaged",
    ),
    pytest.param(
        check_head_contributions,
        head_contributions_divided,
        (
            "✗ head_contributions, case 1 of 5 (B = 1, 2 heads, T = 3, d_head = 2, d_model = 4): output[0, "
            "0, 0, 0] is 0.100063, expected 0.200126; each term is divided by h; the output is the plain sum "
            "of the heads' terms, so keep them whole."
        ),
        id="head_contributions_divided",
    ),
    pytest.param(
        check_head_contributions,
        head_contributions_interleaved,
        (
            "✗ head_contributions, case 1 of 5 (B = 1, 2 heads, T = 3, d_head = 2, d_model = 4): output[0, "
            "0, 0, 0] is 0.480499, expected 0.200126; it cuts W_O with reshape(d_head, h, d_model), which "
            "deals its rows out to the heads in turn; head i owns rows i·d_head to (i+1)·d_head - 1, the "
            "rows it meets in the concatenation: w_o.reshape(h, d_head, d_model)."
        ),
        id="head_contributions_interleaved",
    ),
    pytest.param(
        check_head_contributions,
        head_contributions_columns,
        (
            "✗ head_contributions, case 1 of 5 (B = 1, 2 heads, T = 3, d_head = 2, d_model = 4): output[0, "
            "0, 0, 0] is 0.458652, expected 0.200126; it uses W_O transposed, its columns; head i meets rows "
            "i·d_head to (i+1)·d_head - 1 of W_O itself."
        ),
        id="head_contributions_columns",
    ),
    pytest.param(
        check_head_contributions,
        head_contributions_whole_w_o,
        (
            "✗ head_contributions, case 1 of 5 (B = 1, 2 heads, T = 3, d_head = 2, d_model = 4): your "
            "function raised ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, "
            "with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 4 is different from 2) (head i has d_head "
            "features: multiply it by the d_head rows of W_O it meets in the concatenation, w_o[i * "
            "d_head:(i + 1) * d_head], shape (d_head, d_model))."
        ),
        id="head_contributions_whole_w_o",
    ),
]


@pytest.mark.parametrize(
    ("checker", "solution", "message"), RIGHT, ids=lambda value: getattr(value, "__name__", "")
)
def test_each_checker_accepts_right_solutions(checker, solution, message, capsys):
    assert checker(solution) == CheckResult(True, message)
    assert capsys.readouterr().out == message + "\n"


@pytest.mark.parametrize(("checker", "solution", "message"), WRONG)
def test_each_typical_mistake_gets_its_sentence(checker, solution, message, capsys):
    assert checker(solution) == CheckResult(False, message)
    assert capsys.readouterr().out == message + "\n"  # one line: no traceback, no numpy warning


def test_every_checker_names_at_least_three_typical_mistakes():
    checkers = {checker for checker, _, _ in RIGHT}
    named = {checker: 0 for checker in checkers}
    for param in WRONG:
        checker, _, message = param.values
        if "; " in message or " (" in message:  # a sentence about the mistake follows the problem
            named[checker] += 1
    assert {checker.__name__: count for checker, count in named.items() if count < 3} == {}


@pytest.mark.parametrize(
    "checker", sorted({c for c, _, _ in RIGHT}, key=lambda c: c.__name__), ids=lambda c: c.__name__
)
def test_the_workbook_stub_is_not_written_yet(checker, capsys):
    def stub(*args):
        raise NotImplementedError

    title = next(m for c, _, m in RIGHT if c is checker).removeprefix("✓ ").split(": all ")[0]
    assert checker(stub).message == (
        f"· {title}: not written yet. Replace the `raise NotImplementedError` line with your code, then run "
        "this cell again."
    )


def _changing_its_last_array(solution):
    """``solution``, which then adds 1 to the last array it was given; ``changed`` names that parameter."""

    @functools.wraps(solution)
    def changing(*args):
        result = solution(*args)
        position = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)][-1]
        changing.changed = list(inspect.signature(solution).parameters)[position]
        args[position][...] += 1
        return result

    changing.changed = None
    return changing


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        (checker, solution)
        for checker, solution, _ in RIGHT
        if not solution.__name__.endswith(("torch", "autograd"))
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_an_input_changed_in_place_is_named(checker, solution, capsys):
    changing = _changing_its_last_array(solution)
    message = checker(changing).message
    assert message.startswith("✗ ") and message.endswith(
        f"your function changed its input `{changing.changed}` in place; compute a new array instead."
    )
