"""Checkers for lesson 08: chunked attention with an online softmax, a sliding window with attention sinks,
and causal linear attention. (:func:`check_window_mask` checks the plain sliding window the lesson builds in
its section 4, for code cards and practice.) The lesson's code cards (``check_card_online_softmax``, checked
part by part, ``check_card_sliding_window``, ``check_card_linear_attention``) close the module."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import scaled_dot_product_attention
from course.checkers._card_parts import Array, mask_words
from course.checkers._engine import Case, CheckResult, Problem, as_array, call_learner, run_cases, shape_text
from course.efficient import (
    chunked_attention,
    elu_feature_map,
    linear_attention,
    online_softmax_update,
    sink_window_mask,
    sliding_window_mask,
)

__all__ = [
    "LINEAR_QUADRATIC",
    "WHOLE_MATRIX",
    "check_card_linear_attention",
    "check_card_online_softmax",
    "check_card_sliding_window",
    "check_causal_linear_attention",
    "check_chunked_attention",
    "check_sink_window_mask",
    "check_window_mask",
    "sink_window_mask",
]

NO_SUM_RESCALE = (
    "the running sum of exp(s - m) is not rescaled: multiply it by exp(m_old - m_new) whenever the maximum "
    "grows, as the accumulated output is"
)
NO_ACC_RESCALE = (
    "the accumulated output is not rescaled: multiply it by exp(m_old - m_new) whenever the maximum grows, "
    "as the running sum is"
)
NO_DIVIDE = "it returns the accumulated sum Σ exp(s - m) v; divide it by the running sum at the end"
CHUNK_MAX = (
    "the chunk's exponentials subtract the chunk's own maximum, while the running sum and the output use "
    "the running maximum; subtract the running maximum m_new everywhere so that every term shares one "
    "reference point"
)
NO_SCALE = "the scores are not divided by √d_k"
OVERFLOW = (
    "with large scores, every exponential must be exp(s - m) with m the running maximum so far: never "
    "exp(s) alone, and never exp(m_old - m_new) with m_new smaller than m_old"
)
WHOLE_MATRIX = (
    "the values are right, but at its peak your function holds as much memory as the whole ({n_q}, {n_k}) "
    "score matrix would in float32, or more, which the exercise forbids: compute the scores of `chunk` keys "
    "at a time, a ({n_q}, {chunk}) block, and fold it into the running maximum, sum and output before the "
    "next"
)


def _buggy(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any], chunk: int, bug: str) -> NDArray[Any]:
    """``chunked_attention`` with one typical mistake."""
    scale = 1.0 if bug == "scale" else 1.0 / math.sqrt(q.shape[-1])
    m = np.full(q.shape[0], -np.inf)
    total = np.zeros(q.shape[0])
    acc = np.zeros((q.shape[0], v.shape[-1]))
    with np.errstate(all="ignore"):
        for start in range(0, k.shape[0], chunk):
            s = q @ k[start : start + chunk].T * scale  # (n_q, c)
            m_new = np.maximum(m, s.max(axis=-1))
            correction = np.exp(m - m_new)
            ref = s.max(axis=-1) if bug == "chunk max" else m_new
            p = np.exp(s - ref[:, None])
            total = (total if bug == "sum" else total * correction) + p.sum(axis=-1)
            acc = (acc if bug == "acc" else acc * correction[:, None]) + p @ v[start : start + chunk]
            m = m_new
        out: NDArray[Any] = acc if bug == "divide" else acc / total[:, None]
    return out


def check_chunked_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, chunk)``: softmax(q kᵀ/√d_k) v computed over the keys ``chunk`` at a time with an
    online softmax (running maximum, running sum, rescaled accumulator). q (n_q, d_k), k (n_k, d_k),
    v (n_k, d_v) -> (n_q, d_v). On 1000 keys its peak memory must stay below what the whole score matrix
    needs in float32: dense attention, or blocks that ignore ``chunk``, are refused with the right values."""
    rng = np.random.default_rng(808)

    def case(
        name: str,
        n_q: int,
        n_k: int,
        d: int,
        d_v: int,
        chunk: int,
        spread: float = 1.0,
        *,
        memory: bool = False,
    ) -> Case:
        q = spread * rng.standard_normal((n_q, d))
        k = spread * rng.standard_normal((n_k, d))
        v = rng.standard_normal((n_k, d_v))
        # keys sorted by their score with query 0, smallest first: the maximum grows chunk after chunk
        k = k[np.argsort(k @ q[0])]
        mistakes = tuple(
            (_buggy(q, k, v, chunk, bug), words)
            for bug, words in (
                ("sum", NO_SUM_RESCALE),
                ("acc", NO_ACC_RESCALE),
                ("divide", NO_DIVIDE),
                ("chunk max", CHUNK_MAX),
                ("scale", NO_SCALE),
            )
        )
        return Case(
            name,
            (q, k, v, chunk),
            chunked_attention(q, k, v, chunk),
            mistakes=mistakes,
            nonfinite_hint=OVERFLOW,
            # an (n_q, n_k) matrix in float32 or float64 is at least this; the chunks need a few (n_q, chunk)
            peak_limit=4 * n_q * n_k if memory else 0,
            peak_words=WHOLE_MATRIX.format(n_q=n_q, n_k=n_k, chunk=chunk),
        )

    return run_cases(
        "chunked attention",
        fn,
        [
            case("4 queries, 8 keys in chunks of 2", 4, 8, 4, 3, 2),
            case(
                "64 queries, 1000 keys in chunks of 16 (a shorter last chunk)",
                64,
                1000,
                4,
                2,
                16,
                memory=True,
            ),
            case("chunks of 1 key", 2, 5, 2, 2, 1),
            case("one chunk holding every key", 3, 4, 4, 2, 8),
            case("d_k = 1", 3, 6, 1, 2, 4),
            case("large scores, 2 queries, 9 keys in chunks of 3", 2, 9, 16, 2, 3, spread=30.0),
        ],
    )


