"""Lesson 06's checkers: the reference passes, and each typical mistake, written as a learner would write it,
gets its exact sentence."""

from __future__ import annotations

import numpy as np
import pytest

from course.attention import causal_mask, padding_mask, scaled_dot_product_attention, self_attention, softmax
from course.checkers import check_cross_attention, check_decoder_attention
from course.checkers._bugs import NEW_MISTAKE, combinations
from course.checkers._uses import (
    BROADCAST_HINT,
    CAUSAL_CROSS_WORDS,
    CROSS_NO_RESIDUAL_WORDS,
    DECODER_BUGS,
    DECODER_KEYS_WORDS,
    ENCODER_QUERIES_WORDS,
    INVERTED_PADDING_WORDS,
    NO_PADDING_WORDS,
    PADDING_OFF_BY_ONE_WORDS,
    QUERY_AXIS_WORDS,
    SELF_NO_RESIDUAL_WORDS,
    _decoder,
)
from course.seq2seq import cross_attention, decoder_attention

# ----------------------------------------------------------------------------------------------------
# Exercise 1: cross-attention with a padded encoder batch


def _attend(q, k, v, mask, scale):
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ v, weights


def learner_cross(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = x_dec @ w_q
    k, v = memory @ w_k, memory @ w_v
    mask = np.arange(memory.shape[1])[None, None, :] < memory_lengths[:, None, None]
    return _attend(q, k, v, mask, 1 / np.sqrt(q.shape[-1]))


def queries_from_encoder(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = memory @ w_q
    mask = np.arange(memory.shape[1])[None, None, :] < memory_lengths[:, None, None]
    return _attend(q, memory @ w_k, memory @ w_v, mask, 1 / np.sqrt(q.shape[-1]))


def mask_on_query_axis(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = x_dec @ w_q
    mask = np.arange(memory.shape[1])[None, :, None] < memory_lengths[:, None, None]  # (B, T_enc, 1)
    return _attend(q, memory @ w_k, memory @ w_v, mask, 1 / np.sqrt(q.shape[-1]))


def causal_cross(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = x_dec @ w_q
    t_dec, t_enc = x_dec.shape[1], memory.shape[1]
    pad = np.arange(t_enc)[None, None, :] < memory_lengths[:, None, None]
    mask = np.tril(np.ones((t_dec, t_enc), dtype=bool)) & pad
    return _attend(q, memory @ w_k, memory @ w_v, mask, 1 / np.sqrt(q.shape[-1]))


def scaled_by_d_model(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = x_dec @ w_q
    mask = np.arange(memory.shape[1])[None, None, :] < memory_lengths[:, None, None]
    return _attend(q, memory @ w_k, memory @ w_v, mask, 1 / np.sqrt(x_dec.shape[-1]))


def no_padding(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = x_dec @ w_q
    return _attend(q, memory @ w_k, memory @ w_v, None, 1 / np.sqrt(q.shape[-1]))


def keys_from_decoder(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    q = x_dec @ w_q
    mask = np.arange(memory.shape[1])[None, None, :] < memory_lengths[:, None, None]
    return _attend(q, x_dec @ w_k, x_dec @ w_v, mask, 1 / np.sqrt(q.shape[-1]))


def test_the_reference_and_a_learners_solution_pass() -> None:
    assert check_cross_attention(cross_attention).ok
    assert check_cross_attention(learner_cross).ok
    assert check_cross_attention(lambda *args: learner_cross(*args)[0]).ok  # the output alone


@pytest.mark.parametrize(
    ("fn", "sentence"),
    [
        (
            queries_from_encoder,
            "✗ cross-attention, case 1 of 5 (T_dec = 3, T_enc = 5, memory lengths 5 and 3): the output has "
            f"shape (2, 5, 4), expected (2, 3, 4); {ENCODER_QUERIES_WORDS}.",
        ),
        (
            causal_cross,
            "✗ cross-attention, case 1 of 5 (T_dec = 3, T_enc = 5, memory lengths 5 and 3): weights[0, 0, 0] "
            f"is 1, expected 0.0212857; {CAUSAL_CROSS_WORDS}.",
        ),
        (no_padding, f"{NO_PADDING_WORDS}."),
        (scaled_by_d_model, "it matches scaling by 1/√d_model; scale by 1/√d_k"),
    ],
)
def test_each_typical_mistake_is_named(fn, sentence: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = check_cross_attention(fn)
    assert not result.ok
    assert sentence in result.message
    assert capsys.readouterr().out.strip() == result.message


def test_the_mask_on_the_query_axis_is_named_where_it_runs_and_hinted_where_it_cannot() -> None:
    message = check_cross_attention(mask_on_query_axis).message
    assert message.startswith("✗ cross-attention, case 1 of 5")
    assert message.endswith(f"({BROADCAST_HINT}).")
    # once T_dec = T_enc lets it run, the mistake is named
    square = check_cross_attention(
        lambda x, m, *rest: (
            mask_on_query_axis(x[:, :4], m, *rest) if x.shape[1] == m.shape[1] else learner_cross(x, m, *rest)
        )
    )
    assert square.message.endswith(f"{QUERY_AXIS_WORDS}.")
    keys = check_cross_attention(
        lambda x, m, *rest: (
            keys_from_decoder(x, m, *rest) if x.shape[1] == m.shape[1] else learner_cross(x, m, *rest)
        )
    )
    assert keys.message.endswith(f"{DECODER_KEYS_WORDS}.")


def test_a_stub_is_not_written_yet() -> None:
    def stub(*args):
        raise NotImplementedError

    assert check_cross_attention(stub).message.startswith("· cross-attention: not written yet.")


# ----------------------------------------------------------------------------------------------------
# Exercise 2: find the bugs in a decoder's attention


def one_head(q, k, v, mask):
    # the lesson's helper, as given in the exercise
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    e = np.where(np.isnan(e), 0.0, e)
    return (e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)) @ v


def buggy(y, memory, self_w, cross_w):
    # the lesson's buggy_decoder_attention, as given
    t_dec, t_enc = y.shape[-2], memory.shape[-2]
    q, k, v = y @ self_w[0], y @ self_w[1], y @ self_w[2]
    h = y + one_head(q, k, v, mask=None)
    q, k, v = y @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2]
    return h + one_head(q, k, v, mask=causal_mask(t_dec, t_enc))


def fixed(y, memory, self_w, cross_w):
    t_dec = y.shape[-2]
    h = y + self_attention(y, *self_w, mask=causal_mask(t_dec))[0]
    q, k, v = h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2]
    return h + scaled_dot_product_attention(q, k, v)[0]


def only_cross_fixed(y, memory, self_w, cross_w):  # queries from h and no mask: the self-attention left
    h = y + self_attention(y, *self_w)[0]
    return h + scaled_dot_product_attention(h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2])[0]


def only_self_fixed(y, memory, self_w, cross_w):  # two left: cross masked, queries from y
    t_dec, t_enc = y.shape[-2], memory.shape[-2]
    h = y + self_attention(y, *self_w, mask=causal_mask(t_dec))[0]
    q, k, v = y @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2]
    return h + scaled_dot_product_attention(q, k, v, causal_mask(t_dec, t_enc))[0]


def top_left_instead(y, memory, self_w, cross_w):  # the causal cross mask "fixed" to top-left: still there
    t_dec, t_enc = y.shape[-2], memory.shape[-2]
    h = y + self_attention(y, *self_w, mask=causal_mask(t_dec))[0]
    q, k, v = h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2]
    return h + scaled_dot_product_attention(q, k, v, causal_mask(t_dec, t_enc, align="top-left"))[0]


def queries_from_y(y, memory, self_w, cross_w):
    h = y + self_attention(y, *self_w, mask=causal_mask(y.shape[-2]))[0]
    return h + scaled_dot_product_attention(y @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2])[0]


def cross_on_itself(y, memory, self_w, cross_w):
    h = y + self_attention(y, *self_w, mask=causal_mask(y.shape[-2]))[0]
    return h + scaled_dot_product_attention(h @ cross_w[0], h @ cross_w[1], h @ cross_w[2])[0]


def without_cross_residual(y, memory, self_w, cross_w):
    h = y + self_attention(y, *self_w, mask=causal_mask(y.shape[-2]))[0]
    return scaled_dot_product_attention(h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2])[0]


