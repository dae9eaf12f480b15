"""course.checkers: each checker accepts the reference and names, in one exact sentence, what is wrong."""

from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course.attention import (
    causal_mask,
    naive_softmax,
    padding_mask,
    scaled_dot_product_attention,
    sinusoidal_positions,
    softmax,
)
from course.checkers import (
    CheckResult,
    check_attention,
    check_causal_mask,
    check_masked_attention,
    check_padding_mask,
    check_positional_encoding,
    check_softmax,
    check_softmax_jacobian,
)

# --- learner solutions, typically wrong -------------------------------------------------------------------


def softmax_naive(x):
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def softmax_axis0(x):
    return softmax(x, axis=0)


def softmax_global_max(x):
    e = np.exp(x - x.max())
    return e / e.sum(-1, keepdims=True)


def softmax_no_keepdims(x):
    e = np.exp(x - x.max(-1))
    return e / e.sum(-1)


def softmax_whole_array(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def forgot_return(x):
    np.exp(x)


def softmax_jacobian(p):
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])


def softmax_jacobian_autograd(p):
    # Independent of the closed form: torch autograd at scores s = log p, whose softmax is p again.
    s = torch.from_numpy(np.log(p)).reshape(-1, p.shape[-1])  # (batch, n)
    jacobians = torch.func.vmap(torch.func.jacrev(lambda row: torch.softmax(row, dim=-1)))(s)  # (batch, n, n)
    return jacobians.reshape(*p.shape, p.shape[-1]).numpy()


def softmax_jacobian_diagonal_only(p):
    return p[..., :, None] * np.eye(p.shape[-1])


def softmax_jacobian_no_delta(p):
    return -p[..., :, None] * p[..., None, :]


def softmax_jacobian_two_columns(p):
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., :, None])


def softmax_jacobian_diagonal_vector(p):
    return p * (1 - p)


def softmax_jacobian_softmax_again(p):
    return softmax_jacobian(softmax(p))


def softmax_jacobian_unbatched(p):
    return np.diag(p) - np.outer(p, p)


def scores(q, k):
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])


def attention_unscaled(q, k, v):
    return softmax(q @ np.swapaxes(k, -1, -2)) @ v


def attention_unscaled_with_weights(q, k, v):
    w = softmax(q @ np.swapaxes(k, -1, -2))
    return w @ v, w


def attention_k_not_transposed(q, k, v):
    return softmax(q @ k / np.sqrt(q.shape[-1])) @ v


def attention_wrong_axis(q, k, v):
    return softmax(scores(q, k), axis=-2) @ v


def attention_naive_softmax(q, k, v):
    return naive_softmax(scores(q, k)) @ v


def attention_dot_t(q, k, v):
    return softmax(q @ k.T / np.sqrt(q.shape[-1])) @ v


