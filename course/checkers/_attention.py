"""Checkers for lesson 02: attention on inputs stored channels first, the softmax's Jacobian, the gradient of
attention with respect to its queries, and the repaired attention of the find-the-bug exercise. The building
blocks of the attention checkers of later lessons live here too (``attention_case``, ``attention_mistakes``,
``scale_mistakes``), and ``check_attention`` (the plain matrix form) is the one the engine's tests use. The
lesson's code cards (``check_card_scaled_scores``, ``check_card_attention``, ``check_card_softmax_backward``)
close the module."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import scaled_dot_product_attention, softmax
from course.checkers._card_parts import Array
from course.checkers._engine import Case, CheckResult, run_cases
from course.checkers._softmax import STABLE_HINT

__all__ = [
    "BUG_REMAINS",
    "CF_OUTPUT_LAYOUT",
    "CF_WIDTH_FIX",
    "MATMUL_ERRORS",
    "QG_DIAGONAL_ONLY",
    "QG_DIVIDED_BY_D_K",
    "QG_KEY_GRADIENT",
    "QG_NO_JACOBIAN",
    "QG_QUERIES_NOT_KEYS",
    "QG_UNSCALED",
    "SCALED_AFTER",
    "attention_case",
    "attention_mistakes",
    "check_attention",
    "check_card_attention",
    "check_card_scaled_scores",
    "check_card_softmax_backward",
    "check_channels_first_attention",
    "check_fixed_attention",
    "check_query_gradient",
    "check_softmax_jacobian",
    "scale_mistakes",
]

MATMUL_ERRORS = ("matmul", "cannot be multiplied", "mismatch")  # numpy's and torch's shape errors
SCALED_AFTER = "it matches dividing the weights by √d_k after the softmax; scale the scores before it"
_TRANSPOSE_HINT = (
    "the scores are q @ kᵀ: swap the last two axes of k with np.swapaxes(k, -1, -2); k.T reverses every "
    "axis, batch axes too"
)


def scale_mistakes(
    attend: Callable[[float], NDArray[Any]], right: float, wrong: Sequence[tuple[float, str]], fix: str
) -> list[tuple[NDArray[Any], str]]:
    """Attention at each wrong scale, with the words for it (``wrong``: scale, 'scaling by 1/d_k'), then
    ``fix``. Scales equal to the right one for these shapes are left out; scales equal to each other share
    one explanation that names them all, so that no learner is told the wrong one."""
    groups: list[tuple[float, list[str]]] = []
    for scale, words in wrong:
        if math.isclose(scale, right):
            continue
        for known, names in groups:
            if math.isclose(known, scale):
                names.append(words)
                break
        else:
            groups.append((scale, [words]))
    return [
        (attend(scale), f"it matches {' or '.join(names)}{' (the same here)' if len(names) > 1 else ''}{fix}")
        for scale, names in groups
    ]


def attention_mistakes(
    q: NDArray[Any],
    k: NDArray[Any],
    v: NDArray[Any],
    mask: NDArray[Any] | None = None,
    more_scales: Sequence[tuple[float, str]] = (),
) -> tuple[tuple[NDArray[Any], str], ...]:
    """What typical wrong attention functions return on these inputs, with the words for each mistake;
    ``more_scales`` adds wrong scales to the usual two (none, 1/d_k)."""
    d_k = q.shape[-1]
    weights = scaled_dot_product_attention(q, k, v, mask)[1]
    mistakes = scale_mistakes(
        lambda scale: scaled_dot_product_attention(q, k, v, mask, scale=scale)[0],
        1 / math.sqrt(d_k),
        [(1.0, "attention without scaling"), (1 / d_k, "scaling by 1/d_k"), *more_scales],
        "; scale the scores by 1/√d_k",
    )
    mistakes.append(
        (weights, "these are the attention weights; return the output, weights @ v, or (output, weights)")
    )
    unscaled = scaled_dot_product_attention(q, k, v, mask, scale=1.0)[1]  # (..., T_q, T_k)
    mistakes.append(((unscaled / math.sqrt(d_k)) @ v, SCALED_AFTER))
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)  # (..., T_q, T_k)
    if mask is None and scores.shape[-1] == scores.shape[-2]:
        wrong_axis = softmax(scores, axis=-2) @ v
        mistakes.append(
            (wrong_axis, "it matches a softmax over the queries (axis -2); take it over the keys (last axis)")
        )
    if mask is not None:
        inverted = scaled_dot_product_attention(q, k, v, ~mask)[0]
        mistakes.append(
            (inverted, "it matches the mask inverted; here True means the query may attend to the key")
        )
        after = (softmax(scores) * mask) @ v
        mistakes.append(
            (after, "it matches masking after the softmax; set masked scores to -inf before the softmax")
        )
        mistakes.append(
            (
                scaled_dot_product_attention(q, k, v)[0],
                "it matches attention without the mask; set the scores of masked keys to -inf before the "
                "softmax",
            )
        )
        mistakes.append(
            (
                softmax(scores * mask) @ v,
                "it matches multiplying the scores by the mask, which gives a masked key the score 0, not "
                "-inf; use np.where(mask, scores, -np.inf)",
            )
        )
    return tuple(mistakes)


def attention_case(
    name: str,
    q: NDArray[Any],
    k: NDArray[Any],
    v: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    hint: str = "",
) -> Case:
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    allowed = None if mask is None else np.broadcast_to(mask, weights.shape)
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return Case(
        name,
        args,
        out,
        weights,
        allowed,
        2,
        attention_mistakes(q, k, v, mask),
        hint,
        error_hint=_TRANSPOSE_HINT,
        error_when=MATMUL_ERRORS,
    )


def check_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: scaled dot-product attention, softmax(q kᵀ / √d_k) v, with no mask.

    ``q`` (..., T_q, d_k), ``k`` (..., T_k, d_k), ``v`` (..., T_k, d_v). ``fn`` returns the output, or
    ``(output, weights)``.
    """
    rng = np.random.default_rng(202)

    def r(*shape: int) -> NDArray[np.float64]:
        return rng.standard_normal(shape)

    return run_cases(
        "attention",
        fn,
        [
            attention_case("3 positions, d_k = 4", r(3, 4), r(3, 4), r(3, 4)),
            attention_case("cross-attention: 2 queries, 5 keys, d_v = 3", r(2, 4), r(5, 4), r(5, 3)),
            attention_case("a length-1 sequence", r(1, 4), r(1, 4), r(1, 4)),
            attention_case("d_k = 1", r(4, 1), r(4, 1), r(4, 2)),
            attention_case("batch axes (2, 3)", r(2, 3, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8)),
            attention_case("large scores", 30 * r(3, 16), 30 * r(3, 16), r(3, 16), hint=STABLE_HINT),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The softmax's Jacobian (lesson 02)


def _softmax_jacobian(p: NDArray[Any]) -> NDArray[Any]:
    """J[..., i, j] = p_i (δ_ij − p_j), the Jacobian ∂p_i/∂s_j of p = softmax(s): (..., n) -> (..., n, n)."""
    jacobian: NDArray[Any] = p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])
    return jacobian


