"""Checkers for lesson 04: splitting a fused query-key-value projection into heads, each head's term of the
output projection, and grouped-query attention; then the lesson's code cards (``check_card_split_heads``,
``check_card_merge_heads``, ``check_card_repeat_kv``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import merge_heads, scaled_dot_product_attention, split_heads
from course.checkers._attention import MATMUL_ERRORS
from course.checkers._card_parts import Array
from course.checkers._engine import (
    Case,
    CheckResult,
    Problem,
    call_learner,
    check_case,
    from_torch,
    run_cases,
)
from course.grouped import grouped_query_attention

__all__ = [
    "GQA_AVERAGED",
    "GQA_D_MODEL_SCALE",
    "GQA_NOT_CAUGHT",
    "GQA_TILED",
    "HC_AVERAGED",
    "HC_DIVIDED",
    "HC_INTERLEAVED",
    "HC_SUMMED",
    "HC_TRANSPOSED",
    "QKV_HEADS_FIRST",
    "QKV_HEADS_NOT_SPLIT",
    "QKV_NOT_MOVED",
    "QKV_NO_TRANSPOSE",
    "QKV_PARTS_NO_TRANSPOSE",
    "QKV_POSITIONS_BEFORE_HEADS",
    "QKV_WIDTH_HINT",
    "check_card_merge_heads",
    "check_card_repeat_kv",
    "check_card_split_heads",
    "check_grouped_query",
    "check_head_contributions",
    "check_split_qkv",
]


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


# ----------------------------------------------------------------------------------------------------
# Splitting a fused projection into queries, keys and values, by head (lesson 04, exercise 1)

QKV_HEADS_FIRST = (
    "it reads each head's query, key and value side by side; the fused projection holds all the queries "
    "first, then all the keys, then all the values: reshape to (B, T, 3, h, d_head)"
)
QKV_NO_TRANSPOSE = (
    "it reshapes straight to (3, B, h, T, d_head); reshape to (B, T, 3, h, d_head) first, then move the axes "
    "into place, .transpose(2, 0, 3, 1, 4)"
)
QKV_NOT_MOVED = (
    "it stops at the reshape, (B, T, 3, h, d_head), without the transpose; move the axes into place, "
    ".transpose(2, 0, 3, 1, 4): q, k and v first, then the heads before the positions, (3, B, h, T, d_head)"
)
QKV_PARTS_NO_TRANSPOSE = (
    "each of q, k and v is reshaped straight to (B, h, T, d_head), without the transpose, which mixes "
    "positions and features; reshape each to (B, T, h, d_head), then swap axes 1 and 2"
)
QKV_POSITIONS_BEFORE_HEADS = (
    "the positions come before the heads: each of q, k and v must be (B, h, T, d_head), with the heads "
    "before the positions"
)
QKV_HEADS_NOT_SPLIT = (
    "it splits the queries, keys and values apart but not into heads; cut each into h heads of d_head "
    "features too"
)
QKV_WIDTH_HINT = (
    "qkv is 3·d_model wide, so d_head = qkv.shape[-1] // (3 * n_heads); reshape to (B, T, 3, n_heads, d_head)"
)


def _stacked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, with a tuple or list of three arrays, (q, k, v), stacked into one array (3, ...)."""

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        result = fn(*args)
        if isinstance(result, (tuple, list)) and len(result) == 3:
            parts = [from_torch(part, "each of q, k and v") for part in result]
            if len({np.shape(part) for part in parts}) == 1:
                return np.stack(parts)
        return result

    return call