def _window_words(window: int) -> Callable[[tuple[int, ...], bool, str], str]:
    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        i, j = index
        if expected:
            which = "itself" if i == j else f"key {j}, {i - j} positions back,"
            return (
                f"query {i} is blocked from {which} which is inside its window of {window} keys "
                f"({where} should be True)"
            )
        if j > i:
            return f"query {i} may attend to key {j}, a future position ({where} should be False)"
        return (
            f"query {i} may attend to key {j}, {i - j} positions back, outside its window of {window} keys: "
            f"itself and the {window - 1} before it ({where} should be False)"
        )

    return words


def check_window_mask(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(n, window)``: the (n, n) boolean causal sliding-window mask, True where query i may attend
    to key j, that is i - window < j <= i (the ``window`` most recent keys, itself included)."""

    def case(n: int, window: int) -> Case:
        mask = sliding_window_mask(n, window)
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        mistakes = (
            (
                sliding_window_mask(n, window + 1),
                f"the window holds {window + 1} keys, one too many: query i sees keys i - window < j <= i, "
                "that is itself and the window - 1 before it",
            ),
            (
                sliding_window_mask(n, window - 1) if window > 1 else np.zeros((n, n), dtype=bool),
                f"the window holds {window - 1} keys, one too few: query i sees keys i - window < j <= i, "
                "itself included",
            ),
            (
                np.abs(i - j) < window,
                "the band is symmetric, so each query also sees the next keys, its future; keep only j <= i",
            ),
            (~mask, "the mask is inverted; here True means may attend"),
            (
                j <= i,
                "it is the plain causal mask: every past key is allowed; keep only the last `window` keys",
            ),
        )
        return Case(
            f"n = {n}, window = {window}",
            (n, window),
            mask,
            mistakes=mistakes,
            mask_words=_window_words(window),
        )

    return run_cases("sliding-window mask", fn, [case(6, 3), case(5, 1), case(4, 4), case(7, 2)])


SINKS_MISSING = (
    "it is the plain sliding window: the first {sinks} positions, the sinks, stay visible to every later "
    "query"
)
SINKS_SEE_FUTURE = (
    "the first queries may attend to sinks after them, their future: a sink is visible only to itself and "
    "the queries after it"
)
SINKS_OFF_BY_ONE = "it keeps {got} sinks; the sinks are the first `sinks` positions, 0 to sinks - 1"
SINK_WINDOW_PLUS_ONE = (
    "the window holds one key too many: query i sees its `window` most recent keys, itself included, "
    "i - window < j <= i, plus the sinks"
)
SINK_WINDOW_MINUS_ONE = (
    "the window holds one key too few: query i sees its `window` most recent keys, itself included, "
    "i - window < j <= i, plus the sinks"
)
SINKS_ONLY = "only the sinks are kept: each query also sees its `window` most recent keys, itself included"
SINKS_INVERTED = "the mask is inverted; here True means may attend"
SINKS_SYMMETRIC = (
    "the window is symmetric, so each query also sees the next keys, its future; keep only j <= i"
)


def _sink_words(window: int, sinks: int) -> Callable[[tuple[int, ...], bool, str], str]:
    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        i, j = index
        if expected and i - j < window:
            which = "itself," if i == j else f"key {j}, {i - j} positions back,"
            return (
                f"query {i} is blocked from {which} which is inside its window of {window} keys "
                f"({where} should be True)"
            )
        if expected:
            return (
                f"query {i} is blocked from key {j}, one of the first {sinks} positions (a sink), which "
                f"every later query keeps ({where} should be True)"
            )
        if j > i:
            return f"query {i} may attend to key {j}, a future position ({where} should be False)"
        return (
            f"query {i} may attend to key {j}, {i - j} positions back: outside its window of {window} keys "
            f"and not one of the first {sinks} positions ({where} should be False)"
        )

    return words


def check_sink_window_mask(fn: Callable[[int, int, int], Any]) -> CheckResult:
    """Check ``fn(n, window, sinks)``: the (n, n) boolean causal mask of a sliding window of ``window`` keys
    with the first ``sinks`` positions kept for every later query (:func:`sink_window_mask`)."""

    def case(n: int, window: int, sinks: int) -> Case:
        mask = sink_window_mask(n, window, sinks)
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        band = (j <= i) & (i - j < window)
        mistakes = (
            (band, SINKS_MISSING.format(sinks=sinks)),
            (band | (j < sinks), SINKS_SEE_FUTURE),
            (sink_window_mask(n, window, sinks + 1), SINKS_OFF_BY_ONE.format(got=sinks + 1)),
            (sink_window_mask(n, window, max(sinks - 1, 0)), SINKS_OFF_BY_ONE.format(got=max(sinks - 1, 0))),
            (sink_window_mask(n, window + 1, sinks), SINK_WINDOW_PLUS_ONE),
            (sink_window_mask(n, max(window - 1, 0), sinks), SINK_WINDOW_MINUS_ONE),
            ((j <= i) & (j < sinks), SINKS_ONLY),
            (~mask, SINKS_INVERTED),
            ((np.abs(i - j) < window) | ((j <= i) & (j < sinks)), SINKS_SYMMETRIC),
        )
        name = f"n = {n}, window = {window}, " + (f"{sinks} sinks" if sinks != 1 else "1 sink")
        return Case(name, (n, window, sinks), mask, mistakes=mistakes, mask_words=_sink_words(window, sinks))

    return run_cases(
        "sink window mask",
        fn,
        [case(8, 3, 2), case(6, 2, 1), case(5, 1, 0), case(4, 4, 2), case(7, 2, 3)],
    )


LINEAR_NOT_CAUSAL = (
    "every query uses the sums over all keys, its future included; keep running sums over j <= i "
    "(np.cumsum along the positions)"
)
LINEAR_NO_DIVIDE = "the numerator is not divided by φ(q_i) · Σ_{j<=i} φ(k_j), so the weights do not sum to 1"
LINEAR_NO_FEATURES = (
    "q and k are used as they are; apply φ(x) = elu(x) + 1 to both first, so that every weight is positive"
)
LINEAR_EMPTY = (
    "query i must include key i itself: the sums run over j <= i, so query 0 already has one key and the "
    "denominator is never 0"
)
LINEAR_QUADRATIC = (
    "the values are right, but at its peak your function holds as much memory as a ({n}, {n}) matrix would "
    "in float32, or more; the exercise forbids building any (n, n) matrix: keep running sums along the "
    "positions instead, np.cumsum of the (n, d_k, d_v) outer products φ(k_j) v_jᵀ and of the (n, d_k) φ(k_j)"
)


def _linear_without_features(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any]) -> NDArray[Any]:
    kv = np.cumsum(k[:, :, None] * v[:, None, :], axis=0)  # (n, d_k, d_v)
    with np.errstate(all="ignore"):
        out: NDArray[Any] = (
            np.einsum("nd,nde->ne", q, kv) / np.einsum("nd,nd->n", q, np.cumsum(k, axis=0))[:, None]
        )
    return out


def check_causal_linear_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: causal linear attention with φ(x) = elu(x) + 1,
    out_i = φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i with S_i = Σ_{j<=i} φ(k_j) v_jᵀ and z_i = Σ_{j<=i} φ(k_j).
    q, k (n, d_k), v (n, d_v) -> (n, d_v). At n = 512 its peak memory must stay below what an (n, n) matrix
    needs in float32."""
    rng = np.random.default_rng(880)

    def case(name: str, n: int, d: int, d_v: int, *, memory: bool = False) -> Case:
        q, k, v = rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, d_v))
        fq, fk = elu_feature_map(q), elu_feature_map(k)
        numerator = np.einsum("nd,nde->ne", fq, np.cumsum(fk[:, :, None] * v[:, None, :], axis=0))
        mistakes = (
            (linear_attention(q, k, v), LINEAR_NOT_CAUSAL),
            (numerator, LINEAR_NO_DIVIDE),
            (_linear_without_features(q, k, v), LINEAR_NO_FEATURES),
        )
        return Case(
            name,
            (q, k, v),
            linear_attention(q, k, v, causal=True),
            mistakes=mistakes,
            nonfinite_hint=LINEAR_EMPTY,
            peak_limit=4 * n * n if memory else 0,  # an (n, n) matrix in float32 or float64 is at least this
            peak_words=LINEAR_QUADRATIC.format(n=n),
        )

    return run_cases(
        "causal linear attention",
        fn,
        [
            case("n = 5, d_k = 3, d_v = 2", 5, 3, 2),
            case("n = 1", 1, 4, 3),
            case("d_k = 1", 6, 1, 2),
            case("n = 512, d_k = 4, d_v = 4", 512, 4, 4, memory=True),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: the online softmax, a sliding window, linear attention

ONLINE_RETURN = "return three arrays, (m, l, acc): the new running maximum, sum and accumulated output"
ONLINE_BLOCK_MAX = (
    "the new maximum is the block's own; it is the larger of the running maximum and the block's, "
    "np.maximum(m, s.max(axis=-1))"
)
ONLINE_INVERTED = (
    "the old sum and output are multiplied by exp(m_new - m); the factor is exp(m - m_new), at most 1, "
    "which moves them to the new reference point"
)


def _same(a: NDArray[Any], b: NDArray[Any]) -> bool:
    if a.shape != b.shape:
        return False
    if np.bool_ in (a.dtype, b.dtype):
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=1e-5, atol=1e-7))