def doubled(y, memory, self_w, cross_w):  # a change that is none of the bugs and no named mistake
    return 2 * fixed(y, memory, self_w, cross_w)


def test_the_fixed_decoder_passes() -> None:
    assert check_decoder_attention(decoder_attention).ok
    assert check_decoder_attention(fixed).ok


CASE_1_DECODER = "✗ decoder attention, case 1 of 4 (T_dec = 4, T_enc = 6, d = 4): "


@pytest.mark.parametrize(
    ("fn", "left"),
    [
        (buggy, "all 3 bugs remain"),
        (only_cross_fixed, "1 of the 3 bugs remains"),
        (only_self_fixed, "2 of the 3 bugs remain"),
        (top_left_instead, "1 of the 3 bugs remains"),
        (queries_from_y, "1 of the 3 bugs remains"),
    ],
)
def test_the_checker_counts_the_bugs_left_and_never_names_them(fn, left: str) -> None:
    result = check_decoder_attention(fn)
    assert not result.ok
    assert result.message.startswith(f"{CASE_1_DECODER}output[")
    assert result.message.endswith(f"; {left}.")
    assert "mask" not in result.message and "quer" not in result.message


def test_the_given_function_is_the_reference_with_every_bug() -> None:
    rng = np.random.default_rng(0)
    y, memory = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    self_w, cross_w = (tuple(rng.standard_normal((4, 4)) for _ in range(3)) for _ in range(2))
    every_bug = {"self-attention unmasked": 1, "cross-attention masked causally": 1, "queries from y": 1}
    assert np.allclose(buggy(y, memory, self_w, cross_w), _decoder(every_bug, y, memory, self_w, cross_w))
    assert check_decoder_attention(buggy).message == (
        f"{CASE_1_DECODER}output[0, 0] is 1.90903, expected 0.497337; all 3 bugs remain."
    )