def check_softmax_jacobian(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(p)``: the Jacobian of the softmax from its output ``p`` (..., n), J_ij = p_i (δ_ij − p_j),
    of shape (..., n, n)."""
    rng = np.random.default_rng(31)

    def case(name: str, shape: tuple[int, ...], error_hint: str = "") -> Case:
        p = softmax(rng.standard_normal(shape))  # (..., n): weights, positive and summing to 1
        diagonal = p[..., :, None] * np.eye(shape[-1])  # (..., n, n): diag(p)
        mistakes = (
            (diagonal, "it matches diag(p) alone; subtract p_i p_j from every entry"),
            (
                -p[..., :, None] * p[..., None, :],
                "it matches −p_i p_j everywhere; the diagonal also gets p_i (the δ_ij term)",
            ),
            (
                p[..., :, None] * (np.eye(shape[-1]) - p[..., :, None]),
                "it matches p_i (δ_ij − p_i), both p's as columns; make the second one a row, "
                "p[..., None, :], so that entry (i, j) subtracts p_i p_j",
            ),
            (
                p * (1 - p),
                "it matches the diagonal p_i (1 − p_i) alone, as a vector; return the full (..., n, n) "
                "matrix, with −p_i p_j off the diagonal",
            ),
            (
                _softmax_jacobian(softmax(p)),
                "it matches the Jacobian at softmax(p); p is already the softmax's output, use it as it is",
            ),
        )
        return Case(name, (p,), _softmax_jacobian(p), mistakes=mistakes, error_hint=error_hint)

    return run_cases(
        "softmax_jacobian",
        fn,
        [
            case("p of shape (4,)", (4,)),
            case("a single weight, p of shape (1,)", (1,)),
            case(
                "a batch, p of shape (2, 3, 5)",
                (2, 3, 5),
                "p has batch axes here: n is p.shape[-1], and np.diag and np.outer take a single vector; "
                "build the matrices by broadcasting, with p[..., :, None] and p[..., None, :]",
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Find the bug (lesson 02): an attention function that reads d_k as len(q[0])

_WIDTH_FIX = "; d_k is the width of the queries and keys, the last axis: q.shape[-1]"
BUG_REMAINS = "it gives what the colleague's function gives: the bug remains"


def _fix_case(name: str, q: NDArray[Any], k: NDArray[Any], v: NDArray[Any]) -> Case:
    """Attention on ``q`` (..., T_q, d_k), ``k`` (..., T_k, d_k), ``v`` (..., T_k, d_v), with the wrong
    widths a learner may put under the root instead of d_k, each named by the expression that gives it."""
    out, weights = scaled_dot_product_attention(q, k, v)  # (..., T_q, d_v), (..., T_q, T_k)
    d_k = q.shape[-1]
    mistakes = scale_mistakes(
        lambda scale: scaled_dot_product_attention(q, k, v, scale=scale)[0],
        1 / math.sqrt(d_k),
        [
            (1 / math.sqrt(len(q)), "d_k = len(q)"),
            (1 / math.sqrt(q.shape[-2]), "d_k = q.shape[-2], the number of queries"),
            (1 / math.sqrt(k.shape[-2]), "d_k = k.shape[-2], the number of keys"),
            (1 / math.sqrt(v.shape[-1]), "d_k = v.shape[-1], the width of the values"),
            (1.0, "attention without scaling"),
            (1 / d_k, "scaling by 1/d_k"),
        ],
        _WIDTH_FIX,
    )
    if not math.isclose(len(q[0]), d_k):  # the colleague's function, unchanged, differs here
        bug_left = scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(len(q[0])))[0]
        mistakes.insert(0, (bug_left, BUG_REMAINS))
    mistakes.append(
        (weights, "these are the attention weights; return the output, weights @ v, or (output, weights)")
    )
    return Case(
        name,
        (q, k, v),
        out,
        weights,
        None,
        2,
        tuple(mistakes),
        error_hint=_TRANSPOSE_HINT,
        error_when=MATMUL_ERRORS,
    )


def check_fixed_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: the repaired buggy attention of lesson 02, softmax(q kᵀ / √d_k) v with d_k
    read from the last axis. ``q`` (..., T_q, d_k), ``k`` (..., T_k, d_k), ``v`` (..., T_k, d_v); ``fn``
    returns the output, or ``(output, weights)``. The colleague's function unchanged is told that the bug
    remains (not where it is); each wrong repair, a wrong width under the root, is named by the expression
    that gives it.
    """
    rng = np.random.default_rng(2002)

    def r(*shape: int) -> NDArray[np.float64]:
        return rng.standard_normal(shape)

    return run_cases(
        "fixed_attention",
        fn,
        [
            _fix_case("no batch axes: 5 queries, 6 keys, d_k = 4, d_v = 7", r(5, 4), r(6, 4), r(6, 7)),
            _fix_case(
                "batch axes (B, h) = (2, 3): 5 queries, 6 keys, d_k = 4, d_v = 7",
                r(2, 3, 5, 4),
                r(2, 3, 6, 4),
                r(2, 3, 6, 7),
            ),
            _fix_case(
                "batch axis B = 3: 2 queries, 5 keys, d_k = 6, d_v = 1", r(3, 2, 6), r(3, 5, 6), r(3, 5, 1)
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Attention in the channels-first layout (lesson 02, exercise 1)

CF_OUTPUT_LAYOUT = (
    "it is the output in the layout of the lesson, one row per query, (..., T_q, d_v); return it channels "
    "first, (..., d_v, T_q): swap its last two axes"
)
CF_WIDTH_FIX = "; in this layout d_k is the length of axis -2 of q and k, q.shape[-2]"
_CF_MATMUL_HINT = (
    "here the features run down axis -2: the scores are qᵀ k, np.swapaxes(q, -1, -2) @ k, of shape "
    "(..., T_q, T_k)"
)


def _channels_first(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any], **kwargs: Any) -> tuple[Any, Any]:
    """Attention on channels-first inputs: q (..., d_k, T_q), k (..., d_k, T_k), v (..., d_v, T_k); returns
    the output (..., d_v, T_q) and the weights (..., T_q, T_k)."""
    out, weights = scaled_dot_product_attention(*(np.swapaxes(a, -1, -2) for a in (q, k, v)), **kwargs)
    return np.swapaxes(out, -1, -2), weights


def check_channels_first_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: scaled dot-product attention on inputs stored channels first, features along
    axis -2: ``q`` (..., d_k, T_q), ``k`` (..., d_k, T_k), ``v`` (..., d_v, T_k). ``fn`` returns the output
    (..., d_v, T_q), or ``(output, weights)`` with the weights (..., T_q, T_k), one row per query."""
    rng = np.random.default_rng(203)

    def case(name: str, lead: tuple[int, ...], d_k: int, t_q: int, t_k: int, d_v: int) -> Case:
        q = rng.standard_normal((*lead, d_k, t_q))
        k = rng.standard_normal((*lead, d_k, t_k))
        v = rng.standard_normal((*lead, d_v, t_k))
        out, weights = _channels_first(q, k, v)
        mistakes = scale_mistakes(
            lambda scale: _channels_first(q, k, v, scale=scale)[0],
            1 / math.sqrt(d_k),
            [
                (1 / math.sqrt(t_q), "dividing by √T_q, the length of q's last axis"),
                (1.0, "attention without scaling"),
                (1 / d_k, "scaling by 1/d_k"),
            ],
            CF_WIDTH_FIX,
        )
        mistakes.append((np.swapaxes(out, -1, -2), CF_OUTPUT_LAYOUT))
        unscaled = _channels_first(q, k, v, scale=1.0)[1]  # (..., T_q, T_k)
        mistakes.append((v @ np.swapaxes(unscaled / math.sqrt(d_k), -1, -2), SCALED_AFTER))
        scores = np.swapaxes(q, -1, -2) @ k / math.sqrt(d_k)  # (..., T_q, T_k)
        if t_q > 1:
            over_queries = v @ np.swapaxes(softmax(scores, axis=-2), -1, -2)  # (..., d_v, T_q)
            mistakes.append(
                (
                    over_queries,
                    "it matches a softmax over the queries (axis -2 of the scores); take it over the keys",
                )
            )
        mistakes.append((weights, "these are the attention weights; return the output, or (output, weights)"))
        return Case(
            name,
            (q, k, v),
            out,
            weights,
            mistakes=tuple(mistakes),
            error_hint=_CF_MATMUL_HINT,
            error_when=MATMUL_ERRORS,
        )

    return run_cases(
        "channels-first attention",
        fn,
        [
            case("d_k = 3, 5 queries, 4 keys, d_v = 2", (), 3, 5, 4, 2),
            case("cross-attention: d_k = 4, 2 queries, 6 keys, d_v = 3", (), 4, 2, 6, 3),
            case("a single query", (), 6, 1, 5, 4),
            case("batch axes (B, h) = (2, 3): d_k = 4, 5 positions, d_v = 6", (2, 3), 4, 5, 5, 6),
            case("an image of 4 x 4 pixels: 16 positions, 8 channels", (1,), 8, 16, 16, 8),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The gradient of attention with respect to its queries (lesson 02, exercise 3)

QG_UNSCALED = (
    "the 1/√d_k of the scores is missing: s_ij = q_i·k_j / √d_k, so the scores change with q_i at the rate "
    "k_j / √d_k"
)
QG_DIVIDED_BY_D_K = "it divides by d_k; the scores carry the factor 1/√d_k once"
QG_NO_JACOBIAN = (
    "the gradient goes around the softmax: ∂L/∂s is the softmax's Jacobian times ∂L/∂p, not ∂L/∂p itself"
)
QG_DIAGONAL_ONLY = (
    "it keeps only the diagonal of the softmax's Jacobian, p_i ∂L/∂p_i; subtract p_i Σ_j p_j ∂L/∂p_j too "
    "(the −p_i p_j entries)"
)
QG_QUERIES_NOT_KEYS = (
    "it multiplies by the queries; the score q_i·k_j changes with q_i at the rate of k_j, so ∂L/∂q = "
    "(∂L/∂s) k / √d_k"
)
QG_KEY_GRADIENT = (
    "this has the keys' shape: it is the gradient with respect to the keys; the queries' gradient is "
    "(∂L/∂s) k / √d_k, shape (T_q, d_k)"
)
_QG_MATMUL_HINT = (
    "follow the shapes back: ∂L/∂p = grad_out @ vᵀ is (T_q, T_k), ∂L/∂s has the same shape, and "
    "∂L/∂q = ∂L/∂s @ k / √d_k is (T_q, d_k)"
)


def _score_gradient(p: NDArray[Any], dp: NDArray[Any]) -> NDArray[Any]:
    """∂L/∂s from ∂L/∂p through p = softmax(s), row by row: p ⊙ (∂L/∂p − Σ_j p_j ∂L/∂p_j)."""
    result: NDArray[Any] = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    return result


def check_query_gradient(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, grad_out)``: the gradient ∂L/∂q of L = Σ grad_out ⊙ attention(q, k, v), for
    ``q`` (T_q, d_k), ``k`` (T_k, d_k), ``v`` (T_k, d_v) and ``grad_out`` (T_q, d_v); shape (T_q, d_k)."""
    rng = np.random.default_rng(204)

    def case(name: str, t_q: int, t_k: int, d_k: int, d_v: int) -> Case:
        q, k = rng.standard_normal((t_q, d_k)), rng.standard_normal((t_k, d_k))
        v, grad_out = rng.standard_normal((t_k, d_v)), rng.standard_normal((t_q, d_v))
        root = math.sqrt(d_k)
        p = softmax(q @ k.T / root)  # (T_q, T_k)
        dp = grad_out @ v.T  # (T_q, T_k)
        ds = _score_gradient(p, dp)  # (T_q, T_k)
        mistakes = [
            (ds @ k, QG_UNSCALED),
            (ds @ k / d_k, QG_DIVIDED_BY_D_K),
            (dp @ k / root, QG_NO_JACOBIAN),
            ((p * dp) @ k / root, QG_DIAGONAL_ONLY),
            (ds.T @ q / root, QG_KEY_GRADIENT),
        ]
        if t_q == t_k:
            mistakes.append((ds @ q / root, QG_QUERIES_NOT_KEYS))
        return Case(
            name,
            (q, k, v, grad_out),
            ds @ k / root,
            mistakes=tuple(mistakes),
            error_hint=_QG_MATMUL_HINT,
            error_when=MATMUL_ERRORS,
        )

    return run_cases(
        "query gradient",
        fn,
        [
            case("2 queries, 3 keys, d_k = 4, d_v = 2", 2, 3, 4, 2),
            case("4 queries, 4 keys, d_k = 3, d_v = 3", 4, 4, 3, 3),
            case("a single key: its weight is always 1", 3, 1, 2, 2),
            case("a single query, 6 keys, d_k = 8, d_v = 5", 1, 6, 8, 5),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: scaled scores, attention, the gradient through the softmax

SCORES_UNSCALED = "the scores are not scaled; divide q @ kᵀ by √d_k"
SCORES_BY_D_K = "it divides by d_k; divide by its square root, √d_k"
SCORES_MULTIPLIED = "it multiplies by √d_k; divide by it"
SCORES_TRANSPOSE_HINT = (
    "swap the last two axes of k with np.swapaxes(k, -1, -2); k.T reverses every axis, batch axes too"
)


def check_card_scaled_scores(fn: Callable[[Array, Array], Any]) -> CheckResult:
    """Check ``fn(q, k)``: q (..., T_q, d_k), k (..., T_k, d_k); returns q @ kᵀ / √d_k, (..., T_q, T_k)."""
    rng = np.random.default_rng(1201)

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
    rng = np.random.default_rng(1202)
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
    rng = np.random.default_rng(1207)

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
