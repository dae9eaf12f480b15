"""Checkers for the code cards of lessons 01-08: one short step each, written from memory at review time.

A code card (kind ``code`` in ``course/questions``) asks for one function of 3-15 lines; its checker is one
``check_card_<slug>`` here, taking the learner's function, built from the engine like the exercises' checkers
(cases, typical mistakes with the words that explain them). Numpy only: the runner's namespace holds ``np``
and ``math`` and nothing of the course, so a card that needs a softmax has the learner write it inline.

A typical mistake may have another shape than the right result (values taken from the wrong sequence, a
missing transpose): the engine names it after the wrong shape. The card for the online softmax returns three
arrays and is checked part by part (:func:`_check_parts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import (
    causal_mask,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    sinusoidal_positions,
    softmax,
    split_heads,
)
from course.checkers._attention import MATMUL_ERRORS, attention_case
from course.checkers._block import LN_NO_MEAN, LN_NO_SQRT, LN_SWAPPED
from course.checkers._cost import NO_ACC_RESCALE, NO_SUM_RESCALE
from course.checkers._engine import (
    Case,
    CheckResult,
    Problem,
    as_array,
    call_learner,
    run_cases,
    shape_text,
)
from course.checkers._masks import (
    DECODING_BLOCKED_TRUE,
    DECODING_OFF_BY_ONE,
    DECODING_TOP_LEFT,
    DECODING_TRANSPOSED,
    PADDING_TRANSPOSED,
)
from course.checkers._self_attention import PE_FROM_ONE, positional_mistakes
from course.checkers._softmax import LSE_STABLE_HINT, SOFTMAX_UNNORMALISED, STABLE_HINT
from course.checkers._uses import DECODER_KEYS_WORDS, ENCODER_QUERIES_WORDS
from course.efficient import elu_feature_map, linear_attention, online_softmax_update, sliding_window_mask

__all__ = [
    "check_card_attention",
    "check_card_bigram",
    "check_card_causal_mask",
    "check_card_cross_attention",
    "check_card_decoder_mask",
    "check_card_feed_forward",
    "check_card_layer_norm",
    "check_card_learned_positions",
    "check_card_linear_attention",
    "check_card_lm_loss",
    "check_card_lr_schedule",
    "check_card_masked_softmax",
    "check_card_merge_heads",
    "check_card_online_softmax",
    "check_card_padding_mask",
    "check_card_position_code",
    "check_card_pre_ln_residual",
    "check_card_repeat_kv",
    "check_card_scaled_scores",
    "check_card_self_attention",
    "check_card_sliding_window",
    "check_card_softmax",
    "check_card_softmax_backward",
    "check_card_softmax_temperature",
    "check_card_split_heads",
    "check_card_use_mask",
    "check_card_weighted_average",
]

Array = NDArray[Any]
Mistakes = tuple[tuple[NDArray[Any], str], ...]


# ----------------------------------------------------------------------------------------------------
# Shared pieces


def _same(a: NDArray[Any], b: NDArray[Any]) -> bool:
    if a.shape != b.shape:
        return False
    if np.bool_ in (a.dtype, b.dtype):
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=1e-5, atol=1e-7))


def _mask_words(index: tuple[int, ...], expected: bool, where: str) -> str:
    """A wrong entry of a (..., t_q, t_k) mask, in the words of queries and keys."""
    *batch, i, j = index
    query = f"query {i}" if not batch else f"query {i} of sequence {batch[0]}"
    if expected:
        return f"{query} is blocked from key {j}, which it may see ({where} should be True)"
    return f"{query} may attend to key {j}, which it must not see ({where} should be False)"


_rng = np.random.default_rng


# ----------------------------------------------------------------------------------------------------
# Lesson 01: softmax, temperature, a weighted average

SOFTMAX_WHOLE_ARRAY = (
    "it divides by the sum of the whole array; divide each row by its own sum, "
    "e.sum(axis=-1, keepdims=True), so that every row sums to 1"
)
SOFTMAX_AXIS_0 = "it is taken along axis 0, down the columns; take it along the last axis, each row"


def check_card_softmax(fn: Callable[[Array], Any]) -> CheckResult:
    """Check ``fn(x)``: a stable softmax along the last axis of ``x`` of any shape."""
    rng = _rng(1101)

    def case(name: str, x: Array, hint: str = "") -> Case:
        e, whole = np.exp(x - x.max(axis=-1, keepdims=True)), np.exp(x - x.max())
        mistakes = [(e, SOFTMAX_UNNORMALISED), (whole / whole.sum(), SOFTMAX_WHOLE_ARRAY)]
        if x.ndim > 1:
            mistakes.append((softmax(x, axis=0), SOFTMAX_AXIS_0))
        return Case(name, (x,), softmax(x), mistakes=tuple(mistakes), nonfinite_hint=hint)

    return run_cases(
        "softmax",
        fn,
        [
            case("a vector of 4 scores", np.array([1.0, 2.0, 0.5, -1.0])),
            case("3 rows of 4 scores", rng.standard_normal((3, 4))),
            case("a batch (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("rows of length 1", rng.standard_normal((3, 1))),
            case(
                "scores near 1000 and -1000",
                np.array([[1000.0, 999.0, 998.0], [-1000.0, -999.0, -1001.0]]),
                STABLE_HINT,
            ),
        ],
    )


TEMPERATURE_MULTIPLIED = (
    "the scores are multiplied by the temperature; divide them by it: softmax(x / temperature)"
)
TEMPERATURE_IGNORED = (
    "the temperature is ignored: it is the plain softmax; divide the scores by the temperature first"
)
TEMPERATURE_AFTER = (
    "the weights are divided by the temperature after the softmax, so they no longer sum to 1; divide the "
    "scores before it"
)


def check_card_softmax_temperature(fn: Callable[[Array, float], Any]) -> CheckResult:
    """Check ``fn(x, temperature)``: softmax(x / temperature) along the last axis, stable."""
    rng = _rng(1106)

    def case(name: str, x: Array, tau: float, hint: str = "") -> Case:
        mistakes = (
            (softmax(x * tau), TEMPERATURE_MULTIPLIED),
            (softmax(x), TEMPERATURE_IGNORED),
            (softmax(x) / tau, TEMPERATURE_AFTER),
        )
        return Case(name, (x, tau), softmax(x / tau), mistakes=mistakes, nonfinite_hint=hint)

    return run_cases(
        "softmax with temperature",
        fn,
        [
            case("4 scores, temperature 0.5", np.array([1.0, 2.0, 0.5, -1.0]), 0.5),
            case("3 rows of 5 scores, temperature 2", rng.standard_normal((3, 5)), 2.0),
            case("temperature 1", rng.standard_normal((2, 4)), 1.0),
            case(
                "temperature 0.01: scores / temperature near 1000",
                rng.standard_normal((2, 6)) * 10,
                0.01,
                STABLE_HINT,
            ),
        ],
    )


AVERAGE_RAW_SCORES = (
    "the dot products themselves weight the rows; turn them into weights with a softmax first, so that they "
    "are positive and sum to 1"
)
AVERAGE_PLAIN_MEAN = (
    "it is the plain mean of the rows; weight each row by the softmax of its dot product with the query"
)
AVERAGE_SCALED = (
    "the dot products are divided by √d; this card's weights are the softmax of the plain dot products"
)
AVERAGE_WEIGHTS = "these are the weights; return the weighted average of the rows, weights @ vectors"


def check_card_weighted_average(fn: Callable[[Array, Array], Any]) -> CheckResult:
    """Check ``fn(query, vectors)``: query (d,), vectors (T, d); the softmax of the dot products
    ``vectors @ query`` weights the rows; returns their weighted average (d,)."""
    rng = _rng(1103)

    def case(name: str, t: int, d: int) -> Case:
        query, vectors = rng.standard_normal(d), rng.standard_normal((t, d))
        scores = vectors @ query
        weights = softmax(scores)
        mistakes = (
            (scores @ vectors, AVERAGE_RAW_SCORES),
            (vectors.mean(axis=0), AVERAGE_PLAIN_MEAN),
            (softmax(scores / math.sqrt(d)) @ vectors, AVERAGE_SCALED),
            (weights, AVERAGE_WEIGHTS),
        )
        return Case(name, (query, vectors), weights @ vectors, mistakes=mistakes)

    return run_cases(
        "weighted average",
        fn,
        [case("4 vectors of width 3", 4, 3), case("one vector", 1, 4), case("6 vectors of width 8", 6, 8)],
    )


# ----------------------------------------------------------------------------------------------------
# Lesson 02: scaled scores, attention, the gradient through the softmax

SCORES_UNSCALED = "the scores are not scaled; divide q @ kᵀ by √d_k"
SCORES_BY_D_K = "it divides by d_k; divide by its square root, √d_k"
SCORES_MULTIPLIED = "it multiplies by √d_k; divide by it"
SCORES_TRANSPOSE_HINT = (
    "swap the last two axes of k with np.swapaxes(k, -1, -2); k.T reverses every axis, batch axes too"
)


def check_card_scaled_scores(fn: Callable[[Array, Array], Any]) -> CheckResult:
    """Check ``fn(q, k)``: q (..., T_q, d_k), k (..., T_k, d_k); returns q @ kᵀ / √d_k, (..., T_q, T_k)."""
    rng = _rng(1201)

    def case(name: str, q: Array, k: Array) -> Case:
        raw = q @ np.swapaxes(k, -1, -2)
        d_k = q.shape[-1]
        mistakes = (
            (raw, SCORES_UNSCALED),
            (raw / d_k, SCORES_BY_D_K),
            (raw * math.sqrt(d_k), SCORES_MULTIPLIED),
        )
        return Case(
            name,
            (q, k),
            raw / math.sqrt(d_k),
            mistakes=mistakes,
            error_hint=SCORES_TRANSPOSE_HINT,
            error_when=MATMUL_ERRORS,
        )

    r = rng.standard_normal
    return run_cases(
        "scaled scores",
        fn,
        [
            case("3 queries, 5 keys, d_k = 4", r((3, 4)), r((5, 4))),
            case("d_k = 1", r((2, 1)), r((3, 1))),
            case("batch axes (2, 3), d_k = 16", r((2, 3, 4, 16)), r((2, 3, 6, 16))),
        ],
    )


def check_card_attention(fn: Callable[[Array, Array, Array], Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: softmax(q kᵀ / √d_k) v with any leading batch axes, returning
    ``(output, weights)``: (..., T_q, d_v) and (..., T_q, T_k)."""
    rng = _rng(1202)
    r = rng.standard_normal
    cases = [
        attention_case("2 queries, 3 keys, d_k = 4, d_v = 2", r((2, 4)), r((3, 4)), r((3, 2))),
        attention_case("one key", r((3, 2)), r((1, 2)), r((1, 5))),
        attention_case("batch axes (2, 3)", r((2, 3, 4, 8)), r((2, 3, 5, 8)), r((2, 3, 5, 3))),
        attention_case("large scores", 30 * r((3, 16)), 30 * r((4, 16)), r((4, 2)), hint=STABLE_HINT),
    ]
    # The card asks for (output, weights): the output alone is refused.
    return run_cases("attention", fn, [replace(case, weights_required=True) for case in cases])