def masked_minus_inf(q, k, v, mask):
    s = np.where(mask, scores(q, k), -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return w @ v, w


def masked_minus_1e9(q, k, v, mask):
    w = softmax(np.where(mask, scores(q, k), -1e9))
    return w @ v, w


def masked_after_softmax(q, k, v, mask):
    w = softmax(scores(q, k)) * mask
    return w @ v, w


def masked_inverted(q, k, v, mask):
    return scaled_dot_product_attention(q, k, v, ~mask)


def masked_ignored(q, k, v, mask):
    return scaled_dot_product_attention(q, k, v)


def output_only(fn):
    return lambda *args: fn(*args)[0]


def masked_returns_weights(q, k, v, mask):
    return scaled_dot_product_attention(q, k, v, mask)[1]


def masked_scores_times_mask(q, k, v, mask):
    return softmax(scores(q, k) * mask) @ v


def attention_weights_first(q, k, v):
    out, weights = scaled_dot_product_attention(q, k, v)
    return weights, out


def causal_inverted(t):
    return np.triu(np.ones((t, t), dtype=bool), k=1)


def causal_float(t):
    return np.tril(np.ones((t, t)))


def causal_no_diagonal(t):
    return np.tri(t, k=-1, dtype=bool)


def causal_upper(t):
    return np.triu(np.ones((t, t), dtype=bool))


def padding_inverted(lengths, t):
    return ~padding_mask(lengths, t)


def padding_off_by_one(lengths, t):
    return np.arange(t)[None, :] <= np.asarray(lengths)[:, None]


def positional_encoding(t, d_model):
    angle = np.arange(t)[:, None] / 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    pe = np.zeros((t, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def positional_sin_cos_swapped(t, d_model):
    angle = np.arange(t)[:, None] / 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    pe = np.zeros((t, d_model))
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.sin(angle)
    return pe


def positional_column_exponent(t, d_model):
    j = np.arange(d_model)[None, :]
    angle = np.arange(t)[:, None] / 10000 ** (j / d_model)  # exponent j/d_model instead of 2i/d_model
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


def positional_halves(t, d_model):
    angle = np.arange(t)[:, None] / 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


WRONG = [
    pytest.param(
        check_softmax,
        softmax_naive,
        (
            "✗ softmax, case 6 of 8 (large scores, 1000 to 1002): output[0, 0] is nan, expected "
            "0.0900306 (did exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
        id="softmax_naive",
    ),
    pytest.param(
        check_softmax,
        softmax_axis0,
        (
            "✗ softmax, case 2 of 8 (2 rows of 4 scores): output[0, 0] is 0.382252, expected "
            "0.100782; it is the softmax along axis 0; each row (the last axis) should sum to 1."
        ),
        id="softmax_axis0",
    ),
    pytest.param(
        check_softmax,
        softmax_global_max,
        (
            "✗ softmax, case 8 of 8 (rows on very different scales): output[1, 0] is nan, expected "
            "0.0900306 (did exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
        id="softmax_global_max",
    ),
    pytest.param(
        check_softmax,
        softmax_no_keepdims,
        (
            "✗ softmax, case 2 of 8 (2 rows of 4 scores): your function raised ValueError: operands could "
            "not be broadcast together with shapes (2,4) (2,) (x has several rows here: take each row's "
            "maximum and sum with axis=-1, keepdims=True, so that they broadcast against x)."
        ),
        id="softmax_no_keepdims",
    ),
    pytest.param(
        check_softmax,
        softmax_whole_array,
        (
            "✗ softmax, case 2 of 8 (2 rows of 4 scores): output[0, 0] is 0.0300564, expected "
            "0.100782; it is normalised over the whole array; normalise each row (the last axis)."
        ),
        id="softmax_whole_array",
    ),
    pytest.param(
        check_softmax,
        forgot_return,
        (
            "✗ softmax, case 1 of 8 (a vector of 3 scores): your function returned None instead of "
            "the output (is a return statement missing?)."
        ),
        id="forgot_return",
    ),
    pytest.param(
        check_softmax_jacobian,
        softmax_jacobian_diagonal_only,
        (
            "✗ softmax_jacobian, case 1 of 3 (p of shape (4,)): output[0, 0] is 0.160776, expected "
            "0.134927; it matches diag(p) alone; subtract p_i p_j from every entry."
        ),
        id="softmax_jacobian_diagonal_only",
    ),
    pytest.param(
        check_softmax_jacobian,
        softmax_jacobian_no_delta,
        (
            "✗ softmax_jacobian, case 1 of 3 (p of shape (4,)): output[0, 0] is -0.0258489, expected "
            "0.134927; it matches −p_i p_j everywhere; the diagonal also gets p_i (the δ_ij term)."
        ),
        id="softmax_jacobian_no_delta",
    ),
    pytest.param(
        check_softmax_jacobian,
        softmax_jacobian_two_columns,
        (
            "✗ softmax_jacobian, case 1 of 3 (p of shape (4,)): output[0, 1] is -0.0258489, expected "
            "-0.0499732; it matches p_i (δ_ij − p_i), both p's as columns; make the second one a row, "
            "p[..., None, :], so that entry (i, j) subtracts p_i p_j."
        ),
        id="softmax_jacobian_two_columns",
    ),
    pytest.param(
        check_softmax_jacobian,
        softmax_jacobian_diagonal_vector,
        (
            "✗ softmax_jacobian, case 1 of 3 (p of shape (4,)): the output has shape (4,), expected (4, 4); "
            "it matches the diagonal p_i (1 − p_i) alone, as a vector; return the full (..., n, n) matrix, "
            "with −p_i p_j off the diagonal."
        ),
        id="softmax_jacobian_diagonal_vector",
    ),
    pytest.param(
        check_softmax_jacobian,
        softmax_jacobian_softmax_again,
        (
            "✗ softmax_jacobian, case 1 of 3 (p of shape (4,)): output[0, 0] is 0.175242, expected "
            "0.134927; it matches the Jacobian at softmax(p); p is already the softmax's output, use it as "
            "it is."
        ),
        id="softmax_jacobian_softmax_again",
    ),
    pytest.param(
        check_softmax_jacobian,
        softmax_jacobian_unbatched,
        (
            "✗ softmax_jacobian, case 3 of 3 (a batch, p of shape (2, 3, 5)): your function raised "
            "ValueError: Input must be 1- or 2-d (p has batch axes here: n is p.shape[-1], and np.diag and "
            "np.outer take a single vector; build the matrices by broadcasting, with p[..., :, None] and "
            "p[..., None, :])."
        ),
        id="softmax_jacobian_unbatched",
    ),
    pytest.param(
        check_attention,
        attention_unscaled,
        (
            "✗ attention, case 1 of 6 (3 positions, d_k = 4): output[0, 0] is 0.513412, expected "
            "0.415129; it matches attention without scaling; scale the scores by 1/√d_k."
        ),
        id="attention_unscaled",
    ),
    pytest.param(
        check_attention,
        attention_unscaled_with_weights,
        (
            "✗ attention, case 1 of 6 (3 positions, d_k = 4): weights[0, 0] is 0.411429, expected "
            "0.392757; it matches attention without scaling; scale the scores by 1/√d_k."
        ),
        id="attention_unscaled_with_weights",
    ),
    pytest.param(
        check_attention,
        attention_k_not_transposed,
        (
            "✗ attention, case 1 of 6 (3 positions, d_k = 4): your function raised ValueError: matmul: "
            "Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            "(n?,k),(k,m?)->(n?,m?) (size 3 is different from 4) (the scores are q @ kᵀ: swap the last "
            "two axes of k with np.swapaxes(k, -1, -2); k.T reverses every axis, batch axes too)."
        ),
        id="attention_k_not_transposed",
    ),
    pytest.param(
        check_attention,
        attention_wrong_axis,
        (
            "✗ attention, case 1 of 6 (3 positions, d_k = 4): output[0, 0] is 0.379143, expected "
            "0.415129; it matches a softmax over the queries (axis -2); take it over the keys (last "
            "axis)."
        ),
        id="attention_wrong_axis",
    ),
    pytest.param(
        check_attention,
        attention_naive_softmax,
        (
            "✗ attention, case 6 of 6 (large scores): output[1, 0] is nan, expected -0.310866 (did "
            "exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
        id="attention_naive_softmax",
    ),
    pytest.param(
        check_attention,
        attention_dot_t,
        (
            "✗ attention, case 5 of 6 (batch axes (2, 3)): your function raised ValueError: matmul: Input "
            "operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            "(n?,k),(k,m?)->(n?,m?) (size 3 is different from 8) (the scores are q @ kᵀ: swap the last "
            "two axes of k with np.swapaxes(k, -1, -2); k.T reverses every axis, batch axes too)."
        ),
        id="attention_dot_t",
    ),
    pytest.param(
        check_masked_attention,
        masked_minus_inf,
        (
            "✗ masked attention, case 8 of 8 (a fully masked row (query 1)): query 1 may attend to no"
            " key, so its weights and output should be all zero, got output[1, 0] = nan."
        ),
        id="masked_minus_inf",
    ),
    pytest.param(
        check_masked_attention,
        output_only(masked_minus_inf),
        (
            "✗ masked attention, case 8 of 8 (a fully masked row (query 1)): query 1 may attend to no"
            " key, so its weights and output should be all zero, got output[1, 0] = nan."
        ),
        id="masked_minus_inf-output-only",
    ),
    pytest.param(
        check_masked_attention,
        masked_minus_1e9,
        (
            "✗ masked attention, case 8 of 8 (a fully masked row (query 1)): query 1 may attend to no"
            " key, so its weights and output should be all zero, got weights[1, 0] = 0.333333."
        ),
        id="masked_minus_1e9",
    ),
    pytest.param(
        check_masked_attention,
        output_only(masked_minus_1e9),
        (
            "✗ masked attention, case 8 of 8 (a fully masked row (query 1)): query 1 may attend to no"
            " key, so its weights and output should be all zero, but its output changes when the "
            "value of key 0 changes."
        ),
        id="masked_minus_1e9-output-only",
    ),
    pytest.param(
        check_masked_attention,
        masked_after_softmax,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): the weights of query 0 sum to "
            "0.388556, expected 1; it matches masking after the softmax; set masked scores to -inf "
            "before the softmax."
        ),
        id="masked_after_softmax",
    ),
    pytest.param(
        check_masked_attention,
        output_only(masked_after_softmax),
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): output[0, 0] is 0.497343, expected"
            " 1.27998; it matches masking after the softmax; set masked scores to -inf before the "
            "softmax."
        ),
        id="masked_after_softmax-output-only",
    ),
    pytest.param(
        check_masked_attention,
        masked_inverted,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): query 0 attends to masked key 1 "
            "(weights[0, 1] = 0.461504, expected 0); it matches the mask inverted; here True means "
            "the query may attend to the key."
        ),
        id="masked_inverted",
    ),
    pytest.param(
        check_masked_attention,
        output_only(masked_inverted),
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): query 0 attends to masked key 1 "
            "(its output changes with that key's value); it matches the mask inverted; here True "
            "means the query may attend to the key."
        ),
        id="masked_inverted-output-only",
    ),
    pytest.param(
        check_masked_attention,
        masked_ignored,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): query 0 attends to masked key 1 "
            "(weights[0, 1] = 0.282184, expected 0); it matches attention without the mask; set the "
            "scores of masked keys to -inf before the softmax."
        ),
        id="masked_ignored",
    ),
    pytest.param(
        check_masked_attention,
        output_only(masked_ignored),
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): query 0 attends to masked key 1 (its "
            "output changes with that key's value); it matches attention without the mask; set the scores "
            "of masked keys to -inf before the softmax."
        ),
        id="masked_ignored-output-only",
    ),
    pytest.param(
        check_masked_attention,
        masked_returns_weights,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): output[0, 0] is 1, expected 1.27998; "
            "these are the attention weights; return the output, weights @ v, or (output, weights)."
        ),
        id="masked_returns_weights",
    ),
    pytest.param(
        check_masked_attention,
        masked_scores_times_mask,
        (
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): query 0 attends to masked key 1 (its "
            "output changes with that key's value); it matches multiplying the scores by the mask, which "
            "gives a masked key the score 0, not -inf; use np.where(mask, scores, -np.inf)."
        ),
        id="masked_scores_times_mask",
    ),
    pytest.param(
        check_attention,
        attention_weights_first,
        (
            "✗ attention, case 1 of 6 (3 positions, d_k = 4): your function returned (weights, output); "
            "return (output, weights), the output first."
        ),
        id="attention_weights_first",
    ),
    pytest.param(
        check_causal_mask,
        causal_inverted,
        (
            "✗ causal mask, case 1 of 3 (T = 4): query 0 is blocked from key 0, which it may see "
            "(mask[0, 0] should be True); the mask is inverted (True = blocked is "
            "nn.MultiheadAttention's convention); here True means may attend."
        ),
        id="causal_inverted",
    ),
    pytest.param(
        check_causal_mask,
        causal_float,
        (
            "✗ causal mask, case 1 of 3 (T = 4): the mask has dtype float64, expected bool (True = "
            "may attend)."
        ),
        id="causal_float",
    ),
    pytest.param(
        check_causal_mask,
        causal_no_diagonal,
        (
            "✗ causal mask, case 1 of 3 (T = 4): query 0 is blocked from key 0, which it may see "
            "(mask[0, 0] should be True); it leaves out the diagonal; each position may attend to "
            "itself."
        ),
        id="causal_no_diagonal",
    ),
    pytest.param(
        check_causal_mask,
        causal_upper,
        (
            "✗ causal mask, case 1 of 3 (T = 4): query 0 may attend to key 1, a future position (mask[0, "
            "1] should be False); it is the upper triangle, j >= i: each query sees the future; keep the "
            "lower one, j <= i."
        ),
        id="causal_upper",
    ),
    pytest.param(
        check_padding_mask,
        padding_inverted,
        (
            "✗ padding mask, case 1 of 3 (lengths 2 and 4, t = 4): position 0 of sequence 0 is a real"
            " token (mask[0, 0] should be True); the mask is inverted; here True marks a real token."
        ),
        id="padding_inverted",
    ),
    pytest.param(
        check_padding_mask,
        padding_off_by_one,
        (
            "✗ padding mask, case 1 of 3 (lengths 2 and 4, t = 4): position 2 of sequence 0 is padding "
            "(mask[0, 2] should be False); it counts one position too many: position j is real when j < "
            "lengths[b], not when j <= lengths[b]."
        ),
        id="padding_off_by_one",
    ),
    pytest.param(
        check_positional_encoding,
        positional_sin_cos_swapped,
        (
            "✗ positional encoding, case 1 of 3 (t = 4, d_model = 6): output[0, 0] is 1, expected 0; it "
            "matches sine and cosine swapped; the sine goes in the even columns 2i, the cosine in the odd "
            "columns 2i + 1."
        ),
        id="positional_sin_cos_swapped",
    ),
    pytest.param(
        check_positional_encoding,
        positional_column_exponent,
        (
            "✗ positional encoding, case 1 of 3 (t = 4, d_model = 6): output[1, 1] is 0.976882, expected "
            "0.540302; it matches the exponent j/d_model in column j; both columns of pair i use the same "
            "angle, pos / 10000^(2i/d_model)."
        ),
        id="positional_column_exponent",
    ),
    pytest.param(
        check_positional_encoding,
        positional_halves,
        (
            "✗ positional encoding, case 1 of 3 (t = 4, d_model = 6): output[0, 1] is 0, expected 1; it "
            "matches all the sines first, then all the cosines; interleave them, the sine of pair i in "
            "column 2i and its cosine in column 2i + 1."
        ),
        id="positional_halves",
    ),
]


