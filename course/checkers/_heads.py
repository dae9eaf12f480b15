"""Checkers for lesson 04: splitting and merging heads, multi-head attention, and grouped-query attention."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import merge_heads, multi_head_attention, scaled_dot_product_attention, split_heads
from course.checkers._attention import scale_mistakes
from course.checkers._engine import Case, CheckResult, Problem, call_learner, check_case, run_cases
from course.checkers._self_attention import TRANSPOSED_WORDS
from course.grouped import grouped_query_attention

__all__ = [
    "GQA_AVERAGED",
    "GQA_D_MODEL_SCALE",
    "GQA_NOT_CAUGHT",
    "GQA_TILED",
    "check_grouped_query",
    "check_merge_heads",
    "check_multi_head",
    "check_split_heads",
]


def check_split_heads(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(x, n_heads)``: (B, T, d_model) -> (B, h, T, d_head), head i holding features i*d_head on."""

    def case(name: str, b: int, t: int, d: int, h: int) -> Case:
        x = np.arange(b * t * d, dtype=np.float64).reshape(b, t, d)
        mistakes = (
            (
                x.reshape(b, h, t, d // h),
                "it is x.reshape(B, h, T, d_head); reshape to (B, T, h, d_head), then swap axes 1 and 2",
            ),
            (
                x.reshape(b, t, d // h, h).transpose(0, 3, 1, 2),
                "it splits the features the wrong way round; reshape to (B, T, h, d_head)",
            ),
            (
                x.reshape(b, t, h, d // h),
                "it is x.reshape(B, T, h, d_head); now swap axes 1 and 2, to put the heads before the "
                "positions",
            ),
            (
                x.reshape(b, t, h, d // h).transpose(0, 2, 3, 1),
                "it is (B, h, d_head, T), with the last two axes swapped too; use .transpose(0, 2, 1, 3)",
            ),
        )
        return Case(name, (x, h), split_heads(x, h), mistakes=mistakes)

    return run_cases(
        "split_heads",
        fn,
        [
            case("B = 1, T = 2, d_model = 4, 2 heads", 1, 2, 4, 2),
            case("B = 2, T = 3, d_model = 6, 3 heads", 2, 3, 6, 3),
            case("one head", 2, 3, 4, 1),
            case("a length-1 sequence", 2, 1, 6, 2),
            case("d_head = 1", 1, 3, 4, 4),
        ],
    )


def check_merge_heads(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: (B, h, T, d_head) -> (B, T, h*d_head), the inverse of split_heads."""

    def case(name: str, b: int, h: int, t: int, d_head: int) -> Case:
        x = np.arange(b * h * t * d_head, dtype=np.float64).reshape(b, h, t, d_head)
        mistakes = (
            (x.reshape(b, t, h * d_head), "it is x.reshape(B, T, h*d_head); swap axes 1 and 2 first"),
            (
                x.swapaxes(1, 2),
                "it is (B, T, h, d_head): the axes are swapped; now reshape to (B, T, h*d_head)",
            ),
            (
                np.concatenate(list(np.moveaxis(x, 1, 0)), axis=1),
                "it puts the heads one after another along the positions; put them side by side along the "
                "features: swap axes 1 and 2, then reshape to (B, T, h*d_head)",
            ),
        )
        return Case(name, (x,), merge_heads(x), mistakes=mistakes)

    return run_cases(
        "merge_heads",
        fn,
        [
            case("B = 1, 2 heads, T = 2, d_head = 2", 1, 2, 2, 2),
            case("B = 2, 3 heads, T = 4, d_head = 2", 2, 3, 4, 2),
            case("one head", 2, 1, 3, 4),
            case("a length-1 sequence", 2, 2, 1, 3),
            case("d_head = 1", 1, 4, 3, 1),
        ],
    )


def check_multi_head(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads)``: multi-head attention, no biases, no mask.

    ``x_q`` (B, T_q, d_model), ``x_kv`` (B, T_k, d_model), every ``w`` (d_model, d_model). ``fn`` returns the
    output (B, T_q, d_model), or ``(output, weights)`` with per-head weights (B, h, T_q, T_k).
    """
    rng = np.random.default_rng(505)

    def case(name: str, b: int, t_q: int, t_k: int, d: int, h: int) -> Case:
        x_q = rng.standard_normal((b, t_q, d))
        x_kv = x_q if t_k == t_q else rng.standard_normal((b, t_k, d))
        w_q, w_k, w_v, w_o = (rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(4))
        out, weights = multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, h)
        q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v
        split = (split_heads(q, h), split_heads(k, h), split_heads(v, h))  # (B, h, T, d_head) each
        heads = scaled_dot_product_attention(*split)[0]
        no_swap = scaled_dot_product_attention(*(a.reshape(b, h, -1, d // h) for a in (q, k, v)))[0]
        d_head = d // h
        mistakes = [
            (merge_heads(heads), "it matches leaving out the output projection W_O"),
            (
                no_swap.reshape(b, -1, d) @ w_o,
                "it matches reshaping to (B, h, T, d_head) without swapping the T and head axes",
            ),
            *scale_mistakes(
                lambda scale: merge_heads(scaled_dot_product_attention(*split, scale=scale)[0]) @ w_o,
                1 / math.sqrt(d_head),
                [
                    (1.0, "attention without scaling"),
                    (1 / math.sqrt(d), "scaling by 1/√d_model"),
                    (1 / d, "scaling by 1/d_model"),
                    (1 / d_head, "scaling by 1/d_head"),
                ],
                "; scale each head by 1/√d_head",
            ),
            (
                scaled_dot_product_attention(q, k, v)[0] @ w_o,
                "it matches a single head of full width; split into n_heads heads",
            ),
            (
                multi_head_attention(x_q, x_kv, w_q.T, w_k.T, w_v.T, w_o.T, h)[0],
                TRANSPOSED_WORDS,
            ),
            (
                weights,
                "these are the attention weights; return the output, or (output, weights)",
            ),
            (
                heads,
                "these are the heads' outputs; merge them to (B, T_q, d_model) and project with W_O",
            ),
        ]
        if t_k != t_q:
            mistakes.append(
                (
                    multi_head_attention(x_q, x_q, w_q, w_k, w_v, w_o, h)[0],
                    "it matches attending to x_q; the keys and values come from x_kv",
                )
            )
        return Case(name, (x_q, x_kv, w_q, w_k, w_v, w_o, h), out, weights, mistakes=tuple(mistakes))

    return run_cases(
        "multi-head attention",
        fn,
        [
            case("self-attention, T = 3, d_model = 4, 2 heads", 1, 3, 3, 4, 2),
            case("cross-attention, 2 queries, 5 keys", 2, 2, 5, 6, 3),
            case("one head", 1, 3, 3, 4, 1),
            case("a length-1 sequence", 2, 1, 1, 4, 2),
            case("d_head = 1", 1, 3, 3, 4, 4),
            case("a batch of 3, 4 heads", 3, 4, 4, 8, 4),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Grouped-query attention (section 6): the typical mistakes, named

GQA_TILED = (
    "it matches repeating the key/value heads in the wrong order (np.tile gives heads 0, 1, 0, 1, …); "
    "query head i shares key/value head i // (n_heads // n_kv_heads), so repeat each one in place: "
    "np.repeat(k, n_heads // n_kv_heads, axis=1), torch's repeat_interleave"
)
GQA_D_MODEL_SCALE = (
    "it matches scaling by 1/√d_model; each head scales by 1/√d_head, the width of its own queries and keys"
)
GQA_AVERAGED = (
    "it matches averaging the key/value heads into one; each group of n_heads // n_kv_heads query heads "
    "shares its own key/value head, unchanged"
)
GQA_NOT_CAUGHT = (
    "check `n_heads % n_kv_heads` first and raise a ValueError saying that n_kv_heads must divide n_heads"
)


def _gqa_variant(
    x: NDArray[Any],
    w_q: NDArray[Any],
    w_k: NDArray[Any],
    w_v: NDArray[Any],
    w_o: NDArray[Any],
    n_heads: int,
    n_kv_heads: int,
    *,
    bug: str,
) -> NDArray[Any]:
    """Grouped-query attention with one typical mistake: 'tile', 'd_model' or 'average'."""
    d_model = x.shape[-1]
    q = split_heads(x @ w_q, n_heads)  # (B, h, T, d_head)
    k, v = split_heads(x @ w_k, n_kv_heads), split_heads(x @ w_v, n_kv_heads)  # (B, h_kv, T, d_head)
    group = n_heads // n_kv_heads
    if bug == "tile":
        k, v = np.tile(k, (1, group, 1, 1)), np.tile(v, (1, group, 1, 1))  # heads 0, 1, …, 0, 1, …
    elif bug == "average":
        k, v = k.mean(axis=1, keepdims=True), v.mean(axis=1, keepdims=True)  # (B, 1, T, d_head), broadcast
    else:
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)  # (B, h, T, d_head)
    scale = 1 / math.sqrt(d_model) if bug == "d_model" else None
    heads = scaled_dot_product_attention(q, k, v, scale=scale)[0]  # (B, h, T, d_head)
    out: NDArray[Any] = merge_heads(heads) @ w_o  # (B, T, d_model)
    return out


@dataclass(frozen=True)
class _Indivisible:
    """A call whose n_kv_heads does not divide n_heads: the function must raise a ValueError that says so."""

    name: str
    args: tuple[Any, ...]


def _check_indivisible(fn: Callable[..., Any], case: _Indivisible) -> None:
    n_heads, n_kv_heads = case.args[-2], case.args[-1]
    try:
        call_learner(fn, case.args)
    except Problem as problem:
        sentence = str(problem)
        words = sentence.lower()
        refused = sentence.startswith("your function raised ValueError")
        if refused and any(word in words for word in ("divid", "multiple", "head")):
            return
        raise Problem(f"{sentence}; {GQA_NOT_CAUGHT}") from None
    raise Problem(
        f"n_kv_heads = {n_kv_heads} does not divide n_heads = {n_heads}, yet your function returned a "
        f"result; {GQA_NOT_CAUGHT}"
    )


def check_grouped_query(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, w_o, n_heads, n_kv_heads)``: grouped-query self-attention, no biases.

    ``x`` (B, T, d_model), ``w_q`` and ``w_o`` (d_model, d_model), ``w_k`` and ``w_v``
    (d_model, n_kv_heads·d_head). ``fn`` returns the output (B, T, d_model), or ``(output, weights)`` with
    per-query-head weights (B, h, T, T); it raises ValueError when n_kv_heads does not divide n_heads.
    """
    title = "grouped-query attention"
    rng = np.random.default_rng(404)

    def arguments(b: int, t: int, d: int, h: int, h_kv: int) -> tuple[Any, Any, Any, Any, Any, int, int]:
        d_kv = h_kv * (d // h)
        x = rng.standard_normal((b, t, d))
        w_q, w_o = (rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(2))
        w_k, w_v = (rng.standard_normal((d, d_kv)) / math.sqrt(d) for _ in range(2))
        return (x, w_q, w_k, w_v, w_o, h, h_kv)

    def case(name: str, b: int, t: int, d: int, h: int, h_kv: int) -> Case:
        args = arguments(b, t, d, h, h_kv)
        out, weights = grouped_query_attention(*args)
        mistakes = (
            (_gqa_variant(*args, bug="tile"), GQA_TILED),
            (_gqa_variant(*args, bug="d_model"), GQA_D_MODEL_SCALE),
            (_gqa_variant(*args, bug="average"), GQA_AVERAGED),
        )
        return Case(name, args, out, weights, mistakes=mistakes)

    cases: list[Case | _Indivisible] = [
        case("4 query heads, 2 key/value heads, T = 3, d_model = 8", 1, 3, 8, 4, 2),
        case("6 query heads, 3 key/value heads, a batch of 2", 2, 4, 12, 6, 3),
        case("multi-query: 4 query heads, 1 key/value head", 2, 3, 8, 4, 1),
        case("as many key/value heads as query heads", 1, 3, 8, 2, 2),
        case("a length-1 sequence", 2, 1, 8, 4, 2),
        case("d_head = 1, 4 query heads, 2 key/value heads", 1, 3, 4, 4, 2),
        _Indivisible("4 key/value heads for 6 query heads", arguments(1, 3, 12, 6, 4)),
    ]
    return run_cases(title, fn, cases, _check_grouped_case)


def _check_grouped_case(fn: Callable[..., Any], case: Case | _Indivisible) -> None:
    if isinstance(case, _Indivisible):
        _check_indivisible(fn, case)
    else:
        check_case(fn, case)