def test_every_stage_of_the_fixing_gives_a_different_output() -> None:
    # so that the count read off the outputs is never ambiguous
    rng = np.random.default_rng(1)
    y, memory = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    self_w, cross_w = (tuple(rng.standard_normal((4, 4)) for _ in range(3)) for _ in range(2))
    outputs = [_decoder(stage, y, memory, self_w, cross_w) for stage in combinations(DECODER_BUGS)]
    assert len(outputs) == 12
    assert all(not np.allclose(a, b) for i, a in enumerate(outputs) for b in outputs[i + 1 :])


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (cross_on_itself, DECODER_KEYS_WORDS),
        (without_cross_residual, CROSS_NO_RESIDUAL_WORDS),
        (doubled, NEW_MISTAKE),
    ],
)
def test_a_mistake_of_the_learners_own_is_named(fn, words: str) -> None:
    result = check_decoder_attention(fn)
    assert result.message.startswith(f"{CASE_1_DECODER}output[")
    assert result.message.endswith(f"; {words}.")


def test_the_checkers_leave_the_learners_inputs_alone_and_say_so_when_changed() -> None:
    def in_place(y, memory, self_w, cross_w):
        y += 0.0
        memory *= 2.0
        return fixed(y, memory, self_w, cross_w)

    message = check_decoder_attention(in_place).message
    assert "changed its input `memory` in place" in message


def test_the_padding_mask_of_the_cases_is_real() -> None:
    # the cases include padded memories: the reference differs from attention without the padding
    x = np.ones((1, 2, 2))
    out, weights = cross_attention(
        x, np.arange(6.0).reshape(1, 3, 2), np.eye(2), np.eye(2), np.eye(2), np.array([2])
    )
    assert weights[0, :, 2].max() == 0.0
    assert np.array_equal(padding_mask([2], 3), weights[0, :1] > 0)
    assert out.shape == (1, 2, 2)


# ----------------------------------------------------------------------------------------------------
# Mistakes that once got only a NaN or a bare value


def _naive_cross(x_dec, memory, w_q, w_k, w_v, real):
    """Cross-attention as a learner writes it: -inf where a key is not real, then exp(s - max) / sum, which
    gives NaN for a query left with no key."""
    q = x_dec @ w_q
    scores = q @ np.swapaxes(memory @ w_k, -1, -2) / np.sqrt(q.shape[-1])
    scores = np.where(real, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ (memory @ w_v), weights


def padding_inverted(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    pad = np.arange(memory.shape[1])[None, None, :] >= memory_lengths[:, None, None]  # True at the padding
    return _naive_cross(x_dec, memory, w_q, w_k, w_v, pad)


def padding_off_by_one(x_dec, memory, w_q, w_k, w_v, memory_lengths):
    real = np.arange(memory.shape[1])[None, None, :] <= memory_lengths[:, None, None]
    return _naive_cross(x_dec, memory, w_q, w_k, w_v, real)


CASE_1 = "✗ cross-attention, case 1 of 5 (T_dec = 3, T_enc = 5, memory lengths 5 and 3): "


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (
            padding_inverted,
            f"{CASE_1}output[0, 0, 0] is nan, expected -0.227529; {INVERTED_PADDING_WORDS}.",
        ),
        (
            lambda *args: padding_inverted(*args)[0],  # the output alone
            f"{CASE_1}output[0, 0, 0] is nan, expected -0.227529; {INVERTED_PADDING_WORDS}.",
        ),
        (
            padding_off_by_one,
            f"{CASE_1}query 0 of batch item [1] attends to masked key 3 (weights[1, 0, 3] = 0.261471, "
            f"expected 0); {PADDING_OFF_BY_ONE_WORDS}.",
        ),
    ],
)
def test_a_padding_mask_gone_wrong_is_named(fn, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = check_cross_attention(fn)
    assert result.message == message
    assert capsys.readouterr().out == message + "\n"


def test_the_inverted_padding_mask_is_named_in_words() -> None:
    assert check_cross_attention(padding_inverted).message.endswith(
        "it matches the padding mask inverted: it blocks the real encoder positions and keeps the padding (a "
        "memory without padding is then left with no key at all); here True marks a real encoder position."
    )


def without_self_residual(y, memory, self_w, cross_w):
    h = self_attention(y, *self_w, mask=causal_mask(y.shape[-2]))[0]  # h = y + ... forgotten
    return h + scaled_dot_product_attention(h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2])[0]


def test_a_missing_residual_around_self_attention_is_named() -> None:
    assert check_decoder_attention(without_self_residual).message == (
        "✗ decoder attention, case 1 of 4 (T_dec = 4, T_enc = 6, d = 4): output[0, 0] is 0.794013, expected "
        f"0.497337; {SELF_NO_RESIDUAL_WORDS}."
    )
    assert SELF_NO_RESIDUAL_WORDS == (
        "it leaves out the residual connection around self-attention: h = y + self-attention(y), and "
        "cross-attention reads h"
    )