RIGHT = [
    (check_softmax, softmax, "✓ softmax: all 8 cases pass."),
    (check_softmax_jacobian, softmax_jacobian, "✓ softmax_jacobian: all 3 cases pass."),
    (check_attention, scaled_dot_product_attention, "✓ attention: all 6 cases pass."),
    (check_attention, output_only(scaled_dot_product_attention), "✓ attention: all 6 cases pass."),
    (check_masked_attention, scaled_dot_product_attention, "✓ masked attention: all 8 cases pass."),
    (
        check_masked_attention,
        output_only(scaled_dot_product_attention),
        "✓ masked attention: all 8 cases pass.",
    ),
    (check_causal_mask, causal_mask, "✓ causal mask: all 3 cases pass."),
    (check_padding_mask, padding_mask, "✓ padding mask: all 3 cases pass."),
    (check_positional_encoding, positional_encoding, "✓ positional encoding: all 3 cases pass."),
    (check_positional_encoding, sinusoidal_positions, "✓ positional encoding: all 3 cases pass."),
]


@pytest.mark.parametrize(("checker", "solution", "message"), RIGHT)
def test_each_checker_accepts_the_reference(checker, solution, message, capsys):
    result = checker(solution)
    assert result == CheckResult(True, message)
    assert capsys.readouterr().out == message + "\n"


