"""The checkers' engine on what a learner's function may do besides computing: change a tensor or an array
inside a tuple in place, raise NotImplementedError for one input only, return booleans or text, or build
the matrix an exercise forbids. Each gets one exact sentence, never a traceback."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from course.attention import causal_mask, scaled_dot_product_attention
from course.checkers import (
    check_decoder_attention,
    check_masked_attention,
    check_pre_ln_block,
    check_softmax,
)
from course.checkers._engine import Case, run_cases


def pre_ln_block_in_place(x, attention, ffn, norm1, norm2):
    x += attention(norm1(x))  # adds into the caller's tensor
    return x + ffn(norm2(x))


def decoder_scaling_its_weights(y, memory, self_w, cross_w):
    w_q, w_k, w_v = self_w
    w_q /= math.sqrt(w_q.shape[-1])  # scales the caller's W_Q, inside the tuple
    h = y + scaled_dot_product_attention(y @ w_q, y @ w_k, y @ w_v, causal_mask(y.shape[-2]), scale=1.0)[0]
    return h + scaled_dot_product_attention(h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2])[0]


def softmax_for_matrices_only(x):
    if x.ndim > 2:
        raise NotImplementedError("only vectors and matrices")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def masked_attention_returning_the_mask(q, k, v, mask):
    return np.broadcast_to(mask, q.shape[:-1] + k.shape[-2:-1])  # (..., T_q, T_k) booleans, not the output


def softmax_as_text(x):
    return np.array([f"{value:.3f}" for value in x.reshape(-1)]).reshape(x.shape)


@pytest.mark.parametrize(
    ("checker", "solution", "message"),
    [
        pytest.param(
            check_pre_ln_block,
            pre_ln_block_in_place,
            "✗ pre-LN block, case 1 of 3 (B = 2, T = 5, d_model = 8, 2 heads): your function changed its "
            "input `x` in place; compute a new tensor instead.",
            id="a torch tensor changed in place",
        ),
        pytest.param(
            check_decoder_attention,
            decoder_scaling_its_weights,
            "✗ decoder attention, case 1 of 4 (T_dec = 4, T_enc = 6, d = 4): your function changed its input "
            "`self_w` in place; compute a new array instead.",
            id="an array inside a tuple changed in place",
        ),
        pytest.param(
            check_softmax,
            softmax_for_matrices_only,
            "✗ softmax, case 3 of 8 (a batch of shape (2, 3, 5)): your function raised NotImplementedError: "
            "only vectors and matrices.",
            id="NotImplementedError after returning for the cases before",
        ),
        pytest.param(
            check_masked_attention,
            masked_attention_returning_the_mask,
            "✗ masked attention, case 1 of 8 (causal mask, T = 4): output[0, 0] is True, expected 1.27998; "
            "the output has dtype bool, which cannot hold fractions; compute with floats (np.zeros(n) "
            "rather than np.zeros(n, dtype=int), for example).",
            id="booleans where the masked output should be",
        ),
        pytest.param(
            check_softmax,
            softmax_as_text,
            "✗ softmax, case 1 of 8 (a vector of 3 scores): expected the output as an array of numbers, got "
            "an array of dtype <U5.",
            id="text",
        ),
    ],
)
def test_what_a_function_does_besides_computing_gets_one_sentence(checker, solution, message, capsys):
    result = checker(solution)
    assert not result
    assert result.message == message
    assert capsys.readouterr().out == message + "\n"


def test_the_learners_tensors_are_copies(capsys):
    x = torch.zeros(2, 3)
    case = Case("a tensor", (x,), np.ones((2, 3)))

    def fills(t):
        t.fill_(1.0)
        return t

    assert run_cases("fill", fills, [case]).message == (
        "✗ fill, case 1 of 1 (a tensor): your function changed its input `t` in place; compute a new tensor "
        "instead."
    )
    assert torch.equal(x, torch.zeros(2, 3))  # the checker's own tensor is untouched
    assert run_cases("fill", lambda t: t + 1.0, [case]).ok  # a new tensor: passes


def test_not_implemented_means_not_written_only_before_the_function_has_returned(capsys):
    def stub(x):
        raise NotImplementedError("not written yet")

    assert check_softmax(stub).message.startswith("· softmax: not written yet.")  # the workbook's stub
    assert check_softmax(softmax_for_matrices_only).message.startswith("✗ softmax, case 3 of 8")  # written


def test_the_integer_dtype_hint_is_given_only_where_fractions_were_expected(capsys):
    counts = Case("two counts", (), np.array([3, 5]))  # whole numbers: an integer dtype holds them
    assert run_cases("count", lambda: np.array([3, 4]), [counts]).message == (
        "✗ count, case 1 of 1 (two counts): output[1] is 4, expected 5."
    )
    halves = Case("two halves", (), np.array([0.5, 1.5]))
    assert run_cases("halves", lambda: np.array([0, 1]), [halves]).message == (
        "✗ halves, case 1 of 1 (two halves): output[0] is 0, expected 0.5; the output has dtype int64, which "
        "cannot hold fractions; compute with floats (np.zeros(n) rather than np.zeros(n, dtype=int), for "
        "example)."
    )


def test_an_output_whose_shape_changes_with_the_values_is_a_sentence():
    calls = []

    def shrinking(q, k, v, mask):  # drops a row from its second call on
        calls.append(1)
        out = scaled_dot_product_attention(q, k, v, mask)[0]
        return out if len(calls) == 1 else out[:-1]

    assert check_masked_attention(shrinking).message == (
        "✗ masked attention, case 1 of 8 (causal mask, T = 4): the output has shape (3, 4) once the value "
        "of key 0 changes, (4, 4) before; its shape must depend only on the inputs' shapes."
    )
