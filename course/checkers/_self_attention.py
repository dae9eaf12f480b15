"""Checkers for lesson 03: self-attention with learned projections, the sinusoidal positional encoding, a
permutation test and rotary position embeddings."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import scaled_dot_product_attention, self_attention, sinusoidal_positions
from course.checkers._attention import MATMUL_ERRORS, attention_mistakes
from course.checkers._engine import (
    Case,
    CheckResult,
    Problem,
    call_learner,
    from_torch,
    run_cases,
    shape_text,
)
from course.positions import apply_rotary, pair_frequencies

__all__ = [
    "PERMUTATION_DIFFERS",
    "PERMUTATION_ORDER_BLIND",
    "PE_FROM_ONE",
    "PE_MULTIPLIED",
    "ROTARY_HALF_EXPONENT",
    "ROTARY_HALVES",
    "ROTARY_POSITIONS_IGNORED",
    "ROTARY_SINE_SIGN",
    "ROTARY_UNSCALED",
    "SA_KEYS_AS_VALUES",
    "SA_UNPROJECTED_SCORES",
    "SA_UNPROJECTED_VALUES",
    "TRANSPOSED_WORDS",
    "check_permutation_test",
    "check_positional_encoding",
    "check_rotary",
    "check_self_attention",
]

_LAYOUT_HINT = (
    "each W is d_model × d: multiply on the right, x @ w_q; nn.Linear stores the transpose, d × d_model"
)
TRANSPOSED_WORDS = (
    "it matches multiplying by the transposed matrices, x @ W.T (nn.Linear's layout); multiply on the right, "
    "x @ W"
)
SA_UNPROJECTED_VALUES = "it matches using x itself as the values; project them too, V = x @ w_v"
SA_KEYS_AS_VALUES = "it matches projecting the values with W_K; V = x @ w_v"
SA_UNPROJECTED_SCORES = (
    "it matches scoring x against itself without W_Q and W_K; the scores compare Q = x @ w_q with K = x @ w_k"
)


def check_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v)``: self-attention with Q = x W_Q, K = x W_K, V = x W_V.

    ``x`` (..., T, d_model), ``w_q`` and ``w_k`` (d_model, d_k), ``w_v`` (d_model, d_v). ``fn`` returns the
    output, or ``(output, weights)``.
    """
    rng = np.random.default_rng(404)

    def case(name: str, lead: tuple[int, ...], t: int, d_model: int, d_k: int, d_v: int) -> Case:
        x = rng.standard_normal((*lead, t, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) for d in (d_k, d_k, d_v))
        out, weights = self_attention(x, w_q, w_k, w_v)
        q, k, v = x @ w_q, x @ w_k, x @ w_v
        mistakes = [
            (self_attention(x, w_k, w_q, w_v)[0], "it matches W_Q and W_K swapped"),
            (scaled_dot_product_attention(q, k, x)[0], SA_UNPROJECTED_VALUES),
            (scaled_dot_product_attention(q, k, k)[0], SA_KEYS_AS_VALUES),
            (scaled_dot_product_attention(x, x, v)[0], SA_UNPROJECTED_SCORES),
            (scaled_dot_product_attention(x, x, v, scale=1 / math.sqrt(d_k))[0], SA_UNPROJECTED_SCORES),
            *attention_mistakes(q, k, v, more_scales=[(1 / math.sqrt(d_model), "scaling by 1/√d_model")]),
        ]
        if d_model == d_k == d_v:  # with square matrices x @ W.T runs, and gives other numbers
            mistakes.append((self_attention(x, w_q.T, w_k.T, w_v.T)[0], TRANSPOSED_WORDS))
        return Case(
            name,
            (x, w_q, w_k, w_v),
            out,
            weights,
            mistakes=tuple(mistakes),
            error_hint=_LAYOUT_HINT,
            error_when=MATMUL_ERRORS,
        )

    return run_cases(
        "self-attention",
        fn,
        [
            case("T = 4, d_model = 6, d_k = d_v = 3", (), 4, 6, 3, 3),
            case("d_k = 2, d_v = 5", (), 3, 4, 2, 5),
            case("a length-1 sequence", (), 1, 4, 3, 3),
            case("d_k = 1", (), 4, 3, 1, 2),
            case("a batch of 2", (2,), 3, 4, 4, 4),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Order and positions (lesson 03)


PERMUTATION_DIFFERS = "layer(x[perm]) and layer(x)[perm] differ here; compare them with np.allclose"
PERMUTATION_ORDER_BLIND = (
    "reversing the positions keeps the same rows, in another order, so sums, sorted values or shapes cannot "
    "tell; compare layer(x[perm]) with layer(x)[perm] row by row, with np.allclose"
)


@dataclass(frozen=True)
class _PermutationCase:
    """Calls ``fn(layer, x, perm)`` of a permutation test, one per layer (of one kind), the answer they should
    give, and what to add when ``fn`` answers True instead of False."""

    name: str
    calls: tuple[tuple[Any, ...], ...]
    expected: bool
    hint: str


def _check_permutation_case(fn: Callable[..., Any], case: _PermutationCase) -> None:
    for args in case.calls:
        _check_permutation_call(fn, args, case)


def _check_permutation_call(fn: Callable[..., Any], args: tuple[Any, ...], case: _PermutationCase) -> None:
    """Raise :class:`Problem` when ``fn`` on ``args`` does not return ``case.expected`` as a bool."""
    answer = from_torch(call_learner(fn, args), "the answer")
    if isinstance(answer, np.ndarray) and answer.ndim == 0 and answer.dtype == np.bool_:
        answer = answer.item()  # a one-element answer from torch, (a == b).all(), is a bool too
    if answer is None:
        raise Problem("your function returned None instead of True or False (is a return statement missing?)")
    if isinstance(answer, np.ndarray) and answer.ndim > 0:
        raise Problem(
            f"your function returned an array of shape {shape_text(answer.shape)}, expected True or False "
            "(np.allclose compares whole arrays and gives one bool)"
        )
    if not isinstance(answer, (bool, np.bool_)):
        raise Problem(f"expected True or False, got {type(answer).__name__}")
    if bool(answer) != case.expected:
        hint = "compare layer(x[perm]) with layer(x)[perm] using np.allclose" if case.expected else case.hint
        raise Problem(f"your function returned {bool(answer)}, expected {case.expected}; {hint}")


PE_MULTIPLIED = (
    "it matches multiplying the position by 10000^(2i/d_model); divide it: the angle is "
    "pos / 10000^(2i/d_model)"
)
PE_FROM_ONE = (
    "it matches positions counted from 1; the first position is 0, whose row holds sin 0 = 0 and cos 0 = 1 "
    "in every pair"
)


def _positional_mistakes(t: int, d_model: int) -> tuple[tuple[NDArray[Any], str], ...]:
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
        return Case(name, (t, d_model), expected, mistakes=_positional_mistakes(t, d_model))

    return run_cases(
        "positional encoding",
        fn,
        [
            case("t = 4, d_model = 6", 4, 6),
            case("a single position, d_model = 2", 1, 2),
            case("t = 50, d_model = 16", 50, 16),
        ],
    )


def check_permutation_test(
    fn: Callable[[Callable[[NDArray[Any]], Any], NDArray[Any], NDArray[Any]], Any],
) -> CheckResult:
    """Check ``fn(layer, x, perm)``: True when permuting the rows of ``x`` permutes the rows of ``layer(x)``
    the same way, ``layer(x[perm])`` equal to ``layer(x)[perm]`` up to rounding, for this ``x`` and ``perm``;
    False otherwise. ``x`` (T, d), ``perm`` the indices 0 … T-1 in some order.

    The layers are two permutation-equivariant ones (self-attention; the same projection at every position)
    and three that are not (self-attention after adding sinusoidal positions; a running sum over positions;
    the positions reversed, which keeps every row, so that comparing sums or sorted values cannot tell).
    """
    rng = np.random.default_rng(606)
    t, d_model, d_k = 5, 8, 4
    x = rng.standard_normal((t, d_model))  # (T, d_model)
    w_q, w_k, w_v = (rng.standard_normal((d_model, d_k)) / math.sqrt(d_model) for _ in range(3))
    positions = sinusoidal_positions(t, d_model)  # (T, d_model)
    perm = np.array([1, 2, 0, 4, 3])  # a 3-cycle and a swap: its inverse is a different permutation

    def attend(z: NDArray[Any]) -> NDArray[Any]:
        return self_attention(z, w_q, w_k, w_v)[0]  # (T, d_k)

    def project(z: NDArray[Any]) -> NDArray[Any]:
        return np.tanh(z @ w_q)  # (T, d_k)

    def attend_with_positions(z: NDArray[Any]) -> NDArray[Any]:
        return attend(z + positions)  # the positions stay in place while the rows of z move

    def running_sum(z: NDArray[Any]) -> NDArray[Any]:
        return np.cumsum(z, axis=0)  # (T, d_model)

    def reverse(z: NDArray[Any]) -> NDArray[Any]:
        return z[::-1]  # (T, d_model): the same rows, another order

    def case(name: str, *layers: Callable[[NDArray[Any]], NDArray[Any]], expected: bool) -> _PermutationCase:
        calls = tuple((layer, x, perm) for layer in layers)
        hint = PERMUTATION_ORDER_BLIND if reverse in layers else PERMUTATION_DIFFERS
        return _PermutationCase(name, calls, expected, hint)

    return run_cases(
        "permutation test",
        fn,
        [
            case("self-attention", attend, expected=True),
            case("the same projection at every position", project, expected=True),
            case("self-attention after adding positions", attend_with_positions, expected=False),
            case(
                "a running sum over positions, and positions reversed", running_sum, reverse, expected=False
            ),
        ],
        check=_check_permutation_case,
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
