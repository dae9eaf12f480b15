"""Checkers for lesson 08: chunked attention with an online softmax, a sliding window with attention sinks,
and causal linear attention. (:func:`check_window_mask` checks the plain sliding window the lesson builds in
its section 4, for code cards and practice.)"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import Case, CheckResult, run_cases
from course.efficient import chunked_attention, elu_feature_map, linear_attention, sliding_window_mask

__all__ = [
    "LINEAR_QUADRATIC",
    "WHOLE_MATRIX",
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


def sink_window_mask(n: int, window: int, sinks: int) -> NDArray[np.bool_]:
    """The (n, n) causal mask of a sliding window with attention sinks (StreamingLLM, Xiao et al. 2024):
    query i may attend to key j <= i when j is among its ``window`` most recent keys (itself included) or
    among the first ``sinks`` positions. True = may attend."""
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    mask: NDArray[np.bool_] = (j <= i) & ((i - j < window) | (j < sinks))
    return mask


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