@dataclass(frozen=True)
class _PartsCase:
    """A case of a function that returns several arrays (``names``), each compared with ``expected``."""

    name: str
    args: tuple[Any, ...]
    names: tuple[str, ...]
    expected: tuple[Array, ...]
    mistakes: tuple[tuple[tuple[Array, ...], str], ...]
    wrong_count: str


def _check_parts(fn: Callable[..., Any], case: _PartsCase) -> None:
    result = call_learner(fn, case.args)
    if not isinstance(result, (tuple, list)) or len(result) != len(case.expected):
        raise Problem(case.wrong_count)
    arrays = [as_array(got, name) for got, name in zip(result, case.names, strict=True)]
    for array, expected, name in zip(arrays, case.expected, case.names, strict=True):
        if array.shape != expected.shape:
            raise Problem(
                f"{name} has shape {shape_text(array.shape)}, expected {shape_text(expected.shape)}"
            )
    for array, expected, name in zip(arrays, case.expected, case.names, strict=True):
        wrong = ~np.isclose(array, expected, rtol=1e-5, atol=1e-7)
        if not wrong.any():
            continue
        index = tuple(int(i) for i in np.argwhere(wrong)[0])
        sentence = (
            f"{name}[{', '.join(map(str, index))}] is {array[index]:.6g}, expected {expected[index]:.6g}"
        )
        for alternative, words in case.mistakes:
            if all(_same(a, b) for a, b in zip(arrays, alternative, strict=True)):
                raise Problem(f"{sentence}; {words}")
        raise Problem(sentence)