BACKWARD_DIAGONAL = (
    "it keeps only the diagonal of the Jacobian, p_i g_i; subtract the weighted mean of the gradient too: "
    "p * (g - (p * g).sum(axis=-1, keepdims=True))"
)
BACKWARD_UNWEIGHTED = (
    "it subtracts the plain sum of the gradient; subtract its mean weighted by p, (p * g).sum(axis=-1, "
    "keepdims=True)"
)
BACKWARD_THROUGH = "it passes the gradient through unchanged; the softmax's Jacobian is p_i (δ_ij - p_j)"
BACKWARD_WHOLE_ARRAY = (
    "the weighted sum runs over the whole array; take it along each row, axis=-1, keepdims=True"
)


def check_card_softmax_backward(fn: Callable[[Array, Array], Any]) -> CheckResult:
    """Check ``fn(p, grad_p)``: p = softmax(s) along the last axis, (..., n), grad_p = ∂L/∂p; returns
    ∂L/∂s = p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True)), (..., n)."""
    rng = _rng(1207)

    def case(name: str, shape: tuple[int, ...]) -> Case:
        p, g = softmax(rng.standard_normal(shape)), rng.standard_normal(shape)
        right = p * (g - (p * g).sum(axis=-1, keepdims=True))
        mistakes = [
            (p * g, BACKWARD_DIAGONAL),
            (p * (g - g.sum(axis=-1, keepdims=True)), BACKWARD_UNWEIGHTED),
            (g, BACKWARD_THROUGH),
        ]
        if len(shape) > 1:
            mistakes.append((p * (g - (p * g).sum()), BACKWARD_WHOLE_ARRAY))
        return Case(name, (p, g), right, mistakes=tuple(mistakes))

    return run_cases(
        "softmax backward",
        fn,
        [
            case("one row of 4 weights", (4,)),
            case("3 rows of 5 weights", (3, 5)),
            case("a batch (2, 2, 3)", (2, 2, 3)),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Lesson 03: a self-attention layer, one sinusoidal code, learned positions

SELF_D_MODEL = (
    "it matches scaling by 1/√d_model; scale by 1/√d_k, the width of the projected queries and keys"
)
SELF_UNSCALED = "it matches attention without scaling; scale the scores by 1/√d_k"
SELF_KEYS_ARE_QUERIES = "it matches keys computed with w_q; the keys are x @ w_k"
SELF_RAW_VALUES = "it averages the embeddings x themselves; the values are x @ w_v"


def check_card_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v)``: x (T, d_model), w_q and w_k (d_model, d_k), w_v (d_model, d_v);
    returns ``(output, weights)``, (T, d_v) and (T, T), scaled by 1/√d_k."""
    rng = _rng(1301)

    def case(name: str, t: int, d_model: int, d_k: int, d_v: int) -> Case:
        x = rng.standard_normal((t, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) for d in (d_k, d_k, d_v))
        q, k, v = x @ w_q, x @ w_k, x @ w_v
        out, weights = scaled_dot_product_attention(q, k, v)
        mistakes = (
            (scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(d_model))[0], SELF_D_MODEL),
            (scaled_dot_product_attention(q, k, v, scale=1.0)[0], SELF_UNSCALED),
            (scaled_dot_product_attention(q, q, v)[0], SELF_KEYS_ARE_QUERIES),
            (weights @ x, SELF_RAW_VALUES),
        )
        return Case(name, (x, w_q, w_k, w_v), out, weights, mistakes=mistakes, weights_required=True)

    return run_cases(
        "self-attention",
        fn,
        [
            case("T = 4, d_model = 8, d_k = 2, d_v = 3", 4, 8, 2, 3),
            case("one token", 1, 6, 3, 2),
            case("T = 6, d_model = 16, d_k = 4, d_v = 5", 6, 16, 4, 5),
        ],
    )


def check_card_position_code(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(pos, d_model)``: the sinusoidal code of one position, (d_model,),
    sin(pos / 10000^(2i/d_model)) in column 2i and its cosine in column 2i + 1."""

    def case(pos: int, d_model: int) -> Case:
        table = positional_mistakes(pos + 1, d_model)
        mistakes = tuple((alternative[pos], words) for alternative, words in table)
        if pos == 0:  # counted from 1, position 0 gets the code of position 1
            mistakes += ((sinusoidal_positions(2, d_model)[1], PE_FROM_ONE),)
        return Case(
            f"pos = {pos}, d_model = {d_model}",
            (pos, d_model),
            sinusoidal_positions(pos + 1, d_model)[pos],
            mistakes=mistakes,
        )

    return run_cases("position code", fn, [case(3, 6), case(0, 4), case(25, 16)])


LEARNED_BY_TOKEN = (
    "it looks the position table up with the token ids; look it up with the positions 0 to T - 1, "
    "position_table[:T]"
)
LEARNED_NO_POSITIONS = "the positions are missing; add position_table[:T] to the token embeddings"
LEARNED_FROM_ONE = "it matches positions counted from 1; the first position is 0, position_table[0]"


def check_card_learned_positions(fn: Callable[[NDArray[Any], Array, Array], Any]) -> CheckResult:
    """Check ``fn(tokens, token_table, position_table)``: tokens (B, T) integer ids, token_table (V, d),
    position_table (max_len, d); returns token_table[tokens] + position_table[:T], (B, T, d)."""
    rng = _rng(1309)

    def case(name: str, b: int, t: int, vocab: int, max_len: int, d: int) -> Case:
        tokens = rng.integers(0, vocab, (b, t))  # vocab <= max_len: the ids index the position table too
        tokens[0, 0] = max(t, 1) % vocab  # a token id that is not its own position
        token_table, position_table = rng.standard_normal((vocab, d)), rng.standard_normal((max_len, d))
        words = token_table[tokens]
        mistakes = (
            (words + position_table[tokens], LEARNED_BY_TOKEN),
            (words, LEARNED_NO_POSITIONS),
            (words + position_table[1 : t + 1], LEARNED_FROM_ONE),
        )
        return Case(
            name, (tokens, token_table, position_table), words + position_table[:t], mistakes=mistakes
        )

    return run_cases(
        "learned positions",
        fn,
        [
            case("2 sequences of 3 tokens, max_len = 8", 2, 3, 8, 8, 4),
            case("one sequence of 1 token", 1, 1, 5, 4, 3),
            case("3 sequences of 6 tokens, max_len = 7", 3, 6, 7, 7, 2),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Lesson 04: heads

SPLIT_NO_TRANSPOSE = (
    "it reshapes straight to (B, h, T, d_head), which mixes positions and features; reshape to "
    "(B, T, h, d_head), then swap axes 1 and 2"
)
SPLIT_INTERLEAVED = (
    "head i takes every h-th feature; it takes the block of features i·d_head to (i+1)·d_head - 1: reshape "
    "to (B, T, h, d_head)"
)
SPLIT_NOT_MOVED = "the head axis is still after the positions, (B, T, h, d_head); swap axes 1 and 2"


def check_card_split_heads(fn: Callable[[Array, int], Any]) -> CheckResult:
    """Check ``fn(x, n_heads)``: x (B, T, h·d_head) -> (B, h, T, d_head), head i holding features
    i·d_head to (i+1)·d_head - 1."""
    rng = _rng(1401)

    def case(name: str, b: int, t: int, h: int, d: int) -> Case:
        x = rng.standard_normal((b, t, h * d))
        mistakes = (
            (x.reshape(b, h, t, d), SPLIT_NO_TRANSPOSE),
            (x.reshape(b, t, d, h).transpose(0, 3, 1, 2), SPLIT_INTERLEAVED),
            (x.reshape(b, t, h, d), SPLIT_NOT_MOVED),
        )
        return Case(name, (x, h), split_heads(x, h), mistakes=mistakes)

    return run_cases(
        "split heads",
        fn,
        [
            case("B = 2, T = 3, 2 heads of 4", 2, 3, 2, 4),
            case("one head", 1, 4, 1, 3),
            case("B = 1, T = 5, 3 heads of 2", 1, 5, 3, 2),
        ],
    )


MERGE_NO_TRANSPOSE = (
    "it reshapes straight to (B, T, h·d_head), which mixes heads and positions; move the head axis after the "
    "positions first, transpose(0, 2, 1, 3)"
)
MERGE_INTERLEAVED = (
    "the heads' features are interleaved; head i's features go side by side in the block "
    "i·d_head to (i+1)·d_head - 1: transpose(0, 2, 1, 3), then reshape"
)
MERGE_SUMMED = "the heads are added up; they are concatenated, side by side, (B, T, h·d_head)"


def check_card_merge_heads(fn: Callable[[Array], Any]) -> CheckResult:
    """Check ``fn(x)``: x (B, h, T, d_head) -> (B, T, h·d_head), head i's features in the block
    i·d_head to (i+1)·d_head - 1."""
    rng = _rng(1402)

    def case(name: str, b: int, h: int, t: int, d: int) -> Case:
        x = rng.standard_normal((b, h, t, d))
        mistakes = (
            (x.reshape(b, t, h * d), MERGE_NO_TRANSPOSE),
            (x.transpose(0, 2, 3, 1).reshape(b, t, h * d), MERGE_INTERLEAVED),
            (x.sum(axis=1), MERGE_SUMMED),
        )
        return Case(name, (x,), merge_heads(x), mistakes=mistakes)

    return run_cases(
        "merge heads",
        fn,
        [
            case("B = 2, 2 heads, T = 3, d_head = 4", 2, 2, 3, 4),
            case("one head", 1, 1, 4, 3),
            case("B = 1, 3 heads, T = 5, d_head = 2", 1, 3, 5, 2),
        ],
    )


REPEAT_TILED = (
    "it repeats the key/value heads in the wrong order (np.tile gives heads 0, 1, 0, 1, …); query head i "
    "shares key/value head i // (n_heads // h_kv): np.repeat(kv, n_heads // h_kv, axis=1)"
)
REPEAT_POSITIONS = (
    "it repeats along the positions, axis 2; repeat along the heads, axis 1, to (B, n_heads, T, d_head)"
)
REPEAT_AVERAGED = (
    "it averages the key/value heads into one and shares it; each group of n_heads // h_kv query heads "
    "keeps its own key/value head"
)


def check_card_repeat_kv(fn: Callable[[Array, int], Any]) -> CheckResult:
    """Check ``fn(kv, n_heads)``: kv (B, h_kv, T, d_head) -> (B, n_heads, T, d_head), query head i using
    key/value head i // (n_heads // h_kv)."""
    rng = _rng(1406)

    def case(name: str, b: int, h_kv: int, n_heads: int, t: int, d: int) -> Case:
        kv = rng.standard_normal((b, h_kv, t, d))
        group = n_heads // h_kv
        mistakes = (
            (np.tile(kv, (1, group, 1, 1)), REPEAT_TILED),
            (np.repeat(kv, group, axis=2), REPEAT_POSITIONS),
            (np.broadcast_to(kv.mean(axis=1, keepdims=True), (b, n_heads, t, d)), REPEAT_AVERAGED),
        )
        return Case(name, (kv, n_heads), np.repeat(kv, group, axis=1), mistakes=mistakes)

    return run_cases(
        "repeat key/value heads",
        fn,
        [
            case("2 key/value heads for 4 query heads", 2, 2, 4, 3, 2),
            case("3 key/value heads for 6 query heads", 1, 3, 6, 2, 3),
            case("as many key/value heads as query heads", 1, 2, 2, 3, 2),
            case("one key/value head for 3 query heads", 2, 1, 3, 2, 2),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Lesson 05: masks


def check_card_causal_mask(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(t, s)``: the (t, s) boolean causal mask for t queries and s keys, aligned bottom-right:
    True where query i may attend to key j, j <= i + (s - t)."""

    def case(t: int, s: int) -> Case:
        mask = causal_mask(t, s)
        i, j = np.arange(t)[:, None], np.arange(s)[None, :]
        mistakes = (
            (causal_mask(t, s, align="top-left"), DECODING_TOP_LEFT),
            (j < i + s - t, DECODING_OFF_BY_ONE),
            (~mask, DECODING_BLOCKED_TRUE),
            (mask.T, DECODING_TRANSPOSED),
        )
        return Case(f"t = {t}, s = {s}", (t, s), mask, mistakes=mistakes, mask_words=_mask_words)

    return run_cases("causal mask", fn, [case(2, 5), case(3, 3), case(1, 4), case(4, 6)])


MASKED_AFTER = (
    "the weights are masked after the softmax, so they no longer sum to 1; set the blocked scores to -inf "
    "before it: np.where(mask, scores, -np.inf)"
)
MASKED_TIMES = (
    "the scores are multiplied by the mask, which gives a blocked key the score 0, not -inf; use "
    "np.where(mask, scores, -np.inf)"
)
MASKED_INVERTED = "the mask is inverted: here True means the query may attend to the key"
MASKED_IGNORED = "the mask is ignored; set the scores of blocked keys to -inf before the softmax"


def check_card_masked_softmax(fn: Callable[[Array, NDArray[np.bool_]], Any]) -> CheckResult:
    """Check ``fn(scores, mask)``: scores (..., T_q, T_k), mask broadcasting to them, True = may attend; the
    softmax over the keys with blocked scores set to -inf first (every query may attend to a key)."""
    rng = _rng(1501)

    def case(name: str, scores: Array, mask: NDArray[np.bool_], hint: str = "") -> Case:
        blocked = np.where(mask, scores, -np.inf)
        mistakes = (
            (softmax(scores) * mask, MASKED_AFTER),
            (softmax(scores * mask), MASKED_TIMES),
            (softmax(np.where(mask, -np.inf, scores)), MASKED_INVERTED),
            (softmax(scores), MASKED_IGNORED),
        )
        return Case(name, (scores, mask), softmax(blocked), mistakes=mistakes, nonfinite_hint=hint)

    some = np.array([[True, False, True, True], [False, True, False, False], [True, True, False, True]])
    lengths = padding_mask([2, 4], 4)[:, None, :]  # (2, 1, 4)
    return run_cases(
        "masked softmax",
        fn,
        [
            case("3 queries, 4 keys", rng.standard_normal((3, 4)), some),
            case("a causal mask, T = 4", rng.standard_normal((4, 4)), causal_mask(4)),
            case("a batch of 2 with a (2, 1, 4) padding mask", rng.standard_normal((2, 3, 4)), lengths),
            case("large scores, causal", 500 * rng.standard_normal((3, 3)), causal_mask(3), STABLE_HINT),
            # Above exp's overflow (709.8): an unstable softmax gives inf / inf = NaN.
            case(
                "scores near 1000, 3 queries, 4 keys",
                1000.0 + rng.standard_normal((3, 4)),
                some,
                STABLE_HINT,
            ),
        ],
    )


PADDING_INVERTED = "the mask is inverted; here True marks a real token"
PADDING_ONE_TOO_MANY = (
    "it counts one position too many: position j is real when j < lengths[b], not when j <= lengths[b]"
)


def check_card_padding_mask(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(lengths, t)``: the (B, t) boolean mask, True at the real tokens, j < lengths[b]."""

    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        b, j = index
        kind = ("a real token", "True") if expected else ("padding", "False")
        return f"position {j} of sequence {b} is {kind[0]} ({where} should be {kind[1]})"

    def case(lengths: list[int], t: int) -> Case:
        mask = padding_mask(lengths, t)
        mistakes = (
            (~mask, PADDING_INVERTED),
            (padding_mask(np.asarray(lengths) + 1, t), PADDING_ONE_TOO_MANY),
            (mask.T, PADDING_TRANSPOSED),
        )
        name = f"lengths {', '.join(map(str, lengths))}, t = {t}"
        return Case(name, (np.array(lengths), t), mask, mistakes=mistakes, mask_words=words)

    return run_cases("padding mask", fn, [case([2, 4, 3], 4), case([1], 3), case([3, 1], 5)])


# ----------------------------------------------------------------------------------------------------
# Lesson 06: three uses

CROSS_D_MODEL = "it matches scaling by 1/√d_model; scale by 1/√d_k, the width of the queries and keys"


def check_card_cross_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_dec, memory, w_q, w_k, w_v)``: single-head cross-attention without a mask, x_dec
    (T_dec, d_model), memory (T_enc, d_model); returns ``(output, weights)``, (T_dec, d_v), (T_dec, T_enc)."""
    rng = _rng(1601)

    def case(name: str, t_dec: int, t_enc: int, d_model: int, d_k: int, d_v: int) -> Case:
        x_dec, memory = rng.standard_normal((t_dec, d_model)), rng.standard_normal((t_enc, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) for d in (d_k, d_k, d_v))
        out, weights = scaled_dot_product_attention(x_dec @ w_q, memory @ w_k, memory @ w_v)
        mistakes = (
            (scaled_dot_product_attention(memory @ w_q, x_dec @ w_k, x_dec @ w_v)[0], ENCODER_QUERIES_WORDS),
            (scaled_dot_product_attention(x_dec @ w_q, x_dec @ w_k, x_dec @ w_v)[0], DECODER_KEYS_WORDS),
            (
                scaled_dot_product_attention(
                    x_dec @ w_q, memory @ w_k, memory @ w_v, scale=1 / math.sqrt(d_model)
                )[0],
                CROSS_D_MODEL,
            ),
            (
                scaled_dot_product_attention(memory @ w_q, memory @ w_k, memory @ w_v)[0],
                ENCODER_QUERIES_WORDS,
            ),
        )
        return Case(
            name, (x_dec, memory, w_q, w_k, w_v), out, weights, mistakes=mistakes, weights_required=True
        )

    return run_cases(
        "cross-attention",
        fn,
        [
            case("3 decoder positions, 5 encoder positions", 3, 5, 6, 2, 4),
            case("one decoder position", 1, 4, 4, 3, 2),
            case("6 decoder positions, 2 encoder positions", 6, 2, 8, 4, 3),
        ],
    )


USE_CROSS_CAUSAL = (
    "cross-attention gets a causal mask; the whole source is known before decoding starts, so every decoder "
    "position may attend to every encoder position"
)
USE_ENCODER_CAUSAL = (
    "the encoder's self-attention gets a causal mask; an encoder reads its whole input, both ways"
)
USE_DECODER_OPEN = (
    "the decoder's self-attention sees every position; it is causal: position i sees keys j <= i only"
)
USE_DECODER_UPPER = "the decoder's mask is the upper triangle, j >= i, the future; keep the lower one, j <= i"


def check_card_use_mask(fn: Callable[[str, int, int], Any]) -> CheckResult:
    """Check ``fn(use, t_q, t_k)``: the (t_q, t_k) boolean mask (True = may attend) of ``use``: "encoder"
    (everything), "decoder" (causal, t_q == t_k) or "cross" (everything)."""

    def case(use: str, t_q: int, t_k: int) -> Case:
        everything = np.ones((t_q, t_k), dtype=bool)
        lower = np.tri(t_q, t_k, dtype=bool)
        if use == "decoder":
            right = lower
            mistakes: Mistakes = (
                (everything, USE_DECODER_OPEN),
                (np.tri(t_q, t_k, dtype=bool).T, USE_DECODER_UPPER),
            )
        else:
            right = everything
            mistakes = ((lower, USE_CROSS_CAUSAL if use == "cross" else USE_ENCODER_CAUSAL),)
        name = f'"{use}", t_q = {t_q}, t_k = {t_k}'
        return Case(name, (use, t_q, t_k), right, mistakes=mistakes, mask_words=_mask_words)

    return run_cases(
        "mask of each use",
        fn,
        [
            case("encoder", 3, 3),
            case("decoder", 4, 4),
            case("cross", 3, 5),
            case("cross", 4, 4),
            case("decoder", 1, 1),
        ],
    )


DECODER_MASK_QUERY_AXIS = (
    "the padding is applied on the query axis; padding is a property of the keys: lengths[b] bounds j, "
    "the last axis, mask[:, None, :]"
)
DECODER_MASK_NO_CAUSAL = "the causal part is missing: query i sees keys j <= i that are real"
DECODER_MASK_NO_PADDING = (
    "the padding is missing: one (t, t) causal mask for all; block the keys j >= lengths[b] of each "
    "sequence, (B, t, t)"
)


def check_card_decoder_mask(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(lengths, t)``: the (B, t, t) mask of decoder self-attention over a right-padded batch, True
    where query i may attend to key j: j <= i and j < lengths[b]."""

    def case(lengths: list[int], t: int) -> Case:
        n = np.array(lengths)
        causal = causal_mask(t)
        keys = padding_mask(n, t)
        mistakes = (
            (causal[None] & keys[:, :, None], DECODER_MASK_QUERY_AXIS),
            (np.broadcast_to(keys[:, None, :], (len(n), t, t)), DECODER_MASK_NO_CAUSAL),
            (causal, DECODER_MASK_NO_PADDING),
        )
        name = f"lengths {', '.join(map(str, lengths))}, t = {t}"
        return Case(name, (n, t), causal[None] & keys[:, None, :], mistakes=mistakes, mask_words=_mask_words)

    return run_cases("decoder mask", fn, [case([2, 4], 4), case([3, 1, 5], 5), case([1], 1)])


# ----------------------------------------------------------------------------------------------------
# Lesson 07: LayerNorm, the pre-LN residual step, the feed-forward network

LN_UNBIASED = (
    "it uses the unbiased variance (divided by d - 1); LayerNorm divides by d (np.var's default, ddof=0)"
)
LN_WRONG_AXIS = (
    "it normalizes over the wrong axis; normalize each position over its d features, axis=-1, keepdims=True"
)


def _ln(x: Array, gamma: Any, beta: Any, eps: float, ddof: int = 0) -> Array:
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True, ddof=ddof)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta  # type: ignore[no-any-return]


def check_card_layer_norm(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps)``: LayerNorm over the last axis of x (..., d), biased variance, eps
    inside the square root, then ``* gamma + beta``, (d,) each."""
    rng = _rng(1702)

    def case(name: str, x: Array, eps: float = 1e-5) -> Case:
        d = x.shape[-1]
        gamma, beta = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        mistakes = [
            (x / np.sqrt(var + eps) * gamma + beta, LN_NO_MEAN),
            (_ln(x, beta, gamma, eps), LN_SWAPPED),
            ((x - mean) / (var + eps) * gamma + beta, LN_NO_SQRT),
            (_ln(x, gamma, beta, eps, ddof=1), LN_UNBIASED),
        ]
        if x.ndim == 2 and x.shape[0] > 1:
            wrong = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps) * gamma + beta
            mistakes.append((wrong, LN_WRONG_AXIS))
        return Case(name, (x, gamma, beta, eps), _ln(x, gamma, beta, eps), mistakes=tuple(mistakes))

    return run_cases(
        "layer norm",
        fn,
        [
            case("3 positions, d = 4", rng.standard_normal((3, 4)) * 2 + 1),
            case("a batch (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("one position, d = 6, eps = 0.1", rng.standard_normal((1, 6)), 0.1),
        ],
    )


PRE_LN_POST = (
    "it is the post-LN step, norm(x + sublayer(x)); pre-LN normalizes the sublayer's input only: "
    "x + sublayer(norm(x))"
)
PRE_LN_NO_RESIDUAL = "the residual is missing: add x, the block's input, to sublayer(norm(x))"
PRE_LN_NORMED_RESIDUAL = (
    "the residual carries norm(x); it carries x itself, unnormalized: x + sublayer(norm(x))"
)
PRE_LN_NO_NORM = "the norm is missing: the sublayer reads norm(x), x + sublayer(norm(x))"


def check_card_pre_ln_residual(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, sublayer, norm)``: one pre-LN residual step, x + sublayer(norm(x)); ``sublayer`` and
    ``norm`` are functions of one array."""
    rng = _rng(1703)

    def case(name: str, shape: tuple[int, ...]) -> Case:
        d = shape[-1]
        w, gamma, beta = rng.standard_normal((d, d)), 1.0 + rng.standard_normal(d), rng.standard_normal(d)

        def sublayer(z: Array) -> Array:
            return np.tanh(z @ w)

        def norm(z: Array) -> Array:
            return _ln(z, gamma, beta, 1e-5)

        x = rng.standard_normal(shape) * 3 + 2
        mistakes = (
            (norm(x + sublayer(x)), PRE_LN_POST),
            (sublayer(norm(x)), PRE_LN_NO_RESIDUAL),
            (norm(x) + sublayer(norm(x)), PRE_LN_NORMED_RESIDUAL),
            (x + sublayer(x), PRE_LN_NO_NORM),
        )
        return Case(name, (x, sublayer, norm), x + sublayer(norm(x)), mistakes=mistakes)

    return run_cases(
        "pre-LN residual step", fn, [case("4 positions, d = 3", (4, 3)), case("a batch (2, 3, 5)", (2, 3, 5))]
    )


FFN_NO_ACTIVATION = "the ReLU is missing: max(0, x @ w1 + b1) before the second layer"
FFN_RELU_TWICE = "the ReLU is applied after the second layer too; the output, h @ w2 + b2, may be negative"
FFN_BIAS_AFTER = "the ReLU is applied before b1 is added; add the bias first: np.maximum(0, x @ w1 + b1)"
FFN_NO_BIASES = "the biases are left out: x @ w1 + b1, then h @ w2 + b2"


def check_card_feed_forward(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w1, b1, w2, b2)``: the position-wise feed-forward network with ReLU,
    max(0, x @ w1 + b1) @ w2 + b2; x (..., d_model), w1 (d_model, d_ff), w2 (d_ff, d_model)."""
    rng = _rng(1704)

    def case(name: str, shape: tuple[int, ...], d_ff: int) -> Case:
        d = shape[-1]
        x = rng.standard_normal(shape)
        w1, b1 = rng.standard_normal((d, d_ff)), rng.standard_normal(d_ff)
        w2, b2 = rng.standard_normal((d_ff, d)), rng.standard_normal(d)
        hidden = np.maximum(0.0, x @ w1 + b1)
        mistakes = (
            ((x @ w1 + b1) @ w2 + b2, FFN_NO_ACTIVATION),
            (np.maximum(0.0, hidden @ w2 + b2), FFN_RELU_TWICE),
            ((np.maximum(0.0, x @ w1) + b1) @ w2 + b2, FFN_BIAS_AFTER),
            (np.maximum(0.0, x @ w1) @ w2, FFN_NO_BIASES),
        )
        return Case(name, (x, w1, b1, w2, b2), hidden @ w2 + b2, mistakes=mistakes)

    return run_cases(
        "feed-forward",
        fn,
        [
            case("3 positions, d_model = 4, d_ff = 8", (3, 4), 8),
            case("a batch (2, 3, 2), d_ff = 6", (2, 3, 2), 6),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Lesson 08: the online softmax, a sliding window, linear attention

ONLINE_RETURN = "return three arrays, (m, l, acc): the new running maximum, sum and accumulated output"
ONLINE_BLOCK_MAX = (
    "the new maximum is the block's own; it is the larger of the running maximum and the block's, "
    "np.maximum(m, s.max(axis=-1))"
)
ONLINE_INVERTED = (
    "the old sum and output are multiplied by exp(m_new - m); the factor is exp(m - m_new), at most 1, "
    "which moves them to the new reference point"
)


@dataclass(frozen=True)
class _PartsCase:
    """A case of a function that returns several arrays (``names``), each compared with ``expected``."""

    name: str
    args: tuple[Any, ...]
    names: tuple[str, ...]
    expected: tuple[Array, ...]
    mistakes: tuple[tuple[tuple[Array, ...], str], ...]
    wrong_count: str


def _check_parts(fn: Callable[..., Any], case: _PartsCase) -> None:
    result = call_learner(fn, case.args)
    if not isinstance(result, (tuple, list)) or len(result) != len(case.expected):
        raise Problem(case.wrong_count)
    arrays = [as_array(got, name) for got, name in zip(result, case.names, strict=True)]
    for array, expected, name in zip(arrays, case.expected, case.names, strict=True):
        if array.shape != expected.shape:
            raise Problem(
                f"{name} has shape {shape_text(array.shape)}, expected {shape_text(expected.shape)}"
            )
    for array, expected, name in zip(arrays, case.expected, case.names, strict=True):
        wrong = ~np.isclose(array, expected, rtol=1e-5, atol=1e-7)
        if not wrong.any():
            continue
        index = tuple(int(i) for i in np.argwhere(wrong)[0])
        sentence = (
            f"{name}[{', '.join(map(str, index))}] is {array[index]:.6g}, expected {expected[index]:.6g}"
        )
        for alternative, words in case.mistakes:
            if all(_same(a, b) for a, b in zip(arrays, alternative, strict=True)):
                raise Problem(f"{sentence}; {words}")
        raise Problem(sentence)


def _online_variant(m: Array, total: Array, acc: Array, s: Array, v: Array, bug: str) -> tuple[Array, ...]:
    m_new = s.max(axis=-1) if bug == "block max" else np.maximum(m, s.max(axis=-1))
    with np.errstate(all="ignore"):
        factor = np.exp(m_new - m) if bug == "inverted" else np.exp(m - m_new)
        p = np.exp(s - m_new[:, None])
        total_new = (total if bug == "sum" else total * factor) + p.sum(axis=-1)
        acc_new = (acc if bug == "acc" else acc * factor[:, None]) + p @ v
    return m_new, total_new, acc_new


def check_card_online_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(m, l, acc, s, v)``: one key block of the online softmax. m, l (n_q,) the running maximum
    and sum of exp(score - m), acc (n_q, d_v) the running Σ exp(score - m) v; s (n_q, c) the block's scaled
    scores, v (c, d_v) its values. Returns the new (m, l, acc)."""
    rng = _rng(1803)

    def case(name: str, m: Array, total: Array, acc: Array, s: Array, v: Array) -> _PartsCase:
        expected = online_softmax_update(m, total, acc, s, v)
        mistakes = tuple(
            (_online_variant(m, total, acc, s, v, bug), words)
            for bug, words in (
                ("sum", NO_SUM_RESCALE),
                ("acc", NO_ACC_RESCALE),
                ("block max", ONLINE_BLOCK_MAX),
                ("inverted", ONLINE_INVERTED),
            )
        )
        return _PartsCase(name, (m, total, acc, s, v), ("m", "l", "acc"), expected, mistakes, ONLINE_RETURN)

    # After a first block: the running state of 3 queries, then a block whose maximum is above it for some
    # queries and below it for others.
    s1, v1 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    m1, l1, acc1 = online_softmax_update(np.full(3, -np.inf), np.zeros(3), np.zeros((3, 2)), s1, v1)
    s2 = rng.standard_normal((3, 3)) + np.array([[2.0], [-3.0], [0.5]])
    first = case(
        "the first block (m = -inf, l = 0, acc = 0)",
        np.full(2, -np.inf),
        np.zeros(2),
        np.zeros((2, 3)),
        rng.standard_normal((2, 3)),
        rng.standard_normal((3, 3)),
    )
    return run_cases(
        "online softmax update",
        fn,
        [
            case(
                "3 queries, a block of 3 keys after a first block",
                m1,
                l1,
                acc1,
                s2,
                rng.standard_normal((3, 2)),
            ),
            first,
            case(
                "one query, one key, a larger maximum",
                np.array([1.0]),
                np.array([2.5]),
                np.array([[0.5, -1.0]]),
                np.array([[3.0]]),
                np.array([[2.0, 1.0]]),
            ),
        ],
        _check_parts,
    )


WINDOW_PLUS_ONE = "the window holds window + 1 keys, one too many: query i sees keys i - window < j <= i"
WINDOW_SYMMETRIC = (
    "the band is symmetric, so each query also sees the next keys, its future; keep only j <= i"
)
WINDOW_CAUSAL_ONLY = (
    "it is the plain causal mask: every past key is allowed; keep only the last `window` keys"
)
WINDOW_MINUS_ONE = (
    "the window holds window - 1 keys, one too few: query i sees itself and the window - 1 keys before it"
)


def check_card_sliding_window(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(n, window)``: the (n, n) causal sliding-window mask, True where i - window < j <= i."""

    def case(n: int, window: int) -> Case:
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        mistakes = (
            (sliding_window_mask(n, window + 1), WINDOW_PLUS_ONE),
            (np.abs(i - j) < window, WINDOW_SYMMETRIC),
            (j <= i, WINDOW_CAUSAL_ONLY),
            ((j <= i) & (j > i - window + 1), WINDOW_MINUS_ONE),
        )
        return Case(
            f"n = {n}, window = {window}",
            (n, window),
            sliding_window_mask(n, window),
            mistakes=mistakes,
            mask_words=_mask_words,
        )

    return run_cases("sliding-window mask", fn, [case(6, 3), case(5, 1), case(4, 4), case(7, 2)])


LINEAR_RAW = (
    "it uses q and k themselves; apply the feature map φ(x) = elu(x) + 1 to both first, so that every "
    "weight is positive"
)
LINEAR_UNNORMALISED = "the numerator is not divided by φ(q_i) · Σ_j φ(k_j), so the weights do not sum to 1"
LINEAR_ELU_ONLY = (
    "it uses elu(x) without the + 1, which can be negative; φ(x) = elu(x) + 1 is always positive"
)
LINEAR_SOFTMAX = (
    "it is softmax attention; linear attention replaces exp(q·k/√d) by φ(q)·φ(k) and never builds the "
    "(n, n) weights"
)
LINEAR_MATRIX = (
    "the values are right, but at its peak your function holds as much memory as the whole ({n_q}, {n_k}) "
    "matrix φ(q) φ(k)ᵀ would in float32, or more; linear attention never builds it: compute φ(k)ᵀ v, "
    "(d_k, d_v), and φ(k).sum(axis=0), (d_k,), once, then multiply φ(q) by them"
)


def check_card_linear_attention(fn: Callable[[Array, Array, Array], Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: non-causal linear attention with φ(x) = elu(x) + 1, out_i =
    φ(q_i) (Σ_j φ(k_j) v_jᵀ) / (φ(q_i) · Σ_j φ(k_j)); q (n_q, d_k), k (n_k, d_k), v (n_k, d_v). Without any
    (n_q, n_k) matrix: on 600 queries and 800 keys its peak memory (numpy's allocations, traced by
    tracemalloc) must stay below what that matrix needs in float32."""
    rng = _rng(1805)

    def plain(fq: Array, fk: Array, v: Array) -> Array:
        return fq @ (fk.T @ v) / (fq @ fk.sum(axis=0))[:, None]  # type: ignore[no-any-return]

    def case(name: str, n_q: int, n_k: int, d_k: int, d_v: int, *, memory: bool = False) -> Case:
        q, k, v = (
            rng.standard_normal((n_q, d_k)),
            rng.standard_normal((n_k, d_k)),
            rng.standard_normal((n_k, d_v)),
        )
        fq, fk = elu_feature_map(q), elu_feature_map(k)
        with np.errstate(all="ignore"):
            mistakes = (
                (plain(q, k, v), LINEAR_RAW),
                (fq @ (fk.T @ v), LINEAR_UNNORMALISED),
                (plain(fq - 1, fk - 1, v), LINEAR_ELU_ONLY),
                (scaled_dot_product_attention(q, k, v)[0], LINEAR_SOFTMAX),
            )
        return Case(
            name,
            (q, k, v),
            linear_attention(q, k, v),
            mistakes=mistakes,
            peak_limit=4 * n_q * n_k if memory else 0,  # an (n_q, n_k) matrix in float32 is this at least
            peak_words=LINEAR_MATRIX.format(n_q=n_q, n_k=n_k),
        )

    return run_cases(
        "linear attention",
        fn,
        [
            case("4 queries, 5 keys, d_k = 3, d_v = 2", 4, 5, 3, 2),
            case("one key", 2, 1, 2, 3),
            case("6 queries, 6 keys, d_k = 4, d_v = 4", 6, 6, 4, 4),
            case("600 queries, 800 keys, d_k = 4, d_v = 3", 600, 800, 4, 3, memory=True),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Lesson 09: the language-model loss, a bigram table, the learning-rate schedule

LM_NOT_SHIFTED = (
    "each position is scored on its own token; it predicts the next one: score logits[:-1] against tokens[1:]"
)
LM_WRONG_WAY = (
    "the shift goes the wrong way: position t predicts token t + 1, so pair logits[:-1] with tokens[1:]"
)
LM_NO_LOG_SOFTMAX = (
    "it uses the raw logits as log-probabilities; normalise them first: log softmax(logits) = logits - "
    "logsumexp(logits)"
)
LM_SUM = "it sums over the positions; the loss is their mean, in nats per token"


def _log_softmax(x: Array) -> Array:
    m = x.max(axis=-1, keepdims=True)
    out: Array = x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    return out


def _lm_loss(logits: Array, tokens: Array, bug: str = "") -> Array:
    scores = logits if bug == "raw" else _log_softmax(logits)
    if bug == "not shifted":
        picked = np.take_along_axis(scores, tokens[:, None], axis=-1)[:, 0]
    elif bug == "wrong way":
        picked = np.take_along_axis(scores[1:], tokens[:-1, None], axis=-1)[:, 0]
    else:
        picked = np.take_along_axis(scores[:-1], tokens[1:, None], axis=-1)[:, 0]
    return np.array(-picked.sum() if bug == "sum" else -picked.mean())


def check_card_lm_loss(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(logits, tokens)``: the next-token cross-entropy of one sequence, logits (T, V) and tokens
    (T,) int: the mean over t < T - 1 of -log softmax(logits[t])[tokens[t + 1]], a number."""
    rng = _rng(1901)

    def case(name: str, t: int, v: int, scale: float, shift: float = 0.0) -> Case:
        logits = shift + scale * rng.standard_normal((t, v))
        tokens = rng.integers(0, v, t)
        mistakes = tuple(
            (_lm_loss(logits, tokens, bug), words)
            for bug, words in (
                ("not shifted", LM_NOT_SHIFTED),
                ("wrong way", LM_WRONG_WAY),
                ("raw", LM_NO_LOG_SOFTMAX),
                ("sum", LM_SUM),
            )
        )
        expected = _lm_loss(logits, tokens)
        return Case(name, (logits, tokens), expected, mistakes=mistakes, nonfinite_hint=LSE_STABLE_HINT)

    return run_cases(
        "language-model loss",
        fn,
        [
            case("6 positions, a vocabulary of 5", 6, 5, 1.0),
            case("10 positions, a vocabulary of 8, large logits", 10, 8, 30.0),
            # Above exp's overflow (709.8): exp(logits) is inf, a naive log(softmax) NaN.
            case("5 positions, a vocabulary of 6, logits near 1000", 5, 6, 3.0, 1000.0),
        ],
    )


BIGRAM_TRANSPOSED = (
    "the table is transposed: row a must hold the counts of what follows a, counts[ids[:-1], ids[1:]]"
)
BIGRAM_NO_SMOOTHING = (
    "a pair never seen gets probability 0 (and a character never followed by anything a row of NaN): add 1 "
    "to every count before normalising"
)
BIGRAM_WHOLE_TABLE = (
    "it divides by the sum of the whole table; divide each row by its own sum, so that p(. | a) sums to 1"
)
BIGRAM_FANCY_INDEX = (
    "a pair that occurs more than once is counted once: counts[a, b] += 1 with index arrays adds 1 once per "
    "distinct pair; np.add.at(counts, (ids[:-1], ids[1:]), 1) counts every occurrence"
)


def _bigram(ids: Array, vocab: int, bug: str = "") -> Array:
    counts = np.zeros((vocab, vocab))
    if bug == "transposed":
        np.add.at(counts, (ids[1:], ids[:-1]), 1)
    elif bug == "fancy index":
        counts[ids[:-1], ids[1:]] += 1  # a repeated pair is counted once
    else:
        np.add.at(counts, (ids[:-1], ids[1:]), 1)
    smoothed = counts if bug == "no smoothing" else counts + 1
    with np.errstate(all="ignore"):
        table: Array = smoothed / (smoothed.sum() if bug == "whole" else smoothed.sum(axis=1, keepdims=True))
    return table


def check_card_bigram(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(ids, vocab)``: the (vocab, vocab) bigram table of the token sequence ``ids`` (n,) int,
    row a the probabilities of the token after a, from the counts with add-one smoothing."""
    rng = _rng(1902)

    def case(name: str, ids: Array, vocab: int) -> Case:
        mistakes = tuple(
            (_bigram(ids, vocab, bug), words)
            for bug, words in (
                ("transposed", BIGRAM_TRANSPOSED),
                ("no smoothing", BIGRAM_NO_SMOOTHING),
                ("whole", BIGRAM_WHOLE_TABLE),
                ("fancy index", BIGRAM_FANCY_INDEX),
            )
        )
        return Case(name, (ids, vocab), _bigram(ids, vocab), mistakes=mistakes)

    return run_cases(
        "bigram table",
        fn,
        [
            case("12 tokens of a vocabulary of 4", rng.integers(0, 4, 12), 4),
            case("'abab' as [0, 1, 0, 1], a vocabulary of 3 (token 2 never seen)", np.array([0, 1, 0, 1]), 3),
        ],
    )


LR_WARMUP_FROM_ZERO = (
    "the warm-up starts at 0 at step 0, a step that trains nothing; start at peak / warmup: "
    "peak * (step + 1) / warmup"
)
LR_NO_FLOOR = "the cosine decays to 0; it ends at floor * peak: peak * (floor + (1 - floor) * cosine term)"
LR_DECAY_FROM_ZERO = (
    "the cosine is measured from step 0; it starts after the warm-up: progress = (step - warmup) / (total - "
    "warmup)"
)


def _lr(step: int, peak: float, warmup: int, total: int, floor: float, bug: str = "") -> float:
    if step < warmup:
        return peak * (step if bug == "from zero" else step + 1) / warmup
    start = 0 if bug == "decay from zero" else warmup
    progress = min(1.0, (step - start) / max(1, total - start))
    low = 0.0 if bug == "no floor" else floor
    return peak * (low + (1 - low) * 0.5 * (1 + math.cos(math.pi * progress)))


def check_card_lr_schedule(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(step, peak, warmup, total, floor)``: a linear warm-up from peak / warmup (step 0) to peak
    (step warmup - 1), then a cosine decay from peak (step warmup) to floor * peak (step total and after).
    The learner's numbers for a range of steps are compared as one array."""

    def case(name: str, peak: float, warmup: int, total: int, floor: float) -> Case:
        steps = range(total + 2)

        def curve(bug: str = "") -> Array:
            return np.array([_lr(s, peak, warmup, total, floor, bug) for s in steps])

        mistakes = tuple(
            (curve(bug), words)
            for bug, words in (
                ("from zero", LR_WARMUP_FROM_ZERO),
                ("no floor", LR_NO_FLOOR),
                ("decay from zero", LR_DECAY_FROM_ZERO),
            )
        )
        return Case(name, (peak, warmup, total, floor), curve(), mistakes=mistakes)

    def over_steps(learner: Callable[..., Any]) -> Callable[..., Any]:
        def run(peak: float, warmup: int, total: int, floor: float) -> Any:
            return [learner(s, peak, warmup, total, floor) for s in range(total + 2)]

        return run

    return run_cases(
        "learning-rate schedule",
        over_steps(fn),
        [
            case("peak 1e-2, 4 warm-up steps, 12 in all, floor 0.1", 1e-2, 4, 12, 0.1),
            case("peak 3e-4, 10 warm-up steps, 30 in all, floor 0", 3e-4, 10, 30, 0.0),
        ],
    )