@pytest.mark.parametrize(("checker", "solution", "message"), WRONG)
def test_each_checker_names_the_mistake(checker, solution, message, capsys):
    result = checker(solution)
    assert result == CheckResult(False, message)
    assert not result
    assert capsys.readouterr().out == message + "\n"  # one line, no traceback, no numpy warning


def test_every_checker_rejects_at_least_two_typical_mistakes():
    counts: dict[str, int] = {}
    for param in WRONG:
        counts[param.values[0].__name__] = counts.get(param.values[0].__name__, 0) + 1
    assert {name: n for name, n in counts.items() if n < 2} == {}
    assert len(counts) == len({checker for checker, _, _ in RIGHT})


def test_learner_warnings_are_silenced(recwarn, capsys):
    check_softmax(softmax_naive)
    check_attention(attention_naive_softmax)
    assert [str(w.message) for w in recwarn] == []


def test_a_function_that_changes_its_input_in_place_is_told_so(capsys):
    def softmax_in_place(x):
        x -= x.max(axis=-1, keepdims=True)  # changes the caller's array
        np.exp(x, out=x)
        return x / x.sum(axis=-1, keepdims=True)

    assert check_softmax(softmax_in_place).message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): your function changed its input `x` in place; "
        "compute a new array instead."
    )

    def masked_in_place_in_torch(q, k, v, mask):
        torch.from_numpy(q).mul_(0.5)  # from_numpy shares the array's memory
        return scaled_dot_product_attention(q, k, v, mask)

    assert check_masked_attention(masked_in_place_in_torch).message == (
        "✗ masked attention, case 1 of 8 (causal mask, T = 4): your function changed its input `q` in place; "
        "compute a new array instead."
    )
    # a function without named parameters is told the input's position
    assert check_softmax(lambda *args: softmax_in_place(*args)).message.endswith(
        "your function changed its input number 1 in place; compute a new array instead."
    )