def _online_variant(m: Array, total: Array, acc: Array, s: Array, v: Array, bug: str) -> tuple[Array, ...]:
    m_new = s.max(axis=-1) if bug == "block max" else np.maximum(m, s.max(axis=-1))
    with np.errstate(all="ignore"):
        factor = np.exp(m_new - m) if bug == "inverted" else np.exp(m - m_new)
        p = np.exp(s - m_new[:, None])
        total_new = (total if bug == "sum" else total * factor) + p.sum(axis=-1)
        acc_new = (acc if bug == "acc" else acc * factor[:, None]) + p @ v
    return m_new, total_new, acc_new


def check_card_online_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(m, l, acc, s, v)``: one key block of the online softmax. m, l (n_q,) the running maximum
    and sum of exp(score - m), acc (n_q, d_v) the running Σ exp(score - m) v; s (n_q, c) the block's scaled
    scores, v (c, d_v) its values. Returns the new (m, l, acc)."""
    rng = np.random.default_rng(1803)

    def case(name: str, m: Array, total: Array, acc: Array, s: Array, v: Array) -> _PartsCase:
        expected = online_softmax_update(m, total, acc, s, v)
        mistakes = tuple(
            (_online_variant(m, total, acc, s, v, bug), words)
            for bug, words in (
                ("sum", NO_SUM_RESCALE),
                ("acc", NO_ACC_RESCALE),
                ("block max", ONLINE_BLOCK_MAX),
                ("inverted", ONLINE_INVERTED),
            )
        )
        return _PartsCase(name, (m, total, acc, s, v), ("m", "l", "acc"), expected, mistakes, ONLINE_RETURN)

    # After a first block: the running state of 3 queries, then a block whose maximum is above it for some
    # queries and below it for others.
    s1, v1 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    m1, l1, acc1 = online_softmax_update(np.full(3, -np.inf), np.zeros(3), np.zeros((3, 2)), s1, v1)
    s2 = rng.standard_normal((3, 3)) + np.array([[2.0], [-3.0], [0.5]])
    first = case(
        "the first block (m = -inf, l = 0, acc = 0)",
        np.full(2, -np.inf),
        np.zeros(2),
        np.zeros((2, 3)),
        rng.standard_normal((2, 3)),
        rng.standard_normal((3, 3)),
    )
    return run_cases(
        "online softmax update",
        fn,
        [
            case(
                "3 queries, a block of 3 keys after a first block",
                m1,
                l1,
                acc1,
                s2,
                rng.standard_normal((3, 2)),
            ),
            first,
            case(
                "one query, one key, a larger maximum",
                np.array([1.0]),
                np.array([2.5]),
                np.array([[0.5, -1.0]]),
                np.array([[3.0]]),
                np.array([[2.0, 1.0]]),
            ),
        ],
        _check_parts,
    )


WINDOW_PLUS_ONE = "the window holds window + 1 keys, one too many: query i sees keys i - window < j <= i"
WINDOW_SYMMETRIC = (
    "the band is symmetric, so each query also sees the next keys, its future; keep only j <= i"
)
WINDOW_CAUSAL_ONLY = (
    "it is the plain causal mask: every past key is allowed; keep only the last `window` keys"
)
WINDOW_MINUS_ONE = (
    "the window holds window - 1 keys, one too few: query i sees itself and the window - 1 keys before it"
)


def check_card_sliding_window(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(n, window)``: the (n, n) causal sliding-window mask, True where i - window < j <= i."""

    def case(n: int, window: int) -> Case:
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        mistakes = (
            (sliding_window_mask(n, window + 1), WINDOW_PLUS_ONE),
            (np.abs(i - j) < window, WINDOW_SYMMETRIC),
            (j <= i, WINDOW_CAUSAL_ONLY),
            ((j <= i) & (j > i - window + 1), WINDOW_MINUS_ONE),
        )
        return Case(
            f"n = {n}, window = {window}",
            (n, window),
            sliding_window_mask(n, window),
            mistakes=mistakes,
            mask_words=mask_words,
        )

    return run_cases("sliding-window mask", fn, [case(6, 3), case(5, 1), case(4, 4), case(7, 2)])


