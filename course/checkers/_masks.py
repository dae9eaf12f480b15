"""Checkers for lesson 05: causal and padding masks, and masked attention.

The lesson's exercises are :func:`check_prefix_lm_mask` (a mask the lesson does not build),
:func:`check_left_padded_attention` (find the bugs) and :func:`check_cached_attention` (a key/value cache step
for several new tokens at once). :func:`check_causal_mask`, :func:`check_padding_mask`,
:func:`check_masked_attention` and :func:`check_decoding_mask` check what the lesson builds in its sections,
for code cards and practice.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import causal_mask, padding_mask, scaled_dot_product_attention
from course.checkers._attention import attention_case, scale_mistakes
from course.checkers._bugs import BugCase, run_bug_hunt
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
from course.checkers._softmax import STABLE_HINT

__all__ = [
    "CACHE_ONLY_OLD",
    "CACHE_RETURN",
    "DECODING_BLOCKED_TRUE",
    "DECODING_OFF_BY_ONE",
    "DECODING_TOP_LEFT",
    "DECODING_TRANSPOSED",
    "EMPTY_ROW_ITSELF",
    "NEW_KEYS_ONLY",
    "NEW_NOT_CAUSAL",
    "NEW_OFF_BY_ONE",
    "NEW_TOP_LEFT",
    "PADDING_ONE_TOO_MANY",
    "PADDING_TRANSPOSED",
    "PREFIX_BIDIRECTIONAL",
    "PREFIX_CAUSAL",
    "PREFIX_INVERTED",
    "PREFIX_TOO_LONG",
    "PREFIX_TOO_SHORT",
    "PREFIX_TRANSPOSED",
    "PROMPT_SEES_FUTURE",
    "cached_attention",
    "check_cached_attention",
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
# Exercise 3: a key/value cache step that takes several new tokens at once


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
