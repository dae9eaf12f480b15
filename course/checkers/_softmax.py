"""Checkers for lesson 01: the softmax of each row's k largest scores, softmax weights taken to a new
temperature without their scores, attention for one query scored by cosine similarity at a temperature, and a
stable log-sum-exp. ``check_softmax`` (a stable softmax along the last axis) is the building block the others'
sentences share, and the engine's own tests use it. The lesson's code cards (``check_card_softmax``,
``check_card_softmax_temperature``, ``check_card_weighted_average``) close the module (``_card_parts``
says what a card's checker is)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import softmax
from course.checkers._card_parts import Array
from course.checkers._engine import Case, CheckResult, run_cases
from course.log_space import logsumexp

__all__ = [
    "COSINE_DOT",
    "COSINE_NO_TEMPERATURE",
    "COSINE_QUERY_ONLY",
    "COSINE_ROWS_ONLY",
    "COSINE_TEMPERATURE_MULTIPLIED",
    "COSINE_UNIT_AVERAGE",
    "COSINE_WEIGHTS",
    "LSE_AXIS",
    "LSE_KEEPDIMS",
    "LSE_MAX_ONLY",
    "LSE_NO_ADD_BACK",
    "LSE_NO_LOG",
    "LSE_STABLE_HINT",
    "LSE_WHOLE_ARRAY",
    "RETEMPER_AS_SCORES",
    "RETEMPER_INVERTED",
    "RETEMPER_UNCHANGED",
    "RETEMPER_UNDERFLOW_HINT",
    "RETEMPER_UNNORMALISED",
    "SOFTMAX_NO_EXP",
    "SOFTMAX_UNNORMALISED",
    "STABLE_HINT",
    "TOPK_IGNORED",
    "TOPK_NOT_RENORMALISED",
    "TOPK_ONE_MORE",
    "TOPK_ONE_SHORT",
    "TOPK_SMALLEST",
    "TOPK_WEIGHTS_ONLY",
    "check_card_softmax",
    "check_card_softmax_temperature",
    "check_card_weighted_average",
    "check_cosine_attention",
    "check_logsumexp",
    "check_retemper",
    "check_softmax",
    "check_top_k_softmax",
]

STABLE_HINT = "did exp overflow or underflow? subtract each row's own maximum before exp"
SOFTMAX_UNNORMALISED = (
    "the exponentials are not divided by their sum; divide each row by its own sum, so that it sums to 1"
)
SOFTMAX_NO_EXP = (
    "the scores are divided by their sum without exp; exponentiate them first (after subtracting the row's "
    "maximum), then divide by the sum of the exponentials"
)
_KEEPDIMS_HINT = (
    "x has several rows here: take each row's maximum and sum with axis=-1, keepdims=True, so that they "
    "broadcast against x"
)


def check_softmax(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: the softmax of ``x`` along its last axis."""
    rng = np.random.default_rng(101)

    def case(name: str, x: NDArray[Any], hint: str = "") -> Case:
        exps = np.exp(x - x.max(axis=-1, keepdims=True))
        with np.errstate(all="ignore"):
            ratios = x / x.sum(axis=-1, keepdims=True)
        mistakes = [(exps, SOFTMAX_UNNORMALISED), (ratios, SOFTMAX_NO_EXP)]
        if x.ndim > 1:
            mistakes.append(
                (
                    softmax(x, axis=0),
                    "it is the softmax along axis 0; each row (the last axis) should sum to 1",
                )
            )
            whole = softmax(x.reshape(-1)).reshape(x.shape)
            mistakes.append(
                (whole, "it is normalised over the whole array; normalise each row (the last axis)")
            )
        return Case(
            name,
            (x,),
            softmax(x),
            mistakes=tuple(mistakes),
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _KEEPDIMS_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "softmax",
        fn,
        [
            case("a vector of 3 scores", np.array([1.0, 2.0, 3.0])),
            case("2 rows of 4 scores", rng.standard_normal((2, 4)).round(2)),
            case("a batch of shape (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("a length-1 row", np.array([[0.5], [-2.0]])),
            case("equal scores", np.zeros((2, 4))),
            case("large scores, 1000 to 1002", np.array([[1000.0, 1001.0, 1002.0]]), STABLE_HINT),
            case("very negative scores, -1000 to -998", np.array([[-1000.0, -999.0, -998.0]]), STABLE_HINT),
            case(
                "rows on very different scales",
                np.array([[0.0, 1.0, 2.0], [-1000.0, -999.0, -998.0]]),
                STABLE_HINT,
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Top-k softmax (lesson 01, exercise 1): the softmax of each row's k largest scores, 0 for the others

TOPK_NOT_RENORMALISED = (
    "it keeps the softmax of all the scores and sets the others to 0, so the kept weights no longer sum to "
    "1; take the softmax of the k largest scores alone (give the others the score -inf first)"
)
TOPK_SMALLEST = "it keeps the k smallest scores; keep the k largest of each row"
TOPK_IGNORED = (
    "it is the softmax of every score; keep only the k largest scores of each row, and give the rest 0"
)
TOPK_ONE_SHORT = (
    "it keeps k - 1 scores; the k-th largest score is kept too (scores >= the k-th largest, not >)"
)
TOPK_ONE_MORE = "it keeps k + 1 scores; keep exactly the k largest"
TOPK_WEIGHTS_ONLY = (
    "it returns the k weights alone; return one weight per score, in the scores' own places, 0 for the "
    "scores left out"
)


def _softmax_of(x: NDArray[Any], kept: NDArray[np.bool_]) -> NDArray[Any]:
    """The softmax of the scores of ``x`` where ``kept``, 0 elsewhere."""
    return softmax(np.where(kept, x, -np.inf))


def _top_k_softmax(x: NDArray[Any], k: int) -> NDArray[Any]:
    """The softmax of the k largest entries of each row of ``x`` (no ties), 0 elsewhere."""
    kth = np.sort(x, axis=-1)[..., -k][..., None]  # (..., 1): the k-th largest score of each row
    return _softmax_of(x, x >= kth)


def check_top_k_softmax(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(x, k)``: along the last axis, the softmax of each row's ``k`` largest scores, in their own
    places, and weight 0 for every other score; computed stably. The rows have no ties."""
    rng = np.random.default_rng(104)

    def case(name: str, x: NDArray[Any], k: int, hint: str = "") -> Case:
        n = x.shape[-1]
        expected = _top_k_softmax(x, k)
        kept = expected > 0
        mistakes: list[tuple[NDArray[Any], str]] = [
            (np.where(kept, softmax(x), 0.0), TOPK_NOT_RENORMALISED),
            (np.where(kept, np.exp(x - x.max(axis=-1, keepdims=True)), 0.0), SOFTMAX_UNNORMALISED),
            (_softmax_of(x, x <= np.sort(x, axis=-1)[..., k - 1][..., None]), TOPK_SMALLEST),
            (softmax(x), TOPK_IGNORED),
            (np.sort(expected, axis=-1)[..., n - k :], TOPK_WEIGHTS_ONLY),
        ]
        if k > 1:
            mistakes.append((_top_k_softmax(x, k - 1), TOPK_ONE_SHORT))
        if k < n:
            mistakes.append((_top_k_softmax(x, k + 1), TOPK_ONE_MORE))
        return Case(
            name,
            (x, k),
            expected,
            mistakes=tuple(mistakes),
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _KEEPDIMS_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "top-k softmax",
        fn,
        [
            case("the scores [1, 3, 2, 0.5], k = 2", np.array([1.0, 3.0, 2.0, 0.5]), 2),
            case("k = 1: all the weight on the largest score", np.array([0.2, -1.0, 0.7]), 1),
            case("k = n: the plain softmax", np.array([0.5, 1.5, -0.5, 2.5]), 4),
            case("2 rows of 5 scores, k = 3", rng.permutation(10).reshape(2, 5) / 4.0, 3),
            case("a batch of shape (2, 3, 6), k = 2", rng.standard_normal((2, 3, 6)), 2),
            case(
                "large scores near 1000, k = 2", np.array([[1000.0, 1003.0, 999.0, 1001.0]]), 2, STABLE_HINT
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# A new temperature for weights whose scores are unknown (lesson 01, exercise 2)

RETEMPER_UNCHANGED = (
    "the weights come back unchanged, as at temperature 1 (dividing them by the temperature and "
    "renormalising gives them back); the temperature divides the scores, and log(weights) are the scores up "
    "to a constant"
)
RETEMPER_AS_SCORES = (
    "it treats the weights as scores; the scores are log(weights), up to a constant the softmax ignores"
)
RETEMPER_INVERTED = (
    "it raises the weights to the power τ; dividing the scores by τ raises each weight to the power 1/τ"
)
RETEMPER_UNNORMALISED = "the weights do not sum to 1 any more; divide them by their sum"
RETEMPER_UNDERFLOW_HINT = (
    "did weights ** (1 / temperature) underflow to 0 in every place? work with log(weights) instead: take "
    "the stable softmax of log(weights) / temperature"
)


def _retempered(p: NDArray[Any], tau: float) -> NDArray[Any]:
    """softmax(x / τ) for weights ``p = softmax(x)``: the stable softmax of log(p) / τ."""
    with np.errstate(divide="ignore"):
        return softmax(np.log(p) / tau)


def check_retemper(fn: Callable[[NDArray[Any], float], Any]) -> CheckResult:
    """Check ``fn(weights, temperature)``: for softmax weights ``p = softmax(x)`` along the last axis, the
    weights ``softmax(x / temperature)`` of the same, unknown, scores; computed stably (a weight may be 0)."""
    rng = np.random.default_rng(105)

    def case(name: str, p: NDArray[Any], tau: float, hint: str = "") -> Case:
        with np.errstate(all="ignore"):
            power = p ** (1 / tau)
            mistakes = (
                (p, RETEMPER_UNCHANGED),
                (softmax(p / tau), RETEMPER_AS_SCORES),
                (p**tau / (p**tau).sum(axis=-1, keepdims=True), RETEMPER_INVERTED),
                (power, RETEMPER_UNNORMALISED),
            )
        return Case(name, (p, tau), _retempered(p, tau), mistakes=mistakes, nonfinite_hint=hint)

    three = softmax(np.array([1.0, 2.0, 3.0]))
    return run_cases(
        "weights at a new temperature",
        fn,
        [
            case("the weights of [1, 2, 3] at temperature 0.5", three, 0.5),
            case("the weights of [1, 2, 3] at temperature 4", three, 4.0),
            case("temperature 1 changes nothing", softmax(rng.standard_normal((2, 4))), 1.0),
            case(
                "a batch of shape (2, 3, 5) at temperature 0.25",
                softmax(rng.standard_normal((2, 3, 5))),
                0.25,
            ),
            case("a weight of exactly 0", np.array([0.5, 0.5, 0.0]), 3.0),
            case(
                "temperature 0.001",
                softmax(np.array([[0.4, 0.3, 0.2, 0.1]])),
                0.001,
                RETEMPER_UNDERFLOW_HINT,
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Attention by direction: cosine scores at a temperature (lesson 01, exercise 3)

COSINE_DOT = (
    "the scores are dot products; divide each by the length of the query and of the row, so that only their "
    "directions count"
)
COSINE_ROWS_ONLY = "the query's length is still in the scores; divide by it too"
COSINE_QUERY_ONLY = "each row's length is still in its score; divide by it too"
COSINE_UNIT_AVERAGE = (
    "it averages the rows scaled to length 1; the cosines only decide the weights, and the average is of the "
    "rows as they are"
)
COSINE_TEMPERATURE_MULTIPLIED = "the cosines were multiplied by the temperature; divide them by it"
COSINE_NO_TEMPERATURE = "it is the softmax of the cosines themselves; divide them by the temperature first"
COSINE_WEIGHTS = (
    "these are the weights; return the weighted average of the rows, weights @ vectors, shape (d,)"
)


def _unit(v: NDArray[Any]) -> NDArray[Any]:
    unit: NDArray[Any] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return unit


def check_cosine_attention(fn: Callable[[NDArray[Any], NDArray[Any], float], Any]) -> CheckResult:
    """Check ``fn(query, vectors, temperature)``: the softmax of the cosine similarities of ``query`` (d,)
    with the rows of ``vectors`` (T, d), divided by ``temperature``, as the weights of an average of those
    rows; the result has shape (d,)."""
    rng = np.random.default_rng(106)

    def case(name: str, query: NDArray[Any], vectors: NDArray[Any], tau: float, hint: str = "") -> Case:
        cosines = _unit(vectors) @ _unit(query)  # (T,)
        weights = softmax(cosines / tau)  # (T,)
        lengths, size = np.linalg.norm(vectors, axis=-1), np.linalg.norm(query)
        mistakes = (
            (softmax(vectors @ query / tau) @ vectors, COSINE_DOT),
            (softmax(cosines * size / tau) @ vectors, COSINE_ROWS_ONLY),
            (softmax(cosines * lengths / tau) @ vectors, COSINE_QUERY_ONLY),
            (weights @ _unit(vectors), COSINE_UNIT_AVERAGE),
            (softmax(cosines * tau) @ vectors, COSINE_TEMPERATURE_MULTIPLIED),
            (softmax(cosines) @ vectors, COSINE_NO_TEMPERATURE),
            (weights, COSINE_WEIGHTS),
        )
        return Case(name, (query, vectors, tau), weights @ vectors, mistakes=mistakes, nonfinite_hint=hint)

    return run_cases(
        "cosine attention",
        fn,
        [
            case(
                "3 vectors of size 2, temperature 0.1",
                np.array([2.0, 0.0]),
                np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                0.1,
            ),
            case(
                "rows of very different lengths, temperature 0.5",
                np.array([3.0, 1.0]),
                np.array([[10.0, 0.0], [0.1, 0.1], [0.0, 1.0]]),
                0.5,
            ),
            case("one vector, temperature 1", np.array([1.0, -2.0, 0.5]), np.array([[3.0, 4.0, 1.0]]), 1.0),
            case(
                "6 random vectors of size 4, temperature 0.05",
                rng.normal(size=4),
                rng.normal(size=(6, 4)),
                0.05,
            ),
            case(
                "temperature 0.001: scores near ±1000",
                np.array([1.0, 1.0]),
                np.array([[1.0, 0.9], [-1.0, 0.2], [0.3, 1.0]]),
                0.001,
                STABLE_HINT,
            ),
        ],
    )


LSE_STABLE_HINT = (
    "did exp overflow, or underflow to 0, whose log is -inf? subtract each row's own maximum m before exp "
    "and add m back after the log"
)
LSE_NO_ADD_BACK = (
    "you subtracted the maximum m but did not add it back: logsumexp(x) = m + log(sum(exp(x - m)))"
)
LSE_NO_LOG = "the log is missing: it is m + log(sum(exp(x - m))), not m + sum(exp(x - m))"
LSE_AXIS = "it is taken along axis 0; take the log-sum-exp of each row (the last axis)"
LSE_WHOLE_ARRAY = "the sum runs over the whole array; sum each row, along the last axis (axis=-1)"
LSE_MAX_ONLY = "it returns the maximum m alone; add log(sum(exp(x - m))) to it, a number between 0 and log(n)"
LSE_KEEPDIMS = (
    "the summed axis is still there with length 1: the result has one number per row, shape x.shape[:-1] "
    "(keepdims=True is for the maximum you subtract, not for the result)"
)
_LSE_BROADCAST_HINT = (
    "x has several rows here: take each row's maximum with axis=-1, keepdims=True, so that it broadcasts "
    "against x"
)


def check_logsumexp(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: ``log(sum(exp(x)))`` along the last axis, computed stably; shape ``x.shape[:-1]``."""
    rng = np.random.default_rng(103)

    def case(name: str, x: NDArray[Any], hint: str = "") -> Case:
        expected = logsumexp(x)  # (...)
        m = x.max(axis=-1)  # (...)
        rest = np.exp(x - m[..., None]).sum(axis=-1)  # (...), at least 1
        mistakes = [
            (np.log(rest), LSE_NO_ADD_BACK),
            (m + rest, LSE_NO_LOG),
            (expected[..., None], LSE_KEEPDIMS),
            (m, LSE_MAX_ONLY),
        ]
        if x.ndim > 1:
            mistakes.append((logsumexp(x, axis=0), LSE_AXIS))
            mistakes.append((m + np.log(np.exp(x - m[..., None]).sum()), LSE_WHOLE_ARRAY))
        return Case(
            name,
            (x,),
            expected,
            mistakes=tuple(mistakes),
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _LSE_BROADCAST_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "log-sum-exp",
        fn,
        [
            case("a vector of 3 scores", np.array([1.0, 2.0, 3.0])),
            case("2 rows of 4 scores", rng.standard_normal((2, 4)).round(2)),
            case("a 3 x 3 matrix", rng.standard_normal((3, 3)).round(2)),
            case("a batch of shape (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("a length-1 row", np.array([[0.5], [-2.0]])),
            case("large scores, 1000 to 1002", np.array([[1000.0, 1001.0, 1002.0]]), LSE_STABLE_HINT),
            case(
                "very negative scores, -1000 to -998", np.array([[-1000.0, -999.0, -998.0]]), LSE_STABLE_HINT
            ),
            case(
                "rows on very different scales",
                np.array([[0.0, 1.0, 2.0], [-1000.0, -999.0, -998.0]]),
                LSE_STABLE_HINT,
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: softmax, temperature, a weighted average

SOFTMAX_WHOLE_ARRAY = (
    "it divides by the sum of the whole array; divide each row by its own sum, "
    "e.sum(axis=-1, keepdims=True), so that every row sums to 1"
)
SOFTMAX_AXIS_0 = "it is taken along axis 0, down the columns; take it along the last axis, each row"


def check_card_softmax(fn: Callable[[Array], Any]) -> CheckResult:
    """Check ``fn(x)``: a stable softmax along the last axis of ``x`` of any shape."""
    rng = np.random.default_rng(1101)

    def case(name: str, x: Array, hint: str = "") -> Case:
        e, whole = np.exp(x - x.max(axis=-1, keepdims=True)), np.exp(x - x.max())
        mistakes = [(e, SOFTMAX_UNNORMALISED), (whole / whole.sum(), SOFTMAX_WHOLE_ARRAY)]
        if x.ndim > 1:
            mistakes.append((softmax(x, axis=0), SOFTMAX_AXIS_0))
        return Case(name, (x,), softmax(x), mistakes=tuple(mistakes), nonfinite_hint=hint)

    return run_cases(
        "softmax",
        fn,
        [
            case("a vector of 4 scores", np.array([1.0, 2.0, 0.5, -1.0])),
            case("3 rows of 4 scores", rng.standard_normal((3, 4))),
            case("a batch (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("rows of length 1", rng.standard_normal((3, 1))),
            case(
                "scores near 1000 and -1000",
                np.array([[1000.0, 999.0, 998.0], [-1000.0, -999.0, -1001.0]]),
                STABLE_HINT,
            ),
        ],
    )


TEMPERATURE_MULTIPLIED = (
    "the scores are multiplied by the temperature; divide them by it: softmax(x / temperature)"
)
TEMPERATURE_IGNORED = (
    "the temperature is ignored: it is the plain softmax; divide the scores by the temperature first"
)
TEMPERATURE_AFTER = (
    "the weights are divided by the temperature after the softmax, so they no longer sum to 1; divide the "
    "scores before it"
)


def check_card_softmax_temperature(fn: Callable[[Array, float], Any]) -> CheckResult:
    """Check ``fn(x, temperature)``: softmax(x / temperature) along the last axis, stable."""
    rng = np.random.default_rng(1106)

    def case(name: str, x: Array, tau: float, hint: str = "") -> Case:
        mistakes = (
            (softmax(x * tau), TEMPERATURE_MULTIPLIED),
            (softmax(x), TEMPERATURE_IGNORED),
            (softmax(x) / tau, TEMPERATURE_AFTER),
        )
        return Case(name, (x, tau), softmax(x / tau), mistakes=mistakes, nonfinite_hint=hint)

    return run_cases(
        "softmax with temperature",
        fn,
        [
            case("4 scores, temperature 0.5", np.array([1.0, 2.0, 0.5, -1.0]), 0.5),
            case("3 rows of 5 scores, temperature 2", rng.standard_normal((3, 5)), 2.0),
            case("temperature 1", rng.standard_normal((2, 4)), 1.0),
            case(
                "temperature 0.01: scores / temperature near 1000",
                rng.standard_normal((2, 6)) * 10,
                0.01,
                STABLE_HINT,
            ),
        ],
    )


AVERAGE_RAW_SCORES = (
    "the dot products themselves weight the rows; turn them into weights with a softmax first, so that they "
    "are positive and sum to 1"
)
AVERAGE_PLAIN_MEAN = (
    "it is the plain mean of the rows; weight each row by the softmax of its dot product with the query"
)
AVERAGE_SCALED = (
    "the dot products are divided by √d; this card's weights are the softmax of the plain dot products"
)
AVERAGE_WEIGHTS = "these are the weights; return the weighted average of the rows, weights @ vectors"


def check_card_weighted_average(fn: Callable[[Array, Array], Any]) -> CheckResult:
    """Check ``fn(query, vectors)``: query (d,), vectors (T, d); the softmax of the dot products
    ``vectors @ query`` weights the rows; returns their weighted average (d,)."""
    rng = np.random.default_rng(1103)

    def case(name: str, t: int, d: int) -> Case:
        query, vectors = rng.standard_normal(d), rng.standard_normal((t, d))
        scores = vectors @ query
        weights = softmax(scores)
        mistakes = (
            (scores @ vectors, AVERAGE_RAW_SCORES),
            (vectors.mean(axis=0), AVERAGE_PLAIN_MEAN),
            (softmax(scores / math.sqrt(d)) @ vectors, AVERAGE_SCALED),
            (weights, AVERAGE_WEIGHTS),
        )
        return Case(name, (query, vectors), weights @ vectors, mistakes=mistakes)

    return run_cases(
        "weighted average",
        fn,
        [case("4 vectors of width 3", 4, 3), case("one vector", 1, 4), case("6 vectors of width 8", 6, 8)],
    )
