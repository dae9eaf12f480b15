"""Checkers for lesson 04: splitting and merging heads, and multi-head attention."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import merge_heads, multi_head_attention, scaled_dot_product_attention, split_heads
from course.checkers._attention import scale_mistakes
from course.checkers._engine import Case, CheckResult, run_cases
from course.checkers._self_attention import TRANSPOSED_WORDS

__all__ = ["check_merge_heads", "check_multi_head", "check_split_heads"]


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
