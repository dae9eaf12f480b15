"""Checkers for lesson 05: causal and padding masks, and masked attention.

The lesson's exercises are :func:`check_prefix_lm_mask` (a mask the lesson does not build),
:func:`check_left_padded_attention` (find the bugs) and ``check_cached_attention`` (a key/value cache step
for several new tokens at once, in :mod:`course.checkers._kv_cache`). :func:`check_causal_mask`,
:func:`check_padding_mask`, :func:`check_masked_attention` and :func:`check_decoding_mask` check what the
lesson builds in its sections, for code cards and practice; the lesson's code cards
(``check_card_causal_mask``, ``check_card_masked_softmax``, ``check_card_padding_mask``) close the module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import causal_mask, padding_mask, scaled_dot_product_attention, softmax
from course.checkers._attention import attention_case
from course.checkers._bugs import BugCase, run_bug_hunt
from course.checkers._card_parts import Array, mask_words
from course.checkers._engine import (
    Case,
    CheckResult,
    run_cases,
)
from course.checkers._softmax import STABLE_HINT

__all__ = [
    "DECODING_BLOCKED_TRUE",
    "DECODING_OFF_BY_ONE",
    "DECODING_TOP_LEFT",
    "DECODING_TRANSPOSED",
    "EMPTY_ROW_ITSELF",
    "PADDING_ONE_TOO_MANY",
    "PADDING_TRANSPOSED",
    "PREFIX_BIDIRECTIONAL",
    "PREFIX_CAUSAL",
    "PREFIX_INVERTED",
    "PREFIX_TOO_LONG",
    "PREFIX_TOO_SHORT",
    "PREFIX_TRANSPOSED",
    "PROMPT_SEES_FUTURE",
    "check_card_causal_mask",
    "check_card_masked_softmax",
    "check_card_padding_mask",
    "check_causal_mask",
    "check_decoding_mask",
    "check_left_padded_attention",
    "check_masked_attention",
    "check_padding_mask",
    "check_prefix_lm_mask",
    "left_padded_attention",
    "prefix_lm_mask",
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
PADDING_ONE_TOO_MANY = (
    "it counts one position too many: position j is real when j < lengths[b], not when j <= lengths[b]"
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
            (padding_mask(np.asarray(lengths) + 1, t), PADDING_ONE_TOO_MANY),
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


# ----------------------------------------------------------------------------------------------------
# Exercise 1: a prefix language model's mask


def prefix_lm_mask(t: int, prefix: int) -> NDArray[np.bool_]:
    """The (t, t) mask of a prefix language model (True = may attend): the first ``prefix`` positions, the
    prompt, see each other in both directions, as in an encoder; every later position sees itself and every
    position before it, as in a decoder. That is j <= max(i, prefix - 1)."""
    i, j = np.arange(t)[:, None], np.arange(t)[None, :]
    mask: NDArray[np.bool_] = j <= np.maximum(i, prefix - 1)
    return mask


PREFIX_CAUSAL = (
    "it is the plain causal mask: the prompt is read causally, as a decoder reads; in a prefix LM the "
    "prompt's positions see each other in both directions"
)
PROMPT_SEES_FUTURE = (
    "the prompt's positions may attend to the positions generated after the prompt, their future: the prompt "
    "sees the whole prompt and nothing after it"
)
PREFIX_BIDIRECTIONAL = (
    "every position sees every other, an encoder's mask: only the prompt is read both ways; after it, each "
    "position sees only itself and the positions before it"
)
PREFIX_TOO_LONG = "the prompt is one position too long: it is positions 0 to prefix - 1"
PREFIX_TOO_SHORT = "the prompt is one position too short: it is positions 0 to prefix - 1, all of them"
PREFIX_INVERTED = DECODING_BLOCKED_TRUE  # the causal mask's own mistake (causal-inverted), in its words
PREFIX_TRANSPOSED = (
    "the mask is transposed: row i is query i and column j is key j, so the generated queries are the "
    "lower rows"
)


def _prefix_words(prefix: int) -> Callable[[tuple[int, ...], bool, str], str]:
    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        i, j = index
        if expected and j > i:
            return (
                f"query {i}, in the prompt (positions 0 to {prefix - 1}), is blocked from key {j}, also in "
                f"the prompt, which it may see ({where} should be True)"
            )
        if expected:
            which = "itself" if i == j else f"key {j}, an earlier position"
            return f"query {i} is blocked from {which} ({where} should be True)"
        return (
            f"query {i} may attend to key {j}, a position after it that is not in the prompt "
            f"({where} should be False)"
        )

    return words


def check_prefix_lm_mask(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(t, prefix)``: the (t, t) boolean mask of a prefix language model, True where query i may
    attend to key j: within the prompt (the first ``prefix`` positions) in both directions, and causally
    after it (:func:`prefix_lm_mask`)."""

    def case(t: int, prefix: int) -> Case:
        mask = prefix_lm_mask(t, prefix)
        i, j = np.arange(t)[:, None], np.arange(t)[None, :]
        mistakes = (
            (j <= i, PREFIX_CAUSAL),
            ((j <= i) | (i < prefix), PROMPT_SEES_FUTURE),
            (np.ones((t, t), dtype=bool), PREFIX_BIDIRECTIONAL),
            (prefix_lm_mask(t, prefix + 1), PREFIX_TOO_LONG),
            (prefix_lm_mask(t, prefix - 1), PREFIX_TOO_SHORT),
            (~mask, PREFIX_INVERTED),
            (mask.T, PREFIX_TRANSPOSED),
        )
        name = f"t = {t}, a prompt of {prefix}" if prefix else f"t = {t}, no prompt"
        return Case(name, (t, prefix), mask, mistakes=mistakes, mask_words=_prefix_words(prefix))

    return run_cases("prefix LM mask", fn, [case(6, 3), case(4, 1), case(5, 5), case(5, 0), case(7, 2)])