def _case_one(checker) -> str:
    """The start of a checker's sentences about its first case, '✗ title, case 1 of N (name)'."""

    def fails(*args):
        raise LookupError("x")

    return checker(fails).message.removesuffix(": your function raised LookupError: x.")


def _in_place(solution):
    """``solution``, then an in-place change of the last array it was given; ``changed`` names it."""

    @functools.wraps(solution)
    def changing(*args):
        result = solution(*args)
        arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        position = arrays[-1]
        changing.changed = list(inspect.signature(solution).parameters)[position]
        args[position][...] = ~args[position] if args[position].dtype == bool else args[position] + 1
        return result

    changing.changed = None
    return changing


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        (checker, solution)
        for checker, solution, _ in RIGHT
        # every checker whose function takes an array, with each solution that names its parameters
        if checker not in (check_causal_mask, check_positional_encoding) and solution.__name__ != "<lambda>"
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_every_checker_notices_an_input_changed_in_place(checker, solution, capsys):
    changing = _in_place(solution)
    expected_start = _case_one(checker)
    message = checker(changing).message
    assert changing.changed is not None
    assert message == (
        f"{expected_start}: your function changed its input `{changing.changed}` in place; compute a new "
        "array instead."
    )


def test_the_checker_gives_the_learner_copies(capsys):
    def mutating_softmax(x):
        out = softmax(x)
        x[...] = 0.0  # a learner's in-place edit must not change later cases or the reference
        return out

    assert not check_softmax(mutating_softmax).ok  # told so, and ...
    assert check_softmax(softmax).ok  # ... the reference and the cases are unchanged for the next call