LINEAR_RAW = (
    "it uses q and k themselves; apply the feature map φ(x) = elu(x) + 1 to both first, so that every "
    "weight is positive"
)
LINEAR_UNNORMALISED = "the numerator is not divided by φ(q_i) · Σ_j φ(k_j), so the weights do not sum to 1"
LINEAR_ELU_ONLY = (
    "it uses elu(x) without the + 1, which can be negative; φ(x) = elu(x) + 1 is always positive"
)
LINEAR_SOFTMAX = (
    "it is softmax attention; linear attention replaces exp(q·k/√d) by φ(q)·φ(k) and never builds the "
    "(n, n) weights"
)
LINEAR_MATRIX = (
    "the values are right, but at its peak your function holds as much memory as the whole ({n_q}, {n_k}) "
    "matrix φ(q) φ(k)ᵀ would in float32, or more; linear attention never builds it: compute φ(k)ᵀ v, "
    "(d_k, d_v), and φ(k).sum(axis=0), (d_k,), once, then multiply φ(q) by them"
)


def check_card_linear_attention(fn: Callable[[Array, Array, Array], Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: non-causal linear attention with φ(x) = elu(x) + 1, out_i =
    φ(q_i) (Σ_j φ(k_j) v_jᵀ) / (φ(q_i) · Σ_j φ(k_j)); q (n_q, d_k), k (n_k, d_k), v (n_k, d_v). Without any
    (n_q, n_k) matrix: on 600 queries and 800 keys its peak memory (numpy's allocations, traced by
    tracemalloc) must stay below what that matrix needs in float32."""
    rng = np.random.default_rng(1805)

    def plain(fq: Array, fk: Array, v: Array) -> Array:
        return fq @ (fk.T @ v) / (fq @ fk.sum(axis=0))[:, None]  # type: ignore[no-any-return]

    def case(name: str, n_q: int, n_k: int, d_k: int, d_v: int, *, memory: bool = False) -> Case:
        q, k, v = (
            rng.standard_normal((n_q, d_k)),
            rng.standard_normal((n_k, d_k)),
            rng.standard_normal((n_k, d_v)),
        )
        fq, fk = elu_feature_map(q), elu_feature_map(k)
        with np.errstate(all="ignore"):
            mistakes = (
                (plain(q, k, v), LINEAR_RAW),
                (fq @ (fk.T @ v), LINEAR_UNNORMALISED),
                (plain(fq - 1, fk - 1, v), LINEAR_ELU_ONLY),
                (scaled_dot_product_attention(q, k, v)[0], LINEAR_SOFTMAX),
            )
        return Case(
            name,
            (q, k, v),
            linear_attention(q, k, v),
            mistakes=mistakes,
            peak_limit=4 * n_q * n_k if memory else 0,  # an (n_q, n_k) matrix in float32 is this at least
            peak_words=LINEAR_MATRIX.format(n_q=n_q, n_k=n_k),
        )

    return run_cases(
        "linear attention",
        fn,
        [
            case("4 queries, 5 keys, d_k = 3, d_v = 2", 4, 5, 3, 2),
            case("one key", 2, 1, 2, 3),
            case("6 queries, 6 keys, d_k = 4, d_v = 4", 6, 6, 4, 4),
            case("600 queries, 800 keys, d_k = 4, d_v = 3", 600, 800, 4, 3, memory=True),
        ],
    )