def check_split_qkv(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(qkv, n_heads)``: ``qkv`` (B, T, 3·d_model) is x @ [W_Q | W_K | W_V], every query, then
    every key, then every value; ``fn`` returns (q, k, v), each (B, h, T, d_head), or one array
    (3, B, h, T, d_head)."""

    def case(name: str, b: int, t: int, d: int, h: int) -> Case:
        qkv = np.arange(b * t * 3 * d, dtype=np.float64).reshape(b, t, 3 * d)
        d_head = d // h
        expected = qkv.reshape(b, t, 3, h, d_head).transpose(2, 0, 3, 1, 4)  # (3, B, h, T, d_head)
        mistakes = (
            (qkv.reshape(b, t, h, 3, d_head).transpose(3, 0, 2, 1, 4), QKV_HEADS_FIRST),
            (qkv.reshape(3, b, h, t, d_head), QKV_NO_TRANSPOSE),
            (qkv.reshape(b, t, 3, h, d_head).transpose(2, 0, 1, 3, 4), QKV_POSITIONS_BEFORE_HEADS),
            (qkv.reshape(b, t, 3, d).transpose(2, 0, 1, 3), QKV_HEADS_NOT_SPLIT),
            (qkv.reshape(b, t, 3, h, d_head), QKV_NOT_MOVED),
            (
                np.stack([part.reshape(b, h, t, d_head) for part in np.split(qkv, 3, axis=-1)]),
                QKV_PARTS_NO_TRANSPOSE,
            ),
        )
        return Case(
            name,
            (qkv, h),
            expected,
            mistakes=mistakes,
            error_hint=QKV_WIDTH_HINT,
            error_when=("reshape", "size"),
        )

    return run_cases(
        "split_qkv",
        _stacked(fn),
        [
            case("B = 1, T = 3, d_model = 4, 2 heads", 1, 3, 4, 2),
            case("B = 2, T = 4, d_model = 6, 3 heads", 2, 4, 6, 3),
            case("one head", 2, 3, 4, 1),
            case("a length-1 sequence", 2, 1, 6, 2),
            case("d_head = 1", 1, 3, 4, 4),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# What each head adds to the output (lesson 04, exercise 2)

HC_SUMMED = (
    "this is the layer's output, the sum of the heads' terms; return each head's term on its own, shape "
    "(B, h, T, d_model)"
)
HC_AVERAGED = (
    "this is the average of the heads' terms, summed over the heads and divided by h; return each head's "
    "term on its own, shape (B, h, T, d_model)"
)
HC_DIVIDED = "each term is divided by h; the output is the plain sum of the heads' terms, so keep them whole"
HC_INTERLEAVED = (
    "it cuts W_O with reshape(d_head, h, d_model), which deals its rows out to the heads in turn; head i "
    "owns rows i·d_head to (i+1)·d_head - 1, the rows it meets in the concatenation: "
    "w_o.reshape(h, d_head, d_model)"
)
HC_TRANSPOSED = (
    "it uses W_O transposed, its columns; head i meets rows i·d_head to (i+1)·d_head - 1 of W_O itself"
)
_HC_MATMUL_HINT = (
    "head i has d_head features: multiply it by the d_head rows of W_O it meets in the concatenation, "
    "w_o[i * d_head:(i + 1) * d_head], shape (d_head, d_model)"
)


def _contributions(heads: NDArray[Any], w_o: NDArray[Any]) -> NDArray[Any]:
    """Each head's term of Concat(heads) @ W_O: heads (B, h, T, d_head), w_o (h·d_head, d_model) ->
    (B, h, T, d_model)."""
    _, h, _, d_head = heads.shape
    blocks = w_o.reshape(h, d_head, w_o.shape[-1])  # (h, d_head, d_model): head i's rows of W_O
    result: NDArray[Any] = np.einsum("bhtd,hde->bhte", heads, blocks)
    return result


def check_head_contributions(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(heads, w_o)``: each head's term of the output projection, ``heads[:, i] @ w_o[i·d_head :
    (i+1)·d_head]``, for ``heads`` (B, h, T, d_head) and ``w_o`` (h·d_head, d_model); (B, h, T, d_model).
    Their sum over the heads is ``merge_heads(heads) @ w_o``."""
    rng = np.random.default_rng(506)

    def case(name: str, b: int, h: int, t: int, d_head: int, d_model: int) -> Case:
        heads = rng.standard_normal((b, h, t, d_head))
        w_o = rng.standard_normal((h * d_head, d_model))
        expected = _contributions(heads, w_o)
        interleaved = np.einsum(
            "bhtd,dhe->bhte", heads, w_o.reshape(d_head, h, d_model)
        )  # head i gets rows i, i + h, i + 2h, …
        mistakes = [
            (expected.sum(axis=1), HC_SUMMED),
            (expected.mean(axis=1), HC_AVERAGED),
            (expected / h, HC_DIVIDED),
            (interleaved, HC_INTERLEAVED),
        ]
        if w_o.shape[0] == w_o.shape[1]:  # only then do W_O's columns fit
            mistakes.append((_contributions(heads, w_o.T), HC_TRANSPOSED))
        return Case(
            name,
            (heads, w_o),
            expected,
            mistakes=tuple(mistakes),
            error_hint=_HC_MATMUL_HINT,
            error_when=MATMUL_ERRORS,
        )

    return run_cases(
        "head_contributions",
        fn,
        [
            case("B = 1, 2 heads, T = 3, d_head = 2, d_model = 4", 1, 2, 3, 2, 4),
            case("W_O not square: 3 heads of d_head = 2, d_model = 5", 2, 3, 2, 2, 5),
            case("one head", 1, 1, 3, 4, 4),
            case("a length-1 sequence", 2, 2, 1, 3, 6),
            case("d_head = 1, 4 heads", 1, 4, 3, 1, 4),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: split heads, merge heads, repeat the key/value heads

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
    rng = np.random.default_rng(1401)

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
    rng = np.random.default_rng(1402)

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
    rng = np.random.default_rng(1406)

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