def test_results_of_the_wrong_kind(capsys):
    assert check_softmax(lambda x: (softmax(x), softmax(x))).message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): your function returned a tuple of 2 items; "
        "expected one array."
    )
    assert check_attention(lambda q, k, v: (1, 2, 3)).message == (
        "✗ attention, case 1 of 6 (3 positions, d_k = 4): your function returned a tuple of 3 items; "
        "expected the output, or (output, weights)."
    )
    assert check_softmax(lambda x: "softmax").message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): expected the output as an array of numbers, got str."
    )
    assert check_softmax(lambda x: softmax(x).tolist()).ok  # a pure-Python list is fine


def test_an_exception_is_reported_with_its_type_and_first_line_only(capsys):
    def broken(x):
        raise RuntimeError("first line\nsecond line")

    assert check_softmax(broken).message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): your function raised RuntimeError: first line."
    )
    assert check_softmax(lambda x: 1 / 0).message.endswith(
        "your function raised ZeroDivisionError: division by zero."
    )
    assert check_softmax(lambda x: [][0]).message.endswith(
        "your function raised IndexError: list index out of range."
    )


TITLES = {checker: message.removeprefix("✓ ").split(": all ")[0] for checker, _, message in RIGHT}


@pytest.mark.parametrize("checker", list(TITLES), ids=lambda checker: checker.__name__)
def test_the_workbook_stub_is_reported_as_not_written_yet(checker, capsys):
    def stub(*args):
        raise NotImplementedError("not written yet")

    message = (
        f"· {TITLES[checker]}: not written yet. Replace the `raise NotImplementedError` line with your code, "
        "then run this cell again."
    )
    assert checker(stub) == CheckResult(False, message)
    assert capsys.readouterr().out == message + "\n"


