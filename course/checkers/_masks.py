"""Checkers for lesson 05: causal and padding masks, and masked attention."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import causal_mask, padding_mask
from course.checkers._attention import attention_case
from course.checkers._engine import Case, CheckResult, run_cases
from course.checkers._softmax import STABLE_HINT

__all__ = [
    "DECODING_BLOCKED_TRUE",
    "DECODING_OFF_BY_ONE",
    "DECODING_TOP_LEFT",
    "DECODING_TRANSPOSED",
    "PADDING_TRANSPOSED",
    "check_causal_mask",
    "check_decoding_mask",
    "check_masked_attention",
    "check_padding_mask",
]


def check_masked_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, mask)``: scaled dot-product attention where ``mask``, broadcasting to
    (..., T_q, T_k), is True where a query may attend to a key. A query that may attend to no key must get
    zero weights and a zero output. ``fn`` returns the output, or ``(output, weights)``.
    """
    rng = np.random.default_rng(303)

    def r(*shape: int) -> NDArray[np.float64]:
        return rng.standard_normal(shape)

    arbitrary = np.array([[True, False, True, False], [False, True, True, True], [True, False, False, False]])
    fully = np.array([[True, False, False], [False, False, False], [True, True, True]])
    lengths = padding_mask([3, 5], 5)[:, None, :]  # (2, 1, 5)
    return run_cases(
        "masked attention",
        fn,
        [
            attention_case("causal mask, T = 4", r(4, 4), r(4, 4), r(4, 4), causal_mask(4)),
            attention_case("causal mask, T = 1", r(1, 4), r(1, 4), r(1, 4), causal_mask(1)),
            attention_case("an arbitrary mask, 3 queries, 4 keys", r(3, 2), r(4, 2), r(4, 3), arbitrary),
            attention_case(
                "padding mask, batch of 2, lengths 3 and 5", r(2, 5, 4), r(2, 5, 4), r(2, 5, 4), lengths
            ),
            attention_case("d_k = 1, causal mask", r(3, 1), r(3, 1), r(3, 2), causal_mask(3)),
            attention_case(
                "batch axes (2, 3), causal mask", r(2, 3, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8), causal_mask(4)
            ),
            attention_case(
                "large scores, causal mask",
                30 * r(3, 16),
                30 * r(3, 16),
                r(3, 16),
                causal_mask(3),
                STABLE_HINT,
            ),
            attention_case("a fully masked row (query 1)", r(3, 4), r(3, 4), r(3, 4), fully),
        ],
    )


def _causal_words(index: tuple[int, ...], expected: bool, where: str) -> str:
    i, j = index[-2:]
    if expected:
        return f"query {i} is blocked from key {j}, which it may see ({where} should be True)"
    return f"query {i} may attend to key {j}, a future position ({where} should be False)"


def check_causal_mask(fn: Callable[[int], Any]) -> CheckResult:
    """Check ``fn(t)``: a (t, t) boolean mask, True where query i may attend to key j, that is j <= i."""

    def case(t: int) -> Case:
        mask = causal_mask(t)
        mistakes = (
            (
                ~mask,
                "the mask is inverted (True = blocked is nn.MultiheadAttention's convention); "
                "here True means may attend",
            ),
            (np.tri(t, k=-1, dtype=bool), "it leaves out the diagonal; each position may attend to itself"),
            (
                np.triu(np.ones((t, t), dtype=bool)),
                "it is the upper triangle, j >= i: each query sees the future; keep the lower one, j <= i",
            ),
        )
        return Case(f"T = {t}", (t,), mask, mistakes=mistakes, mask_words=_causal_words)

    return run_cases("causal mask", fn, [case(4), case(1), case(2)])


PADDING_TRANSPOSED = (
    "the mask is transposed: it has one row per sequence and one column per position, (B, t), True where "
    "j < lengths[b]"
)


def check_padding_mask(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(lengths, t)``: a (B, t) boolean mask, True at the real tokens, position j < lengths[b]."""

    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        b, j = index
        kind = ("a real token", "True") if expected else ("padding", "False")
        return f"position {j} of sequence {b} is {kind[0]} ({where} should be {kind[1]})"

    def case(name: str, lengths: list[int], t: int) -> Case:
        mask = padding_mask(lengths, t)
        mistakes = (
            (~mask, "the mask is inverted; here True marks a real token"),
            (
                padding_mask(np.asarray(lengths) + 1, t),
                "it counts one position too many: position j is real when j < lengths[b], not when "
                "j <= lengths[b]",
            ),
            (mask.T, PADDING_TRANSPOSED),
        )
        return Case(name, (np.array(lengths), t), mask, mistakes=mistakes, mask_words=words)

    return run_cases(
        "padding mask",
        fn,
        [
            case("lengths 2 and 4, t = 4", [2, 4], 4),
            case("one sequence of length 1, t = 3", [1], 3),
            case("lengths 3, 1 and 5, t = 5", [3, 1, 5], 5),
        ],
    )


DECODING_TOP_LEFT = (
    "it is aligned top-left, j <= i, as `is_causal=True` builds it: the queries are the last t_q "
    "positions, so query i may see keys j <= i + (t_k - t_q)"
)
DECODING_OFF_BY_ONE = (
    "each query misses its own key, one too few: query i may see keys j <= i + (t_k - t_q), the bound "
    "included"
)
DECODING_TRANSPOSED = (
    "the mask is transposed: rows are the t_q queries and columns the t_k keys, shape (t_q, t_k)"
)
DECODING_BLOCKED_TRUE = (
    "the mask is inverted (True = blocked is nn.MultiheadAttention's convention); here True means may attend"
)


def _decoding_words(offset: int) -> Callable[[tuple[int, ...], bool, str], str]:
    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        i, j = index[-2:]
        position = i + offset
        if expected:
            return (
                f"query {i} (sequence position {position}) is blocked from key {j}, which it may see "
                f"({where} should be True)"
            )
        return (
            f"query {i} (sequence position {position}) may attend to key {j}, a future position "
            f"({where} should be False)"
        )

    return words


def check_decoding_mask(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(t_q, t_k)``: the (t_q, t_k) boolean causal mask aligned bottom-right, True where query i may
    attend to key j, that is j <= i + (t_k - t_q): the t_q queries are the last t_q of the t_k positions (the
    decoding case, t_k - t_q of them cached). Equal to torch's ``causal_lower_right(t_q, t_k)``."""

    def case(t_q: int, t_k: int) -> Case:
        mask = causal_mask(t_q, t_k)  # (t_q, t_k), bottom-right
        i, j = np.arange(t_q)[:, None], np.arange(t_k)[None, :]
        offset = t_k - t_q
        mistakes = (
            (causal_mask(t_q, t_k, align="top-left"), DECODING_TOP_LEFT),
            (j < i + offset, DECODING_OFF_BY_ONE),
            (mask.T, DECODING_TRANSPOSED),
            (~mask, DECODING_BLOCKED_TRUE),
        )
        return Case(
            f"t_q = {t_q}, t_k = {t_k}",
            (t_q, t_k),
            mask,
            mistakes=mistakes,
            mask_words=_decoding_words(offset),
        )

    return run_cases("decoding mask", fn, [case(2, 5), case(1, 4), case(3, 3), case(4, 7)])
