"""Checkers for lesson 03: self-attention with a learned bias per offset, the sinusoidal positional encoding,
the gradient of a loss with respect to W_V written by hand, and rotary position embeddings; then the lesson's
code cards (``check_card_self_attention``, ``check_card_position_code``, ``check_card_learned_positions``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import scaled_dot_product_attention, self_attention, sinusoidal_positions, softmax
from course.checkers._attention import MATMUL_ERRORS
from course.checkers._card_parts import Array
from course.checkers._engine import (
    Case,
    CheckResult,
    run_cases,
)
from course.positions import apply_rotary, pair_frequencies

__all__ = [
    "PE_FROM_ONE",
    "PE_MULTIPLIED",
    "REL_AFTER_SOFTMAX",
    "REL_BEFORE_SCALING",
    "REL_IGNORED",
    "REL_NO_SHIFT",
    "REL_SIGN",
    "REL_UNSCALED",
    "ROTARY_HALF_EXPONENT",
    "ROTARY_HALVES",
    "ROTARY_POSITIONS_IGNORED",
    "ROTARY_SINE_SIGN",
    "ROTARY_UNSCALED",
    "VG_NOT_TRANSPOSED",
    "VG_NO_WEIGHTS",
    "VG_TRANSPOSED",
    "VG_VALUE_GRADIENT",
    "check_card_learned_positions",
    "check_card_position_code",
    "check_card_self_attention",
    "check_positional_encoding",
    "check_relative_attention",
    "check_rotary",
    "check_value_gradient",
    "positional_mistakes",
    "relative_offsets",
]


# ----------------------------------------------------------------------------------------------------
# Order and positions (lesson 03)


PE_MULTIPLIED = (
    "it matches multiplying the position by 10000^(2i/d_model); divide it: the angle is "
    "pos / 10000^(2i/d_model)"
)
PE_FROM_ONE = (
    "it matches positions counted from 1; the first position is 0, whose row holds sin 0 = 0 and cos 0 = 1 "
    "in every pair"
)


def positional_mistakes(t: int, d_model: int) -> tuple[tuple[NDArray[Any], str], ...]:
    """What typical wrong sinusoidal encodings return for (t, d_model), with the words for each mistake."""
    pos = np.arange(t, dtype=np.float64)[:, None]  # (t, 1)
    even = np.arange(d_model) % 2 == 0  # (d_model,)
    pairs = pos / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (t, d_model // 2): the right angles
    by_column = pos / 10000.0 ** (np.arange(d_model) / d_model)  # (t, d_model): exponent j/d_model
    by_pair = np.repeat(pos / 10000.0 ** (np.arange(d_model // 2) / d_model), 2, axis=1)  # exponent i/d_model
    right = sinusoidal_positions(t, d_model)
    return (
        (
            right.reshape(t, d_model // 2, 2)[..., ::-1].reshape(t, d_model),
            "it matches sine and cosine swapped; the sine goes in the even columns 2i, the cosine in the odd "
            "columns 2i + 1",
        ),
        (
            np.where(even, np.sin(by_column), np.cos(by_column)),
            "it matches the exponent j/d_model in column j; both columns of pair i use the same angle, "
            "pos / 10000^(2i/d_model)",
        ),
        (
            np.where(even, np.sin(by_pair), np.cos(by_pair)),
            "it matches the exponent i/d_model for pair i; use 2i/d_model",
        ),
        (
            np.concatenate([np.sin(pairs), np.cos(pairs)], axis=1),
            "it matches all the sines first, then all the cosines; interleave them, the sine of pair i in "
            "column 2i and its cosine in column 2i + 1",
        ),
        (_interleave(pos * 10000.0 ** (np.arange(0, d_model, 2) / d_model)), PE_MULTIPLIED),
        (_interleave(pairs + 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)), PE_FROM_ONE),
    )


def _interleave(angle: NDArray[Any]) -> NDArray[Any]:
    """The sine of each angle (t, d_model // 2) in column 2i and its cosine in column 2i + 1."""
    t, pairs = angle.shape
    out = np.empty((t, 2 * pairs))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out


def check_positional_encoding(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(t, d_model)``: the sinusoidal positional encoding for an even ``d_model``, shape
    (t, d_model), with sin(pos / 10000^(2i/d_model)) in column 2i and the cosine of that angle in column
    2i + 1 (:func:`course.attention.sinusoidal_positions`)."""

    def case(name: str, t: int, d_model: int) -> Case:
        expected = sinusoidal_positions(t, d_model)
        return Case(name, (t, d_model), expected, mistakes=positional_mistakes(t, d_model))

    return run_cases(
        "positional encoding",
        fn,
        [
            case("t = 4, d_model = 6", 4, 6),
            case("a single position, d_model = 2", 1, 2),
            case("t = 50, d_model = 16", 50, 16),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Rotary position embeddings (lesson 03, the transfer exercise)

ROTARY_HALVES = (
    "it matches pairing column i with column i + d/2 (the rotate-half layout of GPT-NeoX and Llama); this "
    "lesson pairs adjacent columns (2i, 2i + 1), like the sinusoidal encoding"
)
ROTARY_SINE_SIGN = (
    "it matches a rotation by minus the angle: the sine terms have the wrong signs; the new x_2i is "
    "x_2i cos - x_2i+1 sin, and the new x_2i+1 is x_2i sin + x_2i+1 cos"
)
ROTARY_UNSCALED = (
    "it matches every pair turned by the position itself; pair i turns by p / 10000^(2i/d), so multiply the "
    "position by the pair's frequency"
)
ROTARY_HALF_EXPONENT = (
    "it matches the frequency 1/10000^(i/d) for pair i; pair i turns at 1/10000^(2i/d), with 2i the pair's "
    "first column"
)
ROTARY_POSITIONS_IGNORED = (
    "it matches rotating row t by position t (np.arange(T)); use the positions you are given, which need not "
    "start at 0"
)


def _rotary_mistakes(x: NDArray[Any], positions: NDArray[Any]) -> tuple[tuple[NDArray[Any], str], ...]:
    """What typical wrong rotary embeddings return for ``x`` (..., T, d) at ``positions`` (T,)."""
    d = x.shape[-1]
    angle = positions[:, None] * pair_frequencies(d)[None, :]  # (T, d // 2)
    cos, sin = np.cos(angle), np.sin(angle)  # (T, d // 2)
    first, second = x[..., : d // 2], x[..., d // 2 :]  # (..., T, d // 2): the halves layout
    halves = np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)
    unscaled = np.empty_like(x)  # (..., T, d): every pair turned by the position itself
    pos_cos, pos_sin = np.cos(positions)[:, None], np.sin(positions)[:, None]  # (T, 1)
    unscaled[..., 0::2] = x[..., 0::2] * pos_cos - x[..., 1::2] * pos_sin
    unscaled[..., 1::2] = x[..., 0::2] * pos_sin + x[..., 1::2] * pos_cos
    return (
        (halves, ROTARY_HALVES),
        (apply_rotary(x, -positions), ROTARY_SINE_SIGN),
        (unscaled, ROTARY_UNSCALED),
        (apply_rotary(x, np.arange(x.shape[-2])), ROTARY_POSITIONS_IGNORED),
        (apply_rotary(x, positions, base=10000.0**0.5), ROTARY_HALF_EXPONENT),  # 10000^(i/d) = √10000^(2i/d)
    )


def check_rotary(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, positions)``: the rotary position embedding of :func:`course.positions.apply_rotary`.

    ``x`` (..., T, d) with ``d`` even, ``positions`` (T,) integers. Each adjacent pair ``(2i, 2i + 1)`` of row
    ``t`` is rotated by ``positions[t] / 10000^(2i/d)``. Names four mistakes: the rotate-half layout, the
    wrong sign of the sine, angles not scaled by the frequency, and positions taken from the row index.
    """
    rng = np.random.default_rng(303)

    def case(name: str, shape: tuple[int, ...], positions: list[int]) -> Case:
        x = rng.standard_normal(shape)
        pos = np.array(positions)
        return Case(name, (x, pos), apply_rotary(x, pos), mistakes=_rotary_mistakes(x, pos))

    return run_cases(
        "rotary embedding",
        fn,
        [
            case("T = 4, d = 8, positions 5 to 8", (4, 8), [5, 6, 7, 8]),
            case("positions 0 to 2, d = 4", (3, 4), [0, 1, 2]),
            case("a single token at position 9, d = 2", (1, 2), [9]),
            case("a batch of 2, T = 3, d = 6, positions 2, 40, 11", (2, 3, 6), [2, 40, 11]),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Self-attention with a learned bias per offset (lesson 03, exercise 1)

REL_SIGN = (
    "it adds the bias of offset i - j; key j is j - i places from query i (after it when j > i), so add "
    "bias[j - i + T - 1]"
)
REL_NO_SHIFT = (
    "it looks up bias[j - i], and a negative index counts from the end of the table; shift the offsets by "
    "T - 1: bias[j - i + T - 1]"
)
REL_BEFORE_SCALING = (
    "the bias is divided by √d_k along with the dot products; add it to the scores after the division"
)
REL_IGNORED = (
    "it is self-attention without the bias; add bias[j - i + T - 1] to the score of query i and key j"
)
REL_AFTER_SOFTMAX = "the bias is added to the weights after the softmax; add it to the scores before"
REL_UNSCALED = "the dot products are not divided by √d_k; divide them, then add the bias"
_REL_SHAPE_HINT = (
    "bias has 2T - 1 entries, one per offset j - i from -(T - 1) to T - 1: build the (T, T) table of offsets "
    "by broadcasting, np.arange(T)[None, :] - np.arange(T)[:, None], and index bias with it plus T - 1"
)


def _relative_attention(
    x: NDArray[Any],
    w_q: NDArray[Any],
    w_k: NDArray[Any],
    w_v: NDArray[Any],
    table: NDArray[Any],
    *,
    scale: float | None = None,
    before: bool = False,
    after: bool = False,
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Self-attention with ``table`` (T, T) added to the scores: after the scaling, before it, or to the
    weights after the softmax."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    dots = q @ np.swapaxes(k, -1, -2)  # (..., T, T)
    if after:
        weights = softmax(dots * scale) + table
    elif before:
        weights = softmax((dots + table) * scale)
    else:
        weights = softmax(dots * scale + table)
    return weights @ v, weights


def relative_offsets(t: int) -> NDArray[np.int_]:
    """The (T, T) table of offsets j - i from query i to key j."""
    offsets: NDArray[np.int_] = np.arange(t)[None, :] - np.arange(t)[:, None]
    return offsets


def check_relative_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, bias)``: self-attention whose score of query i and key j gets
    ``bias[j - i + T - 1]`` added after the division by √d_k. ``x`` (..., T, d_model), ``w_q`` and ``w_k``
    (d_model, d_k), ``w_v`` (d_model, d_v), ``bias`` (2T - 1,). ``fn`` returns the output (..., T, d_v), or
    ``(output, weights)``."""
    rng = np.random.default_rng(405)

    def case(name: str, lead: tuple[int, ...], t: int, d_model: int, d_k: int, d_v: int, bias: Any) -> Case:
        x = rng.standard_normal((*lead, t, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) / math.sqrt(d_model) for d in (d_k, d_k, d_v))
        bias = np.asarray(bias, dtype=np.float64)
        offsets = relative_offsets(t)  # (T, T): j - i
        table = bias[offsets + t - 1]
        out, weights = _relative_attention(x, w_q, w_k, w_v, table)
        mistakes = (
            (_relative_attention(x, w_q, w_k, w_v, table.T)[0], REL_SIGN),
            (_relative_attention(x, w_q, w_k, w_v, bias[offsets])[0], REL_NO_SHIFT),
            (_relative_attention(x, w_q, w_k, w_v, table, before=True)[0], REL_BEFORE_SCALING),
            (_relative_attention(x, w_q, w_k, w_v, 0 * table)[0], REL_IGNORED),
            (_relative_attention(x, w_q, w_k, w_v, table, after=True)[0], REL_AFTER_SOFTMAX),
            (_relative_attention(x, w_q, w_k, w_v, table, scale=1.0)[0], REL_UNSCALED),
            (weights, "these are the attention weights; return the output, or (output, weights)"),
        )
        return Case(
            name,
            (x, w_q, w_k, w_v, bias),
            out,
            weights,
            mistakes=mistakes,
            error_hint=_REL_SHAPE_HINT,
            error_when=("broadcast", "index", "shape"),
        )

    previous = np.zeros(7)
    previous[4 - 2] = 4.0  # offset -1: each query favours the key just before it
    return run_cases(
        "relative self-attention",
        fn,
        [
            case("T = 4, d_model = 6, d_k = 3, d_v = 2, a random bias", (), 4, 6, 3, 2, rng.normal(size=7)),
            case("a bias of 4 at offset -1 only: the previous token", (), 4, 6, 3, 3, previous),
            case(
                "a bias falling with the distance, -0.5 |j - i|",
                (),
                5,
                4,
                2,
                3,
                -0.5 * np.abs(np.arange(-4, 5)),
            ),
            case("a length-1 sequence", (), 1, 4, 3, 3, [2.0]),
            case("a batch of 2, T = 3", (2,), 3, 4, 4, 4, rng.normal(size=5)),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The gradient of a loss with respect to W_V, by hand (lesson 03, exercise 3)

VG_NO_WEIGHTS = (
    "it leaves out the attention weights: output row i is Σ_j a_ij v_j, so ∂L/∂V = Aᵀ grad_out, and "
    "∂L/∂W_V = xᵀ (Aᵀ grad_out)"
)
VG_NOT_TRANSPOSED = (
    "the weights are not transposed: value j reaches output i with the weight a_ij, so its gradient comes "
    "back as Σ_i a_ij grad_out_i, which is Aᵀ grad_out"
)
VG_VALUE_GRADIENT = (
    "this is ∂L/∂V, the gradient with respect to the values; W_V gets it through V = x W_V, so multiply by "
    "xᵀ on the left"
)
VG_TRANSPOSED = "it is transposed: ∂L/∂W_V has the shape of W_V, (d_model, d_v)"
_VG_MATMUL_HINT = (
    "follow the shapes: Aᵀ grad_out is (T, d_v), like V, and xᵀ (Aᵀ grad_out) is (d_model, d_v), like W_V"
)


def check_value_gradient(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, grad_out)``: ∂L/∂W_V for L = Σ grad_out ⊙ f(x), f the self-attention
    layer of lesson 03: ``x`` (T, d_model), ``w_q`` and ``w_k`` (d_model, d_k), ``w_v`` (d_model, d_v),
    ``grad_out`` (T, d_v); the result has shape (d_model, d_v), x.T @ weights.T @ grad_out."""
    rng = np.random.default_rng(406)

    def case(name: str, t: int, d_model: int, d_k: int, d_v: int, *, uniform: bool = False) -> Case:
        x = rng.standard_normal((t, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) / math.sqrt(d_model) for d in (d_k, d_k, d_v))
        if uniform:
            w_q = np.zeros_like(w_q)  # every score 0: every weight 1/T
        grad_out = rng.standard_normal((t, d_v))
        weights = self_attention(x, w_q, w_k, w_v)[1]  # (T, T)
        expected = x.T @ (weights.T @ grad_out)  # (d_model, d_v)
        mistakes = (
            (x.T @ grad_out, VG_NO_WEIGHTS),
            (x.T @ (weights @ grad_out), VG_NOT_TRANSPOSED),
            (weights.T @ grad_out, VG_VALUE_GRADIENT),
            (expected.T, VG_TRANSPOSED),
        )
        return Case(
            name,
            (x, w_q, w_k, w_v, grad_out),
            expected,
            mistakes=mistakes,
            error_hint=_VG_MATMUL_HINT,
            error_when=MATMUL_ERRORS,
        )

    return run_cases(
        "W_V gradient",
        fn,
        [
            case("T = 4, d_model = 5, d_k = 3, d_v = 2", 4, 5, 3, 2),
            case("T = d_model = d_v = 4", 4, 4, 2, 4),
            case("W_Q = 0: every weight 1/T", 3, 4, 2, 3, uniform=True),
            case("a length-1 sequence", 1, 3, 2, 2),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: a self-attention layer, one sinusoidal code, learned positions

SELF_D_MODEL = (
    "it matches scaling by 1/√d_model; scale by 1/√d_k, the width of the projected queries and keys"
)
SELF_UNSCALED = "it matches attention without scaling; scale the scores by 1/√d_k"
SELF_KEYS_ARE_QUERIES = "it matches keys computed with w_q; the keys are x @ w_k"
SELF_RAW_VALUES = "it averages the embeddings x themselves; the values are x @ w_v"


def check_card_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v)``: x (T, d_model), w_q and w_k (d_model, d_k), w_v (d_model, d_v);
    returns ``(output, weights)``, (T, d_v) and (T, T), scaled by 1/√d_k."""
    rng = np.random.default_rng(1301)

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
    rng = np.random.default_rng(1309)

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
