"""Checkers for lesson 03: self-attention with learned projections, the sinusoidal positional encoding, a
permutation test and rotary position embeddings."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import self_attention, sinusoidal_positions
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
    "ROTARY_HALVES",
    "ROTARY_POSITIONS_IGNORED",
    "ROTARY_SINE_SIGN",
    "ROTARY_UNSCALED",
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


@dataclass(frozen=True)
class _PermutationCase:
    """One call ``fn(layer, x, perm)`` of a permutation test and the answer it should give."""

    name: str
    args: tuple[Any, ...]
    expected: bool


def _check_permutation_case(fn: Callable[..., Any], case: _PermutationCase) -> None:
    """Raise :class:`Problem` when ``fn`` on ``case`` does not return ``case.expected`` as a bool."""
    answer = from_torch(call_learner(fn, case.args), "the answer")
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
        hint = "; compare layer(x[perm]) with layer(x)[perm] using np.allclose" if case.expected else ""
        raise Problem(f"your function returned {bool(answer)}, expected {case.expected}{hint}")


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
    )


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
    and two that are not (self-attention after adding sinusoidal positions; a running sum over positions).
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

    def case(name: str, layer: Callable[[NDArray[Any]], NDArray[Any]], expected: bool) -> _PermutationCase:
        return _PermutationCase(name, (layer, x, perm), expected)

    return run_cases(
        "permutation test",
        fn,
        [
            case("self-attention", attend, True),
            case("the same projection at every position", project, True),
            case("self-attention after adding positions", attend_with_positions, False),
            case("a running sum over positions", running_sum, False),
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