# ----------------------------------------------------------------------------------------------------
# Exercise 2: find the bugs in a left-padded batch's attention

EMPTY_ROW_ITSELF = (
    "a query that may attend to no key gets a zero output (this course's convention, and "
    "F.scaled_dot_product_attention's); here it attends to itself"
)
LEFT_PADDED_BUGS = {"right padding": 1, "query axis": 1, "no guard": 1}


def left_padded_attention(
    q: NDArray[Any], k: NDArray[Any], v: NDArray[Any], lengths: NDArray[Any]
) -> NDArray[Any]:
    """Causal multi-head attention over a left-padded batch: q, k, v (B, h, T, d); the real tokens of
    sequence b are its last ``lengths[b]`` positions. A query that may attend to no key gets a zero output."""
    return _left_padded({name: 0 for name in LEFT_PADDED_BUGS}, q, k, v, lengths)


def _left_padded(
    bugs: dict[str, int], q: NDArray[Any], k: NDArray[Any], v: NDArray[Any], lengths: NDArray[Any]
) -> NDArray[Any]:
    """The exercise's function with ``bugs`` left in (see ``buggy_left_padded_attention`` in the lesson)."""
    t = q.shape[-2]
    positions = np.arange(t)[None, :]  # (1, T)
    first, last = positions < lengths[:, None], positions >= t - lengths[:, None]  # (B, T) each
    real = first if bugs["right padding"] else last  # the bug takes the first lengths[b] positions
    where = (
        real[:, None, :, None] if bugs["query axis"] else real[:, None, None, :]
    )  # (B, 1, T, 1) | (B, 1, 1, T)
    allowed = causal_mask(t) & where  # (B, 1, T, T)
    if not bugs["no guard"]:
        out: NDArray[Any] = scaled_dot_product_attention(q, k, v, allowed)[0]
        return out
    scores = np.where(allowed, q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -np.inf)
    with np.errstate(all="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        out = (e / e.sum(axis=-1, keepdims=True)) @ v
    return out


def check_left_padded_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, lengths)``, the learner's fix of the lesson's ``buggy_left_padded_attention``:
    causal attention over a left-padded batch, q, k, v (B, h, T, d), lengths (B,), a zero output for a query
    that may attend to no key. Says how many of the 3 bugs remain, not which."""
    rng = np.random.default_rng(505)

    def case(name: str, b: int, h: int, t: int, d: int, lengths: list[int]) -> BugCase:
        q, k, v = (rng.standard_normal((b, h, t, d)) for _ in range(3))
        n = np.array(lengths)
        real = np.arange(t)[None, :] >= t - n[:, None]  # (B, T)
        allowed = causal_mask(t) & real[:, None, None, :]
        itself = allowed | (np.eye(t, dtype=bool) & ~allowed.any(axis=-1, keepdims=True))
        extra = ((scaled_dot_product_attention(q, k, v, itself)[0], EMPTY_ROW_ITSELF),)
        return BugCase(name, (q, k, v, n), extra)

    return run_bug_hunt(
        "left-padded attention",
        fn,
        [
            case("B = 2, 2 heads, T = 4, lengths 4 and 2", 2, 2, 4, 3, [4, 2]),
            case("B = 3, 1 head, T = 5, lengths 5, 1 and 3", 3, 1, 5, 2, [5, 1, 3]),
            case("B = 2, 3 heads, T = 3, lengths 3 and 0 (no real token)", 2, 3, 3, 4, [3, 0]),
            case("B = 1, 2 heads, T = 6, no padding", 1, 2, 6, 4, [6]),
        ],
        _left_padded,
        LEFT_PADDED_BUGS,
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: the causal mask, the masked softmax, the padding mask


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
        return Case(f"t = {t}, s = {s}", (t, s), mask, mistakes=mistakes, mask_words=mask_words)

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
    rng = np.random.default_rng(1501)

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