def test_masked_attention_leak_in_a_batch_names_the_batch_item(capsys):
    def sees_padding(q, k, v, mask):
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        if q.ndim == 3 and mask.shape == (2, 1, 5):
            weights = weights.copy()
            weights[0, 1, 4] = 0.1  # query 1 of the first sequence (length 3) sees padding key 4
        return out, weights

    assert check_masked_attention(sees_padding).message == (
        "✗ masked attention, case 4 of 8 (padding mask, batch of 2, lengths 3 and 5): "
        "query 1 of batch item [0] attends to masked key 4 (weights[0, 1, 4] = 0.1, expected 0)."
    )


def test_a_torch_result_that_requires_grad_is_taken_as_its_values(capsys):
    def sdpa_with_grad(q, k, v):
        q, k, v = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v)
        return out, torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)

    assert check_attention(sdpa_with_grad) == CheckResult(True, "✓ attention: all 6 cases pass.")
    assert check_attention(lambda q, k, v: sdpa_with_grad(q, k, v)[0]).ok


def test_a_bfloat16_or_complex_result_is_named(capsys):
    assert check_softmax(lambda x: torch.softmax(torch.tensor(x, dtype=torch.bfloat16), -1)).message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): the output is a bfloat16 tensor, which keeps only "
        "about 3 significant digits; compute in float64 (or float32)."
    )
    assert check_softmax(lambda x: softmax(x).astype(complex)).message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): expected the output as real numbers, got complex "
        "numbers (dtype complex128)."
    )


def test_an_exception_whose_message_cannot_be_read_is_reported_by_its_type(capsys):
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no message")

    def broken(x):
        raise Unprintable

    assert check_softmax(broken).message == (
        "✗ softmax, case 1 of 8 (a vector of 3 scores): your function raised Unprintable."
    )


def test_learner_functions_written_in_torch_are_accepted(capsys):
    def torch_sdpa(q, k, v, mask=None):
        q, k, v = (torch.from_numpy(a) for a in (q, k, v))
        mask = None if mask is None else torch.from_numpy(np.ascontiguousarray(mask))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    assert check_attention(torch_sdpa).ok
    # torch's SDPA (2.5 and later) also gives a fully masked row zeros, so it passes every masked case
    assert check_masked_attention(torch_sdpa).ok
    # ... while nn.MultiheadAttention's convention (True = blocked) is caught
    inverted = check_masked_attention(lambda q, k, v, mask: torch_sdpa(q, k, v, ~mask))
    assert inverted.message.endswith(
        "it matches the mask inverted; here True means the query may attend to the key."
    )


def test_check_result_is_quiet_in_a_notebook(capsys):
    from IPython.core.formatters import DisplayFormatter

    result = check_causal_mask(causal_mask)
    assert bool(result) is True
    assert DisplayFormatter().format(result) == ({}, {})  # the printed sentence is the only output


def test_the_softmax_jacobian_expected_by_the_checker_agrees_with_autograd(capsys):
    # The checker computes J_ij = p_i (δ_ij − p_j) in numpy; torch autograd must pass every case.
    assert check_softmax_jacobian(softmax_jacobian_autograd) == CheckResult(
        True, "✓ softmax_jacobian: all 3 cases pass."
    )
    # J is symmetric, so the transpose of the right answer is right too
    assert check_softmax_jacobian(lambda p: np.swapaxes(softmax_jacobian(p), -1, -2)).ok
