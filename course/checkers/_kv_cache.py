"""Checkers for lesson 05's exercise 3: one step of causal self-attention with a key/value cache that
takes several new tokens at once, :func:`check_cached_attention` (the reference is :func:`cached_attention`).
The lesson's masks and its other exercises are in :mod:`course.checkers._masks`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import causal_mask, scaled_dot_product_attention
from course.checkers._attention import scale_mistakes
from course.checkers._engine import (
    Case,
    CheckResult,
    Problem,
    as_array,
    call_learner,
    check_case,
    run_cases,
    shape_text,
)

__all__ = [
    "CACHE_ONLY_OLD",
    "CACHE_RETURN",
    "NEW_KEYS_ONLY",
    "NEW_NOT_CAUSAL",
    "NEW_OFF_BY_ONE",
    "NEW_TOP_LEFT",
    "cached_attention",
    "check_cached_attention",
]


def cached_attention(
    x_new: NDArray[Any],
    k_cache: NDArray[Any],
    v_cache: NDArray[Any],
    w_q: NDArray[Any],
    w_k: NDArray[Any],
    w_v: NDArray[Any],
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """One step of single-head causal self-attention with a key/value cache: ``x_new`` (t_new, d_model), the
    newest tokens, after ``k_cache`` (t_old, d_k) and ``v_cache`` (t_old, d_v) of the tokens before them.
    Returns the new tokens' outputs (t_new, d_v) and the grown cache, (t_old + t_new, d_k) and
    (t_old + t_new, d_v): the new queries see every cached key and the new keys up to their own, the
    bottom-right causal mask."""
    k_all = np.concatenate([k_cache, x_new @ w_k])  # (t_old + t_new, d_k)
    v_all = np.concatenate([v_cache, x_new @ w_v])
    t_new, t_all = x_new.shape[0], k_all.shape[0]
    out: NDArray[Any] = scaled_dot_product_attention(x_new @ w_q, k_all, v_all, causal_mask(t_new, t_all))[0]
    return out, k_all, v_all


CACHE_RETURN = (
    "return three arrays, (output, k_all, v_all): the new tokens' outputs and the grown cache, the cached "
    "keys and values followed by the new ones"
)
NEW_NOT_CAUSAL = (
    "the new queries see every new key, the later ones too: among themselves the new tokens are causal, "
    "query i sees key j when j <= i + t_old (the bottom-right mask, section 9)"
)
NEW_TOP_LEFT = (
    "it matches the causal mask aligned top-left, as `is_causal=True` builds it; the new queries are the "
    "last t_new positions: query i sees key j when j <= i + t_old (bottom-right, section 9)"
)
NEW_OFF_BY_ONE = (
    "each new query misses its own key, one too few: query i sees key j when j <= i + t_old, the bound "
    "included"
)
NEW_KEYS_ONLY = "the new queries attend only to the new keys; they see every cached key too"
CACHE_ONLY_OLD = "the new queries attend only to the cached keys; append the new keys and values first"


@dataclass(frozen=True)
class _CacheCase:
    name: str
    args: tuple[Any, ...]
    output: NDArray[Any]
    k_all: NDArray[Any]
    v_all: NDArray[Any]
    mistakes: tuple[tuple[NDArray[Any], str], ...]


def _cache_words(what: str, got: NDArray[Any], expected: NDArray[Any], args: tuple[Any, ...]) -> str:
    """What is wrong with the returned ``what`` ("k_all" or "v_all"), in one sentence."""
    x_new, cache = args[0], args[1] if what == "k_all" else args[2]
    w = args[4] if what == "k_all" else args[5]
    new = x_new @ w
    if got.shape == new.shape and np.allclose(got, new):
        return f"{what} holds only the new tokens' rows; keep the cache: the cached rows, then the new ones"
    if got.shape == expected.shape and np.allclose(got, np.concatenate([new, cache])):
        return f"{what} has the new rows first; append them after the cached rows, in sequence order"
    if (
        what == "k_all"
        and got.shape == expected.shape
        and np.allclose(got, np.concatenate([cache, x_new @ args[3]]))
    ):
        return "k_all appends the new queries; the cache keeps keys (x_new @ w_k), never queries"
    if got.shape != expected.shape:
        return f"{what} has shape {shape_text(got.shape)}, expected {shape_text(expected.shape)}"
    index = tuple(int(i) for i in np.argwhere(~np.isclose(got, expected))[0])
    return f"{what}[{', '.join(map(str, index))}] is {got[index]:.6g}, expected {expected[index]:.6g}"


def check_cached_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_new, k_cache, v_cache, w_q, w_k, w_v)``: one key/value cache step for several new tokens
    at once (:func:`cached_attention`); it returns ``(output, k_all, v_all)``."""
    rng = np.random.default_rng(5050)

    def case(name: str, t_old: int, t_new: int, d_model: int, d_k: int, d_v: int) -> _CacheCase:
        x_old, x_new = rng.standard_normal((t_old, d_model)), rng.standard_normal((t_new, d_model))
        w_q, w_k = rng.standard_normal((d_model, d_k)), rng.standard_normal((d_model, d_k))
        w_v = rng.standard_normal((d_model, d_v))
        args = (x_new, x_old @ w_k, x_old @ w_v, w_q, w_k, w_v)
        out, k_all, v_all = cached_attention(*args)
        q, t_all = x_new @ w_q, t_old + t_new

        def attend(keys: slice, mask: NDArray[np.bool_] | None, scale: float | None = None) -> NDArray[Any]:
            return scaled_dot_product_attention(q, k_all[keys], v_all[keys], mask, scale=scale)[0]

        bottom_right = causal_mask(t_new, t_all)
        own_key_missed = np.arange(t_all)[None, :] < np.arange(t_new)[:, None] + t_old  # j < i + t_old
        mistakes = (
            (attend(slice(None), None), NEW_NOT_CAUSAL),
            (attend(slice(None), causal_mask(t_new, t_all, align="top-left")), NEW_TOP_LEFT),
            (attend(slice(None), own_key_missed), NEW_OFF_BY_ONE),
            (attend(slice(t_old, None), causal_mask(t_new)), NEW_KEYS_ONLY),
            *(((attend(slice(0, t_old), None), CACHE_ONLY_OLD),) if t_old else ()),
            *scale_mistakes(
                lambda scale: attend(slice(None), bottom_right, scale),
                1 / math.sqrt(d_k),
                [(1 / math.sqrt(d_model), "scaling by 1/√d_model"), (1.0, "attention without scaling")],
                "; scale by 1/√d_k",
            ),
        )
        return _CacheCase(name, args, out, k_all, v_all, tuple(mistakes))

    def check(fn: Callable[..., Any], case: _CacheCase) -> None:
        result = call_learner(fn, case.args)
        if not isinstance(result, tuple) or len(result) != 3:
            raise Problem(CACHE_RETURN)

        @functools.wraps(fn)
        def output_of(*args: Any) -> Any:
            return fn(*args)[0]

        check_case(output_of, Case(case.name, case.args, case.output, mistakes=case.mistakes))
        for what, got, expected in (("k_all", result[1], case.k_all), ("v_all", result[2], case.v_all)):
            array = as_array(got, what)
            if array.shape != expected.shape or not np.allclose(array, expected):
                raise Problem(_cache_words(what, array.astype(np.float64), expected, case.args))

    return run_cases(
        "cached attention",
        fn,
        [
            case("3 cached tokens, 2 new ones", 3, 2, 6, 4, 3),
            case("an empty cache, 4 new tokens (the prompt)", 0, 4, 5, 3, 2),
            case("5 cached tokens, 1 new one (one decoding step)", 5, 1, 4, 2, 2),
            case("2 cached tokens, 3 new ones, d_k = 1", 2, 3, 4, 1, 3),
        ],
        check,
    )
